#include "sim/cli/cli.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "sim/cli/commands.h"

namespace shardsim {

int ReportStatus(const Status& s) {
  if (s.ok()) return 0;
  for (const Diagnostic& d : s.diagnostics()) {
    std::string text = d.ToString();
    if (s.code() == StatusCode::kInternal) text = "internal " + text;
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  return s.code() == StatusCode::kInfeasible ? 1 : 2;
}

namespace {

// Each folder of $SHARDSIM_LIBRARY (':'-separated; empty parts skipped, as LibraryDirs skips
// them) exists as a folder.
Status CheckLibraryEnvironment() {
  const char* env = std::getenv("SHARDSIM_LIBRARY");
  if (env == nullptr) return Status::Ok();
  DiagnosticSink sink;
  std::string_view rest(env);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string part(rest.substr(0, colon));
    std::error_code ec;
    if (!part.empty() && !std::filesystem::is_directory(part, ec)) {
      sink.Add(SourceLoc{}, "SHARDSIM_LIBRARY: '" + part +
                                "' is not a folder; expected folders holding models/, hardware/, "
                                "topologies/ (':'-separated), or unset it (or pass --library)");
    }
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return sink.ToStatus();
}

}  // namespace

int RunCli(int argc, char** argv) {
  CLI::App app{
      "shardsim: simulate LLM training steps (step time, MFU, memory, bottlenecks) for any "
      "data / tensor / pipeline / context / ZeRO layout on modeled GPUs and interconnects"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("shardsim ") + SHARDSIM_VERSION,
                       "print the version and exit");
  app.fallthrough();  // the subcommands take --library too, after their own arguments
  CliContext ctx;
  app.add_option("--library", ctx.library_dir,
                 "folder holding models/, hardware/, topologies/ (default: $SHARDSIM_LIBRARY, "
                 "then the source tree)")
      ->check(CLI::ExistingDirectory);
  AddBudgetCommand(app, ctx);
  AddCommCommand(app, ctx);
  AddSimulateCommand(app, ctx);
  AddSweepCommand(app, ctx);
  AddMergeCommand(app, ctx);
  AddCheckClaimCommand(app, ctx);
  AddCalibrateCommand(app, ctx);
  // The first word that is not an option (or --library's value) must be a command: CLI11 would
  // only say that one is required.
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--library") {
      ++i;
      continue;
    }
    if (word.empty() || word[0] == '-') continue;
    std::string commands;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      commands += (commands.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == word;
    }
    if (!known) {
      std::fprintf(stderr, "error: unknown command '%s'; the commands are %s (see --help)\n",
                   word.c_str(), commands.c_str());
      return 2;
    }
    break;
  }
  // $SHARDSIM_LIBRARY (where --library is not given): every folder it names must exist, as
  // --library's must; a mistyped one was silently skipped for the source tree's library.
  bool library_flag = false, help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    library_flag = library_flag || word == "--library" || word.rfind("--library=", 0) == 0;
    help = help || word == "-h" || word == "--help" || word == "--version";
  }
  if (!library_flag && !help) {
    Status env = CheckLibraryEnvironment();
    if (!env.ok()) return ReportStatus(env);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return ctx.exit_code;
}

}  // namespace shardsim
