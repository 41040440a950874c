// The scattered-rows lookup every measured kernel table shares (sim/hardware/scattered_table.h):
// exact at a row, the 8 nearest rows weighted 1/d^2 in log2 coordinates between rows, the query
// clamped into the rows' box beyond them, keys kept apart, repeated shapes merged geometrically.
#include "sim/hardware/scattered_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace shardsim {
namespace {

using Row = ScatteredTable::Row;

TEST(ScatteredTable, ExactAtARow) {
  const ScatteredTable t({{0, {256, 256, 256, 1}, 10.0}, {0, {1024, 256, 256, 1}, 40.0}});
  const auto l = t.Find(0, {1024, 256, 256, 1});
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->exact);
  EXPECT_FALSE(l->outside);
  EXPECT_DOUBLE_EQ(l->rate, 40.0);
  EXPECT_FALSE(t.Find(1, {1024, 256, 256, 1}));  // another key: no rows
}

TEST(ScatteredTable, InverseSquaredDistanceBetweenRows) {
  // Rows at m = 256 and 1024 (log2 8 and 10); the query at 512 (log2 9) is 1 from each, and a
  // third row at (256, 1024) is sqrt(1 + 4) = sqrt(5) away: weights 1, 1, 1/5 on log(rate).
  const ScatteredTable t({{0, {256, 256, 256, 1}, 10.0},
                          {0, {1024, 256, 256, 1}, 40.0},
                          {0, {256, 1024, 256, 1}, 80.0}});
  const auto l = t.Find(0, {512, 256, 256, 1});
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->exact);
  EXPECT_EQ(l->rows, 3);
  const double expect =
      std::exp((std::log(10.0) + std::log(40.0) + std::log(80.0) / 5.0) / (2.0 + 0.2));
  EXPECT_NEAR(l->rate, expect, 1e-12 * expect);
}

TEST(ScatteredTable, OnlyTheEightNearestRowsCount) {
  std::vector<Row> rows;
  for (int i = 0; i < 8; ++i) rows.push_back({0, {int64_t{1} << (10 + i), 64, 64, 1}, 100.0});
  rows.push_back({0, {int64_t{1} << 20, 64, 64, 1}, 1e6});  // the ninth, farthest from the query
  const ScatteredTable t(rows);
  const auto l = t.Find(0, {1536, 64, 64, 1});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rows, 8);
  EXPECT_NEAR(l->rate, 100.0, 1e-9);
}

TEST(ScatteredTable, ClampsIntoTheBoxOfItsRows) {
  const ScatteredTable t({{0, {256, 256, 256, 1}, 10.0}, {0, {1024, 1024, 1024, 1}, 40.0}});
  const auto l = t.Find(0, {4096, 64, 512, 1});
  ASSERT_TRUE(l);
  EXPECT_TRUE(l->outside);
  EXPECT_EQ(l->clamped, (ScatteredTable::Shape{1024, 256, 512, 1}));
}

TEST(ScatteredTable, RepeatedShapesMergeGeometrically) {
  const ScatteredTable t({{0, {512, 512, 512, 1}, 100.0}, {0, {512, 512, 512, 1}, 400.0}});
  EXPECT_EQ(t.size(0), 1u);
  EXPECT_NEAR(t.Find(0, {512, 512, 512, 1})->rate, 200.0, 1e-9);
}

}  // namespace
}  // namespace shardsim
