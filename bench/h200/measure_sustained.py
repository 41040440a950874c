#!/usr/bin/env python3
"""Burst vs sustained GEMM throughput on one NVIDIA H200 (power-limited clocks).

A GEMM timed in a short burst after the GPU idled runs at boost clock; the same GEMM in the middle
of a training step, with the chip at its 700 W limit for seconds, runs at a lower clock. This
script measures both for a few shapes and dtypes, with the SM clock and power read through NVML:

  burst:     1 s idle, then a ~2 ms CUDA-graph replay of the shape (median of 3 such bursts)
  sustained: a 4 s soak of back-to-back 8192^3 GEMMs, then ~20 ms replays of the shape, each
             preceded by 0.3 s more soak (median of 3)
                                                                        -> sustained.csv
Usage: OUT=/some/dir python3 measure_sustained.py
"""
import csv
import os
import time

import torch

OUT = os.environ.get("OUT", "sus_out")
os.makedirs(OUT, exist_ok=True)
DEV = "cuda"
try:
    import pynvml
    pynvml.nvmlInit()
    H = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:  # noqa: BLE001
    H = None


def nvml():
    if H is None:
        return (0, 0.0)
    clk = pynvml.nvmlDeviceGetClockInfo(H, pynvml.NVML_CLOCK_SM)
    pw = pynvml.nvmlDeviceGetPowerUsage(H) / 1000.0
    return (clk, pw)


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def make(dt, m, n, k):
    if dt == "bf16":
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        return lambda: torch.mm(a, b)
    a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=DEV)
    return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                                    use_fast_accum=True)


def graph_of(fn, r):
    fn()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(r):
            fn()
    return g


def timed_replay(g, r):
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    g.replay()
    e1.record()
    e1.synchronize()
    return e0.elapsed_time(e1) * 1e-3 / r


SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
          (8192, 1024, 8192), (1024, 8192, 4096), (8192, 8192, 1024), (4096, 4096, 512)]

rows = []
for dt in ["bf16", "fp8"]:
    rate = 750e12 if dt == "bf16" else 1450e12
    soak_fn = make(dt, 8192, 8192, 8192)
    soak_g = graph_of(soak_fn, 20)  # ~30 ms (bf16) per replay
    graphs = {}
    for (m, n, k) in SHAPES:
        fn = make(dt, m, n, k)
        t1 = 2.0 * m * n * k / rate
        rb = int(max(1, min(64, 2e-3 / t1)))
        rs = int(max(2, min(256, 20e-3 / t1)))
        graphs[(m, n, k)] = (graph_of(fn, rb), rb, graph_of(fn, rs), rs, fn)  # fn keeps operands alive
    torch.cuda.synchronize()
    # burst
    for shp, (gb, rb, _, _, _) in graphs.items():
        ts, cl = [], []
        for _ in range(3):
            time.sleep(1.0)
            ts.append(timed_replay(gb, rb))
            cl.append(nvml()[0])
        t = median(ts)
        rows.append([dt, *shp, "burst", t, 2.0 * shp[0] * shp[1] * shp[2] / t / 1e12, median(cl), 0.0])
        print(rows[-1], flush=True)
    # sustained
    t_end = time.time() + 4.0
    while time.time() < t_end:
        soak_g.replay()
    torch.cuda.synchronize()
    for shp, (_, _, gs, rs, _) in graphs.items():
        ts, cl, pw = [], [], []
        for _ in range(3):
            t_end = time.time() + 0.3
            while time.time() < t_end:
                soak_g.replay()
            ts.append(timed_replay(gs, rs))
            c, p = nvml()
            cl.append(c)
            pw.append(p)
        t = median(ts)
        rows.append([dt, *shp, "sustained", t, 2.0 * shp[0] * shp[1] * shp[2] / t / 1e12, median(cl),
                     median(pw)])
        print(rows[-1], flush=True)
    del graphs, soak_g, soak_fn
    torch.cuda.empty_cache()
    time.sleep(3.0)

with open(os.path.join(OUT, "sustained.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["dtype", "m", "n", "k", "regime", "time_s", "tflops", "sm_clock_mhz", "power_w"])
    w.writerows(rows)
