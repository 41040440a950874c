// Errors people can act on: one test per kind, pinning the exact text (file:line:col, message,
// the source line and the caret).
#include <gtest/gtest.h>

#include "sim/config/loader.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::BuildText;
using testing_util::Head;
using testing_util::TestLib;

constexpr const char* kTraining = "training: {seq_len: 4096, global_batch: 256}\n";

TEST(ErrorsTest, YamlSyntaxError) {
  Result<Scenario> s = BuildText("model: tiny-llama\ngpus: [8\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  // The list runs to the end of the file: the last line written is shown, the caret after it.
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:2:9: error: YAML syntax error: end of sequence flow not "
            "found (the file ends after this line)\n"
            "    gpus: [8\n"
            "            ^");
}

// A quoted scalar is a string: "8192" where an integer belongs is a type error at it.
TEST(ErrorsTest, AQuotedNumberIsAString) {
  Result<Scenario> s = BuildText(
      "model: tiny-llama\nhardware: h100-sxm\ngpus: 8\ntraining: {seq_len: \"4096\", "
      "global_batch: 256}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find("training.seq_len: expected an integer, got the string "
                                       "\"4096\" (write the number without quotes)"),
            std::string::npos)
      << s.status().ToString();
}

TEST(ErrorsTest, UnknownKeyWithDidYouMeanAndMissingRequiredKey) {
  Result<ModelSpec> m = LoadModel("typo", TestLib());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidInput);
  // Both problems of the file at once; the missing key at the mapping that lacks it (issue 19).
  EXPECT_EQ(
      m.status().ToString(),
      "tests/config/data/lib/models/typo.yaml:1:1: error: missing required key 'hidden_size'\n"
      "    name: typo\n"
      "    ^\n"
      "tests/config/data/lib/models/typo.yaml:2:1: error: hiden_size: unknown key; did you mean "
      "'hidden_size'?\n"
      "    hiden_size: 512\n"
      "    ^");
}

TEST(ErrorsTest, UnknownNestedKey) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 8\n" + kTraining + "parallel:\n  dp: 8\n  zero_stag: 1\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:8:3: error: parallel.zero_stag: unknown key; did you "
            "mean 'zero_stage'?\n"
            "      zero_stag: 1\n"
            "      ^");
}

// A key not near any valid one: the message lists the keys valid at that level.
TEST(ErrorsTest, UnknownKeyFarFromAnyListsTheValidKeys) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 8\n" + kTraining + "parallel:\n  dp: 8\n  banana: 1\n");
  ASSERT_FALSE(s.ok());
  const std::string message = s.status().diagnostics().front().message;
  EXPECT_EQ(message.rfind("parallel.banana: unknown key; valid keys here: dp, tp, pp, cp", 0), 0u)
      << message;
  EXPECT_NE(message.find("zero_stage"), std::string::npos) << message;
}

TEST(ErrorsTest, WrongType) {
  Result<Scenario> s = BuildText(Head() + "gpus: [8]\n" + kTraining);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:4:7: error: gpus: expected an integer, got a list\n"
            "    gpus: [8]\n"
            "          ^");
}

// It pointed at the next line ("6:1", under "training:").
TEST(ErrorsTest, EmptyValueIsLocatedAtItsKey) {
  Result<Scenario> s = BuildText(Head() + "gpus:\n" + kTraining);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.status().ToString(),
      "tests/config/data/inline.yaml:4:1: error: gpus: expected an integer, got an empty value\n"
      "    gpus:\n"
      "    ^");
}

// training.tokens: 1e300 printed a time to train of 63 digits; 0.5 was taken.
TEST(ErrorsTest, TrainingTokensWithinBounds) {
  for (const char* tokens : {"0.5", "1e300"}) {
    Result<Scenario> s = BuildText(Head() +
                                   "gpus: 8\ntraining: {seq_len: 4096, global_batch: 256, "
                                   "tokens: " +
                                   std::string(tokens) + "}\n");
    ASSERT_FALSE(s.ok()) << tokens;
    EXPECT_NE(s.status().ToString().find("error: training.tokens: must be between 1 and 1e18 "
                                         "tokens, got "),
              std::string::npos)
        << s.status().ToString();
  }
}

TEST(ErrorsTest, FractionForAnInteger) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 8\ntraining: {seq_len: 4096, global_batch: 1.5}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:5:41: error: training.global_batch: expected an "
            "integer, got \"1.5\"\n"
            "    training: {seq_len: 4096, global_batch: 1.5}\n"
            "                                            ^");
}

