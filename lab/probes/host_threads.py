"""Is a lone step's extra host time work on the main thread, or the main thread held off its core? Per thread of
this process, the time on a CPU and the time waiting on a run queue (/proc/self/task/TID/schedstat, ns) over each
lone step of each variant, interleaved pass by pass.

Why: in the torch.profiler traces of litgpt's whole GPT (lab run h200x2-2026-11-30-whole-gpt, call 2), Thunder +
segkit_ex with cuDNN attention had lone steps in which every host op, down to aten::view, ran slower, with the same
ops and Python calls as stock Thunder; segkit_ex without its attention (segkit-own) and stock Thunder did not.

Usage (repo root, GPU): python lab/probes/host_threads.py N_LAYER PASSES VARIANTS OUT.json
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


def _threads() -> dict[int, tuple[str, int, int]]:
    """tid -> (name, ns on a CPU, ns waiting on a run queue)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            name = Path(f"/proc/self/task/{tid}/comm").read_text().strip()
            run, wait, _ = Path(f"/proc/self/task/{tid}/schedstat").read_text().split()
        except (OSError, ValueError):
            continue
        out[int(tid)] = (name, int(run), int(wait))
    return out


def main() -> None:
    from benchmarks import model_step
    from gpt_host import built_with_grads, gpt_case  # this script's folder is first on sys.path

    n_layer, passes, names, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), Path(sys.argv[4])
    variants = {v.name: v for v in model_step.VARIANTS + model_step.load_variants(  # the campaign controls too
        Path(__file__).resolve().parents[1] / "campaigns" / "step_controls.json")}
    case = gpt_case(n_layer)
    built, want = built_with_grads(case)
    opts = model_step.Options(iters=10)
    steps = {}
    for name in names:
        row = model_step.Row(case.name, built.label, name)
        steps[name] = model_step.measure(built, variants[name], want, row, "cuda", opts)
        print(f"{name}: first {row.first_step_s:.1f} s, ms {row.ms:.2f}, host {row.host_ms:.2f}", flush=True)
    main_tid = os.getpid()  # Linux: the main thread's id is the process's
    per = {n: [] for n in names}
    for p in range(passes):
        for name in names[p % len(names):] + names[:p % len(names)]:
            torch.cuda.synchronize()
            time.sleep(0.05)  # the GPU idle and the host quiet before each lone step
            before, t0 = _threads(), time.perf_counter()
            steps[name]()
            host = time.perf_counter() - t0
            after = _threads()
            torch.cuda.synchronize()
            d = {tid: (after[tid][0], after[tid][1] - before[tid][1], after[tid][2] - before[tid][2])
                 for tid in after if tid in before}
            others = sorted(((n, r) for tid, (n, r, _) in d.items() if tid != main_tid and r > 0),
                            key=lambda x: -x[1])
            per[name].append({"host_us": host * 1e6, "main_cpu_us": d[main_tid][1] / 1e3,
                              "main_wait_us": d[main_tid][2] / 1e3,
                              "others_cpu_us": sum(r for _, r in others) / 1e3,
                              "others": [(n, round(r / 1e3, 1)) for n, r in others[:4]]})
    summary = {}
    for name, rows in per.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("host_us", "main_cpu_us", "main_wait_us",
                                                                  "others_cpu_us")}
        slow = sorted(rows, key=lambda r: -r["host_us"])[:3]
        summary[name] = {"median": med, "slowest": slow, "threads": len(os.listdir("/proc/self/task"))}
        print(f"RES {name}: host {med['host_us']:.0f} us, main on-CPU {med['main_cpu_us']:.0f}, main waiting "
              f"{med['main_wait_us']:.0f}, other threads on-CPU {med['others_cpu_us']:.0f} (medians of {passes}); "
              f"slowest: " + "; ".join(f"host {r['host_us']:.0f} cpu {r['main_cpu_us']:.0f} wait "
                                       f"{r['main_wait_us']:.0f} others {r['others']}" for r in slow), flush=True)
    out.write_text(json.dumps({"per_step": per, "summary": summary}, indent=1))


if __name__ == "__main__":
    main()
