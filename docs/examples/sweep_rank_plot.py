"""Sweep, rank and plot from Python: every layout of Mixtral 8x7B on 64 H100s.

    PYTHONPATH=build/python python3 docs/examples/sweep_rank_plot.py [OUT_DIR]

The notebook sweep_rank_plot.ipynb holds the same cells (each "# %%" below). The plot needs matplotlib
(Debian: python3-matplotlib); without it the example prints the ranking and says so.
"""

# %%
import os
import sys

import shardsim

root = os.path.abspath(os.path.join(os.path.dirname(shardsim.__file__), ".."))
if not os.path.isdir(os.path.join(root, "scenarios")):  # imported from build/python
    root = os.getcwd()
spec = os.path.join(root, "scenarios", "sweeps", "mixtral-8x7b-h100x64.yaml")
out_dir = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "."

# %%
# Every point of the sweep on all cores; the callback sees each row as it is written.
seen = []
rows = shardsim.sweep(spec, progress=seen.append)
print(f"{len(rows)} points, {len(rows.feasible())} feasible, {seen[-1].done} rows written")

# %%
# Rank: the five fastest layouts that fit (the CLI's ranking is in rows.report).
for r in rows.best(5, by="tokens_per_s_per_gpu"):
    layout = ", ".join(f"{k.split('.')[-1]} {r[k]}" for k in rows.input_columns)
    print(f"{r['tokens_per_s_per_gpu']:8.0f} tokens/s/GPU  MFU {r['mfu']:.1%}  "
          f"peak {r['peak_memory_bytes'] / 2**30:5.1f} GiB  {layout}")

# %%
# With pandas: the best throughput for each recompute mode, and why points were infeasible.
try:
    import pandas  # noqa: F401
    df = rows.to_pandas()
    ok = df[df.status == "ok"]
    print(ok.groupby("training.recompute")["tokens_per_s_per_gpu"].max().round(0))
    print(df[df.status != "ok"].groupby("status").size())
except ImportError:
    print("pandas is not installed (Debian: python3-pandas): skipping the table")

# %%
# Plot throughput against peak memory, feasible points in colour (needs matplotlib).
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed (Debian: python3-matplotlib): no plot")
if plt is not None:
    simulated = [r for r in rows if r["status"] in ("ok", "no_fit")]
    fig, ax = plt.subplots(figsize=(7, 4))
    for status, colour in (("ok", "tab:blue"), ("no_fit", "tab:gray")):
        pts = [r for r in simulated if r["status"] == status]
        ax.scatter([r["peak_memory_bytes"] / 2**30 for r in pts],
                   [r["tokens_per_s_per_gpu"] for r in pts], s=8, c=colour, label=status)
    ax.axvline(simulated[0]["memory_capacity_bytes"] / 2**30, color="tab:red", lw=1,
               label="capacity")
    ax.set_xlabel("peak memory per GPU (GiB)")
    ax.set_ylabel("tokens/s per GPU")
    ax.set_title("Mixtral 8x7B on 64 H100s: every layout")
    ax.legend()
    path = os.path.join(out_dir, "mixtral-sweep.png")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    print(f"wrote {path}")
