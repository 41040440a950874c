// Typed specifications of shardsim's inputs: the model, the hardware, the topology, the training
// settings and the parallel layout, gathered into a Scenario.
//
// These are plain values with every unit resolved to SI base units (bytes, bytes/s, FLOP/s,
// seconds). sim/config fills them from YAML (the only module that touches yaml-cpp); every other
// module reads them. The YAML key of each field is given beside it; docs/reference.md §3 is the
// contract. Each spec keeps an Origins map from key path ("num_heads", "parallel.tp") to where the
// value was written, so that checks made later (tp must divide the heads) can point at the file,
// line and column of the offending key.
#ifndef SHARDSIM_CONFIG_SPEC_H_
#define SHARDSIM_CONFIG_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/base/source_line.h"
#include "sim/base/status.h"
#include "sim/framework/framework.h"

namespace shardsim {

// kMxfp8, kNvfp4: block-scaled GEMM formats (OCP MX: fp8 E4M3 with an E8M0 scale per 32
// elements; NVFP4: fp4 E2M1 with an fp8 E4M3 scale per 16 elements and an fp32 per-tensor scale),
// training.precision values that quantize the GEMM operands as Transformer Engine's MXFP8 and
// NVFP4 recipes do; the rest of the model stays bf16 (sim/model/op_graph.cc).
enum class DType { kFp32, kTf32, kBf16, kFp16, kFp8, kMxfp8, kNvfp4 };
inline constexpr int kNumDTypes = 7;
// fp8, mxfp8, nvfp4: the GEMMs run quantized, everything else in bf16.
inline constexpr bool IsQuantizedGemm(DType v) {
  return v == DType::kFp8 || v == DType::kMxfp8 || v == DType::kNvfp4;
}
enum class Activation { kGelu, kRelu, kSwiglu, kGeglu };
enum class NormKind { kLayerNorm, kRmsNorm };
enum class PositionEmbedding { kRope, kLearned, kAlibi, kNone };
enum class Optimizer { kAdam, kSgd };
enum class Recompute { kNone, kSelective, kSelectiveOps, kFull };
// What selective recompute re-runs (training.recompute_modules; Megatron-Core's
// --recompute-modules names): the attention core (Korthikanti 2022 §5, the default), every norm,
// MLA's query/key/value up-projections, the routed experts' activation function. Bit flags.
enum class RecomputeModule { kCoreAttn, kLayernorm, kMlaUpProj, kMoeAct };
inline constexpr int kNumRecomputeModules = 4;
inline constexpr unsigned ModuleBit(RecomputeModule m) { return 1u << static_cast<unsigned>(m); }
// Which fused attention kernel: Transformer Engine / cuDNN's (what Megatron-LM and NeMo run on
// Hopper), or FlashAttention-2 (PyTorch SDPA's flash backend). Unfused attention: flash_attention
// false.
enum class AttentionKernel { kFused, kFlash2 };
// model.local_attention.kind: local (causal) attention on some layers. kSliding: each query sees
// the last `size` keys (Mistral 7B v0.1, gpt-oss, Gemma 2/3); kChunked: each query sees the keys
// of its own `size`-token chunk up to itself (Llama 4's chunked attention).
enum class LocalAttention { kNone, kSliding, kChunked };
// training.cross_entropy_fusion_impl, Megatron-Core's option of that name (with
// cross_entropy_loss_fusion): kNative, its vocab-parallel cross-entropy in fp32 (the fp32
// softmax kept for backward); kTe, Transformer Engine's parallel_cross_entropy, which writes the
// logits' gradient into the 16-bit logits in forward and keeps only them.
enum class CrossEntropyImpl { kNative, kTe };
// The zero-bubble schedules (Qi et al. 2024, arXiv 2401.10241) and DeepSeek's DualPipe /
// DualPipeV (arXiv 2412.19437 §3.2.1; github.com/deepseek-ai/DualPipe) split the backward into
// its input-gradient (B) and weight-gradient (W) passes; sim/schedule says how each orders them.
enum class PipelineSchedule {
  kGpipe,
  k1F1B,
  kInterleaved1F1B,
  kZbH1,
  kZbH2,
  kZbV,
  kDualPipe,
  kDualPipeV
};
enum class LinkKind { kNvSwitch, kNvLink, kPcie, kInfiniBand, kRoce, kEthernet, kInfinityFabric };
enum class FabricKind { kNone, kFatTree, kRailOptimized, kClos };

// Names as written in YAML and printed in reports ("bf16", "swiglu", "interleaved_1f1b").
const char* Name(DType v);
const char* Name(Activation v);
const char* Name(NormKind v);
const char* Name(PositionEmbedding v);
const char* Name(Optimizer v);
const char* Name(Recompute v);
const char* Name(RecomputeModule v);  // "core_attn", "layernorm", "mla_up_proj", "moe_act"
// The modules of a ModuleBit set, in enum order, comma-separated ("core_attn, moe_act").
std::string RecomputeModulesText(unsigned modules);
struct TrainingSpec;
// training.recompute as reports print it: "full", or "selective (core_attn, layernorm)" when
// recompute_modules differs from the default.
std::string RecomputeText(const TrainingSpec& training);
const char* Name(AttentionKernel v);
const char* Name(CrossEntropyImpl v);  // "native", "te"
const char* Name(LocalAttention v);    // "none", "sliding", "chunked"
const char* Name(PipelineSchedule v);
const char* Name(LinkKind v);
const char* Name(FabricKind v);
// Bytes per element of a storage dtype (tf32 is stored as fp32; mxfp8 1 and nvfp4 0.5, their block
// scales not included).
double BytesOf(DType v);

// Where each key of a spec was written, for error messages raised after parsing.
struct KeyOrigin {
  SourceLoc loc;
  SourceLine source_line;  // a view into the file's one copy of its text
};
class Origins {
 public:
  void Set(const std::string& path, KeyOrigin o) { map_[path] = std::move(o); }
  // The origin of `path`, or of the file alone (no line) when the key was defaulted.
  KeyOrigin Get(const std::string& path) const;
  void set_file(std::string f) { file_ = std::move(f); }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::map<std::string, KeyOrigin> map_;
};

// ---------------------------------------------------------------- model
// The largest shapes shardsim models: far above any published model, small enough that products
// of shapes stay well inside int64 and the op graph stays small (it holds one entry per layer).
// A model file or HF config over one of them is a located error, and so is a model whose
// parameter count would pass kMaxModelParams (2^53, counted exactly in int64 and in a double).
inline constexpr int64_t kMaxModelLayers = 100000;  // num_layers, mtp_depth,
                                                    // moe.first_dense_layers, moe.layer_freq
inline constexpr int64_t kMaxModelWidth = int64_t{1}
                                          << 24;  // hidden_size, ffn_hidden_size,
                                                  // head_dim, the moe ffn sizes, mla ranks/dims
inline constexpr int64_t kMaxModelHeads = int64_t{1} << 20;  // num_heads, num_kv_heads
inline constexpr int64_t kMaxModelRows = int64_t{1} << 31;   // vocab_size, max_seq_len,
                                                             // position_table_rows
inline constexpr int64_t kMaxModelExperts = 65536;  // moe.num_experts, top_k, num_shared_experts,
                                                    // max_nodes_per_token
inline constexpr int64_t kMaxModelParams = int64_t{1} << 53;

// Mixture-of-experts block (the `moe:` mapping of a model file).
struct MoeSpec {
  int64_t num_experts = 0;             // moe.num_experts: routed experts per MoE layer
  int64_t top_k = 0;                   // moe.top_k: experts each token is routed to
  int64_t expert_ffn_hidden_size = 0;  // moe.expert_ffn_hidden_size (default: ffn_hidden_size)
  int64_t num_shared_experts = 0;      // moe.num_shared_experts: always-on experts (DeepSeek)
  int64_t shared_expert_ffn_hidden_size =
      0;  // moe.shared_expert_ffn_hidden_size (default: expert's)
  // moe.shared_expert_gate: sigmoid(x . w) scales the shared experts' output, w a Linear h -> 1
  // without bias (Qwen2-MoE's shared_expert_gate); needs num_shared_experts > 0. Default false.
  bool shared_expert_gate = false;
  int64_t first_dense_layers = 0;  // moe.first_dense_layers: leading dense layers (DeepSeek: 3)
  int64_t layer_freq = 1;          // moe.layer_freq: every n-th layer after those is MoE
  double capacity_factor = 0.0;    // moe.capacity_factor: 0 = dropless
  double imbalance = 1.0;          // moe.imbalance: busiest expert rank's load / mean load
  // moe.max_nodes_per_token: node-limited routing (DeepSeek-V3: 4): each token's experts lie on
  // at most this many nodes of its EP group, and the dispatcher sends it once to each of them and
  // forwards it over NVLink there. 0 = unlimited (one transfer per routed copy).
  int64_t max_nodes_per_token = 0;
  // moe.expert_bias: biases on the router and on each routed expert's linear layers (gpt-oss's
  // GptOssTopKRouter and GptOssExperts). Default false.
  bool expert_bias = false;
};

// Multi-head latent attention (DeepSeek-V2/V3; the `mla:` mapping of a model file).
struct MlaSpec {
  int64_t q_lora_rank = 0;       // mla.q_lora_rank: 0 = queries not compressed
  int64_t kv_lora_rank = 0;      // mla.kv_lora_rank
  int64_t qk_nope_head_dim = 0;  // mla.qk_nope_head_dim
  int64_t qk_rope_head_dim = 0;  // mla.qk_rope_head_dim: decoupled RoPE dims (shared key)
  int64_t v_head_dim = 0;        // mla.v_head_dim
};

struct ModelSpec {
  std::string name;             // name
  int64_t hidden_size = 0;      // hidden_size (h)
  int64_t num_layers = 0;       // num_layers (L)
  int64_t num_heads = 0;        // num_heads (n)
  int64_t num_kv_heads = 0;     // num_kv_heads (k; default n)
  int64_t head_dim = 0;         // head_dim (d; default h/n; with mla: qk_nope + qk_rope)
  int64_t ffn_hidden_size = 0;  // ffn_hidden_size (f; default 4h)
  int64_t vocab_size = 0;       // vocab_size (V)
  int64_t max_seq_len = 0;      // max_seq_len
  Activation activation = Activation::kGelu;  // activation
  NormKind norm = NormKind::kLayerNorm;       // norm
  bool bias = false;                          // bias: biases on every linear layer
  bool qkv_bias = false;         // qkv_bias: biases on q/k/v only (Qwen2); default = bias
  bool attn_out_bias = false;    // attn_out_bias: bias on the attention output projection
                                 // (Llama's o_proj with attention_bias); default = bias
  bool mlp_bias = false;         // mlp_bias: biases on the MLP's linear layers (fc1 and fc2;
                                 // gate, up and down when gated); default = bias
  bool norm_bias = true;         // norm_bias: layernorm has a bias (2h); default true
  bool tied_embeddings = false;  // tied_embeddings
  PositionEmbedding position_embedding = PositionEmbedding::kRope;  // position_embedding
  int64_t position_table_rows = 0;  // position_table_rows: learned table rows (default max_seq_len)
  bool parallel_attention = false;  // parallel_attention: attention and MLP read the same input
  int64_t norms_per_layer = 2;      // norms_per_layer: 1 for GPT-J/Falcon-7B parallel blocks
  bool embedding_norm = false;      // embedding_norm: a norm after the embedding (BLOOM)
  double dropout = 0.0;             // dropout: hidden and attention dropout probability
  int64_t mtp_depth = 0;            // mtp_depth: DeepSeek multi-token-prediction modules
  bool qk_norm = false;             // qk_norm: an RMSNorm of width head_dim over each query and
                                    // key head, weights shared by the heads (Qwen3, Gemma 3)
  bool attention_sinks = false;     // attention_sinks: one learned softmax logit per query head
                                    // (gpt-oss); num_heads parameters per layer
  // local_attention: {kind, size, full_every}: layer i (0-based) attends locally unless
  // full_every > 0 and (i + 1) % full_every == 0 (gpt-oss: sliding 128, every 2nd layer full;
  // Llama 4: chunked 8192, every 4th full). IsLocalAttentionLayer.
  LocalAttention local_attention = LocalAttention::kNone;
  int64_t local_attention_size = 0;
  int64_t local_attention_full_every = 0;
  std::optional<MoeSpec> moe;  // moe
  std::optional<MlaSpec> mla;  // mla
  std::string source;          // source: free text, where the shapes come from
  Origins origins;
};

// ---------------------------------------------------------------- hardware
// Which pass a measured kernel ran (kAny: a table that does not say, used for every pass).
enum class KernelPass { kAny, kForward, kBackwardInput, kBackwardWeight };

// One measured matmul throughput (a row of hardware.gemm_table or hardware.grouped_gemm_table).
// m, n, k are the GEMM the pass runs (sim/model/op.h: backward-input (m, k, n) and
// backward-weight (k, n, m) of the forward (m, n, k)).
struct GemmMeasurement {
  DType dtype = DType::kBf16;
  int64_t m = 0, n = 0, k = 0;
  double flops_per_s = 0.0;  // achieved, FLOP/s
  KernelPass pass = KernelPass::kAny;
  int64_t groups = 0;  // grouped GEMM (MoE experts): equal GEMMs in one kernel; 0 = a plain GEMM
};

// One measured fused-attention pass (a row of hardware.attention_table): causal, Transformer
// Engine / cuDNN kernel. FLOP/s in shardsim's count: 4*s*s*d/2 per head forward (the kernel
// skips masked blocks), 2.5x that backward (sim/hardware/op_cost.h).
struct AttentionMeasurement {
  KernelPass pass = KernelPass::kForward;  // kForward or kBackwardInput
  int64_t batch_heads = 0, seq = 0, head_dim = 0, v_head_dim = 0;
  double flops_per_s = 0.0;
};

struct HardwareSpec {
  std::string name;  // name
  std::map<DType, double>
      peak_flops;                 // peak_flops.{fp32,tf32,bf16,fp16,fp8,mxfp8,nvfp4}: FLOP/s, dense
  double memory_capacity = 0.0;   // memory.capacity: bytes
  double memory_bandwidth = 0.0;  // memory.bandwidth: bytes/s
  int64_t sm_count = 132;         // sm_count: streaming multiprocessors (AMD: CUs)
  // matmul: the shape-dependent efficiency curve (sim/hardware/matmul_curve.h documents the
  // formula; defaults: the NVIDIA H200 fit of hardware/calibration/fit_h200.py).
  double matmul_max_efficiency = 0.8375;  // matmul.max_efficiency: fraction of peak, large GEMMs
  // matmul.max_efficiency_by_dtype.{fp32,tf32,bf16,fp16,fp8}: overrides max_efficiency per dtype
  std::map<DType, double> matmul_max_efficiency_by_dtype;
  int64_t matmul_tile_m = 128;  // matmul.tile: [m, n] largest output tile of one CTA
  int64_t matmul_tile_n = 256;
  // matmul.k_half: the per-tile epilogue (and prologue) in k-steps of a 2-byte operand: the
  // k-loop reaches half efficiency at k = k_half (bf16/fp16). Scaled by 2/bytes for other dtypes
  // (fp8: 2x, fp32/tf32: 0.5x): it is a fixed number of operand bytes.
  double matmul_k_half = 178;
  double matmul_tile_intensity_half = 12.1;  // matmul.tile_intensity_half: operand reuse of a
                                             // tile (a*b/(a+b)) at which a tile reaches 1/2
  double matmul_k_split_min = 164;           // matmul.k_split_min: shortest split-K slice (k-steps
                                             // of a 2-byte operand, scaled like k_half)
  double matmul_latency = 2.3e-6;            // matmul.latency: seconds per GEMM kernel (pipeline
                                             // fill and drain), on top of the launch overhead
  bool matmul_wave_quantization = false;     // matmul.wave_quantization: tiles run in whole waves
                                             // (true: Ampere cuBLAS; false: balanced, Hopper)
  // Fraction of the burst math rate a GPU holds when it computes for seconds at its power limit
  // (clocks drop); applies to matmul and attention, not to memory-bound kernels.
  double sustained_compute_fraction = 1.0;  // sustained_compute_fraction
  // sustained_compute_fraction_by_dtype.{fp32,tf32,bf16,fp16,fp8,mxfp8,nvfp4}: the fraction a
  // GEMM in that dtype holds instead (fp8 tensor cores draw more power per clock, so the clock
  // settles lower: bench/h200/results/sustained.csv); mxfp8 and nvfp4 without an entry take
  // fp8's. SustainedFraction (sim/hardware/peaks.h) reads it.
  std::map<DType, double> sustained_compute_fraction_by_dtype;
  // attention core (flash / fused kernels): efficiency = max * s_kv / (s_kv + seq_half) *
  // head-dim factor (sim/hardware/attention_cost.h).
  double attention_fwd_efficiency = 0.69;  // attention.fwd_efficiency
  double attention_bwd_efficiency = 0.56;  // attention.bwd_efficiency
  double attention_seq_half = 229;         // attention.seq_half
  double attention_seq_half_causal = 727;  // attention.seq_half_causal
  double attention_head_dim_half = 55;     // attention.head_dim_half
  // attention.flash2.{fwd,bwd}_efficiency: FlashAttention-2's maxima (0: same as the fused kernel).
  double attention_flash2_fwd_efficiency = 0.0;
  double attention_flash2_bwd_efficiency = 0.0;
  // memory-bound kernels: fraction of HBM bandwidth reached, per kernel class.
  double mem_eff_elementwise = 0.86;   // memory_efficiency.elementwise
  double mem_eff_norm = 0.63;          // memory_efficiency.norm
  double mem_eff_softmax = 0.27;       // memory_efficiency.softmax
  double mem_eff_gather = 0.86;        // memory_efficiency.gather
  double mem_eff_optimizer = 0.67;     // memory_efficiency.optimizer
  double mem_eff_permute = 0.0;        // memory_efficiency.permute: MoE permutes (0: gather's)
  double mem_eff_cross_entropy = 0.0;  // memory_efficiency.cross_entropy: the loss (0: softmax's)
  double kernel_launch_overhead = 1.7e-6;  // kernel_launch_overhead: seconds per kernel
  // runtime memory that is not model state or activations.
  double reserve_cuda_context = 0.8 * 1073741824.0;  // runtime_reserve.cuda_context: bytes
  double reserve_comm_buffers = 1.0 * 1073741824.0;  // runtime_reserve.comm_buffers: bytes
  double reserve_fragmentation = 0.05;               // runtime_reserve.fragmentation: fraction
  std::vector<GemmMeasurement> gemm_table;  // gemm_table: measured TFLOP/s, overrides the curve
  // family: the accelerator generation ("ampere", "hopper", "blackwell", "cdna3"); a topology
  // whose accelerator_family differs is an error. "" = not stated (no check).
  std::string family;
  // default_topology: the usual cluster of this accelerator (a topology name or path), used by
  // check-claim without --topology; resolved only when used. "" = none.
  std::string default_topology;
  double price_per_gpu_hour = 0.0;  // price_per_gpu_hour: USD per GPU-hour; 0 = not given
  std::vector<GemmMeasurement> grouped_gemm_table;  // grouped_gemm_table: expert GEMMs (groups > 0)
  std::vector<AttentionMeasurement> attention_table;  // attention_table: fused causal attention
  double power_limit = 0.0;  // power_limit: watts (board TDP); 0 = not given
  std::string source;        // source: citations
  Origins origins;
};

// ---------------------------------------------------------------- checkpoints and reliability
// Where checkpoints go: the `storage:` block of a topology, or of a scenario (which overrides the
// topology's key by key). A key left unset takes sim/goodput's default (its header cites them).
struct StorageSpec {
  std::optional<double> write_bandwidth_per_node;   // storage.write_bandwidth_per_node: bytes/s
  std::optional<double> aggregate_write_bandwidth;  // storage.aggregate_write_bandwidth: bytes/s,
                                                    // the file system's limit for the whole job
  std::optional<double> host_copy_bandwidth;        // storage.host_copy_bandwidth: bytes/s per
                                                    // GPU, device to host (async checkpoints)
};

// Interruptions, restarts and slow ranks (the scenario's `reliability:` block); unset keys take
// sim/goodput's defaults (derived from the Llama 3 paper and PRISM; its header cites them).
struct ReliabilitySpec {
  // reliability.interruptions_per_gpu_hour: unexpected interruptions (failures) per GPU-hour.
  std::optional<double> interruptions_per_gpu_hour;
  // reliability.planned_interruptions_per_gpu_hour: planned ones (maintenance, updates).
  std::optional<double> planned_interruptions_per_gpu_hour;
  // reliability.restart_time: seconds from an interruption to training again, before the
  // checkpoint is read back (detection, rescheduling, process and communicator start-up).
  std::optional<double> restart_time;
  // reliability.checkpoint_interval: seconds of training between checkpoints (default: optimal).
  std::optional<double> checkpoint_interval;
  // reliability.async_checkpoint: training pauses only for the device-to-host copy.
  bool async_checkpoint = false;
  // reliability.straggler_cv: each rank's step time's standard deviation over its mean (0: none).
  std::optional<double> straggler_cv;
};

// ---------------------------------------------------------------- topology
// The most GPUs a cluster may have (16.8M, far above any built cluster): bounds what a scenario,
// a sweep point or `comm` may allocate per GPU.
inline constexpr int64_t kMaxGpus = int64_t{1} << 24;
// The most (device, virtual stage, micro-batch) passes one simulation holds: its task graph is
// about 4 tasks and 800 bytes per pass (pp 16, 65,536 micro-batches: 4.06 M tasks, 795 MB),
// so this bounds a run, or each thread of a sweep, near 800 MB.
inline constexpr int64_t kMaxSimulatedPasses = int64_t{1} << 20;

// A measured fit of one NCCL collective inside one node (topology intra_node.collectives.OP):
// time = latency + factor * S / (efficiency * intra_node.bandwidth), factor the ring's bytes per
// rank ((n-1)/n, 2(n-1)/n for all-reduce). efficiency 0 = no fit: the algorithms' model applies.
struct CollectiveFit {
  double efficiency = 0.0;  // fraction of intra_node.bandwidth
  double latency = 0.0;     // seconds, the whole fixed part of one call
};

struct TopologySpec {
  std::string name;                           // name
  int64_t gpus_per_node = 8;                  // gpus_per_node
  LinkKind intra_kind = LinkKind::kNvSwitch;  // intra_node.kind
  double intra_bandwidth = 0.0;               // intra_node.bandwidth: bytes/s per GPU per direction
  double intra_latency = 1e-6;                // intra_node.latency: seconds
  double intra_efficiency = 0.8;   // intra_node.efficiency: achievable fraction (nccl-tests busbw)
  bool nvls = false;               // intra_node.nvls: the switch reduces in-network (NVLink SHARP)
  double nvls_efficiency = 0.686;  // intra_node.nvls_efficiency: fraction of bandwidth NVLS reaches
  double nvls_latency = 25e-6;     // intra_node.nvls_latency: seconds per NVLS all-reduce
  // intra_node.links: direct GPU-to-GPU links per GPU of a switchless full mesh (AMD Infinity
  // Fabric: 7 on an 8-GPU node); 0 = a switch (NVSwitch). intra_bandwidth is their sum.
  int64_t intra_links = 0;
  // intra_node.collectives: measured fits inside one node (all_reduce, all_gather,
  // reduce_scatter, all_to_all), used for groups inside one node instead of the algorithms.
  CollectiveFit fit_all_reduce, fit_all_gather, fit_reduce_scatter, fit_all_to_all;
  bool has_inter_node = true;                   // false when the file has no inter_node block
  LinkKind inter_kind = LinkKind::kInfiniBand;  // inter_node.kind
  int64_t nics_per_node = 8;                    // inter_node.nics_per_node
  double nic_bandwidth = 0.0;     // inter_node.nic_bandwidth: bytes/s per NIC per direction
  double inter_latency = 5e-6;    // inter_node.latency: seconds
  double inter_efficiency = 0.9;  // inter_node.efficiency: achievable fraction of the NIC
  FabricKind fabric = FabricKind::kFatTree;  // inter_node.fabric
  double oversubscription = 1.0;  // inter_node.oversubscription: at the layer above the leaves
  int64_t nodes_per_leaf = 16;    // inter_node.nodes_per_leaf: nodes under one leaf (or rail) group
  int64_t nodes_per_pod = 0;      // inter_node.nodes_per_pod: nodes of a pod (3-tier); 0 = one pod
  double pod_oversubscription =
      1.0;                // inter_node.pod_oversubscription: at the layer above the pods
  int64_t max_nodes = 0;  // inter_node.max_nodes: 0 = unbounded
  StorageSpec storage;    // storage
  // accelerator_family: the family of the GPUs its nodes carry (hardware.family, "hopper");
  // "" = any.
  std::string accelerator_family;
  std::string source;  // source
  Origins origins;

