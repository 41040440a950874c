// The goodput model (sim/goodput): closed forms of Young 1974, Daly 2006 and the expected maximum
// of n normals; the checkpoint the budget implies; the Llama 3 405B run against the paper's
// figures; goodput 1 when failures and stragglers are off.
#include "sim/goodput/goodput.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numbers>
#include <vector>

#include "sim/config/loader.h"
#include "sim/model/params.h"
#include "sim/report/simulate.h"
#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

Scenario Load(const std::string& path) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  Result<Scenario> sc = LoadScenario(path, LoadOptions{});
  EXPECT_TRUE(sc.ok()) << sc.status().ToString();
  return sc.ok() ? *sc : Scenario{};
}

// Young 1974: tau = sqrt(2 delta M). A 60 s write and a 10,000 s MTBF: sqrt(1.2e6) = 1095.445 s.
TEST(Goodput, YoungInterval) {
  EXPECT_NEAR(YoungInterval(60.0, 1e4), 1095.4451, 1e-4);
  EXPECT_DOUBLE_EQ(YoungInterval(2.0, 8.0), std::sqrt(32.0));
}

// Daly 2006's higher-order optimum: sqrt(2 delta M)(1 + sqrt(delta/2M)/3 + (delta/2M)/9) -
// delta; M past delta = 2M.
TEST(Goodput, DalyInterval) {
  // delta/2M = 0.003: 1095.4451 * (1 + 0.0182574 + 0.000333) - 60 = 1055.81.
  EXPECT_NEAR(DalyInterval(60.0, 1e4),
              1095.4451 * (1.0 + std::sqrt(0.003) / 3.0 + 0.003 / 9.0) - 60.0, 1e-3);
  EXPECT_NEAR(DalyInterval(60.0, 1e4), 1055.81, 0.01);
  EXPECT_DOUBLE_EQ(DalyInterval(300.0, 100.0), 100.0);  // delta >= 2M: checkpoint every MTBF
  // Small writes: Daly tends to Young.
  EXPECT_NEAR(DalyInterval(1e-3, 1e6) / YoungInterval(1e-3, 1e6), 1.0, 1e-4);
}

// Daly 2006's expected wall time and its first order: work / wall = tau / ((tau + delta)(1 + (R +
// (tau + delta)/2) / M)); the lost work per interruption is R + (tau + delta)/2.
TEST(Goodput, ExpectedLostWork) {
  EXPECT_DOUBLE_EQ(LostPerInterruption(300.0, 10.0, 600.0), 600.0 + 155.0);
  const double tau = 300.0, delta = 10.0, r = 600.0, m = 1e8;  // second-order terms ~1e-10
  const double first_order = tau / ((tau + delta) * (1.0 + (r + (tau + delta) / 2.0) / m));
  EXPECT_NEAR(DalyEfficiency(tau, delta, m, r), first_order, 1e-9);
  // No restart, no write: the expected wall time gives tau / (M (e^(tau/M) - 1)).
  EXPECT_NEAR(DalyEfficiency(1000.0, 0.0, 1e4, 0.0), 1000.0 / (1e4 * std::expm1(0.1)), 1e-12);
  // More frequent failures never help.
  EXPECT_LT(DalyEfficiency(tau, delta, 1e4, r), DalyEfficiency(tau, delta, 1e5, r));
}

// E[max of n standard normals]: 0, 1/sqrt(pi), 3/(2 sqrt(pi)) exactly; n = 4, 5, 10, 100, 1000
// from the tables of order statistics (Harter 1961, Biometrika 48: 1.029375, 1.162964,
// 1.538753, 2.507594, 3.241436).
TEST(Goodput, ExpectedMaxOfNormals) {
  const double sqrt_pi = std::sqrt(std::numbers::pi);
  EXPECT_NEAR(ExpectedMaxStdNormal(1), 0.0, 1e-12);
  EXPECT_NEAR(ExpectedMaxStdNormal(2), 1.0 / sqrt_pi, 1e-9);
  EXPECT_NEAR(ExpectedMaxStdNormal(3), 1.5 / sqrt_pi, 1e-9);
  EXPECT_NEAR(ExpectedMaxStdNormal(4), 1.029375, 1e-6);
  EXPECT_NEAR(ExpectedMaxStdNormal(5), 1.162964, 1e-6);
  EXPECT_NEAR(ExpectedMaxStdNormal(10), 1.538753, 1e-6);
  EXPECT_NEAR(ExpectedMaxStdNormal(100), 2.507594, 1e-6);
  EXPECT_NEAR(ExpectedMaxStdNormal(1000), 3.241436, 1e-6);
  // The default straggler cv: the slowest of 65,536 ranks 9% slower than the mean.
  EXPECT_NEAR(StragglerFactor(DefaultStragglerCv(), kPrismGpus), 1.09, 1e-12);
  // The constant it divides by is the integral's double.
  EXPECT_EQ(kPrismExpectedMax, ExpectedMaxStdNormal(kPrismGpus));
  EXPECT_EQ(DefaultStragglerCv(), kPrismSlowdown / ExpectedMaxStdNormal(kPrismGpus));
  EXPECT_DOUBLE_EQ(StragglerFactor(0.0, 16384), 1.0);
  EXPECT_DOUBLE_EQ(StragglerFactor(0.05, 1), 1.0);
}

