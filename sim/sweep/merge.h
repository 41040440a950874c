// `shardsim merge`: the result files of the shards of one sweep combined into exactly the file an
// unsharded run writes.
//
// Rows depend only on their point, so merging is ordering: every shard's complete rows, sorted by
// point index, each line copied byte for byte. The shards must agree on the columns (CSV header,
// JSON keys) and together hold every point exactly once: a missing point (a shard not run or
// not finished), a duplicate (the same shard twice) or a torn last line is an error naming the
// file. Given the sweep's points, merge also checks the total and every row's inputs.
#ifndef SHARDSIM_SWEEP_MERGE_H_
#define SHARDSIM_SWEEP_MERGE_H_

#include <string>
#include <vector>

#include "sim/base/status.h"
#include "sim/sweep/ranking.h"

namespace shardsim {

class PointSpace;

struct MergeOptions {
  bool overwrite = false;
  // When given, the sweep the shards come from: its point count and inputs are checked.
  const PointSpace* space = nullptr;
};

struct MergeResult {
  int64_t points = 0;
  std::vector<std::string> input_columns;
  SweepSummary summary;
};

// Reads every file of `inputs` (all CSV or all JSON Lines, told apart by their first line) and
// writes the merged rows to `output`, whose name, when it ends in .csv or .jsonl (.json,
// .ndjson), must be that of the shards' format.
Result<MergeResult> MergeResultFiles(const std::vector<std::string>& inputs,
                                     const std::string& output, const MergeOptions& options);

}  // namespace shardsim

#endif  // SHARDSIM_SWEEP_MERGE_H_
