#!/usr/bin/env python3
"""Calibration measurements for shardsim on one NVIDIA H200 (or any CUDA GPU).

Measures, with PyTorch and CUDA events (median of repeated runs after warm-up, random data):
  1. GEMM throughput (TFLOP/s) over a grid of (m, n, k) shapes for bf16 and fp8 (e4m3,
     torch._scaled_mm) and a small fp32/tf32 subset            -> gemm.csv
  2. Attention throughput (flash / default SDPA backends, forward and backward, causal and
     full)                                                      -> attention.csv
  3. Memory-bound kernels: copy, add, gelu, swiglu, layer_norm, rms_norm, softmax, fused AdamW,
     by size (achieved bytes/s), and launch overhead            -> membound.csv
  4. Training steps of small GPT-style and Llama-style models under several batch / sequence /
     recompute settings: peak allocated memory (torch.cuda.max_memory_allocated), static and
     activation memory, FLOPs counted by torch.utils.flop_counter, and step time -> train.json

Every section is independent: one that fails is logged and the others still run. Results are
written as each section finishes so a run cut short still returns what it measured.

Usage: OUT=/some/dir python3 calibrate_h200.py [--quick]
"""
import csv
import json
import math
import os
import sys
import time
import traceback

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.environ.get("OUT", "calib_out")
os.makedirs(OUT, exist_ok=True)
QUICK = "--quick" in sys.argv
DEV = "cuda"
LOG = open(os.path.join(OUT, "log.txt"), "w")