// ExpectedMaxStdNormal skips the left tail whose terms are exactly zero: the same double as
// Simpson's rule over all 2,001 points, written out here as the library had it.
TEST(Goodput, ExpectedMaxSkipsOnlyTermsThatAreZero) {
  const auto full = [](double n) {
    const auto log_cdf = [](double x) {
      const double t = x / std::numbers::sqrt2;
      return x < 0.0 ? std::log(0.5 * std::erfc(-t)) : std::log1p(-0.5 * std::erfc(t));
    };
    constexpr double kLo = -10.0, kHi = 10.0;
    constexpr int kSteps = 2000;
    constexpr double h = (kHi - kLo) / kSteps;
    const double log_n = std::log(n);
    const double log_norm = -0.5 * std::log(2.0 * std::numbers::pi);
    double sum = 0.0;
    int zero = 0;
    for (int i = 0; i <= kSteps; ++i) {
      const double x = kLo + h * i;
      const double f = x * std::exp(log_n + log_norm - 0.5 * x * x + (n - 1.0) * log_cdf(x));
      const double w = (i == 0 || i == kSteps) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
      if (f == 0.0) ++zero;
      sum += w * f;
    }
    return std::pair<double, int>(sum * h / 3.0, zero);
  };
  int skipped_somewhere = 0;
  for (double n : {2.0, 3.0, 7.5, 8.0, 100.0, 1000.0, 1024.0, 4096.0, 16384.0, 65536.0, 1e6,
                   16777216.0, 1099511627776.0}) {
    const auto [expected, zeros] = full(n);
    EXPECT_EQ(ExpectedMaxStdNormal(n), expected) << "n = " << n;
    skipped_somewhere += zeros > 0;
  }
  EXPECT_GT(skipped_somewhere, 5);  // the large n have a left tail to skip
}

// A precomputed E[max] (a sweep's, once per GPU count) gives the goodput computed without it,
// bit for bit, and the explanation prints it.
TEST(Goodput, GivenExpectedMaxIsTheComputedOne) {
  Scenario sc;
  sc.gpus = 1024;
  sc.topology.gpus_per_node = 8;
  MemoryBudget m;
  Result<Goodput> a = EstimateGoodput(sc, m, 10.0);
  Result<Goodput> b = EstimateGoodput(sc, m, 10.0, ExpectedMaxStdNormal(1024));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->straggler_expected_max, ExpectedMaxStdNormal(1024));
  EXPECT_EQ(a->straggler_factor, b->straggler_factor);
  EXPECT_EQ(a->straggler_factor, StragglerFactor(a->straggler_cv, 1024));
  EXPECT_EQ(a->fraction, b->fraction);
  EXPECT_EQ(ExplainGoodput(sc, *a, 1e6), ExplainGoodput(sc, *b, 1e6));
}

// Llama 3: 419 unexpected interruptions in 54 days on 16,384 GPUs = 7.76 per day.
TEST(Goodput, DefaultRatesAreTheLlama3Figures) {
  EXPECT_NEAR(kDefaultInterruptionsPerGpuHour * 16384 * 24, 419.0 / 54.0, 1e-9);
  EXPECT_NEAR(kDefaultPlannedPerGpuHour * 16384 * 24, 47.0 / 54.0, 1e-9);
}

