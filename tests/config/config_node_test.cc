// The located YAML/JSON tree: locations of nodes and keys, JSON input, syntax errors, merging.
#include "sim/config/config_node.h"

#include <gtest/gtest.h>

#include "sim/config/yaml_source.h"

namespace shardsim {
namespace {

TEST(ConfigNodeTest, MapsKeepOrderAndLocations) {
  Result<ConfigNode> t = ParseYaml("b: 1\na:\n  c: [x, 'y']\n  d: 2.5 GB\n", "f.yaml");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_TRUE(t->is_map());
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ(t->key(0), "b");  // file order, not sorted
  EXPECT_EQ(t->key(1), "a");
  EXPECT_EQ(t->key_origin(1).loc.ToString(), "f.yaml:2:1");
  const ConfigNode* a = t->Find("a");
  ASSERT_NE(a, nullptr);
  const ConfigNode* c = a->Find("c");
  ASSERT_TRUE(c->is_sequence());
  ASSERT_EQ(c->items().size(), 2u);
  EXPECT_EQ(c->items()[1].text(), "y");
  EXPECT_TRUE(c->items()[1].quoted());
  EXPECT_FALSE(c->items()[0].quoted());
  EXPECT_EQ(c->items()[1].loc().ToString(), "f.yaml:3:10");
  const ConfigNode* d = a->Find("d");
  EXPECT_EQ(d->text(), "2.5 GB");
  EXPECT_EQ(d->loc().ToString(), "f.yaml:4:6");
  EXPECT_EQ(d->origin().source_line, "  d: 2.5 GB");
  EXPECT_EQ(a->FindKeyOrigin("d")->loc.ToString(), "f.yaml:4:3");
}

TEST(ConfigNodeTest, EmptyValueIsNull) {
  Result<ConfigNode> t = ParseYaml("a:\nb: ~\n", "f.yaml");
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->Find("a")->is_null());
  EXPECT_TRUE(t->Find("b")->is_null());
  EXPECT_EQ(t->Find("a")->Describe(), "an empty value");
}

TEST(ConfigNodeTest, ReadsJson) {
  Result<ConfigNode> t =
      ParseYaml("{\"hidden_size\": 4096,\n \"architectures\": [\"LlamaForCausalLM\"]}", "c.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->Find("hidden_size")->text(), "4096");
  EXPECT_EQ(t->Find("hidden_size")->loc().ToString(), "c.json:1:17");
  EXPECT_EQ(t->Find("architectures")->items()[0].text(), "LlamaForCausalLM");
  EXPECT_EQ(t->Find("architectures")->items()[0].loc().ToString(), "c.json:2:20");
}

TEST(ConfigNodeTest, SyntaxErrorIsLocatedWithCaret) {
  Result<ConfigNode> t = ParseYaml("a: 1\nb: [1, 2\nc: 3\n", "bad.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidInput);
  // yaml-cpp notices the unclosed list on the next line.
  EXPECT_EQ(t.status().ToString(),
            "bad.yaml:3:2: error: YAML syntax error: end of sequence flow not found\n"
            "    c: 3\n"
            "     ^");
}

// A binary file (or UTF-16 text) is refused as such, not decoded in another encoding.
TEST(ConfigNodeTest, NonUtf8FileIsRefusedAsSuch) {
  Result<ConfigNode> bom = ParseYaml(std::string("\xff\xfe\x00"
                                                 "bad",
                                                 6),
                                     "bin.yaml");
  ASSERT_FALSE(bom.ok());
  EXPECT_EQ(bom.status().ToString(),
            "bin.yaml:1:1: error: not a UTF-8 text file (it starts with a UTF-16 or UTF-32 "
            "byte-order mark); scenario, model, hardware and topology files are YAML in UTF-8");
  Result<ConfigNode> nul = ParseYaml(std::string("a: 1\n\x00\x01", 7), "nul.yaml");
  ASSERT_FALSE(nul.ok());
  EXPECT_NE(nul.status().ToString().find("a NUL byte at offset 5"), std::string::npos)
      << nul.status().ToString();
}

TEST(ConfigNodeTest, DuplicateKeyIsAnError) {
  Result<ConfigNode> t = ParseYaml("tp: 2\npp: 4\ntp: 8\n", "dup.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "dup.yaml:3:1: error: tp: duplicate key (first written at line 1)\n"
            "    tp: 8\n"
            "    ^");
}

TEST(ConfigNodeTest, AliasBombStopsInsteadOfExpanding) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += std::string(j ? ", " : "") + "*a" + std::to_string(i - 1);
    text += "]\n";
  }
  Result<ConfigNode> t = ParseYaml(text, "bomb.yaml");  // 10^9 leaves if expanded
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("too many nodes"), std::string::npos);
}

TEST(ConfigNodeTest, MissingFile) {
  Result<ConfigNode> t = ParseYamlFile("no/such/file.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(t.status().ToString(),
            "error: cannot open 'no/such/file.yaml': No such file or directory");
}

// A directory read as an empty document ("expected a mapping ..., got an empty value").
TEST(ConfigNodeTest, DirectoryIsNotAFile) {
  Result<ConfigNode> t = ParseYamlFile("tests");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().ToString(),
            "error: cannot read 'tests': it is a directory, not a YAML file");
}

TEST(ConfigNodeTest, MergeOverMergesNestedMapsAndKeepsLocations) {
  Result<ConfigNode> base =
      ParseYaml("name: h100\nmemory:\n  capacity: 80 GiB\n  bandwidth: 3.35 TB/s\n", "base.yaml");
  Result<ConfigNode> over = ParseYaml("name: h100-96\nmemory: {capacity: 96 GB}\n", "over.yaml");
  ASSERT_TRUE(base.ok() && over.ok());
  ConfigNode m = MergeOver(*base, *over);
  EXPECT_EQ(m.Find("name")->text(), "h100-96");
  EXPECT_EQ(m.Find("name")->loc().file, "over.yaml");
  const ConfigNode* mem = m.Find("memory");
  EXPECT_EQ(mem->Find("capacity")->text(), "96 GB");
  EXPECT_EQ(mem->Find("capacity")->loc().ToString(), "over.yaml:2:20");
  EXPECT_EQ(mem->Find("bandwidth")->text(), "3.35 TB/s");
  EXPECT_EQ(mem->Find("bandwidth")->loc().ToString(), "base.yaml:4:14");
  EXPECT_EQ(m.origin().loc.file, "over.yaml");
}

TEST(ConfigNodeTest, MergeOverReplacesNonMaps) {
  Result<ConfigNode> base = ParseYaml("order: [tp, dp]\nx: {a: 1}\n", "b.yaml");
  Result<ConfigNode> over = ParseYaml("order: [dp]\nx: 5\n", "o.yaml");
  ConfigNode m = MergeOver(*base, *over);
  EXPECT_EQ(m.Find("order")->items().size(), 1u);
  EXPECT_TRUE(m.Find("x")->is_scalar());
}

}  // namespace
}  // namespace shardsim
