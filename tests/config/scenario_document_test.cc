// ScenarioDocument: parse once, override any key by its dotted path, build many times.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "sim/config/config_node.h"
#include "sim/config/loader.h"
#include "sim/config/yaml_source.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

using testing_util::TestLib;

ScenarioDocument Good() {
  TestLib();
  Result<ScenarioDocument> doc = ScenarioDocument::Parse("tests/config/data/good.yaml");
  EXPECT_TRUE(doc.ok()) << doc.status().ToString();
  return *doc;
}

TEST(ScenarioDocumentTest, SetsScalarsByDottedPath) {
  ScenarioDocument doc = Good();
  ASSERT_TRUE(doc.Set("parallel.tp", "4").ok());
  ASSERT_TRUE(doc.Set("parallel.dp", "2").ok());
  ASSERT_TRUE(doc.Set("training.micro_batch", "1").ok());
  Result<Scenario> s = doc.Build(TestLib());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->parallel.tp, 4);
  EXPECT_EQ(s->parallel.dp, 2);
  EXPECT_EQ(s->training.micro_batch, 1);
  EXPECT_EQ(s->origins.Get("parallel.tp").loc.ToString(), "<set parallel.tp>:1:1");
}

TEST(ScenarioDocumentTest, ReplacesAReferenceWithAnInlineMapping) {
  ScenarioDocument doc = Good();
  ASSERT_TRUE(doc.Set("hardware", "{base: test-gpu, memory: {capacity: 96 GB}}").ok());
  Result<Scenario> s = doc.Build(TestLib());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_DOUBLE_EQ(s->hardware.memory_capacity, 96e9);
  EXPECT_DOUBLE_EQ(s->hardware.memory_bandwidth, 3.35e12);
}

TEST(ScenarioDocumentTest, RefiningANamedModelKeepsItAsBase) {
  ScenarioDocument doc = Good();
  ASSERT_TRUE(doc.Set("model.num_layers", "16").ok());
  Result<Scenario> s = doc.Build(TestLib());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.num_layers, 16);
  EXPECT_EQ(s->model.hidden_size, 512);
  EXPECT_EQ(s->model.name, "tiny-llama");
}

// The same when the name is in a base scenario (a sweep spec built on `base: run.yaml`).
TEST(ScenarioDocumentTest, RefiningAModelNamedInTheBaseScenarioKeepsItAsBase) {
  TestLib();
  Result<ScenarioDocument> doc = ScenarioDocument::ParseText("base: lib/scenarios/base-run.yaml\n",
                                                             "tests/config/data/sweep.yaml");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  ASSERT_TRUE(doc->Set("model.num_layers", "16").ok());
  Result<Scenario> s = doc->Build(TestLib());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->model.num_layers, 16);
  EXPECT_EQ(s->model.hidden_size, 512);
  EXPECT_EQ(s->model.name, "tiny-llama");
}

TEST(ScenarioDocumentTest, UnknownKeysAreReportedAtTheOverride) {
  ScenarioDocument doc = Good();
  ASSERT_TRUE(doc.Set("parallel.tpp", "2").ok());
  Result<Scenario> s = doc.Build(TestLib());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().ToString(),
            "<set parallel.tpp>:1:1: error: parallel.tpp: unknown key; did you mean 'tp'?\n"
            "    2\n"
            "    ^");
}

TEST(ScenarioDocumentTest, LayoutErrorsAfterAnOverridePointAtIt) {
  ScenarioDocument doc = Good();
  ASSERT_TRUE(doc.Set("parallel.tp", "3").ok());
  Result<Scenario> s = doc.Build(TestLib());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidInput);
  // gpus != dp*tp*pp*cp comes first; sequence parallelism's 4096 tokens per micro-batch over tp 3
  // comes last.
  ASSERT_EQ(s.status().diagnostics().size(), 3u);
  EXPECT_EQ(s.status().diagnostics()[1].ToString(),
            "<set parallel.tp>:1:1: error: parallel.tp: 3 does not divide model.num_heads (8, "
            "tests/config/data/lib/models/tiny-llama.yaml:5:12)\n"
            "    3\n"
            "    ^");
}

TEST(ScenarioDocumentTest, BadOverrides) {
  ScenarioDocument doc = Good();
  EXPECT_EQ(doc.Set("parallel.tp", "[1, 2").ToString(),
            "<set parallel.tp>:1:1: error: YAML syntax error: end of sequence flow not found\n"
            "    [1, 2\n"
            "    ^");
  EXPECT_EQ(doc.Set("gpus.x", "1").ToString(),
            "tests/config/data/good.yaml:5:7: error: cannot set 'gpus.x': 'gpus' is \"64\", not "
            "a mapping\n"
            "    gpus: 64\n"
            "          ^");
  EXPECT_EQ(doc.Set("parallel..tp", "1").ToString(),
            "error: 'parallel..tp' is not a dotted key path");
}