// Failures, planned stops and stragglers off: the booked time is the ideal time.
TEST(Goodput, OneWithFailuresAndStragglersOff) {
  Scenario sc = Load("scenarios/quickstart.yaml");
  sc.training.tokens = 1e12;
  sc.reliability.interruptions_per_gpu_hour = 0.0;
  sc.reliability.planned_interruptions_per_gpu_hour = 0.0;
  sc.reliability.straggler_cv = 0.0;
  Result<SimResult> r = Simulate(sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->goodput.has_value());
  EXPECT_EQ(r->goodput->fraction, 1.0);
  EXPECT_EQ(r->goodput->lost_s_per_day, 0.0);
  EXPECT_FALSE(r->goodput->job_mtbf_s.has_value());
  EXPECT_FALSE(r->goodput->checkpoint_interval_s.has_value());
  EXPECT_EQ(*r->time_to_train_s, *r->time_to_train_ideal_s);
  // A fixed interval still costs its writes: tau / (tau + delta).
  sc.reliability.checkpoint_interval = 3600.0;
  r = Simulate(sc);
  ASSERT_TRUE(r.ok());
  const Goodput& g = *r->goodput;
  EXPECT_NEAR(g.fraction,
              *g.checkpoint_interval_s / (*g.checkpoint_interval_s + g.checkpoint_write_s), 1e-12);
  EXPECT_LT(g.fraction, 1.0);
}

// The checkpoint holds weights and optimizer state once: 2 + 12 bytes per parameter under
// mixed-precision Adam, whatever the ZeRO stage shards (a fully parallel save).
TEST(Goodput, CheckpointIsTheModelStateOnce) {
  Scenario sc = Load("scenarios/llama3-405b-h100x16k.yaml");
  Result<ParamCount> params = CountParams(sc.model);
  ASSERT_TRUE(params.ok());
  for (int zero : {0, 1, 2, 3}) {
    sc.parallel.zero_stage = zero;
    Result<MemoryBudget> m = EstimateMemory(sc.model, sc.training, sc.parallel, sc.hardware);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const CheckpointSize c = CheckpointBytes(*m, sc);
    EXPECT_NEAR(c.total / (14.0 * static_cast<double>(params->total)), 1.0, 1e-3) << zero;
    EXPECT_NEAR(c.per_node, 8.0 * c.per_gpu, 1e-6);
  }
}

// Llama 3 405B on 16,384 H100 with the defaults: 7.76 unexpected interruptions a day (the paper:
// 419 in 54 days) and an effective training time above 90% (the paper: "higher than 90%").
TEST(Goodput, Llama3_405bMatchesThePaper) {
  const Scenario sc = Load("scenarios/llama3-405b-h100x16k.yaml");
  Result<SimResult> r = Simulate(sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->goodput.has_value());
  const Goodput& g = *r->goodput;
  std::printf(
      "llama3-405b-h100x16k: %.2f unexpected interruptions/day (paper 7.76), MTBF %.0f s, "
      "checkpoint %.2f TB written in %.2f s every %.0f s, restart %.0f s, effective training "
      "time %.1f%% (paper > 90%%), stragglers x%.3f, goodput %.1f%%, time to train %.1f days "
      "booked / %.1f ideal\n",
      g.interruptions_per_day, *g.job_mtbf_s, g.checkpoint.total / 1e12, g.checkpoint_write_s,
      *g.checkpoint_interval_s, g.restart_s, 100.0 * g.effective_training_time, g.straggler_factor,
      100.0 * g.fraction, *r->time_to_train_s / 86400.0, *r->time_to_train_ideal_s / 86400.0);
  EXPECT_NEAR(g.interruptions_per_day, 419.0 / 54.0, 0.01);
  EXPECT_GT(g.effective_training_time, 0.90);
  EXPECT_LT(g.effective_training_time, 0.97);
  EXPECT_GT(g.straggler_factor, 1.0);
  EXPECT_NEAR(*r->time_to_train_s, *r->time_to_train_ideal_s / g.fraction, 1e-6);
  EXPECT_NEAR(g.lost_s_per_day, 86400.0 * (1.0 - g.fraction), 1e-6);
  // The 5.7 TB checkpoint at Tectonic's 2 TB/s.
  EXPECT_NEAR(g.checkpoint_write_s, g.checkpoint.total / 2e12, 1e-9);
  // Async checkpoints pause training for the device-to-host copy only.
  Scenario async = sc;
  async.reliability.async_checkpoint = true;
  Result<SimResult> a = Simulate(async);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->goodput->checkpoint_blocking_s, a->goodput->checkpoint.per_gpu / 25e9, 1e-9);
  EXPECT_LT(a->goodput->checkpoint_blocking_s, g.checkpoint_blocking_s);
}

