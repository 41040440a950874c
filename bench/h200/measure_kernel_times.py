#!/usr/bin/env python3
"""Kernel-time measurements for shardsim on one NVIDIA H200, without the launch/timing floor.

calibrate_h200.py times one kernel at a time with CUDA events around a synchronised launch, so
every row under ~40 us carries ~20 us of CPU dispatch (see results/log.txt and the tiny rows of
gemm.csv). This script re-measures the same quantities the way a training step sees them, with
kernels queued back to back on the GPU:

  1. GEMMs (bf16 torch.mm, fp8 e4m3 torch._scaled_mm, fp32/tf32 squares) over the same
     12x12x12 grid: R launches captured in one CUDA graph, the graph replayed several times,
     per-launch time = replay time / R (median of replays). Operands rotate over several
     copies when they are small, so a small GEMM does not always hit warm L2.
                                                               -> gemm_graph.csv
  2. Batched GEMMs (torch.bmm, bf16) of attention-like and expert-like shapes. -> bmm_graph.csv
  3. Memory-bound kernels by size, same graph timing.           -> membound_graph.csv
  4. Launch overhead: per-kernel GPU time of tiny kernels (a) in a graph, (b) eager but
     queued behind a long kernel so the CPU is ahead, (c) eager with the GPU idle (CPU-bound).
                                                               -> launch.csv
  5. Attention (cuDNN and flash SDPA, fwd and fwd+bwd), R calls queued back to back between
     two events (each call is >= 100 us, longer than its CPU dispatch).  -> attention_b2b.csv

Every section is independent and writes its CSV as soon as it finishes; a failing section is
logged and the others still run. Usage: OUT=/some/dir python3 measure_kernel_times.py [--quick]
"""
import csv
import json
import os
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "kt_out")
os.makedirs(OUT, exist_ok=True)
QUICK = "--quick" in sys.argv
DEV = "cuda"
LOG = open(os.path.join(OUT, "kt_log.txt"), "a")
T_START = time.time()
DEADLINE_S = float(os.environ.get("KT_DEADLINE_S", "360"))


def log(*args):
    msg = " ".join(str(a) for a in args)
    print(msg, flush=True)
    LOG.write(msg + "\n")
    LOG.flush()


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])


def write_csv(name, rows, header):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def over_deadline():
    return time.time() - T_START > DEADLINE_S


def graph_time(fns, reps_hint_s, replays=3):
    """Per-launch GPU time (s) of fns[i % len(fns)] launched R times inside one CUDA graph.

    R is chosen so one replay lasts ~2 ms (at least 2, at most 64 launches). Returns
    (seconds per launch, R, method)."""
    for f in fns[:2]:
        f()  # warm-up outside the graph (cuBLAS heuristics, workspace)
    torch.cuda.synchronize()
    r = int(max(2, min(64, 2e-3 / max(reps_hint_s, 1e-7))))
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for f in fns[:2]:
            f()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for i in range(r):
            fns[i % len(fns)]()
    g.replay()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(replays):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3 / r)
    del g
    return median(times), r, "graph"


def eager_b2b_time(fn, reps=10, rounds=3):
    """Per-call time with `reps` calls queued back to back between two events."""
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        e0.record()
        for _ in range(reps):
            fn()
        e1.record()
        e1.synchronize()
        times.append(e0.elapsed_time(e1) * 1e-3 / reps)
    return median(times)


