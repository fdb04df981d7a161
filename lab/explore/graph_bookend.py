"""The CUDA-graph bookend table (issue 21, item 3; NVIDIA/Fuser#2815 again): every bookend policy x realization
on nanoGPT's layer norm and litgpt's qkv split + RoPE, with host time measured three ways: synchronised wall
per call, CPU time per call launched asynchronously (the CPU ahead of the GPU, as in training), and wall per
CUDA-graph replay. Each variant (and each replay) is checked against the reference before it is timed.

    python -m lab.explore.graph_bookend [--json results.json]
"""

from __future__ import annotations

import argparse
import json

import torch
from tabulate import tabulate

import fusions  # noqa: F401 (registers the experiment's named workloads)
from segkit.experiment import HEADERS, run_experiment, workloads


def winner(rows, column: str) -> str:
    ok = [m for m in rows if m.ok and getattr(m, column) is not None]
    best = min(ok, key=lambda m: getattr(m, column), default=None)
    return "-" if best is None else f"{best.variant} ({getattr(best, column):.1f} us)"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the measurements here")
    ap.add_argument("--reps", type=int, default=50)
    args = ap.parse_args(argv)
    out = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "workloads": {}}
    summary = []
    for name, (fd, inputs) in workloads(tiny=False, device="cuda").items():
        if not name.startswith(("nanoGPT", "qkv split")):  # the workloads (not the captured Thunder one)
            continue
        rows = run_experiment(fd, inputs, reps=args.reps)
        print(f"\n## {name}\n")
        print(tabulate([m.row() for m in rows], headers=HEADERS))
        out["workloads"][name] = [m.__dict__ for m in rows]
        summary.append([name, winner(rows, "wall_us"), winner(rows, "async_us"), winner(rows, "graph_us")])
        if args.json:  # after each workload: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1, default=str)
    print("\n## fastest variant per workload\n")
    print(tabulate(summary, headers=["workload", "sync wall", "async host", "CUDA-graph replay"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
