#!/usr/bin/env python3
"""Fits shardsim's op-timing curves (sim/hardware) to the H200 kernel-time measurements.

Inputs (bench/h200/results/, produced by bench/h200/measure_kernel_times.py on one H200):
  gemm_graph.csv      bf16 / fp8 GEMMs over a 12x12x12 grid, CUDA-graph timed
  attention_b2b.csv   cuDNN / flash SDPA forward and backward, queued back to back
Output: the parameters written into hardware/h200-sxm.yaml, and the fit's error.

The formulas are the ones of sim/hardware/matmul_curve.cc and attention_cost.cc (keep them in
step); tests/hardware/h200_fit_test.cc re-evaluates the C++ model over the same grid and holds
the error reported here. Pure standard-library Python (no numpy): `python3 fit_h200.py`.

GEMM model (time of one kernel, graph-launched, t_graph = 0.87 us measured in launch.csv):
  for each candidate tile (a, b) in {(128,256), (256,128), (128,128), (64,256), (64,128), (64,64)}:
    tiles  = ceil(m/a) * ceil(n/b)                       (partial tiles do full work)
    split  = min(SMs // tiles, k // k_split_min) if tiles < SMs else 1   (split-K / stream-K)
    waves  = max(tiles*split / SMs, 1)                   (Hopper cuBLAS balances tiles over SMs)
    e_tile = I/(I + I_half) / (I_ref/(I_ref + I_half)),  I = a*b/(a+b): operand reuse of a tile
    t_c    = waves * 2*a*b*(k/split + k_half) / (peak/SMs * max_eff * e_tile)
    t_m    = (in*(mk + kn) + out*mn + 8*mn*[split>1]) / (HBM bandwidth * copy efficiency)
  t = min over tiles of max(t_c, t_m) + latency + t_graph
k_half and k_split_min are fitted in bytes of operand (the same for bf16 and fp8): k_half is the
output tile's epilogue (its HBM write) expressed in k-steps, k_split_min the shortest k-slice a
split-K kernel gives one SM.

Rows excluded from the fit: the few GEMMs long enough to run into the 700 W power limit inside
their own measurement (graph of 2 launches, > 3.3 ms each); bench/h200/results/sustained.csv
measures that effect separately (sustained_compute_fraction).
"""
import csv
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "..", "..", "bench", "h200", "results")
PEAK = {"bf16": 989.4e12, "fp8": 1978.9e12, "tf32": 494.7e12, "fp32": 66.9e12}
IN_BYTES = {"bf16": 2, "fp8": 1, "tf32": 4, "fp32": 4}
OUT_BYTES = {"bf16": 2, "fp8": 2, "tf32": 4, "fp32": 4}
SMS = 132
HBM = 4.8e12
COPY_EFF = 0.86  # memory_efficiency.elementwise (membound.csv: 1 GiB copy 4.11 TB/s)
T_GRAPH = 0.87e-6  # launch.csv: tiny_kernel_graph
TILES = [(128, 256), (256, 128), (128, 128), (64, 256), (64, 128), (64, 64)]
I_REF = 128 * 256 / (128 + 256)


