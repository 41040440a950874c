// The HTML reports rendered in a real browser: headless Chromium (Debian's `chromium`) opens each
// report from disk with no network, runs its scripts, and the test reads the rendered DOM. It
// fails on any JavaScript error the page records, checks that the headline figures equal the
// JSON output and that every chart has content, drives the charts with synthetic events (the
// page's #selftest), and saves a screenshot of each report under <build>/html_test/.
//
// SHARDSIM_UPDATE_DOC_IMAGES=1 also copies the screenshots to docs/img/ (the README's images).
// Skipped, with a message, only when no chromium is installed; CI installs it (quickstart.sh).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/base/units.h"
#include "sim/report/html_page.h"
#include "sim/report/html_sweep.h"
#include "sim/report/summary.h"
#include "tests/html/html_test_util.h"
#include "tests/html/sweep_points.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;
using testing::Element;

#define REQUIRE_CHROMIUM(var)                                                              \
  const std::string var = testing::FindChromium();                                         \
  if (var.empty()) {                                                                       \
    GTEST_SKIP() << "chromium is not installed (apt-get install chromium, or set "         \
                    "SHARDSIM_CHROMIUM): the HTML reports were not rendered in a browser"; \
  }

void UpdateDocImage(const std::string& screenshot, const std::string& name) {
  const char* env = std::getenv("SHARDSIM_UPDATE_DOC_IMAGES");
  if (env == nullptr || std::string(env) != "1") return;
  const std::filesystem::path dir = std::filesystem::path(SHARDSIM_SOURCE_DIR) / "docs" / "img";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(screenshot, dir / name,
                             std::filesystem::copy_options::overwrite_existing);
}

// What every rendered report must show: scripts ran to the end with no error recorded.
void ExpectCleanRender(const std::vector<Element>& all, bool selftest) {
  bool found_errors = false, found_body = false;
  for (const Element& e : all) {
    if (e.Get("id") == "js-errors") {
      found_errors = true;
      EXPECT_EQ(e.Get("data-count"), "0") << "the page recorded JavaScript errors";
    }
    if (e.tag == "body") {
      found_body = true;
      EXPECT_EQ(e.Get("data-render"), "done");
      if (selftest) {
        EXPECT_EQ(e.Get("data-selftest"), "pass");
      }
    }
  }
  EXPECT_TRUE(found_errors);
  EXPECT_TRUE(found_body);
}

// The errors the page recorded, as listed in <ul id="js-errors">.
std::string ErrorsText(const std::string& dom) {
  const size_t p = dom.find("<ul id=\"js-errors\"");
  if (p == std::string::npos) return "no error list in the page";
  return dom.substr(p, dom.find("</ul>", p) - p);
}

const Element* Body(const std::vector<Element>& all) {
  for (const Element& e : all) {
    if (e.tag == "body") return &e;
  }
  return nullptr;
}

double D(const Element& e, const std::string& attr) { return std::stod(e.Get(attr)); }

// Chrome-trace events of category `cat` (the trace has every task of the step).
int TraceCount(const Json& trace, const std::string& cat) {
  int n = 0;
  for (const Json& e : trace["traceEvents"]) n += e.value("cat", "") == cat ? 1 : 0;
  return n;
}

