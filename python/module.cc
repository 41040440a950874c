// shardsim's Python module (`import shardsim`): the compiled part, `shardsim._core`.
//
// Each function runs the same library code as the CLI command of its name and returns the text
// that command prints with --json (the package's __init__.py turns it into a dict), so Python
// and the CLI give the same keys and numbers. A failed Status raises the package's Error class
// (registered by __init__.py through _set_error_class) with the CLI's message and every
// diagnostic as (file, line, col, message). The GIL is released while the library runs; a sweep's
// progress callback takes it back for each call.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "sim/base/status.h"
#include "sim/config/loader.h"
#include "sim/memory/budget.h"
#include "sim/report/budget_report.h"
#include "sim/report/comm_report.h"
#include "sim/report/library_residuals.h"
#include "sim/report/simulate.h"
#include "sim/report/step_report.h"
#include "sim/sweep/claim.h"
#include "sim/sweep/claim_base.h"
#include "sim/sweep/claim_json.h"
#include "sim/sweep/evaluate.h"
#include "sim/sweep/point_space.h"
#include "sim/sweep/ranking.h"
#include "sim/sweep/rows.h"
#include "sim/sweep/runner.h"
#include "sim/sweep/sweep_spec.h"
#include "sim/sweep/uncertainty.h"

namespace py = pybind11;

namespace shardsim {
namespace {

// The Python class failures are raised as (shardsim.Error), set once when the package imports.
py::object& ErrorClass() {
  static py::object* error = new py::object();  // never destroyed: outlives the interpreter
  return *error;
}

// A failed Status as the exception the package raises: args (message, diagnostics, exit code),
// the message being what the CLI prints on stderr (ReportStatus), one diagnostic per line.
[[noreturn]] void Raise(const Status& s) {
  std::string message;
  py::list diagnostics;
  for (const Diagnostic& d : s.diagnostics()) {
    std::string text = d.ToString();
    if (s.code() == StatusCode::kInternal) text = "internal " + text;
    message += (message.empty() ? "" : "\n") + text;
    diagnostics.append(py::make_tuple(d.loc.file, d.loc.line, d.loc.col, d.message));
  }
  const int exit_code = s.code() == StatusCode::kInfeasible ? 1 : 2;
  py::object cls = ErrorClass()
                       ? ErrorClass()
                       : py::object(py::reinterpret_borrow<py::object>(PyExc_RuntimeError));
  PyErr_SetObject(cls.ptr(), py::make_tuple(message, diagnostics, exit_code).ptr());
  throw py::error_already_set();
}

template <class T>
T Take(Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(*r);
}

LoadOptions Load(const std::string& library) {
  LoadOptions o;
  if (!library.empty()) o.library_dirs.push_back(library);
  return o;
}

// A scenario from a file (`text` empty) or from YAML text named `path` in messages (a dict the
// package wrote out as YAML: relative paths in it resolve from `path`'s folder).
Result<ScenarioDocument> Document(const std::string& path, const std::optional<std::string>& text) {
  return text ? ScenarioDocument::ParseText(*text, path) : ScenarioDocument::Parse(path);
}

std::string SimulateJsonOf(const std::string& path, const std::optional<std::string>& text,
                           bool every_rank, const std::string& library) {
  Result<std::string> out = Status::Internal("not run");
  {
    py::gil_scoped_release release;
    out = [&]() -> Result<std::string> {
      Result<ScenarioDocument> doc = Document(path, text);
      if (!doc.ok()) return doc.status();
      const LoadOptions load = Load(library);
      Result<Scenario> sc = doc->Build(load);
      if (!sc.ok()) return sc.status();
      SimOptions opts;
      opts.every_rank = every_rank;
      Result<SimResult> r = Simulate(*sc, opts);
      if (!r.ok()) return r.status();
      Result<PredictionInterval> interval = LibraryInterval(*sc, load);
      if (!interval.ok()) return interval.status();
      return SimulateJson(*sc, *r, &*interval);
    }();
  }
  return Take(std::move(out));
}

std::string BudgetJsonOf(const std::string& path, const std::optional<std::string>& text,
                         const std::string& library) {
  Result<std::string> out = Status::Internal("not run");
  {
    py::gil_scoped_release release;
    out = [&]() -> Result<std::string> {
      Result<ScenarioDocument> doc = Document(path, text);
      if (!doc.ok()) return doc.status();
      Result<Scenario> sc = doc->Build(Load(library));
      if (!sc.ok()) return sc.status();
      Result<BudgetReport> r = BuildBudget(*sc);
      if (!r.ok()) return r.status();
      return BudgetJson(*sc, *r);
    }();
  }
  return Take(std::move(out));
}

std::string CommJsonOf(const std::string& topology, int64_t gpus, const std::string& op,
                       const std::string& size, const std::string& sizes, const std::string& algo,
                       std::optional<int64_t> ranks_per_node, int64_t concurrent_groups,
                       const std::string& library) {
  CommRequest r;
  r.topology = topology;
  r.gpus = gpus;
  r.op = op;
  r.size = size;
  r.sizes = sizes;
  r.algo = algo;
  r.ranks_per_node = ranks_per_node.value_or(0);
  r.ranks_per_node_given = ranks_per_node.has_value();
  r.concurrent_groups = concurrent_groups;
  Result<std::string> out = Status::Internal("not run");
  {
    py::gil_scoped_release release;
    Result<CommRun> run = RunComm(r, Load(library));
    out = run.ok() ? Result<std::string>(CommJson(*run)) : Result<std::string>(run.status());
  }
  return Take(std::move(out));
}

int Threads(std::optional<int> jobs) {
  if (jobs && *jobs < 0) {
    Raise(Status::Invalid("jobs must be a positive thread count, or 0 for every core; got " +
                          std::to_string(*jobs)));
  }
  if (jobs && *jobs > 0) return *jobs;
  const unsigned cores = std::thread::hardware_concurrency();
  return static_cast<int>(cores > 0 ? cores : 1);
}

using ProgressFn = std::function<void(int64_t, int64_t, int64_t, int64_t)>;

// A progress callback from a library thread: the GIL taken for each call; the first Python
// exception it raises is kept (the sweep runs on) and raised when the sweep returns.
struct PyProgress {
  ProgressFn fn;
  std::optional<py::error_already_set> error;