def cdiv(a, b):
    return -(-a // b)


def gemm_time(dt, m, n, k, max_eff, k_half_bytes, i_half, k_min_bytes, latency, batch=1):
    esz = IN_BYTES[dt]
    k_half = k_half_bytes / esz
    k_min = max(1.0, k_min_bytes / esz)
    peak_sm = PEAK[dt] / SMS
    best = float("inf")
    for a, b in TILES:
        i_t = a * b / (a + b)
        e_tile = (i_t / (i_t + i_half)) / (I_REF / (I_REF + i_half))
        tiles = cdiv(m, a) * cdiv(n, b) * batch
        split = 1
        if tiles < SMS:
            split = max(1, min(SMS // tiles, math.floor(k / k_min)))
        waves = max(tiles * split / SMS, 1.0)
        t_c = waves * 2.0 * a * b * (k / split + k_half) / (peak_sm * max_eff * e_tile)
        byt = (esz * (m * k + k * n) + OUT_BYTES[dt] * m * n) * batch + (8 * m * n * batch if split > 1 else 0)
        t_m = byt / (HBM * COPY_EFF)
        best = min(best, max(t_c, t_m))
    return best + latency


def load_gemm():
    out = []
    with open(os.path.join(RES, "gemm_graph.csv")) as f:
        for r in csv.DictReader(f):
            if r["dtype"] not in ("bf16", "fp8"):
                continue
            t = float(r["time_s"])
            throttled = int(r["launches"]) == 2 and t > 3.3e-3
            out.append((r["dtype"], int(r["m"]), int(r["n"]), int(r["k"]), t, throttled))
    return out


def errors(rows, p, include_throttled=False):
    eff_bf16, eff_fp8, khb, ih, kmb, lat = p
    errs = []
    for dt, m, n, k, t, thr in rows:
        if thr and not include_throttled:
            continue
        me = eff_bf16 if dt == "bf16" else eff_fp8
        tp = gemm_time(dt, m, n, k, me, khb, ih, kmb, lat) + T_GRAPH
        errs.append(tp / t - 1.0)
    return errs


def stats(errs):
    a = sorted(abs(e) for e in errs)
    return a[len(a) // 2], a[int(0.9 * len(a))], len(a)


def objective(rows, p):
    return sum(math.log1p(e) ** 2 for e in errors(rows, p))


def coordinate_fit(fun, p, steps, rounds=5):
    best = fun(p)
    for _ in range(rounds):
        improved = True
        while improved:
            improved = False
            for i in range(len(p)):
                for sgn in (1, -1):
                    q = list(p)
                    q[i] = p[i] + sgn * steps[i]
                    if q[i] <= 0:
                        continue
                    v = fun(q)
                    if v < best:
                        best, p, improved = v, q, True
        steps = [s / 2 for s in steps]
    return p


def fit_gemm():
    rows = load_gemm()
    p = coordinate_fit(lambda q: objective(rows, q), [0.8375, 0.8325, 362.0, 13.5, 264.0, 2.05e-6],
                       [0.01, 0.01, 16.0, 2.0, 16.0, 0.1e-6])
    print("GEMM (H200, graph-timed grid)")
    print("  matmul.max_efficiency: bf16 %.4f  fp8 %.4f" % (p[0], p[1]))
    print("  matmul.k_half: %.1f bytes of operand (= %.0f bf16 elements)" % (p[2], p[2] / 2))
    print("  matmul.tile_intensity_half: %.2f" % p[3])
    print("  matmul.k_split_min: %.0f bytes (= %.0f bf16 elements)" % (p[4], p[4] / 2))
    print("  matmul.latency: %.2f us" % (p[5] * 1e6))
    for dt in ("bf16", "fp8"):
        sub = [r for r in rows if r[0] == dt]
        med, p90, n = stats(errors(sub, p))
        print("  %s: median |err| %.1f%%, p90 %.1f%% over %d shapes" % (dt, 100 * med, 100 * p90, n))
        for lo, hi, name in ((0, 10e-6, "< 10 us"), (10e-6, 100e-6, "10-100 us"),
                             (100e-6, 1.0, ">= 100 us")):
            part = [r for r in sub if lo <= r[4] < hi]
            if part:
                med, p90, n = stats(errors(part, p))
                print("    %-9s median %.1f%%, p90 %.1f%% (%d)" % (name, 100 * med, 100 * p90, n))
    # fp32 / tf32: four squares each; only max_efficiency is fitted, the rest is the bf16 curve.
    with open(os.path.join(RES, "gemm_graph.csv")) as f:
        sq = [r for r in csv.DictReader(f) if r["dtype"] in ("fp32", "tf32")]
    for dt in ("tf32", "fp32"):
        rows_dt = [(int(r["m"]), float(r["time_s"])) for r in sq if r["dtype"] == dt]

        def err(q):
            return [(gemm_time(dt, d, d, d, q[0], p[2], p[3], p[4], p[5]) + T_GRAPH) / t - 1.0
                    for d, t in rows_dt]

        q = coordinate_fit(lambda q: sum(math.log1p(e) ** 2 for e in err(q)), [0.8], [0.02])
        print("  %s: max_efficiency %.3f, errors %s" % (dt, q[0], " ".join("%+.1f%%" % (100 * e)
                                                                        for e in err(q))))
    return p


def fit_attention():
    rows = []
    with open(os.path.join(RES, "attention_b2b.csv")) as f:
        rows = list(csv.DictReader(f))

    def pred(r, p, which):
        fm, bm, sh, shc, dh = p
        b, h, s, d = int(r["batch"]), int(r["heads"]), int(r["seq"]), int(r["head_dim"])
        causal = r["causal"] == "1"
        fl = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        rd = min(1.0, (d / (d + dh)) / (128.0 / (128.0 + dh)))
        sf = s / (s + (shc if causal else sh))
        return fl / (PEAK["bf16"] * fm * rd * sf) if which == "fwd" else \
            2.5 * fl / (PEAK["bf16"] * bm * rd * sf)

    print("Attention (H200, SDPA, queued back to back)")
    for be in ("cudnn", "flash"):
        sub = [r for r in rows if r["backend"] == be]

        def errs(p):
            return [pred(r, p, w) / float(r[w + "_s"]) - 1.0 for r in sub for w in ("fwd", "bwd")]

        p = coordinate_fit(lambda q: sum(math.log1p(e) ** 2 for e in errs(q)),
                           [0.7, 0.6, 300.0, 600.0, 60.0], [0.05, 0.05, 100.0, 100.0, 20.0], 8)
        med, p90, n = stats(errs(p))
        print("  %s: fwd_efficiency %.3f bwd_efficiency %.3f seq_half %.0f seq_half_causal %.0f "
              "head_dim_half %.0f; median |err| %.1f%%, p90 %.1f%% (%d)" %
              (be, p[0], p[1], p[2], p[3], p[4], 100 * med, 100 * p90, n))


if __name__ == "__main__":
    fit_gemm()
    fit_attention()
