// What each activation-recompute mode keeps from a layer's forward and what it runs again in
// backward — the one place the modes are defined (memory, FLOPs and time all read it).
//
//   none            every op keeps what its backward needs (Korthikanti 2022 §4.1)
//   selective       Megatron-LM: the attention core's score/softmax/dropout tensors are dropped
//                   and the core re-run in backward (Korthikanti 2022 §5); with
//                   training.recompute_modules, Megatron-Core's other modules as well: norms
//                   (their outputs kept by the next matmul are dropped), MLA's up-projections
//                   (the core's Q, K, V are dropped; DeepSeek-V3 §3.2.3), the routed experts'
//                   activation (fc2's input is dropped) — each op says what (Op::dropped_by,
//                   Op::rerun_by)
//   selective_ops   PyTorch op-level selective checkpointing (torchtitan's default `selective`
//                   policy): the layer keeps its input, the attention output and every other
//                   matmul output (the 1st, 3rd, ... in forward order; compiled, only those
//                   the backward reads, OpSacKeptBytes); backward re-runs the other matmuls
//                   and every pointwise op (norms, activations, rope, residuals)
//   full            only the layer input is kept; the whole forward runs again (Chen et al. 2016)
#ifndef SHARDSIM_MODEL_RECOMPUTE_H_
#define SHARDSIM_MODEL_RECOMPUTE_H_

#include "sim/base/units.h"
#include "sim/config/spec.h"
#include "sim/model/op.h"
#include "sim/model/op_graph.h"

namespace shardsim {

// The share of `op`'s forward that runs again in backward under training.recompute (and
// recompute_modules): 0 or 1, except under selective_ops, where a matmul standing for several
// framework calls (Op::framework_calls) re-runs the calls the policy did not save (the share of
// its output they produce). `mm_calls` counts the layer's aten.mm calls so far: start it at 0 for
// each layer and pass the layer's ops in forward order; it advances past a matmul's calls.
double RecomputedShare(const TrainingSpec& training, const Op& op, int64_t* mm_calls);

// Of `dropped_by` (Op::dropped_by, or its sum over a layer), the bytes selective recompute drops
// with the modules of training.recompute_modules; zero for any other recompute mode.
Bytes SelectiveDrops(const std::array<Bytes, kNumRecomputeModules>& dropped_by,
                     const TrainingSpec& training);

// What recompute selective_ops keeps of one layer per micro-batch: torchtitan's op-level policy
// (the layer input, SDPA's output and the outputs of the 1st, 3rd, ... aten.mm call in forward
// order, each op counted as the separate calls PyTorch modules make for it, Op::framework_calls:
// torchtitan's wq/wk/wv for q/k/v, w1/w3 for a gated fc1), as eager
// PyTorch keeps it or, `compiled` (training.fused_kernels: torch.compile), as AOTAutograd's
// partitioner does (no mm output that only a residual add reads). Closed forms in
// tests/model/recompute_test.cc.
Bytes OpSacKeptBytes(const LayerOps& layer, bool compiled);

// Activation bytes one layer keeps per micro-batch, on this device, under training.recompute.
Bytes LayerActivationBytes(const LayerOps& layer, const TrainingSpec& training);

// Bytes a deferred weight-gradient pass (W, sim/schedule SplitsBackward) holds from the end of
// its B until it runs, per micro-batch, for `ops`: each weighted matmul's input A[m x k] and
// output gradient dC[m x n] (`batch` times), as the zero-bubble runtime's WeightGradStore keeps
// them (sail-sg/zero-bubble-pipeline-parallelism; DualPipe's WeightGradStore likewise). Both in
// fp8 when training.fp8_saved_activations keeps the fp8 matmuls' operands in fp8 (DeepSeek-V3
// Figure 6: the Wgrad GEMM reads the input and the output gradient in FP8), else in the
// activation dtype. Whatever recompute rebuilt for B stays until W too. With sequence
// parallelism (`sp_shards` = tp, else 1) a column-parallel matmul's input is kept as its
// sequence shard and all-gathered again for W, as Megatron-LM's weight-gradient GEMM does
// (Korthikanti 2022 §4.2.2); its output gradient is held whole.
Bytes WeightGradHeldBytes(const std::vector<Op>& ops, const TrainingSpec& training,
                          int64_t sp_shards);

}  // namespace shardsim

#endif  // SHARDSIM_MODEL_RECOMPUTE_H_
