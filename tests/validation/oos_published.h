// The published figures of the out-of-sample runs (tests/validation/oos/published.csv): read by
// the out-of-sample table (out_of_sample_test.cc) and by the residuals behind the prediction
// intervals (residuals_test.cc).
#ifndef SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_
#define SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace shardsim {

inline const std::string kOosDir = std::string(SHARDSIM_SOURCE_DIR) + "/tests/validation/oos/";

struct OosPublished {
  std::string id, system, kind;  // kind: dense or moe
  double tokens_per_s_per_gpu = 0.0;
  double model_tflops_per_gpu = 0.0;
};

inline std::vector<OosPublished> ReadOosPublished() {
  std::ifstream in(kOosDir + "published.csv");
  EXPECT_TRUE(in.good()) << kOosDir << "published.csv";
  std::vector<OosPublished> rows;
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;  // id,system,tokens_per_s_per_gpu,model_tflops_per_gpu,kind
      continue;
    }
    std::stringstream s(line);
    OosPublished p;
    std::string tokens, tflops;
    std::getline(s, p.id, ',');
    std::getline(s, p.system, ',');
    std::getline(s, tokens, ',');
    std::getline(s, tflops, ',');
    std::getline(s, p.kind, ',');
    EXPECT_TRUE(p.kind == "dense" || p.kind == "moe") << p.id << ": kind '" << p.kind << "'";
    p.tokens_per_s_per_gpu = std::stod(tokens);
    p.model_tflops_per_gpu = std::stod(tflops);
    rows.push_back(p);
  }
  return rows;
}

}  // namespace shardsim

#endif  // SHARDSIM_TESTS_VALIDATION_OOS_PUBLISHED_H_
