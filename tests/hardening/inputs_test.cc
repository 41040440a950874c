// Issue 19: every input ends in an answer or a located error. Each test here failed before its
// fix (a crash, a hang, a blow-up, or an error without a place) and pins the message now.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/base/file_io.h"
#include "sim/base/units.h"
#include "sim/config/config_node.h"
#include "sim/config/loader.h"
#include "sim/config/yaml_source.h"
#include "sim/report/simulate.h"
#include "tests/config/test_util.h"

namespace shardsim {
namespace {

namespace fs = std::filesystem;

std::string TempDir() {
  std::string t = (fs::temp_directory_path() / "shardsim-hardening-XXXXXX").string();
  std::vector<char> name(t.begin(), t.end());
  name.push_back('\0');
  EXPECT_NE(::mkdtemp(name.data()), nullptr);
  return name.data();
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ---------------------------------------------------------------- the bounded reader

TEST(BoundedReader, DevZeroIsAnErrorNotAnAllocationOfEverything) {
  Result<std::string> r = ReadTextFile("/dev/zero");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "'/dev/zero' is larger than 16 MiB, the most shardsim reads from one input file; is "
            "it the file you meant?");
  EXPECT_FALSE(ReadTextFile("/dev/urandom").ok());
}

TEST(BoundedReader, ModelDevZeroIsALocatedErrorOfTheScenario) {
  Result<Scenario> s = testing_util::BuildText(testing_util::Head("/dev/zero") + "gpus: 8\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find("tests/config/data/inline.yaml:1:8: error: "),
            std::string::npos)
      << s.status().ToString();
  EXPECT_NE(s.status().ToString().find("larger than 16 MiB"), std::string::npos);
}

TEST(BoundedReader, AFifoWithoutAWriterReadsAsEmptyInsteadOfBlocking) {
  const std::string dir = TempDir();
  const std::string fifo = dir + "/model.yaml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<ConfigNode> r = ParseYamlFile(fifo);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            fifo +
                ":1:1: error: the file is empty (nothing but white space and comments); "
                "expected a mapping of keys");
  fs::remove_all(dir);
}

TEST(BoundedReader, AFileOverTheCapIsRefusedBeforeItIsRead) {
  const std::string dir = TempDir();
  const std::string big = dir + "/big.yaml";
  {
    std::ofstream out(big, std::ios::binary);
    out.seekp(static_cast<std::streamoff>(kMaxInputFileBytes));
    out << "x";
  }
  Result<std::string> r = ReadTextFile(big);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidInput);
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- one copy of the text

TEST(SourceLines, EveryNodeViewsTheFilesOneCopyOfItsLine) {
  // A 130 KB one-line JSON object needed 4 GB: each of its nodes copied the line.
  std::string json = "{";
  for (int i = 0; i < 10000; ++i)
    json += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\": 1";
  json += "}";
  Result<ConfigNode> r = ParseYaml(json, "config.json");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 10000u);
  const std::string_view a = r->value(0).origin().source_line.view();
  const std::string_view b = r->value(9999).origin().source_line.view();
  EXPECT_EQ(a.size(), json.size());
  EXPECT_EQ(a.data(), b.data());  // the same buffer, not two copies
}