def env_info():
    p = torch.cuda.get_device_properties(0)
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": p.name,
            "sms": p.multi_processor_count, "total_memory_bytes": p.total_memory,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "quick": QUICK}
    try:
        import subprocess
        info["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
             "power.draw,power.limit,temperature.gpu", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as ex:  # noqa: BLE001
        info["nvidia_smi"] = str(ex)
    log(json.dumps(info))
    with open(os.path.join(OUT, "kt_env.json"), "w") as f:
        json.dump(info, f, indent=1)


DIMS = [128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
ROT_BYTES = 256 << 20  # rotate operand copies until they span ~4x the 60 MB L2


def gemm():
    dims = [256, 1024, 4096, 16384] if QUICK else DIMS
    rows = []
    big = max(dims)
    torch.backends.cuda.matmul.allow_tf32 = False
    a_pool = torch.randn(big, big, device=DEV, dtype=torch.bfloat16)
    b_pool = torch.randn(big, big, device=DEV, dtype=torch.bfloat16)
    for dt in ["bf16", "fp8"]:
        if dt == "fp8":
            a_pool = a_pool.to(torch.float8_e4m3fn)
            b_pool = b_pool.to(torch.float8_e4m3fn)
            one = torch.tensor(1.0, device=DEV)
        esz = 2 if dt == "bf16" else 1
        for m in dims:
            if over_deadline():
                log("gemm: deadline, stopping at", dt, m)
                break
            for n in dims:
                for k in dims:
                    set_bytes = esz * (m * k + k * n)
                    copies = int(max(1, min(8, ROT_BYTES // max(set_bytes, 1))))
                    if dt == "bf16":
                        As = [a_pool[:m, :k].contiguous() for _ in range(copies)]
                        Bs = [b_pool[:k, :n].contiguous() for _ in range(copies)]
                        fns = [lambda a=a, b=b: torch.mm(a, b) for a, b in zip(As, Bs)]
                    else:
                        As = [a_pool[:m, :k].contiguous() for _ in range(copies)]
                        Bs = [b_pool[:n, :k].contiguous() for _ in range(copies)]
                        fns = [lambda a=a, b=b: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                                                 out_dtype=torch.bfloat16,
                                                                 use_fast_accum=True)
                               for a, b in zip(As, Bs)]
                    hint = max(2.0 * m * n * k / (700e12 if dt == "bf16" else 1300e12), 4e-6)
                    try:
                        t, r, how = graph_time(fns, hint)
                    except Exception as ex:  # noqa: BLE001
                        log("gemm graph failed", dt, m, n, k, str(ex).splitlines()[0][:160])
                        t, r, how = eager_b2b_time(fns[0]), 10, "eager_b2b"
                    rows.append([dt, m, n, k, t, 2.0 * m * n * k / t / 1e12, r, copies, how])
                    del As, Bs, fns
            torch.cuda.empty_cache()
        write_csv("gemm_graph.csv", rows,
                  ["dtype", "m", "n", "k", "time_s", "tflops", "launches", "operand_copies", "method"])
        log("gemm", dt, "rows", len(rows), f"t={time.time() - T_START:.0f}s")
    del a_pool, b_pool
    torch.cuda.empty_cache()
    for mode in ["fp32", "tf32"]:
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        for d in [1024, 2048, 4096, 8192]:
            a = torch.randn(d, d, device=DEV)
            b = torch.randn(d, d, device=DEV)
            t, r, how = graph_time([lambda: torch.mm(a, b)],
                                   2.0 * d ** 3 / (50e12 if mode == "fp32" else 400e12))
            rows.append([mode, d, d, d, t, 2.0 * d ** 3 / t / 1e12, r, 1, how])
    torch.backends.cuda.matmul.allow_tf32 = False
    write_csv("gemm_graph.csv", rows,
              ["dtype", "m", "n", "k", "time_s", "tflops", "launches", "operand_copies", "method"])


def bmm():
    shapes = [  # (batch, m, n, k): attention scores/context per head, small experts
        (32, 2048, 2048, 128), (32, 2048, 128, 2048), (64, 1024, 1024, 64), (64, 1024, 64, 1024),
        (128, 512, 512, 128), (16, 4096, 4096, 128), (16, 4096, 128, 4096), (8, 2048, 2048, 2048),
        (8, 1024, 4096, 1024), (64, 256, 4096, 1024), (4, 4096, 4096, 4096), (256, 128, 128, 128)]
    if QUICK:
        shapes = shapes[:3]
    rows = []
    for (bt, m, n, k) in shapes:
        a = torch.randn(bt, m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(bt, k, n, device=DEV, dtype=torch.bfloat16)
        t, r, how = graph_time([lambda: torch.bmm(a, b)], 2.0 * bt * m * n * k / 600e12)
        rows.append(["bf16", bt, m, n, k, t, 2.0 * bt * m * n * k / t / 1e12, r, how])
        del a, b
    write_csv("bmm_graph.csv", rows, ["dtype", "batch", "m", "n", "k", "time_s", "tflops", "launches",
                                      "method"])


def membound():
    sizes = [2 ** p for p in range(16, 31, 2)]
    if QUICK:
        sizes = [2 ** 16, 2 ** 24]
    rows = []
    hcol = 4096
    for n in sizes:
        x = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        y = torch.randn(n, device=DEV, dtype=torch.bfloat16)
        out = torch.empty_like(x)
        x2 = x.view(-1, hcol)
        w = torch.ones(hcol, device=DEV, dtype=torch.bfloat16)
        bb = torch.zeros(hcol, device=DEV, dtype=torch.bfloat16)
        e = 2
        cases = [
            ("copy", lambda: out.copy_(x), 2 * n * e, 1),
            ("add", lambda: torch.add(x, y, out=out), 3 * n * e, 1),
            ("gelu", lambda: F.gelu(x), 2 * n * e, 1),
            ("silu_mul", lambda: F.silu(x) * y, 5 * n * e, 2),
            ("layer_norm", lambda: F.layer_norm(x2, (hcol,), w, bb), 2 * n * e, 1),
            ("rms_norm", lambda: F.rms_norm(x2, (hcol,), w), 2 * n * e, 1),
            ("softmax", lambda: torch.softmax(x2, dim=-1), 2 * n * e, 1),
        ]
        for name, fn, by, kernels in cases:
            try:
                t, r, how = graph_time([fn], max(by / 3.5e12, 3e-6))
            except Exception as ex:  # noqa: BLE001
                log("membound graph failed", name, n, str(ex).splitlines()[0][:160])
                t, r, how = eager_b2b_time(fn), 10, "eager_b2b"
            rows.append([name, n, by, kernels, t, by / t / 1e9, r, how])
        del x, y, out, x2, w, bb
        torch.cuda.empty_cache()
    write_csv("membound_graph.csv", rows, ["kernel", "elements", "bytes", "kernels", "time_s", "gbps",
                                           "launches", "method"])


def launch():
    rows = []
    z = torch.zeros(1, device=DEV)
    for _ in range(100):
        z.add_(1)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # (a) graph of 500 tiny kernels
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(500):
            z.add_(1)
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        e0.record()
        g.replay()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e-3 / 500)
    rows.append(["tiny_kernel_graph", median(ts)])
    # (b) eager, queued behind a long kernel: the CPU enqueues all tiny kernels while the GPU
    # sleeps, so the events measure GPU-side back-to-back cost.
    ts = []
    for _ in range(5):
        torch.cuda._sleep(int(1.98e9 * 0.05))  # ~50 ms of GPU time at 1.98 GHz
        e0.record()
        for _ in range(1000):
            z.add_(1)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e-3 / 1000)
    rows.append(["tiny_kernel_eager_queued", median(ts)])
    # (c) eager with the GPU idle: CPU dispatch bound
    ts = []
    for _ in range(5):
        torch.cuda.synchronize()
        e0.record()
        for _ in range(1000):
            z.add_(1)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e-3 / 1000)
    rows.append(["tiny_kernel_eager_idle", median(ts)])
    # (d) a mid-size GEMM chain, eager queued vs graph: the per-kernel gap between real kernels
    a = torch.randn(1024, 1024, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(1024, 1024, device=DEV, dtype=torch.bfloat16)
    tg, _, _ = graph_time([lambda: torch.mm(a, b)], 5e-6)
    ts = []
    for _ in range(5):
        torch.cuda._sleep(int(1.98e9 * 0.05))
        e0.record()
        for _ in range(500):
            torch.mm(a, b)
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e-3 / 500)
    rows.append(["mm1024_graph", tg])
    rows.append(["mm1024_eager_queued", median(ts)])
    write_csv("launch.csv", rows, ["case", "seconds_per_kernel"])
    log("launch", rows)


def attention():
    from torch.nn.attention import SDPBackend, sdpa_kernel
    seqs = [1024, 4096] if QUICK else [512, 1024, 2048, 4096, 8192, 16384, 32768]
    rows = []
    for name, be in [("cudnn", SDPBackend.CUDNN_ATTENTION), ("flash", SDPBackend.FLASH_ATTENTION)]:
        for d in [64, 128]:
            heads = 2048 // d
            for s in seqs:
                if over_deadline():
                    log("attention: deadline")
                    break
                b = max(1, 16384 // s)
                for causal in [True, False]:
                    try:
                        q = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                        k = torch.randn_like(q, requires_grad=True)
                        v = torch.randn_like(q, requires_grad=True)
                        with sdpa_kernel([be]):
                            out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                            go = torch.randn_like(out)
                            tf = eager_b2b_time(
                                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), reps=8)

                            def fb():
                                o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                                torch.autograd.grad(o, (q, k, v), go)

                            tfb = eager_b2b_time(fb, reps=5)
                        cf = 0.5 if causal else 1.0
                        fl = 4.0 * b * heads * s * s * d * cf
                        tb = max(tfb - tf, 1e-9)
                        rows.append([name, b, heads, s, d, int(causal), tf, tb, fl / tf / 1e12,
                                     2.5 * fl / tb / 1e12])
                        del q, k, v, out, go
                    except Exception as ex:  # noqa: BLE001
                        log("attention", name, d, s, causal, "failed:", str(ex).splitlines()[0][:160])
        write_csv("attention_b2b.csv", rows,
                  ["backend", "batch", "heads", "seq", "head_dim", "causal", "fwd_s", "bwd_s",
                   "fwd_tflops", "bwd_tflops_2p5x"])
    torch.cuda.empty_cache()


def section(fn):
    t0 = time.time()
    if over_deadline():
        log("SKIPPED (deadline)", fn.__name__)
        return
    try:
        fn()
    except Exception:  # noqa: BLE001
        log("SECTION FAILED", fn.__name__)
        log(traceback.format_exc())
    log(f"[{fn.__name__}] {time.time() - t0:.1f} s")


if __name__ == "__main__":
    section(env_info)
    section(launch)
    section(membound)
    section(bmm)
    section(attention)
    section(gemm)
    section(env_info)
    log(f"total {time.time() - T_START:.1f} s")
