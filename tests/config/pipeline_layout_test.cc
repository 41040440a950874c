// Megatron-Core's pipeline layout string (sim/config/pipeline_layout.h), read as its
// PipelineParallelLayerLayout.parse_str_to_list unrolls it, and checked against the pipeline and
// the model as its validate_layer_layout does (ValidateScenario, located at the key).
#include "sim/config/pipeline_layout.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/config/loader.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;

TEST(PipelineLayout, DeepSeekV3OnSixteenStages) {
  // Megatron-Bridge's DeepSeek-V3 recipe on GB200: the embedding and 3 layers, 14 stages of 4,
  // then 2 layers and the loss: 61 layers.
  Result<PipelineLayout> l = ParsePipelineLayout("Et*3|(t*4|)*14ttL");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  std::vector<int64_t> want = {3};
  for (int i = 0; i < 14; ++i) want.push_back(4);
  want.push_back(2);
  EXPECT_EQ(l->decoders, want);
  EXPECT_EQ(l->total_decoders(), 61);
  EXPECT_EQ(l->total_mtp(), 0);
  EXPECT_TRUE(l->embedding_first);
  EXPECT_TRUE(l->loss_last);
}

TEST(PipelineLayout, MegatronDocstringExample) {
  // parse_str_to_list: "Ettt|(tt|)*29,m|L" -> [[E,t,t,t]] + [[t,t]]*29 + [[m],[L]].
  Result<PipelineLayout> l = ParsePipelineLayout("Ettt|(tt|)*29,m|L");
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  ASSERT_EQ(l->stages(), 32);
  EXPECT_EQ(l->decoders.front(), 3);
  EXPECT_EQ(l->decoders[29], 2);
  EXPECT_EQ(l->decoders[30], 0);
  EXPECT_EQ(l->mtp[30], 1);
  EXPECT_EQ(l->decoders[31], 0);
  EXPECT_EQ(l->total_decoders(), 61);
  EXPECT_FALSE(l->mtp_before_decoder);
}

TEST(PipelineLayout, EmptyStagesAndCosmeticCommas) {
  Result<PipelineLayout> l = ParsePipelineLayout("E,t,t||t*2,L");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->decoders, (std::vector<int64_t>{2, 0, 2}));
}

TEST(PipelineLayout, BadStringsSayWhere) {
  const auto message = [](const char* text) {
    Result<PipelineLayout> l = ParsePipelineLayout(text);
    return l.ok() ? std::string() : l.status().message();
  };
  EXPECT_EQ(message("Et*3|x"),
            "at character 6: 'x' is not a layout piece (E embedding, t decoder layer, m MTP "
            "module, L loss, | next stage, x*N, (...)*N)");
  EXPECT_EQ(message("E((t)*2)*2L"),
            "at character 3: groups do not nest (Megatron-Core unrolls one level)");
  EXPECT_EQ(message("E(t|tL"), "at character 2: '(' is never closed");
  EXPECT_EQ(message("E(t|)L"), "at character 2: a group must be followed by *N (a repeat count)");
  EXPECT_EQ(message("Et*L"), "at character 2: expected a repeat count after '*' of 't'");
  EXPECT_EQ(message("Et)L"), "at character 3: ')' without '('");
  EXPECT_EQ(message(""), "an empty layout");
  EXPECT_EQ(message("Et*99999999999L"), "at character 2: repeat count after 't' exceeds 1048576");
  EXPECT_EQ(message("E(t|x)*2L"),
            "at character 5: 'x' is not a layout piece (E embedding, t "
            "decoder layer, m MTP module, L loss, | next stage, x*N, "
            "(...)*N)");
  EXPECT_EQ(message("E()*2L"), "at character 2: an empty group");
  EXPECT_EQ(message("E(tttt)*1000000L"), "the layout expands to more than 1048576 pieces");
}

