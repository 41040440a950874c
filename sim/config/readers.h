// Building typed specs from resolved ConfigNode trees (internal to sim/config).
//
// Each Read* function reads every key of its spec (docs/reference.md §3; the YAML keys are beside
// the fields of spec.h), applies the documented defaults, records each key's origin and returns
// every problem found at once. `msg_prefix` is prepended to key names in messages ("model." for
// a model written inline in a scenario); `where` locates "missing required key" errors.
#ifndef SHARDSIM_CONFIG_READERS_H_
#define SHARDSIM_CONFIG_READERS_H_

#include <string>

#include "sim/base/status.h"
#include "sim/config/config_node.h"
#include "sim/config/library.h"
#include "sim/config/spec.h"

namespace shardsim {

// The location "missing required key" errors of a document point at: the key that holds an
// inline mapping, or the file alone.
KeyOrigin DocWhere(const ResolvedDoc& doc, const KeyOrigin* holder_key);

Status ReadModel(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                 ModelSpec* out);
Status ReadHardware(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                    HardwareSpec* out);
Status ReadTopology(const ResolvedDoc& doc, const KeyOrigin& where, const std::string& msg_prefix,
                    TopologySpec* out);
// The scenario's own keys; model/hardware/topology are resolved through `resolver`.
Status ReadScenario(const ResolvedDoc& doc, Resolver* resolver, Scenario* out);

// The `storage:` block of a topology or scenario into *out (absent: left as is), and the
// scenario's `reliability:` block (sim/config/reliability_reader.cc).
class MapReader;
void ReadStorage(MapReader& parent, StorageSpec* out);
void ReadReliability(MapReader& parent, ReliabilitySpec* out);
// The keys `over` sets replace those of *base.
void MergeStorage(const StorageSpec& over, StorageSpec* base);

// hardware.gemm_table / grouped_gemm_table given as a CSV file (header with at least
// dtype,m,n,k,tflops; optional pass, groups). A rate above `peaks`' entry for its dtype (when the
// hardware gives one) is an error at its field: a measurement cannot beat the peak, and the cost
// model would otherwise run it as given.
Status ReadGemmCsv(const std::string& path, const ConfigNode& ref, const std::string& key,
                   const std::map<DType, double>& peaks, std::vector<GemmMeasurement>* out);

// "" or why `flops_per_s` of `dtype` cannot be a measured rate of hardware with `peaks`.
std::string GemmRateProblem(DType dtype, double flops_per_s, const std::map<DType, double>& peaks);
// hardware.attention_table: a CSV file with pass (forward|backward), batch_heads, seq, head_dim,
// v_head_dim, tflops.
Status ReadAttentionCsv(const std::string& path, const ConfigNode& ref, const std::string& key,
                        std::vector<AttentionMeasurement>* out);

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_READERS_H_
