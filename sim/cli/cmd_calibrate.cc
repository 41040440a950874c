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

// Writes `text` to `path`.
Status WriteFile(const std::string& path, const std::string& shown, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.flush();
  if (!out.good()) return Status::Invalid("-o: cannot write '" + shown + "'");
  return Status::Ok();
}

// Writes the overlay (and its GEMM CSV, when `csv_text` is not empty) whole or not at all, and
// only one the hardware reader accepts (as `simulate` will read it): both are written into a
// temporary folder beside `output`, the overlay loaded from there, then both renamed into place.
Status WriteOverlay(const std::filesystem::path& output, const std::string& yaml_text,
                    const std::string& csv_name, const std::string& csv_text,
                    const LoadOptions& load) {
  namespace fs = std::filesystem;
  const fs::path dir = output.parent_path();
  const fs::path tmp = dir / ("." + output.filename().string() + ".tmp");
  std::error_code ec;
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec) || ec) {
    return Status::Invalid("-o: cannot write '" + output.string() + "'" +
                           (ec ? ": " + ec.message() : std::string()));
  }
  auto fail = [&](Status s) {
    std::error_code e;
    fs::remove_all(tmp, e);
    return s;
  };
  if (!csv_text.empty()) {
    Status w = WriteFile((tmp / csv_name).string(), (dir / csv_name).string(), csv_text);
    if (!w.ok()) return fail(w);
  }
  const fs::path tmp_yaml = tmp / output.filename();
  Status w = WriteFile(tmp_yaml.string(), output.string(), yaml_text);
  if (!w.ok()) return fail(w);
  Result<HardwareSpec> back = LoadHardware(tmp_yaml.string(), load);
  if (!back.ok()) {
    return fail(Status::Invalid("calibrate: the overlay would not read back (nothing written): " +
                                back.status().ToString()));
  }
  if (!csv_text.empty()) {
    fs::rename(tmp / csv_name, dir / csv_name, ec);
    if (ec)
      return fail(
          Status::Invalid("-o: cannot write '" + (dir / csv_name).string() + "': " + ec.message()));
  }
  fs::rename(tmp_yaml, output, ec);
  if (ec) {
    return fail(Status::Invalid("-o: cannot write '" + output.string() + "': " + ec.message()));
  }
  fs::remove_all(tmp, ec);
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
    for (const std::string& in : args->inputs)
      sink.Merge(ReadKernelFile(in, &samples, base->peak_flops));
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
    Status w = WriteOverlay(out, OverlayYaml(*c, base_ref, csv_name, args->inputs), csv_name,
                            c->gemm_rows.empty() ? std::string() : GemmCsv(*c), load);
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
