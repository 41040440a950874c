#!/usr/bin/env python3
"""B200 kernel tables: convert the reference measurements into shardsim's tables and fit the curves.

  python3 hardware/calibration/fit_b200.py [REFERENCE_DIR]

REFERENCE_DIR (default ../shared/reference/calibration from the repository root) holds the kernel
files of MooreThreads/SimuMax v1.2 (configs/system/b200_bf16_ceperm.json, one 8-GPU B200-SXM
node, TE 2.11, CUDA 13.1) as transcribed there. Writes hardware/calibration/b200/{gemm,
grouped-gemm,attention}.csv in shardsim's conventions (hardware/calibration/b200/README.md) and
prints the fitted curve parameters of hardware/b200.yaml with their errors over the tables.
Standard library only. Only kernel files are read: the same source's end-to-end step times and
memory are an independent check and are never read here.
"""
import csv
import math
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "hardware", "calibration", "b200")
PEAK = 2250e12  # the reference's denominator: dense bf16 TFLOP/s of B200 (HGX, 1000 W)


def convert_gemm(ref):
    rows = []
    dropped = 0
    for r in csv.DictReader(open(os.path.join(ref, "b200-gemm.csv"))):
        m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
        if r["layout"] == "TN":
            p = "forward"  # (tokens, out, in): shardsim's forward (m, n, k)
        elif r["layout"] == "NN":
            p = "backward_input"  # (tokens, in, out): shardsim's (m, k, n) of the forward
        elif r["out_dtype"] == "fp32":
            # NT with accumulate into fp32 main grads: TE computes dW^T (out x in); shardsim's
            # backward-weight GEMM is (in, out, tokens): the same kernel, output transposed.
            p = "backward_weight"
            m, n = n, m
        else:
            dropped += 1  # NT into bf16 (grad_reduce_in_bf16 runs): not shardsim's fp32 main grads
            continue
        rows.append({"dtype": "bf16", "pass": p, "m": m, "n": n, "k": k, "tflops": r["tflops"],
                     "layout": r["layout"], "efficiency_of_2250_tflops":
                     r["efficiency_of_2250_tflops"]})
    return rows, dropped


def convert_grouped(ref):
    rows = []
    for r in csv.DictReader(open(os.path.join(ref, "b200-grouped-gemm.csv"))):
        g, m, n, k = (int(r[x]) for x in ("groups", "m_per_group", "n", "k"))
        stage = r["stage"]
        if stage == "fwd":
            p, shape = "forward", (m, n, k)
        elif stage == "bwd_grad_act":
            p, shape = "backward_input", (m, k, n)
        else:
            p, shape = "backward_weight", (k, n, m)
        rows.append({"dtype": "bf16", "pass": p, "groups": g, "m": shape[0], "n": shape[1],
                     "k": shape[2], "tflops": r["tflops"],
                     "efficiency_of_2250_tflops": r["efficiency_of_2250_tflops"]})
    return rows


def convert_attention(ref):
    rows = []
    for r in csv.DictReader(open(os.path.join(ref, "b200-attention.csv"))):
        b, s, h, kv, dqk, dv = (int(r[x]) for x in ("batch", "seq_len", "heads", "kv_heads",
                                                      "qk_head_dim", "v_head_dim"))
        eff = float(r["efficiency_of_2250_tflops"])
        # The source counts 2*b*s^2*h*(dqk + dv) forward and 2.5x that backward for a causal
        # kernel (simu_tools/efficency_test/test_fa_efficiency.py, attn_mask_type causal);
        # shardsim counts half (the kernel skips the masked blocks): TFLOP/s x 0.5.
        tflops = eff * PEAK / 1e12 * 0.5
        rows.append({"pass": "forward" if r["pass"] == "fwd" else "backward",
                     "batch_heads": b * h, "seq": s, "head_dim": dqk, "v_head_dim": dv,
                     "tflops": f"{tflops:.1f}", "kv_heads": kv,
                     "qkv_contiguous": r["qkv_contiguous"],
                     "efficiency_of_2250_tflops": r["efficiency_of_2250_tflops"]})
    return rows


