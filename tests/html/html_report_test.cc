// The HTML reports without a browser: escaping, the page skeleton, the embedded assets, and the
// data block of the simulate report checked against the simulation it draws.
#include "sim/report/html_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/memory/budget.h"
#include "sim/report/html_assets.h"
#include "sim/report/html_page.h"
#include "sim/report/html_simulate_data.h"
#include "sim/report/step_report.h"
#include "tests/html/html_test_util.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;

LoadOptions Lib() {
  LoadOptions o;
  o.library_dirs.push_back(SHARDSIM_SOURCE_DIR);
  return o;
}

struct Simulated {
  Scenario sc;
  SimResult r;
};

Simulated SimulateFile(const std::string& file) {
  Result<Scenario> sc = LoadScenario(std::string(SHARDSIM_SOURCE_DIR) + "/" + file, Lib());
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  Result<SimResult> r = Simulate(*sc);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return {*sc, *r};
}

TEST(HtmlPage, EscapesTextAndAttributes) {
  EXPECT_EQ(HtmlEscape("a<b & \"c\" 'd'>"), "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;");
  EXPECT_EQ(HtmlEscape("plain"), "plain");
}

TEST(HtmlPage, JsonCannotCloseItsScriptElement) {
  EXPECT_EQ(ScriptSafeJson(R"({"name":"</script><script>alert(1)</script>"})"),
            R"({"name":"\u003c/script>\u003cscript>alert(1)\u003c/script>"})");
  // "<!--" would turn the rest of the page into script data (the charts never drew).
  EXPECT_EQ(ScriptSafeJson(R"({"name":"a<!--<script>b"})"),
            R"({"name":"a\u003c!--\u003cscript>b"})");
  // Still the same JSON.
  EXPECT_EQ(Json::parse(ScriptSafeJson(R"({"a":"</b><!--"})"))["a"], "</b><!--");
}

TEST(HtmlPage, NumbersAreWrittenAsTheJsonOutputWritesThem) {
  EXPECT_EQ(JsonNumber(0.1), "0.1");
  EXPECT_EQ(JsonNumber(17.0), "17.0");
  EXPECT_EQ(std::stod(JsonNumber(0.46912345678901234)), 0.46912345678901234);
  EXPECT_EQ(KeyedValue("mfu", "0.5", "50%<"),
            "<span data-key=\"mfu\" data-value=\"0.5\">50%&lt;</span>");
}

TEST(HtmlPage, GroupsWholeNumbersAndKeepsFourDigitsOfFractions) {
  EXPECT_EQ(GroupedNumber(493914.2), "493,914");
  EXPECT_EQ(GroupedNumber(1234567.0), "1,234,567");
  EXPECT_EQ(GroupedNumber(12.0), "12");
  EXPECT_EQ(GroupedNumber(964.66), "964.7");
  EXPECT_EQ(GroupedNumber(-2500.0), "-2,500");
}

// The tests' own DOM reader (tests/html/html_test_util.h).
TEST(HtmlTestUtil, ReadsTagsAndAttributesAsASerializedDomWritesThem) {
  const std::string dom =
      R"(<div id="box" hidden data-x="1 &gt; 0" data-y="a>b"><span data-key="k">t &amp; u</span>)"
      R"(<br/><script>if (a<b) { x = "<i>"; }</script><p class="c">x</p></div><p id="out"></p>)";
  const std::vector<testing::Element> all = testing::ParseElements(dom);
  ASSERT_EQ(all.size(), 6u);
  EXPECT_EQ(all[0].tag, "div");
  EXPECT_TRUE(all[0].Has("hidden"));
  EXPECT_EQ(all[0].Get("data-x"), "1 > 0");
  EXPECT_EQ(all[0].Get("data-y"), "a>b");
  EXPECT_EQ(testing::TextAfter(dom, all[1]), "t & u");
  EXPECT_EQ(all[2].tag, "br");
  EXPECT_EQ(all[3].tag, "script");  // its text is skipped: no <b> or <i> elements
  EXPECT_EQ(all[4].Get("class"), "c");
  EXPECT_EQ(testing::Within(dom, all, "box", "class").size(), 1u);
  EXPECT_EQ(testing::Within(dom, all, "box", "id").size(), 0u);  // #out is outside
}