  // Why `gpus` GPUs cannot be this cluster ("" when they can): below 1 or above kMaxGpus, not
  // whole nodes, more than one node without an inter_node block, more nodes than max_nodes.
  std::string GpusProblem(int64_t gpus) const;
};

// ---------------------------------------------------------------- training and layout
struct TrainingSpec {
  int64_t seq_len = 0;                     // training.seq_len
  int64_t global_batch = 0;                // training.global_batch: sequences per step
  int64_t micro_batch = 1;                 // training.micro_batch
  DType precision = DType::kBf16;          // training.precision
  Optimizer optimizer = Optimizer::kAdam;  // training.optimizer
  DType grad_dtype = DType::kFp32;         // training.grad_dtype
  Recompute recompute = Recompute::kNone;  // training.recompute
  // training.recompute_modules (with recompute: selective): ModuleBit flags.
  unsigned recompute_modules = ModuleBit(RecomputeModule::kCoreAttn);
  // training.fp8_saved_activations: the inputs of fp8 matmuls and of the routed experts' SwiGLU
  // are kept for backward in fp8 (DeepSeek-V3, arXiv 2412.19437 §3.3.3); needs precision fp8.
  bool fp8_saved_activations = false;
  // Not a training key: the framework's FrameworkSpec::te_linears (framework.te_linears, true
  // under megatron and nemo, the default framework), copied here by the scenario reader so that
  // the op graph, which reads the training spec, sees it.
  bool te_linears = true;
  // training.fp8_dispatch: the MoE dispatch all-to-all (and its counterpart in backward) moves
  // fp8 tokens, the combine stays bf16 (DeepSeek-V3 §3.3.3); needs precision fp8.
  bool fp8_dispatch = false;
  // training.moe_probs_in_expert: the routing probabilities scale the routed experts' SwiGLU
  // output (Megatron-Core TEGroupedMLP's weighted_bias_swiglu_impl) instead of the combined
  // outputs, so the combine keeps nothing for backward but the probabilities: their gradient
  // comes from the SwiGLU, whose fused backward recomputes its output from the saved input.
  bool moe_probs_in_expert = false;
  // training.optimizer_state_dtype: Adam's m and v (fp32; DeepSeek-V3 §3.3.3 keeps them in bf16).
  DType optimizer_state_dtype = DType::kFp32;
  bool flash_attention = true;  // training.flash_attention
  // training.fused_kernels: Megatron/Transformer-Engine fused kernels (a fused SwiGLU saves only
  // its input); false = PyTorch eager (gate, up, silu and product each saved separately).
  bool fused_kernels = true;
  AttentionKernel attention_kernel = AttentionKernel::kFused;  // training.attention_kernel
  // training.fused_loss: a fused cross-entropy that works in place (Megatron-LM's vocab-parallel
  // one); false = PyTorch's (fp32 copy, log-softmax and its gradients materialized).
  bool fused_loss = true;
  // training.cross_entropy_fusion_impl: which fused cross-entropy (needs fused_loss).
  CrossEntropyImpl cross_entropy_impl = CrossEntropyImpl::kNative;
  std::optional<double> tokens;  // training.tokens: total tokens to train
};

// Megatron-LM's checks on the interleaved schedule's micro-batch group N with m micro-batches
// per step (forward_backward_pipelining_with_interleaving): pp <= N <= m, and a last group of 0
// or at least pp micro-batches (a shorter one leaves "dependency bubbles"). Validation words the
// failure (sim/config/validate.cc); the schedule refuses to build an order for it.
enum class GroupFit { kFits, kBelowPp, kAboveMicrobatches, kShortLastGroup };
inline GroupFit FitMicrobatchGroup(int64_t pp, int64_t microbatches, int64_t group) {
  if (group < pp) return GroupFit::kBelowPp;
  if (group > microbatches) return GroupFit::kAboveMicrobatches;
  const int64_t last = microbatches % group;
  return last != 0 && last < pp ? GroupFit::kShortLastGroup : GroupFit::kFits;
}

struct ParallelSpec {
  int64_t dp = 1;                  // parallel.dp
  int64_t tp = 1;                  // parallel.tp
  int64_t pp = 1;                  // parallel.pp
  int64_t cp = 1;                  // parallel.cp
  int64_t ep = 1;                  // parallel.ep: expert parallel (MoE), carved out of dp*cp
  int zero_stage = 0;              // parallel.zero_stage
  bool sequence_parallel = false;  // parallel.sequence_parallel
  PipelineSchedule schedule = PipelineSchedule::k1F1B;  // parallel.schedule
  int64_t virtual_stages = 1;                           // parallel.virtual_stages
  // parallel.microbatch_group_size_per_vp_stage (interleaved_1f1b only): Megatron-Core's option
  // of that name, the micro-batches a rank runs on one model chunk before moving to the next; 0
  // (written or left out) is pp, its default.
  int64_t microbatch_group_size_per_vp_stage = 0;
  // parallel.order: placement of ranks on GPUs, innermost dimension first.
  std::vector<std::string> order = {"tp", "cp", "dp", "pp"};
  int64_t first_stage_layers = 0;  // parallel.first_stage_layers: 0 = even split
  int64_t last_stage_layers = 0;   // parallel.last_stage_layers: 0 = even split
  // parallel.account_for_embedding_in_pipeline_split / ..._loss_...: Megatron-Core's options of
  // the same names: the embedding (loss) counts as one layer of the split, so the first (last)
  // model chunk holds one decoder layer fewer.
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  // parallel.pipeline_layout: Megatron-Core's per-stage layout string
  // (sim/config/pipeline_layout.h); "" = the split above. Excludes the uneven and
  // account_for_* splits.
  std::string pipeline_layout;

