"""Where a hand-scheduled norm forward's host time goes: RMSNorm forward, bf16, at 576000 x 384 and 16384 x 256.

Each way of running the same math is timed three ways:

* host us: CPU time of one call until it returns (a burst of calls too short to fill the launch queue, then one
  synchronize): what the call costs the host;
* wall us: many calls back to back, synchronized at the end, per call: max(host, GPU) in steady state;
* kernel us: summed CUDA kernel time per call (torch.profiler, warm L2).

The ways: nvFuser's default schedule through ``fd.execute`` (FusionExecutorCache); segkit's builder as it runs
today (its rule or the tuning table's winner on this GPU); the forward rows schedule (fusions/norm_fwd_rows.py)
through ``manual_execute``, through its compiled ``KernelExecutor.run`` called directly (raw, and as the
formulation's ``execute`` with its host views), and replayed from a CUDA graph (the floor: one graph launch, static
inputs); and torch.compile of the same op.

Usage (GPU host, < 2 minutes): python lab/probes/fwd_host_probe.py [--out FILE.json]
  [--schedule CHUNK,VEC,TIDX,UNROLL] (default: one warp per row at 384, one vector per thread at 256; TIDX 0:
  hidden / vec). Prints one table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fusions  # noqa: E402
from fusions.norm_fwd_rows import FwdRows, FwdRowsSchedule, compile_kernel, schedule_fwd  # noqa: E402
from segkit.compare import compare  # noqa: E402
from segkit.errors import error_summary  # noqa: E402
from segkit.nvfuser.run import compiled, to_nvfuser  # noqa: E402
from segkit.nvfuser.timing import cuda_profiler  # noqa: E402
from segkit.tuning import TuningTable  # noqa: E402

SHAPES = {(576000, 384): FwdRowsSchedule(4, vec=4, tidx=32), (16384, 256): FwdRowsSchedule(4, vec=8)}


def host_us(fn, burst: int = 40, reps: int = 5) -> float:
    """Median over ``reps`` bursts of the CPU time per call of ``burst`` calls (synchronized after each burst)."""
    out = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        out.append((time.perf_counter() - t0) / burst * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def wall_us(fn, calls: int) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / calls * 1e6


def kernel_us(fn, calls: int = 20) -> float:
    torch.cuda.synchronize()
    with cuda_profiler() as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    total = sum(e.device_time_total for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)
    return total / calls


def ways(cfg, args, sched: FwdRowsSchedule) -> dict:
    """name -> a no-argument call, for each way of running the forward (a way that fails: its error)."""
    spec = fusions.get("rmsnorm_fwd")
    out: dict = {}
    plain = to_nvfuser(spec.build(cfg, table=TuningTable()))  # no tuning read: nvFuser's default heuristics
    out["fd.execute (nvFuser default)"] = lambda: plain.execute(args)
    today = compiled(spec.build(cfg))  # the builder's rule, or this GPU's tuning table winner
    out[f"segkit today ({type(today).__name__})"] = lambda: today.execute(args)

    run = FwdRows("rmsnorm_fwd", cfg, sched)
    recorded = run.recorded()

    def scheduled():
        nvfd = to_nvfuser(recorded)
        schedule_fwd(nvfd, sched, cfg.hidden, True)
        return nvfd

    manual = scheduled()
    out["hand: manual_execute"] = lambda: manual.manual_execute(args)
    launch = compile_kernel(recorded, sched, cfg, args).ke.run  # what FwdRows.execute launches
    out["hand: KernelExecutor.run"] = lambda: launch(args)
    out["hand: FwdRows.execute"] = lambda: run.execute(args)
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            launch(args)
        out["hand: CUDA graph replay (floor)"] = graph.replay
    except Exception as e:  # nvFuser's launch path did something a capture forbids
        out["hand: CUDA graph replay (floor)"] = f"capture failed: {error_summary(e, 200)}"

    eps = cfg.eps

    def rmsnorm(x, w):
        xf = x.float()
        rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
        return (xf * rstd * w.float()).to(x.dtype), rstd.squeeze(-1)

    tc = torch.compile(rmsnorm, dynamic=False)
    out["torch.compile"] = lambda: tc(*args)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", help="also write the rows as JSON here")
    p.add_argument("--schedule", help="CHUNK,VEC,TIDX,UNROLL for every shape (TIDX 0: hidden / vec)")
    a = p.parse_args()
    rows = []
    t_start = time.perf_counter()
    for shape, sched in SHAPES.items():
        if a.schedule:
            c, v, t, u = (int(n) for n in a.schedule.split(","))
            sched = FwdRowsSchedule(c, vec=v, tidx=t or None, unroll=u)
        spec = fusions.get("rmsnorm_fwd")
        cfg = spec.config(f"{'mixorder' if shape[0] == 576000 else 'sweep'}_{shape[0]}x{shape[1]}", torch.bfloat16)
        inputs = spec.make_inputs(cfg, device="cuda")
        args = list(inputs.values())
        refs = spec.reference(inputs, cfg)
        calls = 300 if shape[0] * shape[1] > 1 << 24 else 3000
        for name, fn in ways(cfg, args, sched).items():
            row = {"shape": f"{shape[0]}x{shape[1]}", "way": name, "schedule": sched.describe()}
            if isinstance(fn, str):
                rows.append({**row, "note": fn})
                continue
            try:
                outs = fn()
                ok = "graph" in name or all(d.ok for d in compare(refs, list(outs)[:2]))
                row.update(host_us=host_us(fn), wall_us=wall_us(fn, calls), kernel_us=kernel_us(fn),
                           note="" if ok else "WRONG against the float64 reference")
            except Exception as e:
                row["note"] = f"failed: {error_summary(e, 200)}"
            rows.append(row)
        del inputs, args, refs
        torch.cuda.empty_cache()
    print(f"\n{torch.cuda.get_device_name()}, torch {torch.__version__}, {time.perf_counter() - t_start:.0f} s\n")
    print("| shape | way | host us/call | wall us/call | kernel us/call | note |\n|---|---|---|---|---|---|")
    for r in rows:
        nums = [f"{r[k]:.1f}" if k in r else "-" for k in ("host_us", "wall_us", "kernel_us")]
        print(f"| {r['shape']} | {r['way']} | {' | '.join(nums)} | {r.get('note', '')} |")
    print("\nhand schedule: " + "; ".join(sorted({f"{r['shape']}: {r['schedule']}" for r in rows})))
    if a.out:
        Path(a.out).write_text(json.dumps({"gpu": torch.cuda.get_device_name(), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
