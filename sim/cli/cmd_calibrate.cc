// `shardsim calibrate TRACE... --hardware BASE -o FILE [--clocks profiled|burst]`: a hardware
// overlay fitted to kernel measurements (sim/calibrate/fit.h), its residuals printed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sim/calibrate/fit.h"
#include "sim/calibrate/samples.h"
#include "sim/cli/commands.h"
#include "sim/config/library.h"
#include "sim/config/loader.h"

namespace shardsim {
namespace {

// Writes `text` to `path` whole or not at all: a temporary file beside it, then a rename.
Status WriteWhole(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out.good()) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      return Status::Invalid("-o: cannot write '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status::Invalid("-o: cannot write '" + path + "': " + ec.message());
  }
  return Status::Ok();
}

}  // namespace

void AddCalibrateCommand(CLI::App& app, CliContext& ctx) {
  struct Args {
    std::vector<std::string> inputs;
    std::string hardware;
    std::string output;
    std::string clocks = "profiled";
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "fit a hardware overlay to a PyTorch profiler trace, an nsys kernel summary or a GEMM CSV");
  cmd->add_option("inputs", args->inputs,
                  "PyTorch profiler (Kineto) Chrome traces with record_shapes, nsys "
                  "cuda_gpu_kern_sum CSVs, GEMM CSVs (dtype,m,n,k,tflops)")
      ->required();
  cmd->add_option("--hardware", args->hardware,
                  "the hardware the overlay starts from (name or path)")
      ->required();
  cmd->add_option("-o,--output", args->output, "the overlay to write (YAML)")->required();
  cmd->add_option("--clocks", args->clocks,
                  "profiled (default: kernels of a training run, at its power-limited clocks; the "
                  "overlay sets sustained_compute_fraction 1) or burst (short benchmarks: the "
                  "base's sustained fraction is kept)")
      ->check(CLI::IsMember({"profiled", "burst"}));
  cmd->callback([&ctx, args]() {
    const LoadOptions load = ctx.load_options();
    Result<HardwareSpec> base = LoadHardware(args->hardware, load);
    if (!base.ok()) {
      ctx.exit_code = ReportStatus(base.status());
      return;
    }
    KernelSamples samples;
    DiagnosticSink sink;
    for (const std::string& in : args->inputs) sink.Merge(ReadKernelFile(in, &samples));
    if (!sink.empty()) {
      ctx.exit_code = ReportStatus(sink.ToStatus());
      return;
    }
    Result<Calibration> c =
        FitHardware(samples, *base, args->clocks == "burst" ? Clocks::kBurst : Clocks::kProfiled);
    if (!c.ok()) {
      ctx.exit_code = ReportStatus(c.status());
      return;
    }
    const std::filesystem::path out(args->output);
    const std::string csv_name = out.stem().string() + "-gemm.csv";
    const std::filesystem::path csv = out.parent_path() / csv_name;
    // base: a library name as given, a path as an absolute one (the overlay may live elsewhere).
    const std::string base_ref = LooksLikePath(args->hardware)
                                     ? std::filesystem::absolute(args->hardware).string()
                                     : args->hardware;
    if (!c->gemm_rows.empty()) {
      Status w = WriteWhole(csv.string(), GemmCsv(*c));
      if (!w.ok()) {
        ctx.exit_code = ReportStatus(w);
        return;
      }
    }
    Status w = WriteWhole(args->output, OverlayYaml(*c, base_ref, csv_name, args->inputs));
    if (!w.ok()) {
      ctx.exit_code = ReportStatus(w);
      return;
    }
    std::string text = "shardsim calibrate: " + std::to_string(samples.samples.size()) +
                       " kernel samples from " + std::to_string(args->inputs.size()) +
                       " file(s), base " + base->name + "\n";
    text += CalibrationReport(*c);
    text += "wrote " + args->output +
            (c->gemm_rows.empty() ? std::string() : " and " + csv.string()) + "\n";
    std::fputs(text.c_str(), stdout);
    ctx.exit_code = 0;
  });
}

}  // namespace shardsim