TEST(SourceLines, AnAliasBombOnALongLineHitsTheNodeGuardWithoutCopyingTheLine) {
  // Ten levels of ten aliases on one line with a 20 KB comment: 10^10 nodes after expansion. The
  // guard stopped at 200,000 nodes, but each had copied the 21 KB line (4 GB) by then.
  std::string y = "{a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]";
  for (char c = 'b'; c <= 'j'; ++c) {
    const char prev = static_cast<char>(c - 1);
    y += std::string(", ") + c + ": &" + c + " [";
    for (int i = 0; i < 10; ++i) y += std::string(i ? ", " : "") + "*" + prev;
    y += "]";
  }
  y += "}  # " + std::string(20000, 'x') + "\n";
  Result<ConfigNode> r = ParseYaml(y, "bomb.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "nesting too deep or too many nodes (alias cycle?)");
}

TEST(SourceLines, ALongLineIsPrintedAsAWindowAroundTheColumn) {
  Diagnostic d{SourceLoc{"f.json", 1, 5001}, "x: bad", std::string(10000, 'a')};
  d.ClipSourceLine();
  EXPECT_EQ(d.window_col, 4901);
  EXPECT_EQ(d.source_line, std::string(Diagnostic::kMaxSourceLine, 'a') + "...");
  const std::string s = d.ToString();
  const size_t caret = s.rfind('^');
  const size_t line_start = s.rfind('\n') + 1;
  // "    ..." then the window: the caret sits under column 5001 of the window.
  EXPECT_EQ(caret - line_start, 4u + 3u + 100u);
}

TEST(Mappings, ManyKeysAreCheckedForDuplicatesInLinearTime) {
  std::string y;
  for (int i = 0; i < 100000; ++i) y += "k" + std::to_string(i) + ": 1\n";
  y += "k5: 2\n";
  Result<ConfigNode> r = ParseYaml(y, "many.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "many.yaml:100001:1: error: k5: duplicate key (first written at line 6)\n    k5: 2\n"
            "    ^");
}

// ---------------------------------------------------------------- line endings, empty files

TEST(LineEndings, CarriageReturnsAloneAreLineBreaks) {
  Result<ConfigNode> r = ParseYaml("a: 1\rb: 2\r", "mac.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(r->key_origin(1).loc.ToString(), "mac.yaml:2:1");
  EXPECT_EQ(r->key_origin(1).source_line, "b: 2");
}

TEST(EmptyFiles, AnEmptyOrCommentOnlyFileIsNamedWithAPlace) {
  const std::string dir = TempDir();
  Write(dir + "/empty.yaml", "# nothing here\n\n");
  Result<ConfigNode> r = ParseYamlFile(dir + "/empty.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            dir +
                "/empty.yaml:1:1: error: the file is empty (nothing but white space and "
                "comments); expected a mapping of keys");
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- units

TEST(Units, FinitenessIsCheckedAfterTheUnitMultiplies) {
  Result<double> big = ParseQuantity("1e308 PiB", Dimension::kBytes);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), "\"1e308 PiB\" is too large (beyond a double's range)");
  Result<double> slow = ParseQuantity("1e-300 Gb/s", Dimension::kBandwidth);
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().message(),
            "\"1e-300 Gb/s\" is below one byte per second; expected e.g. \"450 GB/s\"");
  Result<double> long_time = ParseQuantity("1e300 s", Dimension::kTime);
  ASSERT_FALSE(long_time.ok());
  EXPECT_EQ(long_time.status().message(),
            "\"1e300 s\" is longer than the simulator's clock holds (int64 picoseconds, about 106 "
            "days); expected e.g. \"5 us\"");
  EXPECT_TRUE(ParseQuantity("80 GiB", Dimension::kBytes).ok());
  EXPECT_TRUE(ParseQuantity("0 us", Dimension::kTime).ok());
}

TEST(Units, AnOverflowingCapacityIsALocatedErrorOfItsKey) {
  Result<Scenario> s = testing_util::BuildText(
      "model: tiny-llama\nhardware: {base: test-gpu, memory: {capacity: 1e308 PiB}}\n"
      "topology: test-dgx\ngpus: 8\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find(
                "tests/config/data/inline.yaml:2:47: error: hardware.memory.capacity: \"1e308 "
                "PiB\" is too large (beyond a double's range)\n"),
            std::string::npos)
      << s.status().ToString();
}

// ---------------------------------------------------------------- missing keys