TEST(HtmlAssets, EveryAssetIsEmbeddedAsciiAndCannotEndItsElement) {
  for (const char* name : {"errors.js", "charts.js", "simulate.js", "sweep.js", "report.css"}) {
    const std::string_view text = HtmlAsset(name);
    EXPECT_GT(text.size(), 500u) << name;
    EXPECT_TRUE(std::all_of(text.begin(), text.end(),
                            [](char c) { return static_cast<unsigned char>(c) < 128; }))
        << name << " has non-ASCII bytes";
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
      return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    EXPECT_EQ(lower.find("</script"), std::string::npos) << name;
    EXPECT_EQ(lower.find("</style"), std::string::npos) << name;
  }
  EXPECT_TRUE(HtmlAsset("missing.js").empty());
}

// Nothing in a page refers to another file or to the network: no src/href attributes, no
// stylesheet links, no CSS imports or url(), no fetch or XMLHttpRequest.
void ExpectSelfContained(const std::string& html) {
  for (const char* bad :
       {" src=", " href=", "<link", "@import", "fetch(", "XMLHttpRequest", "https://", "//cdn"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << "found " << bad;
  }
  // url() only to an element of the page itself (a clip path: "url(#id)").
  for (size_t p = html.find("url("); p != std::string::npos; p = html.find("url(", p + 1)) {
    EXPECT_EQ(html[p + 4], '#') << html.substr(p, 40);
  }
  // The only http:// is the SVG namespace name (never fetched).
  for (size_t p = html.find("http://"); p != std::string::npos; p = html.find("http://", p + 1)) {
    EXPECT_EQ(html.compare(p, 26, "http://www.w3.org/2000/svg"), 0) << html.substr(p, 60);
  }
}

TEST(SimulateHtml, IsOneSelfContainedDocument) {
  const Simulated s = SimulateFile("scenarios/quickstart.yaml");
  const std::string html = SimulateHtml(s.sc, s.r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>shardsim simulate: llama3-70b-h100x512</title>"), std::string::npos);
  ExpectSelfContained(html);
  // (parse() throws rather than returning a discarded value: accept() is the check that can fail)
  EXPECT_TRUE(Json::accept(testing::DataBlock(html)));
}

// The headline figures carry the exact values of `simulate --json`.
TEST(SimulateHtml, HeadlineValuesEqualTheJsonOutput) {
  const Simulated s = SimulateFile("scenarios/quickstart.yaml");
  const std::string html = SimulateHtml(s.sc, s.r);
  const Json json = Json::parse(SimulateJson(s.sc, s.r));
  std::map<std::string, std::string> values;
  for (const testing::Element& e : testing::ParseElements(html)) {
    if (e.Has("data-key")) values[e.Get("data-key")] = e.Get("data-value");
  }
  for (const char* key : {"step_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu",
                          "mfu", "hfu", "bubble_fraction", "peak_flops_per_gpu", "time_to_train_s",
                          "time_to_train_ideal_s", "gpu_hours"}) {
    ASSERT_TRUE(values.count(key)) << key;
    EXPECT_EQ(std::stod(values[key]), json[key].get<double>()) << key;
  }
  EXPECT_EQ(std::stod(values["memory.peak_bytes"]), json["memory"]["peak_bytes"].get<double>());
  EXPECT_EQ(std::stod(values["memory.capacity_bytes"]),
            json["memory"]["capacity_bytes"].get<double>());
  EXPECT_EQ(values["fits"], json["fits"].get<bool>() ? "true" : "false");
  for (const char* key :
       {"fraction", "interruptions_per_day", "checkpoint_write_s", "straggler_factor"}) {
    const std::string k = std::string("goodput.") + key;
    ASSERT_TRUE(values.count(k)) << k;
    EXPECT_EQ(std::stod(values[k]), json["goodput"][key].get<double>()) << k;
  }
}

// The bubble card said "most idle pipeline rank" over a figure taken on the busiest one
// (SimResult::bubble_fraction, reference_device): the label now names the rank it measures.
TEST(SimulateHtml, BubbleCardNamesTheBusiestRankItMeasures) {
  const Simulated s = SimulateFile("scenarios/quickstart.yaml");
  const std::string html = SimulateHtml(s.sc, s.r);
  const std::string stage =
      std::to_string(s.r.devices[static_cast<size_t>(s.r.reference_device)].coords.pp);
  EXPECT_NE(
      html.find("waiting over working time on the busiest pipeline rank (stage " + stage + ")"),
      std::string::npos);
  EXPECT_EQ(html.find("most idle"), std::string::npos);
}

// The memory-over-time curve of the worst device reaches exactly the simulated peak, and each
// stage's bar adds up to its device's peak.
TEST(SimulateHtml, MemoryChartsReachTheSimulatedPeak) {
  for (const char* file : {"scenarios/quickstart.yaml", "tests/html/data/zero3_full.yaml",
                           "tests/html/data/too_big.yaml"}) {
    const Simulated s = SimulateFile(file);
    const Json memory = Json::parse(SimulateReportData(s.sc, s.r))["memory"];
    const std::vector<double> curve = memory["over_time"]["bytes"].get<std::vector<double>>();
    ASSERT_FALSE(curve.empty()) << file;
    EXPECT_DOUBLE_EQ(*std::max_element(curve.begin(), curve.end()), s.r.peak_memory.value())
        << file;
    for (const Json& stage : memory["stages"]) {
      double sum = 0.0;
      for (const Json& v : stage["values"]) sum += v.get<double>();
      EXPECT_NEAR(sum, stage["total"].get<double>(), 1e-6 * stage["total"].get<double>()) << file;
    }
  }
}

// The timeline: every task of the shown devices is there once, and on each compute row the
// tasks and the idle gaps tile the step exactly.
TEST(SimulateHtml, TimelineTilesEachComputeRowWithTasksAndIdle) {
  for (const char* file : {"scenarios/quickstart.yaml", "tests/html/data/zero3_full.yaml"}) {
    const Simulated s = SimulateFile(file);
    const Json d = Json::parse(SimulateReportData(s.sc, s.r));
    const Json& tl = d["timeline"];
    const Json& t = tl["tasks"];
    const std::vector<std::string> kinds = tl["kinds"];
    const int64_t step = tl["step_ns"];
    EXPECT_EQ(step, s.r.run->makespan().picos() / 1000);
    std::map<std::string, int> count;
    std::map<int, std::vector<std::pair<int64_t, int64_t>>> compute_rows;
    for (size_t i = 0; i < t["start"].size(); ++i) {
      const std::string kind = kinds[t["kind"][i].get<size_t>()];
      ++count[kind];
      const int row = t["row"][i];
      if (tl["rows"][static_cast<size_t>(row)]["stream"] == "compute") {
        compute_rows[row].push_back({t["start"][i], t["end"][i]});
      }
    }
    // Tasks of the program on the shown devices (representative mode: all of them).
    std::map<std::string, int> expected;
    for (int32_t i = 0; i < s.r.run->num_tasks(); ++i) {
      const TaskInfo& info = (*s.r.program->tasks)[s.r.program->engine.label(TaskId(i))];
      const bool compute =
          info.category == TaskCategory::kForward || info.category == TaskCategory::kBackward;
      // In-layer flows beside their compute window are drawn as that window (AddPass).
      if (compute && !s.r.program->engine.stream(TaskId(i)).valid()) continue;
      if (info.category != TaskCategory::kJoin) ++expected[Name(info.category)];
    }
    for (const auto& [kind, n] : expected) EXPECT_EQ(count[kind], n) << file << " " << kind;
    EXPECT_EQ(compute_rows.size(), static_cast<size_t>(s.sc.parallel.pp)) << file;
    for (auto& [row, iv] : compute_rows) {
      std::sort(iv.begin(), iv.end());
      int64_t at = 0;
      for (const auto& [a, b] : iv) {
        EXPECT_EQ(a, at) << file << " row " << row;
        at = b;
      }
      EXPECT_EQ(at, step) << file << " row " << row;
    }
    if (s.sc.parallel.pp > 1) {
      EXPECT_GT(count["idle"], 0) << file;
    }
  }
}

TEST(SimulateHtml, StageBarsSumToEachStagesPeakAndTheWorstIsThePeak) {
  for (const char* file : {"scenarios/quickstart.yaml", "tests/html/data/too_big.yaml"}) {
    const Simulated s = SimulateFile(file);
    const Json m = Json::parse(SimulateReportData(s.sc, s.r))["memory"];
    ASSERT_EQ(m["stages"].size(), static_cast<size_t>(s.sc.parallel.pp));
    for (const Json& st : m["stages"]) {
      double sum = 0;
      for (const Json& v : st["values"]) sum += v.get<double>();
      EXPECT_NEAR(sum, st["total"].get<double>(), 1e-6 * sum) << file;
    }
    const Json& worst = m["stages"][m["worst_stage"].get<size_t>()];
    EXPECT_EQ(worst["total"].get<double>(), s.r.peak_memory.value()) << file;
    // The worst device's memory over the step peaks at the simulated peak.
    double peak = 0;
    for (const Json& b : m["over_time"]["bytes"]) peak = std::max(peak, b.get<double>());
    EXPECT_EQ(peak, s.r.peak_memory.value()) << file;
  }
}

TEST(SimulateHtml, VerdictSaysWhetherItFits) {
  const Simulated big = SimulateFile("tests/html/data/too_big.yaml");
  ASSERT_FALSE(big.r.fits);
  const std::string html = SimulateHtml(big.sc, big.r);
  EXPECT_NE(html.find("class=\"verdict bad\""), std::string::npos);
  EXPECT_NE(html.find(">Does not fit in memory</span>"), std::string::npos);
  const Simulated ok = SimulateFile("scenarios/quickstart.yaml");
  EXPECT_NE(SimulateHtml(ok.sc, ok.r).find(">Fits in memory</span>"), std::string::npos);
}

SimResult WithBottleneck(const std::string& kind, const std::string& collective,
                         const std::string& resource, double exposed) {
  SimResult r;
  r.step_time = Seconds(10.0);
  r.breakdown.compute = Seconds(7.0);
  if (!kind.empty()) {
    r.bottlenecks.push_back(
        Bottleneck{kind, collective, resource, Seconds(exposed), exposed / 10.0});
  }
  return r;
}

TEST(BottleneckInWords, NamesTheLargestExposedCost) {
  EXPECT_EQ(BottleneckInWords(
                WithBottleneck("communication", "dp reduce_scatter", "nic (inter-node)", 2.0)),
            "Kernels take 7.00 s (70.0%) of the 10.0 s step; the bottleneck is dp reduce_scatter "
            "communication on nic (inter-node), exposed for 2.00 s (20.0%).");
  EXPECT_EQ(BottleneckInWords(WithBottleneck("pipeline_bubble", "", "pipeline", 1.5)),
            "Kernels take 7.00 s (70.0%) of the 10.0 s step; the bottleneck is the pipeline "
            "bubble: ranks wait for one another for 1.50 s (15.0%).");
  EXPECT_EQ(BottleneckInWords(WithBottleneck("recompute", "", "compute", 0.5)),
            "Kernels take 7.00 s (70.0%) of the 10.0 s step; the bottleneck is recompute, which "
            "adds 500 ms (5.00%).");
  EXPECT_EQ(BottleneckInWords(WithBottleneck("", "", "", 0.0)),
            "Kernels take 7.00 s (70.0%) of the 10.0 s step; nothing else is exposed: the step "
            "is compute-bound.");
}

// `simulate --html FILE`: the report is written beside the usual output, which it leaves as it
// was; a layout that does not fit still gets its report (exit 1); an unwritable file is an error.
TEST(SimulateCli, HtmlOptionWritesTheReportAndLeavesStdoutAlone) {
  const std::string bin = SHARDSIM_BINARY, dir = testing::OutputDir();
  const std::string scenario = std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  const testing::CliRun plain = testing::RunCommand(bin + " simulate " + scenario + " --json");
  const testing::CliRun with =
      testing::RunCommand(bin + " simulate " + scenario + " --json --html " + dir + "/cli.html");
  EXPECT_EQ(with.code, 0);
  EXPECT_EQ(with.out, plain.out);
  EXPECT_EQ(testing::ReadFile(dir + "/cli.html").rfind("<!DOCTYPE html>", 0), 0u);
  const testing::CliRun big =
      testing::RunCommand(bin + " simulate " + SHARDSIM_SOURCE_DIR +
                          "/tests/html/data/too_big.yaml --html " + dir + "/cli_too_big.html");
  EXPECT_EQ(big.code, 1);
  EXPECT_NE(testing::ReadFile(dir + "/cli_too_big.html").find("Does not fit in memory"),
            std::string::npos);
  const testing::CliRun bad =
      testing::RunCommand(bin + " simulate " + scenario + " --html /nonexistent-dir/r.html 2>&1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.out,
            "error: --html: cannot write '/nonexistent-dir/r.html': No such file or directory\n");
}

}  // namespace
}  // namespace shardsim
