#include "sim/base/units.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sim/base/strings.h"

namespace shardsim {
namespace {

TEST(ParseQuantity, BytesDecimalAndBinary) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("80 GiB", Dimension::kBytes), 80.0 * 1073741824.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("80 GB", Dimension::kBytes), 80e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5KiB", Dimension::kBytes), 1536.0);
}

TEST(ParseQuantity, Bandwidth) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("3.35 TB/s", Dimension::kBandwidth), 3.35e12);
  EXPECT_DOUBLE_EQ(*ParseQuantity("400 Gb/s", Dimension::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("400 Gbps", Dimension::kBandwidth), 50e9);
  EXPECT_DOUBLE_EQ(*ParseQuantity("450 GB/s", Dimension::kBandwidth), 450e9);
}

TEST(ParseQuantity, FlopRateAndTime) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("989.4 TFLOP/s", Dimension::kFlopRate), 989.4e12);
  EXPECT_DOUBLE_EQ(*ParseQuantity("25 us", Dimension::kTime), 25e-6);
  EXPECT_DOUBLE_EQ(*ParseQuantity("15e12", Dimension::kCount), 15e12);
}

TEST(ParseQuantity, ErrorsSayWhatIsExpected) {
  auto r = ParseQuantity("80", Dimension::kBytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "\"80\" has no unit; expected e.g. \"80 GiB\"");
  auto u = ParseQuantity("80 GiBs", Dimension::kBytes);
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().message(),
            "\"80 GiBs\": unknown unit \"GiBs\"; expected e.g. \"80 GiB\" (units: B, KB, MB, GB, "
            "TB, PB, KiB, MiB, GiB, TiB, PiB)");
  EXPECT_FALSE(ParseQuantity("fast", Dimension::kBandwidth).ok());
}

// Times as people write a restart or an MTBF: days, hours and minutes by short and long names;
// an unknown one lists the valid units.
TEST(ParseQuantity, TimesFromPicosecondsToDays) {
  EXPECT_DOUBLE_EQ(*ParseQuantity("1 day", Dimension::kTime), 86400.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("2 d", Dimension::kTime), 172800.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("1.5 hr", Dimension::kTime), 5400.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("3 hours", Dimension::kTime), 10800.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("10 minutes", Dimension::kTime), 600.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("90 min", Dimension::kTime), 5400.0);
  EXPECT_DOUBLE_EQ(*ParseQuantity("30 sec", Dimension::kTime), 30.0);
  auto w = ParseQuantity("1 week", Dimension::kTime);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().message(),
            "\"1 week\": unknown unit \"week\"; expected e.g. \"5 us\" (units: ps, ns, us, ms, s, "
            "min, h, d, or sec, minutes, hours, days)");
}

TEST(SimTime, RoundsToPicoseconds) {
  EXPECT_EQ(SimTime::FromSeconds(Seconds(1.5e-12)).picos(), 2);
  EXPECT_EQ(SimTime::FromSeconds(Seconds(-1.0)).picos(), 0);
  EXPECT_EQ(SimTime::FromSeconds(Seconds(2.0)).picos(), 2000000000000);
  EXPECT_DOUBLE_EQ(SimTime::FromPicos(500).seconds().value(), 5e-10);
}

// FromSeconds rounds as std::llround (half away from zero) without calling it: on halves, on
// the doubles next to them, and on random times from picoseconds to months.
TEST(SimTime, RoundsAsLlround) {
  std::mt19937_64 rng(17);
  std::vector<double> ps = {0.5,
                            1.5,
                            2.5,
                            0.49999999999999994,
                            std::nextafter(0.5, 1.0),
                            4503599627370495.5,
                            4503599627370497.0,
                            9.1e18};
  for (int i = 0; i < 100000; ++i) {
    ps.push_back(std::exp(std::uniform_real_distribution<double>(-3.0, 42.0)(rng)));
    ps.push_back(std::floor(ps.back()) + 0.5);
  }
  for (double p : ps) {
    EXPECT_EQ(SimTime::FromSeconds(Seconds(p * 1e-12)).picos(), std::llround(p * 1e-12 * 1e12))
        << p;
  }
}

TEST(Units, PhysicalConversions) {
  const Seconds t = Bytes(1e9) / BytesPerSec(1e12);
  EXPECT_DOUBLE_EQ(t.value(), 1e-3);
  EXPECT_DOUBLE_EQ((Flops(2e12) / FlopsPerSec(1e12)).value(), 2.0);
}

TEST(Format, HumanReadable) {
  EXPECT_EQ(FormatBytes(Bytes(80.0 * 1073741824.0)), "80.0 GiB");
  EXPECT_EQ(FormatSeconds(Seconds(0.0123)), "12.3 ms");
  EXPECT_EQ(FormatRate(989.4e12, "FLOP/s"), "989 TFLOP/s");
  EXPECT_EQ(FormatCount(70.55e9), "70.5 B");
}

TEST(Strings, DidYouMean) {
  EXPECT_EQ(DidYouMean("hiden_size", {"hidden_size", "num_heads"}),
            "; did you mean 'hidden_size'?");
  EXPECT_EQ(DidYouMean("zzz", {"hidden_size", "num_heads"}), "");
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace shardsim