TEST(MissingKeys, ARequiredKeyMissingFromADocumentPointsAtTheMapping) {
  const std::string dir = TempDir();
  Write(dir + "/m.yaml",
        "# a model without its width\nname: m\nnum_layers: 2\nnum_heads: 2\n"
        "vocab_size: 100\nmax_seq_len: 128\n");
  Result<ModelSpec> m = LoadModel(dir + "/m.yaml", LoadOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().diagnostics().front().ToString(),
            dir + "/m.yaml:2:1: error: missing required key 'hidden_size'\n    name: m\n    ^");
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- kernel tables

TEST(GemmTable, ARateAboveThePeakIsALocatedErrorNotRunAsGiven) {
  const std::string dir = TempDir();
  Write(dir + "/hw.yaml",
        "base: test-gpu\nname: fast\ngemm_table:\n  - {dtype: bf16, m: 4096, n: 4096, k: 4096, "
        "tflops: 2500}\n");
  LoadOptions lib{{std::string(SHARDSIM_SOURCE_DIR) + "/tests/config/data/lib"}};
  Result<HardwareSpec> h = LoadHardware(dir + "/hw.yaml", lib);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().diagnostics().front().ToString(),
            dir +
                "/hw.yaml:4:54: error: gemm_table[0].tflops: 2500 is above the bf16 peak "
                "(peak_flops.bf16: 989.4 TFLOP/s); a measured rate cannot beat the peak (a "
                "wrong dtype, or a rate in another unit?)\n"
                "      - {dtype: bf16, m: 4096, n: 4096, k: 4096, tflops: 2500}\n"
                "                                                         ^");
  Write(dir + "/g.csv", "dtype,m,n,k,tflops\nfp8,8192,8192,8192,5000\n");
  Write(dir + "/hwcsv.yaml", "base: test-gpu\nname: csv\ngemm_table: g.csv\n");
  Result<HardwareSpec> c = LoadHardware(dir + "/hwcsv.yaml", lib);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().diagnostics().front().ToString(),
            dir +
                "/g.csv:2:20: error: tflops: 5000 is above the fp8 peak (peak_flops.fp8: 1978.9 "
                "TFLOP/s); a measured rate cannot beat the peak (a wrong dtype, or a rate in "
                "another unit?)\n    fp8,8192,8192,8192,5000\n                       ^");
  fs::remove_all(dir);
}

// ---------------------------------------------------------------- the engine's clock

TEST(EngineClock, AStepLongerThanTheClockNamesTheKeyAndWhereItIsWritten) {
  Result<Scenario> sc = testing_util::BuildText(
      "model: tiny-llama\nhardware: test-gpu\n"
      "topology: {base: test-dgx, intra_node: {bandwidth: 1 B/s}}\ngpus: 8\n"
      "training: {seq_len: 2048, global_batch: 8, micro_batch: 1}\nparallel: {dp: 8}\n");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Result<SimResult> r = Simulate(*sc);
  ASSERT_FALSE(r.ok());
  const Diagnostic& d = r.status().diagnostics().front();
  EXPECT_EQ(d.loc.ToString(), "tests/config/data/inline.yaml:3:52");
  EXPECT_NE(d.message.find("; the inputs behind it: intra_node.bandwidth (1.00 B/s, "
                           "tests/config/data/inline.yaml:3:52)"),
            std::string::npos)
      << d.message;
}

// ---------------------------------------------------------------- atomic writes

TEST(AtomicWrite, ReplacesWholeAndLeavesNoTemporaryFile) {
  const std::string dir = TempDir();
  const std::string out = dir + "/out.json";
  Write(out, "old");
  ASSERT_TRUE(WriteFileAtomic(out, "new content").ok());
  std::ifstream in(out);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(s, "new content");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  fs::remove_all(dir);
}

TEST(AtomicWrite, AFailedWriteLeavesTheOldFile) {
  // /dev/full: every write fails with ENOSPC, as on a full disk (written in place: a device).
  Status s = WriteFileAtomic("/dev/full", "x");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "cannot write '/dev/full': No space left on device");
  const std::string dir = TempDir();
  Status missing = WriteFileAtomic(dir + "/no/such/dir/out.html", "x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.message(),
            "cannot write '" + dir + "/no/such/dir/out.html': No such file or directory");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shardsim