TEST(ErrorsTest, IntegerOverflow) {
  Result<Scenario> s = BuildText(Head() + "gpus: 99999999999999999999\n" + kTraining);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:4:7: error: gpus: \"99999999999999999999\" is out of "
            "range for an integer\n"
            "    gpus: 99999999999999999999\n"
            "          ^");
}

TEST(ErrorsTest, MissingUnit) {
  Result<Scenario> s = BuildText(
      "model: tiny-llama\nhardware:\n  base: test-gpu\n  memory:\n    capacity: 80\n"
      "topology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:5:15: error: hardware.memory.capacity: \"80\" has no "
            "unit; expected e.g. \"80 GiB\"\n"
            "        capacity: 80\n"
            "                  ^");
}

TEST(ErrorsTest, WrongUnit) {
  Result<Scenario> s = BuildText(
      "model: tiny-llama\nhardware: {base: test-gpu, memory: {bandwidth: 80 GiB}}\n"
      "topology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:2:48: error: hardware.memory.bandwidth: \"80 GiB\": "
            "unknown unit \"GiB\"; expected e.g. \"450 GB/s\" (units: B/s to PB/s, KiB/s to PiB/s, "
            "b/s to Tb/s, Gbit/s, Gbps, GBps)\n"
            "    hardware: {base: test-gpu, memory: {bandwidth: 80 GiB}}\n"
            "                                                   ^");
}

TEST(ErrorsTest, ZeroAndNegativeSizes) {
  Result<Scenario> s = BuildText(
      "model: {base: tiny-llama, hidden_size: 0}\n"
      "hardware: {base: test-gpu, memory: {capacity: 0 GiB}}\n"
      "topology: test-dgx\ngpus: -8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:1:40: error: model.hidden_size: must be between 1 and "
            "16777216, got 0\n"
            "    model: {base: tiny-llama, hidden_size: 0}\n"
            "                                           ^\n"
            "tests/config/data/inline.yaml:2:47: error: hardware.memory.capacity: must be "
            "positive, got \"0 GiB\"\n"
            "    hardware: {base: test-gpu, memory: {capacity: 0 GiB}}\n"
            "                                                  ^\n"
            "tests/config/data/inline.yaml:4:7: error: gpus: must be positive, got -8\n"
            "    gpus: -8\n"
            "          ^");
}

TEST(ErrorsTest, SharedExpertGateWithoutSharedExperts) {
  Result<Scenario> s = BuildText(
      "model: {base: tiny-llama, moe: {num_experts: 8, top_k: 2, shared_expert_gate: true}}\n"
      "hardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.status().ToString(),
      "tests/config/data/inline.yaml:1:79: error: model.moe.shared_expert_gate: gates the shared "
      "experts, but model.moe.num_shared_experts is 0\n"
      "    model: {base: tiny-llama, moe: {num_experts: 8, top_k: 2, shared_expert_gate: true}}\n"
      "                                                                                  ^");
}

