// Result rows: CSV and JSON Lines, round trips, no line breaks, exact prefixes.
#include "sim/sweep/rows.h"

#include <gtest/gtest.h>

namespace shardsim {
namespace {

Row Sample() {
  Row r;
  r.point = 42;
  r.inputs = {"8", "selective", "{base: h100-sxm, memory: {capacity: 96 GiB}}", ""};
  r.status = PointStatus::kNoFit;
  r[Metric::kGpus] = 512;
  r[Metric::kTokensPerS] = 1.0 / 3.0;
  r[Metric::kPeakMemory] = 8.5899345920e10;
  r[Metric::kMfu] = 0.4567;
  r.bottleneck = "tp all_reduce";
  r.reason = "peak memory: \"quoted\", with comma\nand a line break";
  return r;
}

const std::vector<std::string> kColumns = {"parallel.tp", "training.recompute", "hardware",
                                           "training.micro_batch"};

TEST(Rows, NumbersAreShortestRoundTrip) {
  EXPECT_EQ(FormatNumber(1024), "1024");
  EXPECT_EQ(FormatNumber(0.6053), "0.6053");
  EXPECT_EQ(FormatNumber(1.7e19), "1.7e+19");
  EXPECT_EQ(FormatNumber(1.0 / 3.0), "0.3333333333333333");
}

TEST(Rows, CsvRoundTripKeepsEveryByte) {
  const RowFormat f(RowFormatKind::kCsv, kColumns);
  const std::string line = f.Format(Sample());
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  EXPECT_EQ(line.rfind("42,8,selective,\"{base: h100-sxm, memory: {capacity: 96 GiB}}\",,no_fit,"
                       "false,512,,0.3333333333333333,",
                       0),
            0u)
      << line;
  Result<Row> back = f.Parse(line.substr(0, line.size() - 1));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(f.Format(*back), line);
  EXPECT_EQ(back->inputs, Sample().inputs);
  EXPECT_EQ(back->reason, "peak memory: \"quoted\", with comma and a line break");
  EXPECT_FALSE(back->has(Metric::kStepTime));
  EXPECT_EQ((*back)[Metric::kTokensPerS], 1.0 / 3.0);
  EXPECT_EQ(f.Header().rfind("point,parallel.tp,training.recompute,hardware,"
                             "training.micro_batch,status,fits,gpus,step_time_s,",
                             0),
            0u);
}

TEST(Rows, JsonLinesRoundTripKeepsEveryByte) {
  const RowFormat f(RowFormatKind::kJsonl, kColumns);
  const std::string line = f.Format(Sample());
  EXPECT_EQ(line.rfind("{\"point\":42,\"parallel.tp\":8,\"training.recompute\":\"selective\","
                       "\"hardware\":\"{base: h100-sxm, memory: {capacity: 96 GiB}}\","
                       "\"training.micro_batch\":\"\",\"status\":\"no_fit\",\"fits\":false,"
                       "\"gpus\":512,\"step_time_s\":null,",
                       0),
            0u)
      << line;
  Result<Row> back = f.Parse(line.substr(0, line.size() - 1));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(f.Format(*back), line);
  EXPECT_EQ(f.Header(), "");
}

// A `gpus` axis: its input column already holds the GPU count, so the metric column of the same
// name is not written again (CSV had two `gpus` columns, each JSON line the key twice), and reads
// back from the input.
TEST(Rows, AGpusAxisIsOneColumn) {
  for (RowFormatKind kind : {RowFormatKind::kCsv, RowFormatKind::kJsonl}) {
    const RowFormat f(kind, {"gpus", "training.recompute"});
    Row r;
    r.point = 3;
    r.inputs = {"64", "full"};
    r.status = PointStatus::kOk;
    r[Metric::kGpus] = 64;
    r[Metric::kTokensPerS] = 1000;
    const std::string line = f.Format(r);
    size_t count = 0;
    for (size_t at = line.find("gpus"); at != std::string::npos; at = line.find("gpus", at + 1)) {
      ++count;
    }
    EXPECT_EQ(count, kind == RowFormatKind::kJsonl ? 1u : 0u) << line;
    if (kind == RowFormatKind::kCsv) {
      EXPECT_EQ(f.Header().rfind("point,gpus,training.recompute,status,fits,step_time_s,", 0), 0u)
          << f.Header();
    }
    Result<Row> back = f.Parse(line.substr(0, line.size() - 1));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ((*back)[Metric::kGpus], 64);
    EXPECT_EQ(f.Format(*back), line);
  }
}

// The executed-FLOPs columns simulate prints beside MFU / HFU: after `reason`, so that every
// column a file had before keeps its place; they round-trip like the others. A row whose
// conventions count more than was executed carries simulate's note (FlopsNoteOf); one that
// does not, none.
TEST(Rows, ExecutedFlopsColumnsComeAfterTheReason) {
  const RowFormat csv(RowFormatKind::kCsv, kColumns);
  const std::string header = csv.Header();
  EXPECT_NE(header.find(",bottleneck_share,bottleneck,reason,executed_tflops_per_gpu,"
                        "executed_fraction_of_peak,flops_convention_over_executed\n"),
            std::string::npos)
      << header;
  Row r = Sample();
  r[Metric::kMfu] = 1.02;
  r[Metric::kExecutedTflopsPerGpu] = 612.5;
  r[Metric::kExecutedFractionOfPeak] = 0.619;
  r[Metric::kFlopsConventionOverExecuted] = 1.75;
  for (RowFormatKind kind : {RowFormatKind::kCsv, RowFormatKind::kJsonl}) {
    const RowFormat f(kind, kColumns);
    const std::string line = f.Format(r);
    if (kind == RowFormatKind::kCsv) {
      EXPECT_NE(line.find("line break\",612.5,0.619,1.75\n"), std::string::npos) << line;
    } else {
      EXPECT_NE(line.find("line break\",\"executed_tflops_per_gpu\":612.5,"
                          "\"executed_fraction_of_peak\":0.619,"
                          "\"flops_convention_over_executed\":1.75}\n"),
                std::string::npos)
          << line;
    }
    Result<Row> back = f.Parse(line.substr(0, line.size() - 1));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ((*back)[Metric::kExecutedFractionOfPeak], 0.619);
    EXPECT_EQ((*back)[Metric::kFlopsConventionOverExecuted], 1.75);
    EXPECT_EQ(f.Format(*back), line);
  }
  EXPECT_EQ(FlopsNoteOf(r),
            "MFU / HFU count causal attention as the full s x s square (the published "
            "convention); the kernels ran its unmasked half: HFU's FLOPs are 1.75x those "
            "executed, 61.9% of peak was executed");
  r[Metric::kFlopsConventionOverExecuted] = 1.0;
  EXPECT_EQ(FlopsNoteOf(r), "");
  EXPECT_EQ(FlopsNoteOf(Sample()), "");  // not simulated: nothing to explain
}

TEST(Rows, MalformedLinesAreErrors) {
  const RowFormat csv(RowFormatKind::kCsv, kColumns);
  EXPECT_FALSE(csv.Parse("1,2,3").ok());
  EXPECT_FALSE(csv.Parse("").ok());
  const RowFormat json(RowFormatKind::kJsonl, kColumns);
  EXPECT_FALSE(json.Parse("{\"point\":1").ok());
  std::string other = json.Format(Sample());
  other.replace(other.find("\"hardware\""), 10, "\"hardwire\"");
  EXPECT_FALSE(json.Parse(other.substr(0, other.size() - 1)).ok());
}

}  // namespace
}  // namespace shardsim
