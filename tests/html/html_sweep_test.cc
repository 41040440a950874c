// The sweep report without a browser: Pareto fronts and ranking in closed form, the top-k table
// and the grouped reasons of the page, its data block.
#include "sim/report/html_sweep.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/report/html_page.h"
#include "tests/html/html_test_util.h"
#include "tests/html/sweep_points.h"

namespace shardsim {
namespace {

using Json = nlohmann::json;
constexpr double kGiB = 1073741824.0;

SweepHtmlPoint Point(int64_t gpus, double tokens_per_s, double peak_gib, bool feasible = true) {
  SweepHtmlPoint p;
  p.inputs = {std::to_string(gpus)};
  p.gpus = gpus;
  p.feasible = feasible;
  p.simulated = true;
  p.tokens_per_s = tokens_per_s;
  p.tokens_per_s_per_gpu = tokens_per_s / static_cast<double>(gpus);
  p.peak_memory_bytes = peak_gib * kGiB;
  p.capacity_bytes = 80 * kGiB;
  if (!feasible) p.reason = "does not fit in memory";
  return p;
}

// Throughput vs GPUs: a point is on the front when no point with as few GPUs is as fast.
//   0: 8 GPUs 100        front (fewest GPUs)
//   1: 8 GPUs 90         dominated by 0
//   2: 16 GPUs 250       front
//   3: 16 GPUs 250       front (equal to 2)
//   4: 32 GPUs 240       dominated by 2 (fewer GPUs, faster)
//   5: 64 GPUs 900       infeasible: takes no part
//   6: 64 GPUs 600       front
TEST(ParetoFront, ThroughputVsGpus) {
  const std::vector<SweepHtmlPoint> pts = {
      Point(8, 100, 10), Point(8, 90, 70),          Point(16, 250, 20), Point(16, 250, 30),
      Point(32, 240, 5), Point(64, 900, 90, false), Point(64, 600, 40)};
  EXPECT_EQ(ParetoFront(pts, ParetoAxes::kThroughputVsGpus), (std::vector<size_t>{0, 2, 3, 6}));
}

// Throughput vs headroom (80 GiB minus peak; more is better), ordered by headroom ascending.
//   headroom: 0: 70, 1: 10, 2: 60, 3: 50, 4: 75, 6: 40 GiB.  Front: 6 (fastest, 600), 2 (250 at
//   60 GiB beats 3), 0 (100 at 70), 4 (240 at 75 GiB dominates 0!) -> 0 is off.
TEST(ParetoFront, ThroughputVsHeadroom) {
  const std::vector<SweepHtmlPoint> pts = {
      Point(8, 100, 10), Point(8, 90, 70),          Point(16, 250, 20), Point(16, 250, 30),
      Point(32, 240, 5), Point(64, 900, 90, false), Point(64, 600, 40)};
  EXPECT_EQ(ParetoFront(pts, ParetoAxes::kThroughputVsHeadroom), (std::vector<size_t>{6, 2, 4}));
}

TEST(ParetoFront, PointsWithoutAMemoryFigureTakeNoPartInTheHeadroomFront) {
  std::vector<SweepHtmlPoint> pts = {Point(8, 100, 10), Point(8, 200, 10)};
  pts[1].peak_memory_bytes = 0;  // unknown
  EXPECT_EQ(ParetoFront(pts, ParetoAxes::kThroughputVsHeadroom), (std::vector<size_t>{0}));
  EXPECT_EQ(ParetoFront(pts, ParetoAxes::kThroughputVsGpus), (std::vector<size_t>{1}));
  EXPECT_TRUE(ParetoFront({}, ParetoAxes::kThroughputVsGpus).empty());
}

TEST(RankPoints, BestFirstFeasibleOnlyTiesInPointOrder) {
  SweepHtmlInput r;
  r.points = {Point(8, 100, 10), Point(8, 300, 10), Point(8, 900, 90, false), Point(8, 300, 10),
              Point(8, 200, 10)};
  r.top_k = 3;
  EXPECT_EQ(RankPoints(r), (std::vector<size_t>{1, 3, 4}));
  r.rank_by = SweepRankBy::kTimeToTrain;
  r.points[0].time_to_train_s = 50.0;
  r.points[4].time_to_train_s = 20.0;
  EXPECT_EQ(RankPoints(r), (std::vector<size_t>{4, 0, 1}));  // then those without it, in order
}

TEST(SweepHtml, TableRowsCarryExactValuesAndReasonsAreGroupedAndEscaped) {
  SweepHtmlInput r;
  r.title = "t<1>";
  r.input_keys = {"gpus"};
  r.points = {Point(8, 100.5, 10), Point(16, 300.25, 10), Point(16, 900, 90, false),
              Point(32, 1, 0, false)};
  r.points[3].simulated = false;
  r.points[3].reason = "invalid <layout>";
  const std::string html = SweepHtml(r);
  EXPECT_NE(html.find("<title>shardsim sweep: t&lt;1&gt;</title>"), std::string::npos);
  const std::vector<testing::Element> all = testing::ParseElements(html);
  const std::vector<testing::Element> rows = testing::Within(html, all, "top-table", "data-rank");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].Get("data-i"), "1");
  EXPECT_EQ(rows[1].Get("data-i"), "0");
  const std::vector<testing::Element> tps =
      testing::Within(html, all, "top-table", "data-key", "tokens_per_s");
  ASSERT_EQ(tps.size(), 2u);
  EXPECT_EQ(tps[0].Get("data-value"), "300.25");
  EXPECT_EQ(testing::TextAfter(html, tps[0]), "300.2");
  EXPECT_NE(html.find("<li data-reason-count=\"1\"><strong>1</strong> invalid &lt;layout&gt;</li>"),
            std::string::npos);
  const Json d = Json::parse(testing::DataBlock(html));
  EXPECT_EQ(d["front_gpus"], Json::parse("[0, 1]"));
  EXPECT_EQ(d["peak_bytes"][3], nullptr);
  EXPECT_EQ(d["reasons"][d["reason"][3].get<size_t>()], "invalid <layout>");
}