  // Model chunks per pipeline rank: virtual_stages under the interleaved schedule, two under
  // ZB-V, DualPipe (two stages' copies) and DualPipeV, else 1.
  int64_t ChunksPerRank() const {
    if (schedule == PipelineSchedule::kInterleaved1F1B) return virtual_stages;
    const bool two = schedule == PipelineSchedule::kZbV ||
                     schedule == PipelineSchedule::kDualPipe ||
                     schedule == PipelineSchedule::kDualPipeV;
    return two ? 2 : 1;
  }
  // The (device, chunk, micro-batch) passes one simulation holds, bounded by kMaxSimulatedPasses:
  // pp x chunks x `microbatches` per pipeline x `pipelines` simulated (1, the representative
  // pipeline; dp x cp with --every-rank). A double: absurd layouts must not overflow it.
  double PipelinePasses(int64_t microbatches, int64_t pipelines) const {
    return static_cast<double>(pp) * static_cast<double>(ChunksPerRank()) *
           static_cast<double>(microbatches) * static_cast<double>(pipelines);
  }
  double dp_bucket_bytes = 40e6;     // parallel.dp_bucket_size: gradient bucket (bytes)
  bool overlap_grad_reduce = true;   // parallel.overlap_grad_reduce
  bool overlap_param_gather = true;  // parallel.overlap_param_gather
  // parallel.tp_comm_overlap: TP collectives pipelined with their GEMMs (Transformer Engine
  // userbuffers, NeMo's tp_comm_overlap); false = Megatron-LM's default, TP comm on the
  // compute stream.
  bool tp_comm_overlap = false;
  // parallel.ep_comm_overlap: expert all-to-all overlapped with computation (DeepSeek-V3 DualPipe).
  bool ep_comm_overlap = false;
};

struct Scenario {
  std::string name;       // name
  std::string file;       // the scenario file it was read from
  ModelSpec model;        // model
  HardwareSpec hardware;  // hardware
  TopologySpec topology;  // topology
  int64_t gpus = 0;       // gpus
  TrainingSpec training;  // training
  ParallelSpec parallel;  // parallel
  // The checkpoint storage in effect: the topology's `storage:` with the scenario's over it.
  StorageSpec storage;          // storage
  ReliabilitySpec reliability;  // reliability
  // framework: the runtime semantics the run follows (sim/framework/framework.h); megatron unless
  // the scenario says otherwise.
  FrameworkSpec framework;
  Origins origins;  // keys of the scenario file itself ("gpus", "parallel.tp", ...)
};

}  // namespace shardsim

#endif  // SHARDSIM_CONFIG_SPEC_H_