TEST(BrowserSimulate, QuickstartRendersWithTheJsonFiguresAndEveryChart) {
  REQUIRE_CHROMIUM(chromium);
  const std::string dir = testing::OutputDir();
  const std::string html = dir + "/simulate.html", png = dir + "/simulate.png";
  const testing::CliRun sim =
      testing::RunCommand(std::string(SHARDSIM_BINARY) + " simulate " + SHARDSIM_SOURCE_DIR +
                          "/scenarios/quickstart.yaml --json --html " + html + " --trace " + dir +
                          "/simulate_trace.json");
  ASSERT_EQ(sim.code, 0);
  const Json json = Json::parse(sim.out);
  const Json trace = Json::parse(testing::ReadFile(dir + "/simulate_trace.json"));
  const testing::Rendered page =
      testing::RenderInChromium(chromium, html, "#selftest", png, 1280, 2700);
  ASSERT_TRUE(page.ok) << page.error;
  const std::string& dom = page.dom;
  const std::vector<Element> all = testing::ParseElements(dom);
  ExpectCleanRender(all, true);
  if (::testing::Test::HasFailure()) FAIL() << ErrorsText(dom);

  // Headline figures: exact values and the text people read, against `simulate --json`.
  int keyed = 0;
  for (const Element& e : all) {
    if (!e.Has("data-key")) continue;
    ++keyed;
    const std::string key = e.Get("data-key"), text = testing::TextAfter(dom, e);
    if (key == "fits") {
      EXPECT_EQ(e.Get("data-value"), json["fits"].get<bool>() ? "true" : "false");
      continue;
    }
    const Json& want = key.rfind("memory.", 0) == 0    ? json["memory"][key.substr(7)]
                       : key.rfind("goodput.", 0) == 0 ? json["goodput"][key.substr(8)]
                                                       : json[key];
    ASSERT_TRUE(want.is_number()) << key;
    const double v = want.get<double>();
    EXPECT_EQ(D(e, "data-value"), v) << key;
    if (key == "step_time_s" || key == "time_to_train_s" || key == "time_to_train_ideal_s" ||
        key == "goodput.checkpoint_write_s") {
      EXPECT_EQ(text, FormatSeconds(Seconds(v))) << key;
    }
    if (key == "mfu" || key == "hfu" || key == "bubble_fraction" || key == "goodput.fraction" ||
        key == "executed_fraction_of_peak") {
      EXPECT_EQ(text, Percent(v)) << key;
    }
    if (key.rfind("memory.", 0) == 0) {
      EXPECT_EQ(text, FormatBytes(Bytes(v))) << key;
    }
    if (key == "tokens_per_s" || key == "gpu_hours") {
      EXPECT_EQ(text, GroupedNumber(v)) << key;
    }
  }
  // 13, the ideal time to train, 4 goodput figures and the 2 executed-FLOPs figures of the MFU
  // card.
  EXPECT_EQ(keyed, 20);

  // Where the step goes: the critical path's parts, summing to the step.
  double parts = 0;
  const std::vector<Element> bd = testing::Within(dom, all, "chart-breakdown", "data-part");
  for (const Element& e : bd) parts += D(e, "data-seconds");
  EXPECT_GE(bd.size(), 5u);
  EXPECT_NEAR(parts, json["step_time_s"].get<double>(), 1e-9 * parts);

  // Timeline: every task of the step (the trace has them all), split into its parts; a bar
  // that stands for several neighbours at this zoom counts them in data-n.
  const auto kind = [&](const char* k) {
    size_t n = 0;
    for (const Element& e : testing::Within(dom, all, "chart-timeline", "data-kind", k)) {
      n += e.Has("data-n") ? std::stoul(e.Get("data-n")) : 1;
    }
    return n;
  };
  EXPECT_EQ(kind("forward"), static_cast<size_t>(TraceCount(trace, "forward")));
  EXPECT_EQ(kind("backward"), static_cast<size_t>(TraceCount(trace, "backward")));
  EXPECT_EQ(kind("pp_send"), static_cast<size_t>(TraceCount(trace, "pp_send")));
  EXPECT_EQ(kind("grad_reduce"), static_cast<size_t>(TraceCount(trace, "grad_reduce")));
  EXPECT_GT(kind("recompute"), 0u);  // selective recompute
  EXPECT_GT(kind("tp"), 0u);         // exposed TP communication
  EXPECT_GT(kind("idle"), 0u);       // pipeline bubble
  const std::vector<Element> svg = testing::Within(dom, all, "chart-timeline", "data-rows");
  ASSERT_EQ(svg.size(), 1u);
  EXPECT_GE(std::stoi(svg[0].Get("data-rows")), 4 * 3);  // 4 stages x compute, sends, reduce

  // Memory per stage: 6 parts x 4 stages; the worst stage's bar is the JSON's peak and its parts
  // are the JSON's breakdown.
  const std::vector<Element> bars = testing::Within(dom, all, "chart-memory-stages", "data-part");
  EXPECT_EQ(bars.size(), 24u);
  const std::vector<Element> worst =
      testing::Within(dom, all, "chart-memory-stages", "data-worst", "true");
  ASSERT_EQ(worst.size(), 1u);
  EXPECT_EQ(D(worst[0], "data-total"), json["memory"]["peak_bytes"].get<double>());
  EXPECT_EQ(std::stoi(worst[0].Get("data-stage")), json["memory"]["stage"].get<int>());
  for (const Element& b : bars) {
    if (b.Get("data-stage") != worst[0].Get("data-stage")) continue;
    const std::string part = b.Get("data-part");
    if (part == "weights" || part == "gradients" || part == "optimizer" || part == "activations") {
      EXPECT_EQ(D(b, "data-bytes"), json["memory"]["breakdown"][part].get<double>()) << part;
    }
  }
  const std::vector<Element> cap = testing::Within(dom, all, "chart-memory-stages", "data-bytes");
  EXPECT_EQ(D(cap.back(), "data-bytes"), json["memory"]["capacity_bytes"].get<double>());

  // Memory over the step: a curve that peaks at the JSON's peak.
  const std::vector<Element> curve =
      testing::Within(dom, all, "chart-memory-time", "data-series", "memory");
  ASSERT_EQ(curve.size(), 1u);
  EXPECT_GT(std::stoi(curve[0].Get("data-points")), 100);
  EXPECT_EQ(D(curve[0], "data-peak"), json["memory"]["peak_bytes"].get<double>());

  // Exposed time by cause: the JSON's bottlenecks, in order; by link class: its link sums.
  const std::vector<Element> causes =
      testing::Within(dom, all, "chart-communication", "data-exposed");
  ASSERT_EQ(causes.size(), json["bottlenecks"].size());
  for (size_t i = 0; i < causes.size(); ++i) {
    EXPECT_EQ(D(causes[i], "data-exposed"), json["bottlenecks"][i]["exposed_s"].get<double>());
    EXPECT_EQ(causes[i].Get("data-kind"), json["bottlenecks"][i]["kind"].get<std::string>());
  }
  const std::vector<Element> links = testing::Within(dom, all, "chart-links", "data-link");
  ASSERT_EQ(links.size(), json["exposed_by_link_s"].size());
  for (const Element& l : links) {
    EXPECT_EQ(D(l, "data-exposed"), json["exposed_by_link_s"][l.Get("data-link")].get<double>());
  }
  // The bottleneck in words names the largest one.
  const std::string words = json["bottlenecks"][0]["collective"];
  EXPECT_NE(dom.find("the bottleneck is " + words), std::string::npos);

  std::printf(
      "[ report ] simulate report %s: %zu bytes, charts drawn in %s ms, page ready in %s ms, "
      "chromium %.2f s\n",
      html.c_str(), testing::ReadFile(html).size(), Body(all)->Get("data-render-ms").c_str(),
      Body(all)->Get("data-ready-ms").c_str(), page.wall_s);
  UpdateDocImage(png, "simulate.png");
  // The timeline zoomed on a stretch of the steady state, for the README.
  const std::string zoom_png = dir + "/simulate_timeline.png";
  const testing::Rendered zoomed =
      testing::RenderInChromium(chromium, html, "#view=6.0,7.5", zoom_png, 1280, 1000);
  ASSERT_TRUE(zoomed.ok) << zoomed.error;
  ExpectCleanRender(testing::ParseElements(zoomed.dom), false);
  UpdateDocImage(zoom_png, "simulate-timeline.png");
}