// Model sizes past what shardsim models (spec.h kMaxModel*): an error at the key, where they
// used to end in std::bad_alloc (num_layers: 1e12) or an overflowed count (vocab_size: 2^62).
TEST(ErrorsTest, ModelSizesOverTheLimits) {
  Result<Scenario> s = BuildText(
      "model: {base: tiny-llama, num_layers: 1000000000000, moe: {num_experts: 1000000, top_k: "
      "2}}\n"
      "hardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:1:39: error: model.num_layers: must be between 1 and "
            "100000, got 1000000000000\n"
            "    model: {base: tiny-llama, num_layers: 1000000000000, moe: {num_experts: 1000000, "
            "top_k: 2}}\n"
            "                                          ^\n"
            "tests/config/data/inline.yaml:1:73: error: model.moe.num_experts: must be between 1 "
            "and 65536, got 1000000\n"
            "    model: {base: tiny-llama, num_layers: 1000000000000, moe: {num_experts: 1000000, "
            "top_k: 2}}\n"
            "                                                                            ^");
  TestLib();
  Result<ModelSpec> hf = ImportHfConfig("tests/config/data/hf/llama-oversized.json");
  ASSERT_FALSE(hf.ok());
  EXPECT_EQ(hf.status().ToString(),
            "tests/config/data/hf/llama-oversized.json:2:49: error: num_layers: must be between 1 "
            "and 100000, got 1000000000000\n"
            "     \"num_attention_heads\": 4, \"num_hidden_layers\": 1000000000000,\n"
            "                                                    ^\n"
            "tests/config/data/hf/llama-oversized.json:3:16: error: vocab_size: must be between 1 "
            "and 2147483648, got 4611686018427387904\n"
            "     \"vocab_size\": 4611686018427387904}\n"
            "                   ^");
  // At the limit is fine.
  Result<Scenario> most = BuildText(
      "model: {base: tiny-llama, num_layers: 100000}\n"
      "hardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  EXPECT_TRUE(most.ok()) << most.status().ToString();
}

// Every size within its limit, but together more parameters than 2^53: located at num_layers,
// or at vocab_size when the embedding and head are the larger part.
TEST(ErrorsTest, ParameterCountOver2To53) {
  Result<Scenario> s = BuildText(
      "model: {base: tiny-llama, num_layers: 100000, hidden_size: 16777216}\n"
      "hardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.status().ToString(),
      "tests/config/data/inline.yaml:1:27: error: model.num_layers: the model would hold about "
      "7.04e+19 parameters, more than shardsim counts exactly (at most 2^53 = 9007199254740992)\n"
      "    model: {base: tiny-llama, num_layers: 100000, hidden_size: 16777216}\n"
      "                              ^");
  Result<Scenario> v = BuildText(
      "model: {base: tiny-llama, vocab_size: 2147483648, hidden_size: 16777216}\n"
      "hardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(
      v.status().ToString(),
      "tests/config/data/inline.yaml:1:27: error: model.vocab_size: the model would hold about "
      "7.77e+16 parameters, more than shardsim counts exactly (at most 2^53 = 9007199254740992)\n"
      "    model: {base: tiny-llama, vocab_size: 2147483648, hidden_size: 16777216}\n"
      "                              ^");
}

TEST(ErrorsTest, UnknownEnumValue) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 8\n" + kTraining + "parallel: {dp: 8, schedule: 1f1c}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(
      s.status().ToString(),
      "tests/config/data/inline.yaml:6:29: error: parallel.schedule: \"1f1c\" is not one of gpipe, "
      "1f1b, interleaved_1f1b, zb_h1, zb_h2, zb_v, dualpipe, dualpipe_v; did you mean '1f1b'?\n"
      "    parallel: {dp: 8, schedule: 1f1c}\n"
      "                                ^");
}

TEST(ErrorsTest, BooleanExpected) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 8\n" + kTraining + "parallel: {dp: 8, sequence_parallel: yes}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:6:38: error: parallel.sequence_parallel: expected true "
            "or false, got \"yes\"\n"
            "    parallel: {dp: 8, sequence_parallel: yes}\n"
            "                                         ^");
}

TEST(ErrorsTest, HeadsNotDivisibleByKvHeads) {
  Result<Scenario> s = BuildText(
      "model:\n  base: tiny-llama\n  num_kv_heads: 3\nhardware: test-gpu\ntopology: test-dgx\n"
      "gpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:3:17: error: num_kv_heads: 3 does not divide num_heads "
            "(8, tests/config/data/lib/models/tiny-llama.yaml:5:12)\n"
            "      num_kv_heads: 3\n"
            "                    ^");
}

TEST(ErrorsTest, TpDoesNotDivideHeads) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 24\n" + kTraining + "parallel:\n  dp: 8\n  tp: 3\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:8:7: error: parallel.tp: 3 does not divide "
            "model.num_heads (8, tests/config/data/lib/models/tiny-llama.yaml:5:12)\n"
            "      tp: 3\n"
            "          ^");
}

TEST(ErrorsTest, LayoutDoesNotMultiplyToGpus) {
  Result<Scenario> s =
      BuildText(Head() + "gpus: 64\n" + kTraining + "parallel: {dp: 4, tp: 2, pp: 4}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:4:7: error: gpus: 64 does not equal dp*tp*pp*cp = "
            "4*2*4*1 = 32\n"
            "    gpus: 64\n"
            "          ^");
}

TEST(ErrorsTest, UnknownLibraryNameListsCloseNames) {
  Result<Scenario> s =
      BuildText("model: tiny-lama\nhardware: test-gpu\ntopology: test-dgx\ngpus: 8\n" +
                std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:1:8: error: model: no model named 'tiny-lama' in "
            "tests/config/data/lib/models/; close names: tiny-llama\n"
            "    model: tiny-lama\n"
            "           ^");
}

