#include "sim/cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/base/strings.h"
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

// For CLI11's "The following argument(s) were not expected": the first word of the command line
// that looks like an option ("--jsn", "--top=3") and is none of the command's (or the app's),
// with the closest of the command's options when one is close ("error: simulate: unknown
// option '--jsn'; did you mean '--json'? (see shardsim simulate --help)"). "" when no word is
// such an option (an extra positional argument): CLI11's own message then stands.
std::string UnknownOptionMessage(const CLI::App& app, int argc, char** argv) {
  const std::vector<CLI::App*> subs = app.get_subcommands();
  if (subs.empty()) return "";
  const CLI::App& sub = *subs.front();
  std::vector<std::string> names;
  for (const CLI::App* a : {&app, &sub}) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      for (const std::string& n : o->get_snames()) names.push_back("-" + n);
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.size() < 3 || arg.rfind("--", 0) != 0) continue;
    const std::string word = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), word) != names.end()) continue;
    std::vector<std::string> long_names;
    for (const std::string& n : names) {
      if (n.rfind("--", 0) == 0) long_names.push_back(n);
    }
    const std::optional<std::string> close = ClosestMatch(word, long_names);
    return "error: " + sub.get_name() + ": unknown option '" + word + "'" +
           (close ? "; did you mean '" + *close + "'?" : std::string()) + " (see shardsim " +
           sub.get_name() + " --help)";
  }
  return "";
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
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    if (std::find(commands.begin(), commands.end(), word) == commands.end()) {
      // A typo gets "did you mean 'simulate'?" (ClosestMatch, as unknown keys get it).
      const std::optional<std::string> close = ClosestMatch(word, commands);
      std::fprintf(
          stderr, "error: unknown command '%s'; %s %s (see --help)\n", word.c_str(),
          close ? ("did you mean '" + *close + "'? The commands are").c_str() : "the commands are",
          Join(commands).c_str());
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
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      if (const std::string m = UnknownOptionMessage(app, argc, argv); !m.empty()) {
        std::fprintf(stderr, "%s\n", m.c_str());
        return 2;
      }
    }
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  return ctx.exit_code;
}

}  // namespace shardsim