// Layouts the quickstart does not have: no pipeline with ZeRO-3 gathers, full recompute and
// context parallelism; a layout that does not fit (exit 1, but the report is written); experts
// with their all-to-alls; one GPU with no communication at all.
class BrowserSimulateScenarios : public ::testing::TestWithParam<const char*> {};

TEST_P(BrowserSimulateScenarios, RendersWithoutErrorsAndEveryChartHasContent) {
  REQUIRE_CHROMIUM(chromium);
  const std::string name = std::filesystem::path(GetParam()).stem().string();
  const std::string html = testing::OutputDir() + "/simulate_" + name + ".html";
  const testing::CliRun sim =
      testing::RunCommand(std::string(SHARDSIM_BINARY) + " simulate " + SHARDSIM_SOURCE_DIR + "/" +
                          GetParam() + " --json --html " + html);
  ASSERT_TRUE(sim.code == 0 || sim.code == 1) << sim.code;
  const Json json = Json::parse(sim.out);
  const testing::Rendered page = testing::RenderInChromium(
      chromium, html, "#selftest", testing::OutputDir() + "/simulate_" + name + ".png", 1280, 2400);
  ASSERT_TRUE(page.ok) << page.error;
  const std::vector<Element> all = testing::ParseElements(page.dom);
  ExpectCleanRender(all, true);
  if (::testing::Test::HasFailure()) FAIL() << ErrorsText(page.dom);
  // Every chart has content: its data-bearing elements, or its message that there is nothing.
  const std::pair<const char*, const char*> kCharts[] = {
      {"chart-breakdown", "data-part"},        {"chart-timeline", "data-kind"},
      {"chart-memory-stages", "data-part"},    {"chart-memory-time", "data-series"},
      {"chart-communication", "data-exposed"}, {"chart-links", "data-exposed"}};
  for (const auto& [chart, attr] : kCharts) {
    const size_t n = testing::Within(page.dom, all, chart, attr).size() +
                     testing::Within(page.dom, all, chart, "data-empty").size();
    EXPECT_GT(n, 0u) << chart;
  }
  EXPECT_GT(testing::Within(page.dom, all, "chart-timeline", "data-kind", "forward").size(), 0u);
  const std::vector<Element> worst =
      testing::Within(page.dom, all, "chart-memory-stages", "data-worst", "true");
  ASSERT_EQ(worst.size(), 1u);
  EXPECT_EQ(D(worst[0], "data-total"), json["memory"]["peak_bytes"].get<double>());
  bool fits_seen = false;
  for (const Element& e : all) {
    if (e.Get("data-key") == "fits") {
      fits_seen = true;
      EXPECT_EQ(e.Get("data-value"), json["fits"].get<bool>() ? "true" : "false");
    }
  }
  EXPECT_TRUE(fits_seen);
}