TEST(ErrorsTest, MissingFile) {
  Result<Scenario> s = BuildText(
      "model: models/none.yaml\nhardware: test-gpu\ntopology: test-dgx\n"
      "gpus: 8\n" +
      std::string(kTraining));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "tests/config/data/inline.yaml:1:8: error: model: cannot open "
            "'tests/config/data/models/none.yaml': No such file or directory\n"
            "    model: models/none.yaml\n"
            "           ^");
  Result<Scenario> top = LoadScenario("tests/config/data/none.yaml", TestLib());
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(top.status().ToString(),
            "error: cannot open 'tests/config/data/none.yaml': No such file or directory");
}

TEST(ErrorsTest, FileThatReferencesItself) {
  Result<ModelSpec> m = LoadModel("self", TestLib());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().ToString(),
            "tests/config/data/lib/models/self.yaml:1:7: error: base: cycle of base references: "
            "tests/config/data/lib/models/self.yaml -> tests/config/data/lib/models/self.yaml\n"
            "    base: self\n"
            "          ^");
}

TEST(ErrorsTest, BaseCycleThroughTwoFiles) {
  Result<ModelSpec> m = LoadModel("loop-a", TestLib());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().ToString(),
            "tests/config/data/lib/models/loop-b.yaml:1:7: error: base: cycle of base references: "
            "tests/config/data/lib/models/loop-a.yaml -> tests/config/data/lib/models/loop-b.yaml "
            "-> tests/config/data/lib/models/loop-a.yaml\n"
            "    base: loop-a.yaml\n"
            "          ^");
}

TEST(ErrorsTest, UnsupportedHfArchitecture) {
  TestLib();
  Result<ModelSpec> m = ImportHfConfig("tests/config/data/hf/t5.json");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(
      m.status().ToString(),
      "tests/config/data/hf/t5.json:1:20: error: architectures: unsupported "
      "'T5ForConditionalGeneration'; supported: BloomForCausalLM, DeepseekV2ForCausalLM, "
      "DeepseekV3ForCausalLM, FalconForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, "
      "Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration, GemmaForCausalLM, "
      "GptOssForCausalLM, Llama4ForCausalLM, Llama4ForConditionalGeneration, LlamaForCausalLM, "
      "MistralForCausalLM, MixtralForCausalLM, OPTForCausalLM, Phi3ForCausalLM, Qwen2ForCausalLM, "
      "Qwen2MoeForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, RWForCausalLM\n"
      "    {\"architectures\": [\"T5ForConditionalGeneration\"], \"d_model\": 512, \"model_type\": "
      "\"t5\"}\n"
      "                       ^");
}

TEST(ErrorsTest, EveryProblemOfAFileAtOnce) {
  Result<Scenario> s = BuildText(Head() + "gpus: 0\ntraining: {seq_len: 4096}\nparalel: {}\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().diagnostics().size(), 3u) << s.status().ToString();
}

TEST(ErrorsTest, OddInputsGiveErrorsNotCrashes) {
  const char* texts[] = {
      "",
      "- a\n- b\n",
      "just a string\n",
      "model: [1, 2]\nhardware: {}\ntopology: 5\ngpus: 1\ntraining: 3\nparallel: [tp]\n",
      "model: {base: [x]}\n",
      "model: {hf_config: {a: 1}}\n",
      "model: {base: tiny-llama, hf_config: x.json}\n",
      "model: tiny-llama\nhardware: test-gpu\ntopology: test-dgx\ngpus: 9223372036854775807\n"
      "training: {seq_len: 1, global_batch: 1}\n"
      "parallel: {tp: 9223372036854775807, pp: 9223372036854775807, cp: 4611686018427387904, "
      "first_stage_layers: 9223372036854775807, last_stage_layers: 9223372036854775807}\n",
      "model: {base: tiny-llama, hidden_size: 4611686018427387904, ffn_hidden_size: ~}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, gemm_table: nowhere.csv}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, gemm_table: [1, {dtype: bf17}]}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, matmul: {tile: [1]}}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, power_limit: 700}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, attention_table: nowhere.csv}\n",
      "model: tiny-llama\nhardware: {base: test-gpu, grouped_gemm_table: [1]}\n",
      "parallel: {order: [tp, tp, dp, pp]}\n",
      "a: &x [*x]\n",
  };
  for (const char* text : texts) {
    Result<Scenario> s = BuildText(text);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_FALSE(s.status().diagnostics().empty()) << text;
  }
}

// training.recompute_modules: Megatron-Core's module names, only with recompute: selective.
TEST(ErrorsTest, RecomputeModules) {
  Result<Scenario> ok = BuildText(Head() + "gpus: 8\n" +
                                  "training: {seq_len: 4096, global_batch: 256, recompute: "
                                  "selective, recompute_modules: [layernorm, moe_act]}\n");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->training.recompute_modules,
            ModuleBit(RecomputeModule::kLayernorm) | ModuleBit(RecomputeModule::kMoeAct));
  Result<Scenario> unknown = BuildText(Head() + "gpus: 8\n" +
                                       "training: {seq_len: 4096, global_batch: 256, recompute: "
                                       "selective, recompute_modules: [mlp]}\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().ToString().find(
                "training.recompute_modules: unknown module \"mlp\"; valid: core_attn, layernorm, "
                "mla_up_proj, moe_act"),
            std::string::npos)
      << unknown.status().ToString();
  Result<Scenario> twice = BuildText(Head() + "gpus: 8\n" +
                                     "training: {seq_len: 4096, global_batch: 256, recompute: "
                                     "selective, recompute_modules: [moe_act, moe_act]}\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().ToString().find("'moe_act' is listed twice"), std::string::npos);
  Result<Scenario> full = BuildText(Head() + "gpus: 8\n" +
                                    "training: {seq_len: 4096, global_batch: 256, recompute: full, "
                                    "recompute_modules: [layernorm]}\n");
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().ToString().find(
                "inline.yaml:5:82: error: training.recompute_modules: recompute_modules applies "
                "to recompute: selective, but recompute is full"),
            std::string::npos)
      << full.status().ToString();
}