// tiny-llama: 8 layers.
std::string First(const std::string& parallel, const std::string& model = "tiny-llama") {
  Result<Scenario> s = BuildText(Head(model) + "gpus: 4\ntraining: {seq_len: 4096, global_batch: " +
                                 "256}\nparallel: " + parallel + "\n");
  return s.ok() ? "" : s.status().diagnostics().front().message;
}

TEST(PipelineLayout, CheckedAgainstThePipelineAndTheModel) {
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|tL'}"), "");
  EXPECT_EQ(First("{pp: 2, schedule: interleaved_1f1b, virtual_stages: 2, "
                  "pipeline_layout: 'Et|ttt|ttt|tL'}"),
            "");
  EXPECT_EQ(First("{pp: 2, pipeline_layout: 'Et|ttt|ttt|tL'}"),
            "parallel.pipeline_layout: 'Et|ttt|ttt|tL' has 4 stages; it needs "
            "pp*virtual_stages = 2*1 = 2 (one per model chunk, separated by '|')");
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|ttL'}"),
            "parallel.pipeline_layout: 'Et|ttt|ttt|ttL' places 9 decoder layers ('t'); "
            "model.num_layers is 8, tests/config/data/lib/models/tiny-llama.yaml:4:13");
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'tE|ttt|ttt|tL'}"),
            "parallel.pipeline_layout: 'tE|ttt|ttt|tL' must start with the embedding 'E' and end "
            "with the loss 'L', each written once");
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|tmL'}"),
            "parallel.pipeline_layout: 'Et|ttt|ttt|tmL' places 1 MTP modules ('m'); "
            "model.mtp_depth is 0, tests/config/data/lib/models/tiny-llama.yaml");
  EXPECT_EQ(First("{pp: 4, first_stage_layers: 1, pipeline_layout: 'Et|ttt|ttt|tL'}"),
            "parallel.pipeline_layout: a layout string and parallel.first_stage_layers exclude "
            "each other (as in Megatron-Core): use one or the other");
  EXPECT_EQ(First("{pp: 2, schedule: dualpipe, pipeline_layout: 'Etttt|ttttL'}"),
            "parallel.pipeline_layout: a layout string places stages rank by rank; dualpipe "
            "pairs two stages per rank in its own order (use gpipe, 1f1b, interleaved_1f1b, "
            "zb_h1 or zb_h2)");
  // A syntax error is located at the key too.
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|tL)'}"),
            "parallel.pipeline_layout: 'Et|ttt|ttt|tL)': at character 14: ')' without '(' "
            "(Megatron-Core's --pipeline-model-parallel-layout, e.g. \"Et*3|(t*4|)*14ttL\")");
  // MTP runs with the loss in shardsim.
  const std::string mtp = "{base: tiny-llama, mtp_depth: 1}";
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|tmL'}", mtp), "");
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|tttm|tL'}", mtp),
            "parallel.pipeline_layout: 'Et|ttt|tttm|tL' places an MTP module 'm' before a "
            "decoder layer 't'");
  EXPECT_EQ(First("{pp: 4, pipeline_layout: 'Et|ttt|ttt|tL'}", mtp),
            "parallel.pipeline_layout: 'Et|ttt|ttt|tL' places 0 MTP modules ('m'); "
            "model.mtp_depth is 1, tests/config/data/inline.yaml:1:38");
}

// A scenario built in code, not read from a file, gets the same check: a bad string is an error
// of ValidateScenario, not a pipeline split that fails later without its key.
TEST(PipelineLayout, ValidateScenarioReadsTheString) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 4\ntraining: {seq_len: 4096, global_batch: 256}\n" +
                "parallel: {pp: 4, pipeline_layout: 'Et|ttt|ttt|tL'}\n");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  Scenario sc = *s;
  sc.parallel.pipeline_layout = "Et|ttt|ttt|tL)";
  const Status v = ValidateScenario(sc);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.ToString().find("parallel.pipeline_layout: 'Et|ttt|ttt|tL)': at character 14: "
                              "')' without '('"),
            std::string::npos)
      << v.ToString();
}

}  // namespace
}  // namespace shardsim