  std::function<void(const SweepProgress&)> Callback() {
    if (!fn) return {};
    return [this](const SweepProgress& p) {
      py::gil_scoped_acquire acquire;
      if (error) return;
      try {
        fn(p.done, p.total, p.resumed, p.feasible);
      } catch (py::error_already_set& e) {
        error.emplace(std::move(e));
      }
    };
  }
  void Rethrow() {
    if (error) {
      py::error_already_set e = std::move(*error);
      error.reset();
      throw e;
    }
  }
};

// sweep(...) -> (the CSV header, input columns, JSON Lines rows in point order, ranking text,
// points of the sweep, points of the shard, rows resumed).
py::tuple Sweep(const std::string& path, const std::optional<std::string>& text,
                std::optional<int> jobs, int64_t shard_index, int64_t shard_count,
                const std::string& csv_path, const std::string& jsonl_path, bool resume,
                bool overwrite, ProgressFn progress, const std::string& rank_by, int64_t top,
                std::optional<double> price, const std::string& library) {
  const int threads = Threads(jobs);
  RankOptions rank = Take(ParseRankOptions(rank_by, top, price));
  // Ranked as `sweep` ranks (sim/cli/cmd_sweep.cc): ties within the stated uncertainty marked
  // "~", each point's hardware price where `price` gives none.
  rank.tie_fraction = kStatedUncertainty;
  PyProgress callback{std::move(progress), std::nullopt};
  struct Out {
    std::vector<std::string> columns;
    std::string header, rows, report;
    int64_t space_points = 0, shard_points = 0, resumed = 0;
  };
  Result<Out> out = Status::Internal("not run");
  {
    py::gil_scoped_release release;
    out = [&]() -> Result<Out> {
      const LoadOptions load = Load(library);
      Result<SweepSpec> spec = text ? ParseSweepSpec(*text, path, load) : LoadSweepSpec(path, load);
      if (!spec.ok()) return spec.status();
      if (rank.by == RankBy::kTimeToTrain && !SpecSetsKey(*spec, "training.tokens", load)) {
        return Status::Invalid(
            "rank_by time_to_train needs training.tokens in the scenario (the tokens to train "
            "on); " +
            path + " sets it neither in its base scenario nor on a sweep axis");
      }
      Result<PointSpace> space = PointSpace::Enumerate(*spec, load);
      if (!space.ok()) return space.status();
      SweepRunOptions o;
      o.jobs = threads;
      o.shard = Shard{shard_index, shard_count};
      o.csv_path = csv_path;
      o.jsonl_path = jsonl_path;
      o.resume = resume;
      o.overwrite = overwrite;
      o.keep_all_rows = true;
      o.progress = callback.Callback();
      Result<SweepRun> run = RunSweep(*space, o, load);
      if (!run.ok()) return run.status();
      Out r;
      r.columns = space->input_columns();
      r.header = RowFormat(RowFormatKind::kCsv, r.columns).Header();
      const RowFormat format(RowFormatKind::kJsonl, r.columns);
      for (const Row& row : run->summary.rows()) r.rows += format.Format(row);
      if (!price) rank.point_price = HardwarePrices(*space, run->summary.feasible_rows(), load);
      Result<std::string> report = SweepReport(run->summary, r.columns, rank);
      if (!report.ok()) return report.status();
      r.report = std::move(*report);
      r.space_points = run->space_points;
      r.shard_points = run->shard_points;
      r.resumed = run->resumed;
      return r;
    }();
  }
  callback.Rethrow();
  Out r = Take(std::move(out));
  return py::make_tuple(r.header, r.columns, r.rows, r.report, r.space_points, r.shard_points,
                        r.resumed);
}

std::string CheckClaimJsonOf(const std::string& claim_text, const std::string& path,
                             const std::optional<std::string>& text, const ClaimSetup& setup,
                             std::optional<int> jobs, ProgressFn progress,
                             const std::string& library) {
  const int threads = Threads(jobs);
  PyProgress callback{std::move(progress), std::nullopt};
  Result<std::string> out = Status::Internal("not run");
  std::string warning;  // the sequence length the search assumed, as the CLI warns
  {
    py::gil_scoped_release release;
    out = [&]() -> Result<std::string> {
      const LoadOptions load = Load(library);
      Result<Claim> claim = ParseClaim(claim_text);
      if (!claim.ok()) return claim.status();
      const bool given_scenario = !path.empty();
      ClaimSetup with_claim = setup;
      with_claim.claim_seq_len = claim->seq_len;
      Result<ScenarioDocument> base =
          given_scenario ? Document(path, text) : ClaimBaseScenario(with_claim, load, &warning);
      if (!base.ok()) return base.status();
      ClaimOptions o;
      Result<std::optional<ResidualSet>> residuals = LibraryResiduals(load);
      if (!residuals.ok()) return residuals.status();
      o.residuals = std::move(*residuals);
      o.jobs = threads;
      o.simulate_given_layout = given_scenario;
      o.progress = callback.Callback();
      Result<ClaimCheck> check = CheckClaim(*base, *claim, o, load);
      if (!check.ok()) return check.status();
      return ClaimJson(*check);
    }();
  }
  callback.Rethrow();
  if (!warning.empty()) py::module_::import("warnings").attr("warn")(warning);
  return Take(std::move(out));
}

}  // namespace
}  // namespace shardsim