// A job that fails faster than it restarts never finishes: an infeasible result (the step is
// still measured), not an error and not a division by zero; the reason names the user's key.
TEST(Goodput, NeverFinishingIsInfeasible) {
  Scenario sc = Load("scenarios/llama3-405b-h100x16k.yaml");
  sc.reliability.interruptions_per_gpu_hour = 10.0;
  Result<SimResult> r = Simulate(sc);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->step_time.value(), 0.0);
  ASSERT_TRUE(r->goodput);
  EXPECT_FALSE(r->goodput->feasible);
  EXPECT_EQ(r->goodput->fraction, 0.0);
  EXPECT_EQ(r->goodput->effective_training_time, 0.0);  // no time trains either
  EXPECT_FALSE(r->time_to_train_s);
  EXPECT_TRUE(r->time_to_train_ideal_s);
  const std::string& why = r->goodput->infeasible_reason;
  EXPECT_NE(why.find("reliability.interruptions_per_gpu_hour"), std::string::npos) << why;
  EXPECT_NE(why.find("restart time 600 s (default, an assumption)"), std::string::npos) << why;
}

// One rule: the MTBF must exceed the restart and one step plus its checkpoint pause.
TEST(Goodput, FeasibilityRule) {
  EXPECT_TRUE(FeasibleGoodput(1000.0, 600.0, 10.0, 1.0));
  EXPECT_FALSE(FeasibleGoodput(600.0, 600.0, 10.0, 1.0));   // the restart as long as the MTBF
  EXPECT_FALSE(FeasibleGoodput(1000.0, 60.0, 999.0, 1.0));  // a step + pause as long
  EXPECT_TRUE(FeasibleGoodput(1000.0, 60.0, 998.0, 1.0));
  // Through the model: restart times either side of the job MTBF (1 / (rate x GPUs)).
  Scenario sc = Load("scenarios/quickstart.yaml");
  sc.reliability.interruptions_per_gpu_hour = 3600.0 / (1000.0 * 512.0);  // MTBF 1,000 s
  sc.reliability.checkpoint_interval = 100.0;
  Goodput fine, late;
  for (const double restart : {900.0, 1000.0}) {
    sc.reliability.restart_time = restart;
    Result<SimResult> r = Simulate(sc);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    (restart < 999.0 ? fine : late) = *r->goodput;
  }
  EXPECT_NEAR(*fine.job_mtbf_s, 1000.0, 1e-6);
  EXPECT_TRUE(fine.feasible);
  EXPECT_GT(fine.fraction, 0.0);
  EXPECT_FALSE(late.feasible);
  EXPECT_NE(late.infeasible_reason.find("reliability.restart_time"), std::string::npos)
      << late.infeasible_reason;
}

// The CLI: `simulate --json` carries the goodput object (DESIGN.md §6 keys) and both times;
// the text says booked and ideal; --explain shows the derivation.
TEST(Goodput, SimulateOutputs) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  const testing::CliRun j =
      testing::Shardsim("simulate scenarios/llama3-405b-h100x16k.yaml --json", false);
  ASSERT_EQ(j.code, 0) << j.out;
  const nlohmann::json json = nlohmann::json::parse(j.out);
  for (const char* key : {"fraction", "interruptions_per_day", "job_mtbf_s", "checkpoint_write_s",
                          "checkpoint_interval_s", "lost_s_per_day", "straggler_factor"}) {
    EXPECT_TRUE(json["goodput"][key].is_number()) << key;
  }
  EXPECT_NEAR(
      json["time_to_train_s"].get<double>(),
      json["time_to_train_ideal_s"].get<double>() / json["goodput"]["fraction"].get<double>(),
      1e-3);
  const testing::CliRun t =
      testing::Shardsim("simulate scenarios/llama3-405b-h100x16k.yaml --explain", false);
  ASSERT_EQ(t.code, 0);
  EXPECT_NE(t.out.find(" booked (ideal "), std::string::npos);
  EXPECT_NE(t.out.find("\nGoodput (sim/goodput; docs/goodput.md)\n"), std::string::npos);
  EXPECT_NE(t.out.find("Daly 2006 (higher-order optimum)"), std::string::npos);
  // No training.tokens: no goodput, no time to train (this one does not fit: exit 1, still JSON).
  const testing::CliRun q =
      testing::Shardsim("simulate tests/html/data/too_big.yaml --json", false);
  ASSERT_EQ(q.code, 1) << q.out;
  const nlohmann::json none = nlohmann::json::parse(q.out);
  EXPECT_FALSE(none.contains("goodput"));
  EXPECT_FALSE(none.contains("time_to_train_s"));
  EXPECT_FALSE(none.contains("time_to_train_ideal_s"));
}

