// The README's quick start output block is what `shardsim simulate scenarios/quickstart.yaml`
// prints (a change that moves a figure there must update the README with it): every line of the
// block is a line of the output, in order; a line "  ..." stands for output lines left out.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_cli.h"

namespace shardsim {
namespace {

using testing::ReadFile;
using testing::Shardsim;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The first fenced block after the line that starts with `intro`.
std::vector<std::string> ReadmeBlock(const std::string& intro) {
  const std::vector<std::string> lines =
      Lines(ReadFile(std::string(SHARDSIM_SOURCE_DIR) + "/README.md"));
  std::vector<std::string> block;
  size_t i = 0;
  while (i < lines.size() && lines[i].rfind(intro, 0) != 0) ++i;
  while (i < lines.size() && lines[i].rfind("```", 0) != 0) ++i;
  for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) block.push_back(lines[i]);
  return block;
}

// Empty when every block line is an output line in order ("  ..." skips any number of output
// lines); else the first block line that is not, with the output line it met.
std::string FirstStale(const std::vector<std::string>& block, const std::vector<std::string>& out) {
  size_t j = 0;
  bool skipping = false;
  for (const std::string& want : block) {
    if (want == "  ...") {
      skipping = true;
      continue;
    }
    if (skipping) {
      while (j < out.size() && out[j] != want) ++j;
    }
    if (j >= out.size() || out[j] != want) {
      return "README: '" + want + "'\n output: '" + (j < out.size() ? out[j] : "(end)") + "'";
    }
    ++j;
    skipping = false;
  }
  return "";
}

TEST(ReadmeBlocks, MatcherFindsAStaleLine) {
  const std::vector<std::string> out = {"a", "b 1.0", "c", "d", "e"};
  EXPECT_EQ(FirstStale({"a", "b 1.0", "  ...", "e"}, out), "");
  EXPECT_EQ(FirstStale({"a", "  ...", "d"}, out), "");
  EXPECT_NE(FirstStale({"a", "b 1.1", "c"}, out), "");  // a figure moved
  EXPECT_NE(FirstStale({"a", "c"}, out), "");           // a line left out without "..."
  EXPECT_NE(FirstStale({"a", "  ...", "f"}, out), "");  // a line the output does not have
}

TEST(ReadmeBlocks, QuickstartOutputIsCurrent) {
  const std::vector<std::string> block =
      ReadmeBlock("The first command prints the simulated step of Llama-3-70B on 512 H100s");
  ASSERT_GT(block.size(), 20u) << "README.md's quick start output block was not found";
  const testing::CliRun r =
      Shardsim("--library " + std::string(SHARDSIM_SOURCE_DIR) + " simulate " +
                   std::string(SHARDSIM_SOURCE_DIR) + "/scenarios/quickstart.yaml",
               /*stderr_too=*/false);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(FirstStale(block, Lines(r.out)), "")
      << "README.md's quick start block is stale; paste the output of ./build/shardsim simulate "
         "scenarios/quickstart.yaml";
}

}  // namespace
}  // namespace shardsim
