"""Two bookend policies of the nanoGPT layer norm (Thunder-style), each under its own NVTX range (GPU host).

    segkit profile -o runA -- python scripts/bookend_trace_demo.py
    segkit trace compare runA/report.sqlite runB/report.sqlite --by kernel --plot cmp.png
"""

import sys

import torch

import fusions  # noqa: F401 (registers the experiment's named workloads)
import segkit
from segkit import trace
from segkit.bookend import bookend, run_plan
from segkit.experiment import workloads

fd, inputs = next(iter(workloads(tiny=False, device="cuda").values()))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
for policy in ("outputs", "inputs+outputs"):
    plan = bookend(fd, policy)
    realized = plan.apply("segment_set")
    run_plan(realized, inputs, backend="nvfuser")  # compile outside the range
    torch.cuda.synchronize()
    for _ in range(reps):
        with trace.range(f"policy={policy}"):
            run_plan(realized, inputs, backend="nvfuser")
            torch.cuda.synchronize()
print("done", segkit.__name__)
