#!/usr/bin/python3
# Makes tests/data/calibrate/cpu_step.trace.json: a PyTorch profiler (Kineto) Chrome trace of
# one training step of a small transformer block on the CPU, recorded with
# record_shapes=True. The format is the one torch.profiler writes on GPUs too (there, kernel
# events are added beside these cpu_op events); the op names here are aten ops.
#
#   /usr/bin/python3 tests/data/calibrate/make_cpu_trace.py   (Debian 12: apt-get install python3-torch)
#
# Debian 12's python3-torch (1.13) is built without Kineto (torch.profiler.kineto_available() is
# False): its export_chrome_trace writes a bare event list without the shapes record_shapes took.
# So this script writes the trace itself from the profiler's events, in Kineto's layout
# ({"traceEvents": [...]}, "ph": "X", "cat": "cpu_op", ts/dur in microseconds, args "External
# id", "Input Dims", "Input type"), with each event's recorded input shapes. This build records
# no dtypes; every tensor of the model is float32 (no autocast), so "Input type" says "float" for
# each tensor input, as Kineto writes it, and "Scalar" for a shapeless one.
#
# The shapes are small so the trace stays small (well under 1 MB); `shardsim calibrate` reads
# it end to end in tests/calibrate/calibrate_test.cc.
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

torch.manual_seed(0)
torch.set_num_threads(1)

B, S, H, HEADS, FFN = 4, 256, 256, 4, 1024
D = H // HEADS


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(H)
        self.qkv = torch.nn.Linear(H, 3 * H)
        self.proj = torch.nn.Linear(H, H)
        self.ln2 = torch.nn.LayerNorm(H)
        self.fc1 = torch.nn.Linear(H, FFN)
        self.fc2 = torch.nn.Linear(FFN, H)

    def forward(self, x):
        h = self.ln1(x)
        q, k, v = self.qkv(h).view(B, S, 3, HEADS, D).permute(2, 0, 3, 1, 4)
        # Attention written out (scores, softmax, context) so that the trace holds bmm and
        # softmax ops with their shapes.
        scores = torch.matmul(q, k.transpose(-1, -2)) * (D ** -0.5)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(B, S, H)
        x = x + self.proj(ctx)
        x = x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))
        return x


model = torch.nn.Sequential(Block(), Block())
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x = torch.randn(B, S, H)

for _ in range(2):  # warm-up, not recorded
    model(x).float().pow(2).mean().backward()
    opt.step()
    opt.zero_grad()

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu_step.trace.json")
with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    for _ in range(1):
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
events = []
for e in prof.events():
    dims = [list(d) for d in e.input_shapes]
    events.append({
        "ph": "X", "cat": "cpu_op", "name": e.name, "pid": 0, "tid": int(e.thread),
        "ts": int(e.time_range.start), "dur": int(e.time_range.elapsed_us()),
        "args": {"External id": int(e.id), "Input Dims": dims,
                 "Input type": ["float" if d else "Scalar" for d in dims]},
    })
events.sort(key=lambda ev: (ev["ts"], -ev["dur"], ev["args"]["External id"]))
with open(out, "w") as f:
    json.dump({"schemaVersion": 1, "deviceProperties": [],
               "traceEvents": events, "displayTimeUnit": "ms"}, f, separators=(",", ":"))
    f.write("\n")
print(f"wrote {out} ({os.path.getsize(out)} bytes), torch {torch.__version__}", file=sys.stderr)