def log(*args):
    msg = " ".join(str(a) for a in args)
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def time_fn(fn, min_ms=20.0, max_reps=50, warmup=2):
    """Median time in seconds of fn() measured with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    # estimate one run
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    one = max(s.elapsed_time(e), 1e-3)
    reps = int(max(3, min(max_reps, min_ms / one)))
    times = []
    for _ in range(reps):
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    return median(times)


def write_csv(name, rows, header):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow(r)


T_START = time.time()
DEADLINE_S = float(os.environ.get("CALIB_DEADLINE_S", "420"))


def section(fn):
    t0 = time.time()
    if t0 - T_START > DEADLINE_S:
        log("SKIPPED (deadline)", fn.__name__)
        return
    try:
        fn()
    except Exception:
        log("SECTION FAILED", fn.__name__)
        log(traceback.format_exc())
    log(f"[{fn.__name__}] {time.time() - t0:.1f} s")


def env_info():
    p = torch.cuda.get_device_properties(0)
    info = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": p.name,
        "sms": p.multi_processor_count,
        "total_memory_bytes": p.total_memory,
        "l2_bytes": getattr(p, "L2_cache_size", None),
        "cudnn": torch.backends.cudnn.version(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    try:
        import subprocess
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,power.limit",
             "--format=csv,noheader"], capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as ex:  # noqa: BLE001
        info["nvidia_smi"] = str(ex)
    free, total = torch.cuda.mem_get_info()
    info["mem_free_at_start"] = free
    log(json.dumps(info))
    with open(os.path.join(OUT, "env.json"), "w") as f:
        json.dump(info, f, indent=1)


# ---------------------------------------------------------------- GEMM
GEMM_ROWS = []


def gemm():
    dims = [128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
    if QUICK:
        dims = [256, 1024, 4096, 8192]
    torch.backends.cuda.matmul.allow_tf32 = False
    big = max(dims)
    # Pools of random data, sliced per shape (rotating 2 buffers to avoid pure-L2 reuse).
    a_pool = [torch.randn(big, big, device=DEV, dtype=torch.bfloat16) for _ in range(2)]
    b_pool = [torch.randn(big, big, device=DEV, dtype=torch.bfloat16) for _ in range(2)]
    for m in dims:
        for n in dims:
            for k in dims:
                a = [x[:m, :k] .contiguous() for x in a_pool] if m * k <= 4096 * 4096 else [a_pool[0][:m, :k].contiguous()]
                b = [x[:k, :n].contiguous() for x in b_pool] if k * n <= 4096 * 4096 else [b_pool[0][:k, :n].contiguous()]
                it = [0]

                def run():
                    i = it[0] = it[0] + 1
                    torch.mm(a[i % len(a)], b[i % len(b)])

                t = time_fn(run, min_ms=10.0, max_reps=30)
                GEMM_ROWS.append(["bf16", m, n, k, t, 2.0 * m * n * k / t / 1e12])
                del a, b
    log("bf16 gemm done", len(GEMM_ROWS))
    write_csv("gemm.csv", GEMM_ROWS, ["dtype", "m", "n", "k", "time_s", "tflops"])
    del a_pool, b_pool
    torch.cuda.empty_cache()

    # fp8 e4m3 via torch._scaled_mm: a (m,k) row-major, b given as (n,k) row-major then .t()
    try:
        a8 = torch.randn(big, big, device=DEV).to(torch.float8_e4m3fn)
        b8 = torch.randn(big, big, device=DEV).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device=DEV)
        for m in dims:
            for n in dims:
                for k in dims:
                    a = a8[:m, :k].contiguous()
                    b = b8[:n, :k].contiguous()

                    def run8():
                        torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                         use_fast_accum=True)

                    t = time_fn(run8, min_ms=10.0, max_reps=30)
                    GEMM_ROWS.append(["fp8", m, n, k, t, 2.0 * m * n * k / t / 1e12])
        del a8, b8
    except Exception:
        log("fp8 gemm failed")
        log(traceback.format_exc())
    write_csv("gemm.csv", GEMM_ROWS, ["dtype", "m", "n", "k", "time_s", "tflops"])
    torch.cuda.empty_cache()

    # fp32 and tf32 on square shapes
    for mode in ["fp32", "tf32"]:
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        for d in [1024, 2048, 4096, 8192]:
            a = torch.randn(d, d, device=DEV)
            b = torch.randn(d, d, device=DEV)
            t = time_fn(lambda: torch.mm(a, b), min_ms=10.0, max_reps=20)
            GEMM_ROWS.append([mode, d, d, d, t, 2.0 * d ** 3 / t / 1e12])
    torch.backends.cuda.matmul.allow_tf32 = False
    write_csv("gemm.csv", GEMM_ROWS, ["dtype", "m", "n", "k", "time_s", "tflops"])
    log("gemm rows", len(GEMM_ROWS))


# ---------------------------------------------------------------- attention
ATT_ROWS = []


def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    seqs = [512, 1024, 2048, 4096, 8192, 16384, 32768]
    if QUICK:
        seqs = [1024, 4096]
    for name, be in backends:
        for d in [64, 128]:
            heads = 2048 // d  # hidden 2048 per TP shard
            for s in seqs:
                b = max(1, 16384 // s)
                for causal in [True, False]:
                    try:
                        q = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                        k = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                        v = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                        with sdpa_kernel([be]):
                            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            tf = time_fn(fwd, min_ms=10.0, max_reps=20)
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            go = torch.randn_like(out)

                            def fb():
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                torch.autograd.grad(o, (q, k, v), go)

                            tfb = time_fn(fb, min_ms=10.0, max_reps=20)
                        cf = 0.5 if causal else 1.0
                        fl = 4.0 * b * heads * s * s * d * cf
                        tb = max(tfb - tf, 1e-9)
                        ATT_ROWS.append([name, b, heads, s, d, int(causal), tf, tb, fl / tf / 1e12,
                                         2 * fl / tb / 1e12])
                        del q, k, v, out, go
                    except Exception as ex:  # noqa: BLE001
                        log("attention", name, d, s, causal, "failed:", str(ex).splitlines()[0][:200])
    # non-flash (math) attention at a few sizes, for the materialised-scores path
    from torch.nn.attention import SDPBackend, sdpa_kernel
    for s in [512, 1024, 2048, 4096]:
        d, heads = 128, 16
        b = max(1, 8192 // s)
        try:
            q = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn_like(q, requires_grad=True)
            v = torch.randn_like(q, requires_grad=True)
            with sdpa_kernel([SDPBackend.MATH]):
                tf = time_fn(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), min_ms=10, max_reps=10)
                go = torch.randn_like(q)

                def fb():
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    torch.autograd.grad(o, (q, k, v), go)

                tfb = time_fn(fb, min_ms=10, max_reps=10)
            fl = 4.0 * b * heads * s * s * d  # math path computes the full square
            ATT_ROWS.append(["math", b, heads, s, d, 1, tf, tfb - tf, fl / tf / 1e12, 2 * fl / max(tfb - tf, 1e-9) / 1e12])
            del q, k, v
        except Exception as ex:  # noqa: BLE001
            log("math attention failed", s, str(ex).splitlines()[0][:200])
    write_csv("attention.csv", ATT_ROWS,
              ["backend", "batch", "heads", "seq", "head_dim", "causal", "fwd_s", "bwd_s", "fwd_tflops",
               "bwd_tflops"])
    log("attention rows", len(ATT_ROWS))
    torch.cuda.empty_cache()


# ---------------------------------------------------------------- memory-bound kernels
MB_ROWS = []


def membound():
    sizes = [2 ** p for p in range(16, 31, 2)]  # elements: 64K .. 1G (bf16: 128 KB .. 2 GB)
    if QUICK:
        sizes = [2 ** 20, 2 ** 26]
    for n in sizes:
        x = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        y = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        out = torch.empty_like(x)
        e = 2  # bytes per element
        cases = [
            ("copy", lambda: out.copy_(x), 2 * n * e),
            ("add", lambda: torch.add(x, y, out=out), 3 * n * e),
            ("gelu", lambda: F.gelu(x), 2 * n * e),
            ("silu_mul", lambda: F.silu(x) * y, 5 * n * e),  # two kernels: silu (r+w), mul (2r+w)
        ]
        for name, fn, by in cases:
            t = time_fn(fn, min_ms=5.0, max_reps=50)
            MB_ROWS.append([name, n, by, t, by / t / 1e9])
        hcol = 4096
        if n >= hcol:
            x2 = x.view(-1, hcol)
            w = torch.ones(hcol, device=DEV, dtype=torch.bfloat16)
            bb = torch.zeros(hcol, device=DEV, dtype=torch.bfloat16)
            t = time_fn(lambda: F.layer_norm(x2, (hcol,), w, bb), min_ms=5.0, max_reps=50)
            MB_ROWS.append(["layer_norm", n, 2 * n * e, t, 2 * n * e / t / 1e9])
            if hasattr(F, "rms_norm"):
                t = time_fn(lambda: F.rms_norm(x2, (hcol,), w), min_ms=5.0, max_reps=50)
                MB_ROWS.append(["rms_norm", n, 2 * n * e, t, 2 * n * e / t / 1e9])
            t = time_fn(lambda: torch.softmax(x2, dim=-1), min_ms=5.0, max_reps=50)
            MB_ROWS.append(["softmax", n, 2 * n * e, t, 2 * n * e / t / 1e9])
            del x2, w, bb
        del x, y, out
        torch.cuda.empty_cache()

    # fused AdamW step over fp32 params: reads p, g, m, v and writes p, m, v = 28 bytes/param
    for nparam in [2 ** 22, 2 ** 25, 2 ** 28]:
        p = torch.zeros(nparam, device=DEV, dtype=torch.float32, requires_grad=True)
        p.grad = torch.randn_like(p)
        for fused in [True, False]:
            try:
                opt = torch.optim.AdamW([p], lr=1e-4, fused=fused, foreach=None if fused else True)
                opt.step()
                t = time_fn(opt.step, min_ms=10.0, max_reps=20)
                MB_ROWS.append(["adamw_fused" if fused else "adamw_foreach", nparam, 28 * nparam, t,
                                28 * nparam / t / 1e9])
                del opt
            except Exception as ex:  # noqa: BLE001
                log("adamw failed", fused, str(ex)[:200])
        del p
        torch.cuda.empty_cache()

    # launch overhead: back-to-back tiny kernels on the GPU timeline
    z = torch.zeros(1, device=DEV)
    for _ in range(100):
        z.add_(1)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(2000):
        z.add_(1)
    e.record()
    torch.cuda.synchronize()
    MB_ROWS.append(["tiny_kernel_eager", 1, 0, s.elapsed_time(e) * 1e-3 / 2000, 0])
    try:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(200):
                z.add_(1)
        g.replay()
        torch.cuda.synchronize()
        s.record()
        for _ in range(10):
            g.replay()
        e.record()
        torch.cuda.synchronize()
        MB_ROWS.append(["tiny_kernel_graph", 1, 0, s.elapsed_time(e) * 1e-3 / 2000, 0])
    except Exception as ex:  # noqa: BLE001
        log("graph launch failed", str(ex)[:200])
    write_csv("membound.csv", MB_ROWS, ["kernel", "elements", "bytes", "time_s", "gbps"])
    log("membound rows", len(MB_ROWS))


# ---------------------------------------------------------------- training steps
class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        h, nh, kvh, f = cfg["h"], cfg["heads"], cfg["kv_heads"], cfg["ffn"]
        self.cfg = cfg
        self.d = h // nh
        bias = cfg["bias"]
        Norm = nn.LayerNorm if cfg["norm"] == "layernorm" else nn.RMSNorm
        self.ln1 = Norm(h) if cfg["norm"] == "rmsnorm" else Norm(h, bias=bias)
        self.ln2 = Norm(h) if cfg["norm"] == "rmsnorm" else Norm(h, bias=bias)
        self.qkv = nn.Linear(h, (nh + 2 * kvh) * self.d, bias=bias)
        self.proj = nn.Linear(nh * self.d, h, bias=bias)
        if cfg["act"] == "swiglu":
            self.fc1 = nn.Linear(h, 2 * f, bias=bias)
        else:
            self.fc1 = nn.Linear(h, f, bias=bias)
        self.fc2 = nn.Linear(f, h, bias=bias)
        self.p = cfg["dropout"]

    def forward(self, x):
        cfg = self.cfg
        b, s, h = x.shape
        nh, kvh, d = cfg["heads"], cfg["kv_heads"], self.d
        y = self.ln1(x)
        qkv = self.qkv(y)
        q, k, v = qkv.split([nh * d, kvh * d, kvh * d], dim=-1)
        q = q.view(b, s, nh, d).transpose(1, 2)
        k = k.view(b, s, kvh, d).transpose(1, 2)
        v = v.view(b, s, kvh, d).transpose(1, 2)
        from torch.nn.attention import SDPBackend, sdpa_kernel
        be = SDPBackend.FLASH_ATTENTION if cfg["flash"] else SDPBackend.MATH
        dp = self.p if (self.training and not cfg["flash"]) else 0.0
        with sdpa_kernel([be]):
            if kvh == nh:
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dp)
            else:
                try:  # native GQA: K/V are not expanded (and not saved expanded)
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dp, enable_gqa=True)
                except (TypeError, RuntimeError):
                    cfg["gqa_expanded"] = True
                    k = k.repeat_interleave(nh // kvh, dim=1)
                    v = v.repeat_interleave(nh // kvh, dim=1)
                    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=dp)
        o = o.transpose(1, 2).reshape(b, s, nh * d)
        o = self.proj(o)
        if self.p > 0:
            o = F.dropout(o, self.p, self.training)
        x = x + o
        y = self.ln2(x)
        y = self.fc1(y)
        if cfg["act"] == "swiglu":
            g, u = y.chunk(2, dim=-1)
            y = F.silu(g) * u
        else:
            y = F.gelu(y)
        y = self.fc2(y)
        if self.p > 0:
            y = F.dropout(y, self.p, self.training)
        return x + y


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        h = cfg["h"]
        self.tok = nn.Embedding(cfg["vocab"], h)
        self.pos = nn.Embedding(cfg["max_seq"], h) if cfg["pos"] == "learned" else None
        self.blocks = nn.ModuleList([Block(cfg) for _ in range(cfg["layers"])])
        Norm = nn.LayerNorm if cfg["norm"] == "layernorm" else nn.RMSNorm
        self.lnf = Norm(h)
        self.head = nn.Linear(h, cfg["vocab"], bias=False)

    def forward(self, idx, targets, recompute):
        x = self.tok(idx)
        if self.pos is not None:
            x = x + self.pos(torch.arange(idx.shape[1], device=idx.device))[None]
        if self.cfg["dropout"] > 0:
            x = F.dropout(x, self.cfg["dropout"], self.training)
        for blk in self.blocks:
            if recompute == "full":
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
            else:
                x = blk(x)
        x = self.lnf(x)
        logits = self.head(x)
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


GPT_CFG = dict(h=2048, heads=16, kv_heads=16, ffn=8192, layers=16, vocab=50304, max_seq=4096, bias=True,
               norm="layernorm", act="gelu", pos="learned", dropout=0.1, flash=True)
LLAMA_CFG = dict(h=2048, heads=16, kv_heads=4, ffn=5632, layers=16, vocab=32000, max_seq=4096, bias=False,
                 norm="rmsnorm", act="swiglu", pos="rope", dropout=0.0, flash=True)

TRAIN_RESULTS = []


def train_one(name, cfg, s, b, recompute):
    torch.cuda.empty_cache()
    torch.manual_seed(0)
    model = GPT(cfg).to(DEV, dtype=torch.bfloat16)
    model.train()
    params = list(model.parameters())
    nparams = sum(p.numel() for p in params)
    # Megatron-style mixed precision: bf16 weights and bf16 grads, fp32 master + Adam m, v (12 B)
    master = [p.detach().float().clone() for p in params]
    m_state = [torch.zeros_like(x) for x in master]
    v_state = [torch.zeros_like(x) for x in master]
    for p in params:
        p.grad = torch.zeros_like(p)  # persistent gradient buffers, as DDP/Megatron keep them
    idx = torch.randint(0, cfg["vocab"], (b, s), device=DEV)
    tgt = torch.randint(0, cfg["vocab"], (b, s), device=DEV)

    def opt_step():
        with torch.no_grad():
            for p, mp, mm, vv in zip(params, master, m_state, v_state):
                g = p.grad.float()
                mm.mul_(0.9).add_(g, alpha=0.1)
                vv.mul_(0.95).addcmul_(g, g, value=0.05)
                mp.addcdiv_(mm, vv.sqrt().add_(1e-8), value=-1e-5)
                p.copy_(mp)
                p.grad.zero_()

    def step(measure_act=False):
        loss = model(idx, tgt, recompute)
        act = None
        if measure_act:
            torch.cuda.synchronize()
            act = torch.cuda.memory_allocated()
        loss.backward()
        opt_step()
        return act

    step()  # warm-up (allocator, kernels)
    torch.cuda.synchronize()
    static = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    after_fwd = step(measure_act=True)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    peak_reserved = torch.cuda.max_memory_reserved()
    free, total = torch.cuda.mem_get_info()
    # step time: median of 3
    times = []
    for _ in range(3):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        step()
        e1.record()
        torch.cuda.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3)
    flops = None
    try:
        from torch.utils.flop_counter import FlopCounterMode
        fc = FlopCounterMode(display=False)
        with fc:
            loss = model(idx, tgt, recompute)
            loss.backward()
        flops = fc.get_total_flops()
        for p in params:
            p.grad.zero_()
    except Exception as ex:  # noqa: BLE001
        log("flop counter failed", str(ex)[:200])
    r = dict(name=name, cfg=cfg, seq=s, micro_batch=b, recompute=recompute, params=nparams,
             static_bytes=static, after_forward_bytes=after_fwd, activation_bytes=after_fwd - static,
             peak_allocated_bytes=peak, peak_reserved_bytes=peak_reserved,
             device_used_bytes=total - free, step_time_s=median(times), counted_flops=flops)
    log(json.dumps({k: v for k, v in r.items() if k != "cfg"}))
    TRAIN_RESULTS.append(r)
    with open(os.path.join(OUT, "train.json"), "w") as f:
        json.dump(TRAIN_RESULTS, f, indent=1)
    del model, params, master, m_state, v_state
    torch.cuda.empty_cache()


def training():
    runs = [
        ("gpt", GPT_CFG, 1024, 4, "none"),
        ("gpt", GPT_CFG, 1024, 4, "full"),
        ("gpt", GPT_CFG, 2048, 4, "none"),
        ("gpt", GPT_CFG, 2048, 4, "full"),
        ("gpt", GPT_CFG, 2048, 8, "none"),
        ("gpt", GPT_CFG, 4096, 2, "none"),
        ("gpt", GPT_CFG, 2048, 1, "none"),
        ("gpt-noflash", dict(GPT_CFG, flash=False), 2048, 2, "none"),
        ("llama", LLAMA_CFG, 2048, 4, "none"),
        ("llama", LLAMA_CFG, 2048, 4, "full"),
        ("llama", LLAMA_CFG, 4096, 2, "none"),
        ("gpt-nodrop", dict(GPT_CFG, dropout=0.0), 2048, 4, "none"),
    ]
    if QUICK:
        runs = runs[:2]
    for r in runs:
        try:
            train_one(*r)
        except Exception:
            log("train failed", r[0], r[2:])
            log(traceback.format_exc())


if __name__ == "__main__":
    t0 = time.time()
    section(env_info)
    section(training)
    section(membound)
    section(attention)
    section(gemm)
    log(f"total {time.time() - t0:.1f} s")
