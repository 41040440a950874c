// Progress text: a bar with rate and ETA on a terminal, plain periodic lines otherwise.
#include "sim/sweep/progress.h"

#include <gtest/gtest.h>

namespace shardsim {
namespace {

TEST(SweepProgressMeter, PlainLinesEveryInterval) {
  ProgressMeter m(ProgressStyle::kPlain, "sweep", 10.0);
  SweepProgress p{100, 1000, 0, 40};
  EXPECT_EQ(m.Update(p, 1.0),
            "sweep: 100/1000 points (10.0%, 100 points/s, ETA 9 s, 40 feasible)\n");
  p.done = 150;
  EXPECT_EQ(m.Update(p, 5.0), "");  // not due yet
  p.done = 1000;
  EXPECT_EQ(m.Finish(p, 12.5),
            "sweep: 1000/1000 points (100%, 80.0 points/s, done in 13 s, 40 feasible)\n");
}

TEST(SweepProgressMeter, BarRedrawsInPlaceAndCountsOnlyNewPoints) {
  ProgressMeter m(ProgressStyle::kBar, "sweep");
  SweepProgress p{600, 1000, 500, 7};  // 500 resumed: the rate counts 100 in 2 s
  const std::string bar = m.Update(p, 2.0);
  EXPECT_EQ(bar,
            "\rsweep [##################............] 600/1000 60.0%, 50.0 points/s, ETA 8 s, "
            "7 feasible   ");
  EXPECT_EQ(m.Finish(p, 2.0).back(), '\n');
}

TEST(SweepProgressMeter, Styles) {
  EXPECT_EQ(*ParseProgressStyle("auto", true), ProgressStyle::kBar);
  EXPECT_EQ(*ParseProgressStyle("auto", false), ProgressStyle::kPlain);
  EXPECT_EQ(*ParseProgressStyle("none", true), ProgressStyle::kNone);
  EXPECT_FALSE(ParseProgressStyle("fancy", true).ok());
  ProgressMeter none(ProgressStyle::kNone, "sweep");
  EXPECT_EQ(none.Update(SweepProgress{1, 2, 0, 0}, 100.0), "");
}

}  // namespace
}  // namespace shardsim