def write(name, rows, fields):
    with open(os.path.join(OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow(r)


# ---- the tile curve of sim/hardware/matmul_curve.h (bf16), and the kernel latency
def curve_time(m, n, k, g, me, kh, ih=12.1, ksm=164, sms=148, bw=8e12 * 0.666, lat=2.3e-6):
    cands = [(128, 256), (256, 128), (128, 128), (64, 256), (64, 128), (64, 64)]
    ref_i = 128 * 256 / 384
    ref_e = ref_i / (ref_i + ih)
    peak_sm = PEAK * me / sms
    base = g * (2 * (m * k + k * n) + 2 * m * n)
    best = None
    for a, b in cands:
        it = a * b / (a + b)
        et = (it / (it + ih)) / ref_e
        tiles = math.ceil(m / a) * math.ceil(n / b) * g
        split = 1
        if tiles < sms:
            split = max(1, min(sms // tiles, k // ksm))
        waves = max(1.0, tiles * split / sms)
        comp = waves * 2 * a * b * (k / split + kh) / (peak_sm * et)
        mem = (base + (8 * m * n * g if split > 1 else 0)) / bw
        t = max(comp, mem)
        best = t if best is None or t < best else best
    return best + lat


def measured_time(r, g=1):
    return 2 * g * r["m"] * r["n"] * r["k"] / (float(r["tflops"]) * 1e12)


def errors(pred, meas):
    e = sorted(abs(p / m - 1) for p, m in zip(pred, meas))
    return statistics.median(e), e[int(0.9 * (len(e) - 1))], e[-1]


def fit_curve(rows, grouped=False):
    best = None
    for me in [x / 1000 for x in range(400, 720, 5)]:
        for kh in (0, 50, 100, 150, 200, 250, 300, 400):
            s = 0.0
            for r in rows:
                g = r["groups"] if grouped else 1
                s += math.log(curve_time(r["m"], r["n"], r["k"], g, me, kh) / measured_time(r, g)) ** 2
            if best is None or s < best[0]:
                best = (s, me, kh)
    return best[1], best[2]


def knn_loo(points, k=8):
    """Leave-one-out: each shape predicted from the 8 nearest others of its pass (1/d^2 in log2);
    repeated shapes are first merged by the geometric mean of their rates, as the C++ table does."""
    merged = {}
    for key, x, v in points:
        merged.setdefault((key, x), []).append(math.log(v))
    points = [(key, x, math.exp(sum(v) / len(v))) for (key, x), v in merged.items()]
    e = []
    for i, (key, x, v) in enumerate(points):
        ds = sorted((sum((a - b) ** 2 for a, b in zip(x, y)), w)
                    for j, (kk, y, w) in enumerate(points) if j != i and kk == key)[:k]
        if ds[0][0] < 1e-18:
            pred = ds[0][1]
        else:
            ws = [1 / d for d, _ in ds]
            pred = math.exp(sum(wi * math.log(w) for wi, (_, w) in zip(ws, ds)) / sum(ws))
        e.append(abs(pred / v - 1))
    e.sort()
    return statistics.median(e), e[int(0.9 * (len(e) - 1))], e[-1]


def pct(t):
    return "median {:.1f}%, p90 {:.1f}%, worst {:.1f}%".format(*(100 * x for x in t))


def main():
    ref = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "reference",
                                                            "calibration")
    os.makedirs(OUT, exist_ok=True)
    gemm, dropped = convert_gemm(ref)
    grouped = convert_grouped(ref)
    attn = convert_attention(ref)
    write("gemm.csv", gemm, ["dtype", "pass", "m", "n", "k", "tflops", "layout",
                             "efficiency_of_2250_tflops"])
    write("grouped-gemm.csv", grouped, ["dtype", "pass", "groups", "m", "n", "k", "tflops",
                                        "efficiency_of_2250_tflops"])
    write("attention.csv", attn, ["pass", "batch_heads", "seq", "head_dim", "v_head_dim",
                                  "tflops", "kv_heads", "qkv_contiguous",
                                  "efficiency_of_2250_tflops"])
    print(f"gemm.csv: {len(gemm)} rows ({dropped} NT rows into bf16 left out); "
          f"grouped-gemm.csv: {len(grouped)}; attention.csv: {len(attn)}")

    me, kh = fit_curve(gemm)
    print(f"GEMM tile curve, all passes: max_efficiency {me}, k_half {kh}")
    for p in ("forward", "backward_input", "backward_weight"):
        sel = [r for r in gemm if r["pass"] == p]
        pred = [curve_time(r["m"], r["n"], r["k"], 1, me, kh) for r in sel]
        print(f"  curve {p:16s} ({len(sel)}): " + pct(errors(pred, [measured_time(r) for r in sel])))
        pts = [(p, (math.log2(r["m"]), math.log2(r["n"]), math.log2(r["k"])), float(r["tflops"]))
               for r in sel]
        print(f"  table leave-one-out {p:16s}: " + pct(knn_loo(pts)))
    pred = [curve_time(r["m"], r["n"], r["k"], r["groups"], me, kh) for r in grouped]
    print("grouped GEMM through the dense curve: " +
          pct(errors(pred, [measured_time(r, r["groups"]) for r in grouped])))
    pts = [(r["pass"], (math.log2(r["groups"]), math.log2(r["m"]), math.log2(r["n"]),
                        math.log2(r["k"])), float(r["tflops"])) for r in grouped]
    print("grouped table leave-one-out: " + pct(knn_loo(pts)))
    pts = [(r["pass"], (math.log2(r["batch_heads"]), math.log2(r["seq"]),
                        math.log2(r["head_dim"]), math.log2(r["v_head_dim"])), float(r["tflops"]))
           for r in attn]
    print("attention table leave-one-out: " + pct(knn_loo(pts)))
    for p in ("forward", "backward"):
        e = sorted(float(r["tflops"]) * 1e12 / PEAK for r in attn if r["pass"] == p)
        print(f"  attention {p}: efficiency (shardsim FLOPs) median {statistics.median(e):.3f}, "
              f"range {e[0]:.3f}-{e[-1]:.3f}")


if __name__ == "__main__":
    main()