PYBIND11_MODULE(_core, m) {
  using namespace shardsim;
  m.doc() = "shardsim's compiled core; use the shardsim package, not this module";
  m.def("_set_error_class", [](py::object cls) { ErrorClass() = std::move(cls); });
  m.def("simulate", &SimulateJsonOf, py::arg("path"), py::arg("text"), py::arg("every_rank"),
        py::arg("library"));
  m.def("budget", &BudgetJsonOf, py::arg("path"), py::arg("text"), py::arg("library"));
  m.def("comm", &CommJsonOf, py::arg("topology"), py::arg("gpus"), py::arg("op"), py::arg("size"),
        py::arg("sizes"), py::arg("algo"), py::arg("ranks_per_node"), py::arg("concurrent_groups"),
        py::arg("library"));
  m.def("parse_shard", [](const std::string& text) {
    const Shard s = Take(ParseShard(text));
    return py::make_tuple(s.index, s.count);
  });
  m.def("sweep", &Sweep, py::arg("path"), py::arg("text"), py::arg("jobs"), py::arg("shard_index"),
        py::arg("shard_count"), py::arg("csv_path"), py::arg("jsonl_path"), py::arg("resume"),
        py::arg("overwrite"), py::arg("progress"), py::arg("rank_by"), py::arg("top"),
        py::arg("price"), py::arg("library"));
  m.def(
      "check_claim",
      [](const std::string& claim, const std::string& path, const std::optional<std::string>& text,
         const std::string& model, const std::string& hardware, const std::string& topology,
         int64_t gpus, int64_t seq_len, int64_t global_batch, const std::string& precision,
         std::optional<int> jobs, ProgressFn progress, const std::string& library) {
        ClaimSetup setup;
        setup.model = model;
        setup.hardware = hardware;
        setup.topology = topology;
        setup.precision = precision;
        setup.gpus = gpus;
        setup.seq_len = seq_len;
        setup.global_batch = global_batch;
        return CheckClaimJsonOf(claim, path, text, setup, jobs, std::move(progress), library);
      },
      py::arg("claim"), py::arg("path"), py::arg("text"), py::arg("model"), py::arg("hardware"),
      py::arg("topology"), py::arg("gpus"), py::arg("seq_len"), py::arg("global_batch"),
      py::arg("precision"), py::arg("jobs"), py::arg("progress"), py::arg("library"));
}