INSTANTIATE_TEST_SUITE_P(Layouts, BrowserSimulateScenarios,
                         ::testing::Values("tests/html/data/zero3_full.yaml",
                                           "tests/html/data/too_big.yaml",
                                           "tests/html/data/moe_ep.yaml",
                                           "tests/html/data/one_gpu.yaml",
                                           "tests/html/data/hostile_name.yaml"));

TEST(BrowserSweep, SmallRealSweepShowsEveryPointTheFrontAndTheTable) {
  REQUIRE_CHROMIUM(chromium);
  const SweepHtmlInput report = testing::SmallRealSweep();
  ASSERT_FALSE(report.points.empty());
  const std::string html = testing::OutputDir() + "/sweep.html",
                    png = testing::OutputDir() + "/sweep.png";
  testing::WriteFile(html, SweepHtml(report));
  const testing::Rendered page =
      testing::RenderInChromium(chromium, html, "#selftest", png, 1280, 1500);
  ASSERT_TRUE(page.ok) << page.error;
  const std::string& dom = page.dom;
  const std::vector<Element> all = testing::ParseElements(dom);
  ExpectCleanRender(all, true);
  if (::testing::Test::HasFailure()) FAIL() << ErrorsText(dom);

  size_t feasible = 0;
  for (const SweepHtmlPoint& p : report.points) feasible += p.feasible;
  const std::vector<size_t> front = ParetoFront(report.points, ParetoAxes::kThroughputVsGpus);
  // The scatter (x = GPUs: the sweep has several GPU counts) has every point.
  const std::vector<Element> pts = testing::Within(dom, all, "chart-scatter", "data-i");
  EXPECT_EQ(pts.size(), report.points.size());
  size_t grey = 0, on_front = 0;
  for (const Element& e : pts) {
    const std::string cls = e.Get("class");
    grey += cls.find("infeasible") != std::string::npos;
    on_front += cls.find("front") != std::string::npos;
  }
  EXPECT_EQ(grey, report.points.size() - feasible);
  EXPECT_EQ(on_front, front.size());
  const std::vector<Element> path = testing::Within(dom, all, "chart-scatter", "data-points");
  ASSERT_EQ(path.size(), 1u);
  EXPECT_EQ(path[0].Get("data-points"), std::to_string(front.size()));
  // The top-k table: the ranked points with their exact throughput.
  const std::vector<size_t> top = RankPoints(report);
  const std::vector<Element> tps =
      testing::Within(dom, all, "top-table", "data-key", "tokens_per_s");
  ASSERT_EQ(tps.size(), top.size());
  for (size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(D(tps[i], "data-value"), report.points[top[i]].tokens_per_s) << i;
  }
  for (const Element& e : all) {
    if (e.Get("data-key") == "points.total") {
      EXPECT_EQ(e.Get("data-value"), std::to_string(report.points.size()));
    }
    if (e.Get("data-key") == "points.feasible") {
      EXPECT_EQ(e.Get("data-value"), std::to_string(feasible));
    }
  }
  // The selftest clicked the first table row last: its layout is in the detail panel.
  const std::vector<Element> detail = testing::Within(dom, all, "point-detail", "data-field");
  EXPECT_EQ(detail.size(), report.input_keys.size() + 1 + 3 + 2 + 1 + 1);  // inputs, GPUs, outputs
  UpdateDocImage(png, "sweep.png");
}