TEST(ScenarioDocumentTest, CopiesAreIndependent) {
  ScenarioDocument a = Good();
  ScenarioDocument b = a;
  ASSERT_TRUE(b.Set("parallel.tp", "4").ok());
  ASSERT_TRUE(b.Set("parallel.dp", "2").ok());
  Result<Scenario> sa = a.Build(TestLib());
  Result<Scenario> sb = b.Build(TestLib());
  ASSERT_TRUE(sa.ok() && sb.ok());
  EXPECT_EQ(sa->parallel.tp, 2);
  EXPECT_EQ(sb->parallel.tp, 4);
}

TEST(ScenarioDocumentTest, BuildsConcurrentlyWithTheSameResult) {
  const LoadOptions lib = TestLib();
  const ScenarioDocument doc = Good();
  std::vector<int64_t> layers(8, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < layers.size(); ++i) {
    threads.emplace_back([&, i] {
      ScenarioDocument mine = doc;  // shares the file cache
      if (!mine.Set("model.num_layers", std::to_string(8 * (i + 1))).ok()) return;
      Result<Scenario> s = mine.Build(lib);
      if (s.ok()) layers[i] = s->model.num_layers;
    });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < layers.size(); ++i)
    EXPECT_EQ(layers[i], static_cast<int64_t>(8 * (i + 1)));
}

}  // namespace
}  // namespace shardsim

namespace shardsim {
namespace {

// Set makes plain words itself instead of parsing them: the node is the parser's, text, quoting,
// place and line; values that are not plain words still go through the parser.
TEST(ScenarioDocumentTest, PlainWordsAreTheParsersNodes) {
  for (const std::string v : {"8", "1f1b", "interleaved_1f1b", "true", "Null", "null", "x_Y9",
                              "'8'", "\"q\"", "1e9", "-1", "80 GiB", "~"}) {
    ScenarioDocument doc = Good();
    ASSERT_TRUE(doc.Set("name", v).ok()) << v;
    const ConfigNode* set = doc.tree().Find("name");
    ASSERT_NE(set, nullptr);
    Result<ConfigNode> parsed = ParseYaml(v, "<set name>");
    ASSERT_TRUE(parsed.ok()) << v;
    EXPECT_EQ(set->kind(), parsed->kind()) << v;
    EXPECT_EQ(set->text(), parsed->text()) << v;
    EXPECT_EQ(set->quoted(), parsed->quoted()) << v;
    EXPECT_EQ(set->loc().ToString(), parsed->loc().ToString()) << v;
    EXPECT_EQ(set->origin().source_line.view(), parsed->origin().source_line.view()) << v;
  }
}

// A model, hardware or topology named by reference is read once per document family (the cache
// its copies share); what a later Build gets is what a fresh document reads.
TEST(ScenarioDocumentTest, NamedPartsReadOnceAreTheSame) {
  ScenarioDocument warm = Good();
  ASSERT_TRUE(warm.Build(TestLib()).ok());
  ScenarioDocument again = warm;    // shares the cache, now holding the parts
  ScenarioDocument fresh = Good();  // a cache of its own
  for (ScenarioDocument* d : {&again, &fresh}) {
    ASSERT_TRUE(d->Set("parallel.tp", "4").ok());
    ASSERT_TRUE(d->Set("parallel.dp", "2").ok());
  }
  Result<Scenario> a = again.Build(TestLib());
  Result<Scenario> b = fresh.Build(TestLib());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(a->model.name, b->model.name);
  EXPECT_EQ(a->model.hidden_size, b->model.hidden_size);
  EXPECT_EQ(a->hardware.name, b->hardware.name);
  EXPECT_EQ(a->hardware.memory_capacity, b->hardware.memory_capacity);
  EXPECT_EQ(a->hardware.peak_flops, b->hardware.peak_flops);
  EXPECT_EQ(a->topology.name, b->topology.name);
  EXPECT_EQ(a->topology.gpus_per_node, b->topology.gpus_per_node);
  for (const char* k : {"memory.capacity", "peak_flops.bf16"}) {
    EXPECT_EQ(a->hardware.origins.Get(k).loc.ToString(), b->hardware.origins.Get(k).loc.ToString())
        << k;
  }
  EXPECT_EQ(a->model.origins.Get("hidden_size").loc.ToString(),
            b->model.origins.Get("hidden_size").loc.ToString());
}

}  // namespace
}  // namespace shardsim