// The review's cases: 16.8M and 4.2M GPUs on the default reliability (MTBF 10.9 s and 43.5 s
// against a 10 min restart), and 512 GPUs writing their checkpoint at 1 MB/s (a restart of 11
// days against an MTBF of 4 days). Each reports its step, exits 1 (infeasible, DESIGN.md §4) and
// names the figures and where they came from; none is a located input error.
TEST(Goodput, InfeasibleRunsReportTheStepAndWhy) {
  std::filesystem::current_path(SHARDSIM_SOURCE_DIR);
  const std::string base =
      "base: " + std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml\n";
  struct Case {
    const char* name;
    std::string yaml;
    const char* figures;  // what the reason must name
  };
  const Case cases[] = {
      {"16m",
       base + "gpus: 16777216\ntraining: {global_batch: 524288}\n"
              "parallel: {dp: 524288, virtual_stages: 1, schedule: 1f1b}\n",
       "the job MTBF, 10.9 s = 1 / (1.97e-5 unexpected interruptions per GPU-hour (default: "
       "Llama 3, arXiv 2407.21783 §3.3.4) x 16777216 GPUs), is not longer than a restart, 600 s "
       "= restart time 600 s (default, an assumption)"},
      {"4m",
       base + "gpus: 4194304\ntraining: {global_batch: 131072}\n"
              "parallel: {dp: 131072, virtual_stages: 1, schedule: 1f1b}\n",
       "the job MTBF, 43.5 s"},
      {"slow_storage", base + "storage: {aggregate_write_bandwidth: 1 MB/s}\n",
       "(storage.aggregate_write_bandwidth)"},
  };
  for (const Case& c : cases) {
    const std::string path = std::string("/tmp/shardsim_goodput_") + c.name + ".yaml";
    testing::WriteFile(path, c.yaml);
    const testing::CliRun t = testing::Shardsim("simulate " + path, false);
    EXPECT_EQ(t.code, 1) << c.name << "\n" << t.out;
    EXPECT_NE(t.out.find("  step time "), std::string::npos) << c.name;
    EXPECT_NE(t.out.find("  goodput  "), std::string::npos) << c.name;
    EXPECT_NE(t.out.find("INFEASIBLE goodput: the run cannot finish: "), std::string::npos)
        << c.name << "\n"
        << t.out;
    EXPECT_NE(t.out.find(c.figures), std::string::npos) << c.name << "\n" << t.out;
    EXPECT_EQ(t.out.find("error:"), std::string::npos) << c.name;
    const testing::CliRun j = testing::Shardsim("simulate " + path + " --json", false);
    EXPECT_EQ(j.code, 1) << c.name;
    const nlohmann::json json = nlohmann::json::parse(j.out);
    EXPECT_GT(json["step_time_s"].get<double>(), 0.0);
    EXPECT_FALSE(json["goodput"]["feasible"].get<bool>()) << c.name;
    EXPECT_EQ(json["goodput"]["fraction"].get<double>(), 0.0);
    EXPECT_TRUE(json["goodput"]["infeasible_reason"].is_string());
    EXPECT_TRUE(json["time_to_train_s"].is_null());
    EXPECT_GT(json["time_to_train_ideal_s"].get<double>(), 0.0);
    const double mtbf = json["goodput"]["job_mtbf_s"];
    EXPECT_LE(mtbf, json["goodput"]["restart_s"].get<double>()) << c.name;
    const testing::CliRun e = testing::Shardsim("simulate " + path + " --explain", false);
    EXPECT_EQ(e.code, 1);
    EXPECT_NE(e.out.find("  infeasible (FeasibleGoodput"), std::string::npos) << e.out;
  }
}

}  // namespace
}  // namespace shardsim