// A sweep of 10,000 points: the report opens, draws every point and stays responsive. Prints the
// file size and the drawing times (figures for docs/html.md; no timing is asserted here).
TEST(BrowserSweep, TenThousandPoints) {
  REQUIRE_CHROMIUM(chromium);
  const SweepHtmlInput report = testing::SyntheticSweep(10000);
  const std::string html = testing::OutputDir() + "/sweep_10000.html";
  testing::WriteFile(html, SweepHtml(report));
  const size_t size = testing::ReadFile(html).size();
  const testing::Rendered page = testing::RenderInChromium(
      chromium, html, "#selftest", testing::OutputDir() + "/sweep_10000.png", 1280, 1500);
  ASSERT_TRUE(page.ok) << page.error;
  const std::vector<Element> all = testing::ParseElements(page.dom);
  ExpectCleanRender(all, true);
  if (::testing::Test::HasFailure()) FAIL() << ErrorsText(page.dom);
  size_t shown = 0;
  for (const SweepHtmlPoint& p : report.points) shown += p.gpus > 0;
  EXPECT_EQ(testing::Within(page.dom, all, "chart-scatter", "data-i").size(), shown);
  const Element* body = Body(all);
  std::printf(
      "[ report ] 10,000-point sweep report: %zu bytes (%.2f MB); charts drawn in %s ms, "
      "page ready %s ms after navigation start; x-axis switch (10,000 points redrawn) %s ms; "
      "chromium start to exit %.2f s\n",
      size, static_cast<double>(size) / 1e6, body->Get("data-render-ms").c_str(),
      body->Get("data-ready-ms").c_str(), body->Get("data-switch-ms").c_str(), page.wall_s);
}

}  // namespace
}  // namespace shardsim