// Infeasible points are grouped by their reason's group, as the text output groups them: a
// GPT-3 sweep listed 838 "reasons" (one per distinct detail) where the text showed 5 groups.
TEST(SweepHtml, ReasonsAreGroupedAsTheTextGroupsThem) {
  SweepHtmlInput r;
  r.input_keys = {"gpus"};
  r.points = {Point(8, 100, 10), Point(8, 1, 0, false), Point(8, 1, 0, false),
              Point(8, 1, 0, false)};
  r.points[1].reason = "parallel.tp: 3 does not divide model.num_heads (32)";
  r.points[2].reason = "parallel.tp: 5 does not divide model.num_heads (32)";
  r.points[3].reason = "simulated peak memory: 90 GiB of 80 GiB";
  const std::string html = SweepHtml(r);
  EXPECT_NE(html.find("<li data-reason-count=\"2\"><strong>2</strong> parallel.tp <span "
                      "class=\"hint\">(e.g. parallel.tp: 3 does not divide model.num_heads "
                      "(32))</span></li>"),
            std::string::npos)
      << html;
  EXPECT_NE(html.find("<li data-reason-count=\"1\"><strong>1</strong> simulated peak memory"),
            std::string::npos);
  EXPECT_EQ(html.find("data-reason-count=\"3\""), std::string::npos);
  // The hover keeps each point's own reason.
  const Json d = Json::parse(testing::DataBlock(html));
  EXPECT_EQ(d["reasons"][d["reason"][2].get<size_t>()],
            "parallel.tp: 5 does not divide model.num_heads (32)");
}

// With a tie fraction the top table says how far each point is from the best, and which tie.
TEST(SweepHtml, TopTableMarksTiesWithinTheUncertainty) {
  SweepHtmlInput r;
  r.input_keys = {"gpus"};
  r.tie_fraction = 0.15;
  r.points = {Point(8, 100, 10), Point(8, 90, 10), Point(8, 50, 10)};
  const std::string html = SweepHtml(r);
  EXPECT_NE(html.find("<th class=\"num\">vs best</th>"), std::string::npos);
  EXPECT_NE(html.find("data-tie=\"0\">best</td>"), std::string::npos);
  EXPECT_NE(html.find("data-tie=\"1\">-10.0% tie</td>"), std::string::npos) << html;
  EXPECT_NE(html.find("data-tie=\"0\">-50.0%</td>"), std::string::npos);
  r.tie_fraction = 0.0;
  EXPECT_EQ(SweepHtml(r).find("vs best"), std::string::npos);
}

TEST(SweepHtml, TextThatIsNotUtf8DoesNotThrow) {
  SweepHtmlInput r;
  r.title = "bad \xff byte";
  r.input_keys = {"k"};
  r.points = {Point(8, 100, 10, false)};
  r.points[0].reason = "reason \xfe";
  std::string html;
  EXPECT_NO_THROW(html = SweepHtml(r));
  EXPECT_EQ(Json::parse(testing::DataBlock(html))["reasons"][0], "reason \xef\xbf\xbd");
}

TEST(SweepHtml, SmallRealSweepHasFeasibleAndInfeasiblePoints) {
  const SweepHtmlInput r = testing::SmallRealSweep();
  ASSERT_EQ(r.points.size(), 180u);
  size_t feasible = 0, invalid = 0, too_big = 0;
  for (const SweepHtmlPoint& p : r.points) {
    feasible += p.feasible;
    invalid += !p.simulated;
    too_big += p.simulated && !p.feasible;
  }
  EXPECT_GT(feasible, 20u);
  EXPECT_GT(invalid, 5u);
  EXPECT_GT(too_big, 5u);
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// The top table's executed column, and the note under it with the range of HFU's FLOPs over
// those executed on its rows: only where the convention counts more than ran.
TEST(SweepHtml, ExecutedColumnAndConventionNote) {
  SweepHtmlInput in;
  in.title = "t";
  in.input_keys = {"gpus"};
  in.points = {Point(8, 100, 10), Point(16, 250, 20), Point(32, 240, 5)};
  const double executed[] = {0.41, 0.38, 0.0};  // the last: not known (an old row)
  const double factor[] = {1.25, 1.5, 0.0};
  for (size_t i = 0; i < 3; ++i) {
    in.points[i].executed_fraction = executed[i];
    in.points[i].convention_over_executed = factor[i];
  }
  const std::string html = SweepHtml(in);
  EXPECT_NE(html.find("<th class=\"num\">MFU</th><th class=\"num\">executed</th>"),
            std::string::npos);
  EXPECT_NE(html.find("data-key=\"executed_fraction_of_peak\" data-value=\"0.41\">41.0%"),
            std::string::npos);
  EXPECT_NE(html.find("on the rows above, HFU's FLOPs are 1.25x to 1.50x those executed."),
            std::string::npos);
  for (SweepHtmlPoint& p : in.points) p.convention_over_executed = 1.0;
  EXPECT_EQ(SweepHtml(in).find("id=\"flops-note\""), std::string::npos);
}

}  // namespace
}  // namespace shardsim