// Keys that need fp8 training, and the optimizer-state dtype: located, with what is valid.
TEST(ErrorsTest, Fp8OnlyKeysAndOptimizerStateDtype) {
  auto first_line = [](const Result<Scenario>& r) {
    const std::string text = r.status().ToString();
    return text.substr(0, text.find('\n'));
  };
  Result<Scenario> saved = BuildText(Head() + "gpus: 8\n" +
                                     "training: {seq_len: 4096, global_batch: 256, precision: "
                                     "bf16, fp8_saved_activations: true}\n");
  ASSERT_FALSE(saved.ok());
  EXPECT_EQ(first_line(saved),
            "tests/config/data/inline.yaml:5:63: error: training.fp8_saved_activations: "
            "fp8_saved_activations "
            "needs precision: fp8 (the fp8 copies are those the fp8 matmuls make), but precision "
            "is bf16");
  Result<Scenario> dispatch = BuildText(Head() + "gpus: 8\n" +
                                        "training: {seq_len: 4096, global_batch: 256, "
                                        "fp8_dispatch: true}\n");
  ASSERT_FALSE(dispatch.ok());
  EXPECT_EQ(
      first_line(dispatch),
      "tests/config/data/inline.yaml:5:46: error: training.fp8_dispatch: fp8_dispatch needs "
      "precision: "
      "fp8 (the tokens are quantized for the experts' fp8 up-projection), but precision is bf16");
  Result<Scenario> state = BuildText(Head() + "gpus: 8\n" +
                                     "training: {seq_len: 4096, global_batch: 256, "
                                     "optimizer_state_dtype: fp8}\n");
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(first_line(state),
            "tests/config/data/inline.yaml:5:69: error: training.optimizer_state_dtype: \"fp8\" is "
            "not one of "
            "fp32, bf16; did you mean 'fp32'?");
  // moe_probs_in_expert: a boolean, located like the other flags.
  Result<Scenario> probs = BuildText(Head() + "gpus: 8\n" +
                                     "training: {seq_len: 4096, global_batch: 256, "
                                     "moe_probs_in_expert: maybe}\n");
  ASSERT_FALSE(probs.ok());
  EXPECT_EQ(first_line(probs),
            "tests/config/data/inline.yaml:5:67: error: training.moe_probs_in_expert: expected "
            "true or false, got \"maybe\"");
  Result<Scenario> probs_ok = BuildText(Head() + "gpus: 8\n" +
                                        "training: {seq_len: 4096, global_batch: 256, "
                                        "moe_probs_in_expert: true}\n");
  ASSERT_TRUE(probs_ok.ok()) << probs_ok.status().ToString();
  EXPECT_TRUE(probs_ok->training.moe_probs_in_expert);
}

}  // namespace
}  // namespace shardsim
