// Helpers shared by the hardware tests: library hardware files and a synthetic GPU whose curve
// parameters the closed-form tests set by hand.
#ifndef SHARDSIM_TESTS_HARDWARE_HW_TEST_UTIL_H_
#define SHARDSIM_TESTS_HARDWARE_HW_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sim/config/loader.h"
#include "sim/config/spec.h"

namespace shardsim::testing {

// The median of `v` (the mean of the middle two for an even count); NaN when empty.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// A measurement CSV of this source tree (`path` from its root), one map per row keyed by the
// header; a row shorter than the header lacks the missing keys. Plain comma-separated cells (the
// bench and calibration files quote nothing).
using CsvRows = std::vector<std::map<std::string, std::string>>;
inline CsvRows ReadCsvRows(const std::string& path) {
  std::ifstream in(std::string(SHARDSIM_SOURCE_DIR) + "/" + path);
  EXPECT_TRUE(in.good()) << path;
  CsvRows rows;
  std::string line;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (header.empty()) {
      header = cells;
      continue;
    }
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (size_t i = 0; i < header.size() && i < cells.size(); ++i) row[header[i]] = cells[i];
  }
  return rows;
}
inline double CsvNum(const std::map<std::string, std::string>& row, const std::string& key) {
  return std::stod(row.at(key));
}

// hardware/<name>.yaml of this source tree, loaded by the config module.
inline HardwareSpec LibraryHardware(const std::string& name) {
  LoadOptions options;
  options.library_dirs = {SHARDSIM_SOURCE_DIR};
  Result<HardwareSpec> hw = LoadHardware(name, options);
  EXPECT_TRUE(hw.ok()) << hw.status().ToString();
  return hw.ok() ? *hw : HardwareSpec{};
}

// A GPU with round numbers: 100 SMs, 1000 TFLOP/s bf16, 2000 fp8, 50 fp32, 4 TB/s, no latency,
// no launch overhead, no epilogue (k_half = 0), tiles 128x256, balanced waves.
inline HardwareSpec RoundGpu() {
  HardwareSpec hw;
  hw.name = "round";
  hw.peak_flops = {{DType::kBf16, 1000e12},
                   {DType::kFp16, 1000e12},
                   {DType::kFp8, 2000e12},
                   {DType::kFp32, 50e12},
                   {DType::kTf32, 500e12}};
  hw.memory_bandwidth = 4e12;
  hw.memory_capacity = 80e9;
  hw.sm_count = 100;
  hw.matmul_max_efficiency = 0.8;
  hw.matmul_tile_m = 128;
  hw.matmul_tile_n = 256;
  hw.matmul_k_half = 0.0;
  hw.matmul_tile_intensity_half = 10.0;
  hw.matmul_k_split_min = 128;
  hw.matmul_latency = 0.0;
  hw.matmul_wave_quantization = false;
  hw.sustained_compute_fraction = 1.0;
  hw.mem_eff_elementwise = 0.8;
  hw.mem_eff_norm = 0.5;
  hw.mem_eff_softmax = 0.25;
  hw.mem_eff_gather = 0.8;
  hw.mem_eff_optimizer = 0.6;
  hw.kernel_launch_overhead = 0.0;
  return hw;
}

}  // namespace shardsim::testing

#endif  // SHARDSIM_TESTS_HARDWARE_HW_TEST_UTIL_H_
