"""Exploration for the norm backward floor bar at 4096-65536 rows and hidden 1024-16384: nvFuser's inner-outer
persistent schedule with its register-persistent batch, grid, register cap and buffer projection replaced,
timed as the benchmarks time (CUPTI kernel time, cold L2; the 11-21 logs of norm_bwd_schedules.py used CUDA
events, which count manual_execute's host time too), each variant checked against the default schedule.

    python lab/explore/norm_bwd_inner_outer.py SHAPE ...    the sweep, both norms, bf16
    python lab/explore/norm_bwd_inner_outer.py --host        where a manual schedule's host time goes

Logs: lab/runs/h200-2026-11-23-final/norm_bwd_inner_outer.log (made before the harness's flush read
L2 back, so its times are 1-10 us higher than this script gives now) and manual_host.log.
"""
import math
import sys

import torch
from nvfuser_direct import schedule, SchedulerType

from lab.explore.common import build, close, norm_case, reporter, schedule_manually
from benchmarks.harness import kernel_us
from segkit.nvfuser.timing import wall_us

SMS = torch.cuda.get_device_properties(0).multi_processor_count
IO = SchedulerType.inner_outer_persistent
FIELDS = ("batches_per_block_inner_reduction", "unroll_factor_inner_reduction", "block_dim_inner_reduction_extra",
          "project_persistent_buffers", "pad_inner_reduction_to_warp", "static_bdimx", "unroll_factor_outer_reduction",
          "vectorization_factor_outer", "combined_split_grid_inner_dim", "tidx_for_outer_reduction")


def summary(p) -> str:
    lp = p.lparams
    fields = " ".join(f"{f.replace('_reduction', '')}={getattr(p, f)}" for f in FIELDS if hasattr(p, f))
    return f"block=({lp.bdimx},{lp.bdimy}) grid=({lp.gdimx},{lp.gdimy}) regs={p.cparams.maxrregcount} {fields}"


def variants(p0):
    """(tag, changes) to try: half / double the persistent batch (same elements per block row), 1-4 blocks
    per SM, register caps, buffer projection flipped."""
    b0 = p0.batches_per_block_inner_reduction
    yield "manual copy", {}
    for b in sorted({max(1, b0 // 2), b0 * 2, b0 + 1, max(1, b0 - 1)} - {b0}):
        yield f"batch={b}", {"batch": b}
    for k in (1, 2, 3, 4):
        if k * SMS != p0.lparams.gdimy:
            yield f"gdimy={k * SMS}", {"gdimy": k * SMS}
    for r in (64, 96, 128, 255):
        if r != p0.cparams.maxrregcount:
            yield f"regs={r}", {"regs": r}
    yield f"project={not p0.project_persistent_buffers}", {"project": not p0.project_persistent_buffers}


def apply(p, changes) -> None:
    lp = p.lparams
    if "batch" in changes:
        old = p.batches_per_block_inner_reduction
        per_row = lp.bdimx * old
        p.batches_per_block_inner_reduction = changes["batch"]
        bdimx = math.ceil(per_row / changes["batch"])
        lp.bdimx = 32 * math.ceil(bdimx / 32) if p.pad_inner_reduction_to_warp else bdimx
    if "gdimy" in changes:
        lp.gdimy = changes["gdimy"]
    p.lparams = lp
    if "regs" in changes:
        cp = p.cparams
        cp.maxrregcount = changes["regs"]
        p.cparams = cp
    if "project" in changes:
        p.project_persistent_buffers = changes["project"]


def sweep(kind: str, shape: str) -> None:
    spec, cfg, inputs, floor = norm_case(kind, "bwd", shape)
    default = build(spec, cfg)
    ref = default.execute(inputs)
    report = reporter(kind, shape, floor)
    report("default", kernel_us(lambda: default.execute(inputs), 20))
    ws = build(spec, cfg)
    out = ws.execute(inputs, _enable_options=["ws_normalization"])
    report("ws_normalization", kernel_us(lambda: ws.execute(inputs, _enable_options=["ws_normalization"]), 20),
           close(out, ref))
    p0 = schedule.compute_heuristics(build(spec, cfg).fusion, IO, inputs)
    print(f"HEUR {kind:9s} {shape:20s} {summary(p0)}", flush=True)
    best = None
    for tag, changes in variants(p0):
        try:
            fm, p = schedule_manually(spec, cfg, inputs, IO, lambda p, changes=changes: apply(p, changes))
            out = fm.manual_execute(inputs, p)
            ok = close(out, ref) and close(fm.manual_execute(inputs, p), ref)
            us = kernel_us(lambda: fm.manual_execute(inputs, p), 20)
        except Exception as e:
            msg = str(e).strip().splitlines()
            print(f"fail {kind} {shape} {tag}: {msg[0][:150] if msg else repr(e)}", flush=True)
            continue
        report(tag, us, ok, summary(p) if changes else "")
        if ok and (best is None or us < best[0]):
            best = (us, tag)
    if best:
        print(f"BEST {kind:9s} {shape:20s} {best[1]:22s} {best[0]:8.1f} us  {100 * floor / best[0]:5.1f}% floor",
              flush=True)


def host() -> None:
    """Host wall per synchronised call (and kernel time) of two tuned schedules: nvFuser's default through
    fd.execute; the tuned schedule through manual_execute and through KernelExecutor.run with the launch and
    compile parameters fetched once (both run without FusionExecutorCache's input-signature cache); and the
    tuned, already scheduled fusion handed to a FusionExecutorCache with auto_schedule=False."""
    import nvfuser_direct as nvf
    from segkit.tuning import NvTuning
    from segkit.nvfuser.tuned import override

    for kind, direction, shape, sched, tuning in (
            ("rmsnorm", "fwd", "sweep_65536x256", SchedulerType.inner_persistent,
             NvTuning("probe", scheduler="inner_persistent", rows_per_block=8)),
            ("rmsnorm", "bwd", "mixorder_576000x384", IO,
             NvTuning("probe", scheduler="inner_outer_persistent", vectorize=4, maxrregcount=40, blocks_per_sm=16))):
        spec, cfg, inputs, _ = norm_case(kind, direction, shape)
        plain = build(spec, cfg)
        ref = plain.execute(inputs)
        fm, p = schedule_manually(spec, cfg, inputs, sched, lambda p, t=tuning: override(p, t, SMS))
        fm.manual_execute(inputs, p)
        lp, cp = p.lparams, p.cparams
        rows = {"fd.execute (default)": lambda: plain.execute(inputs),
                "manual_execute (tuned)": lambda: fm.manual_execute(inputs, p),
                "ke.run, params cached": lambda: fm.ke.run(inputs, lp, cp)}
        for name, call in rows.items():
            ok = close(call(), ref)
            print(f"HOST {kind} {direction} {shape:20s} {name:24s} ok={ok} kernel {kernel_us(call, 20):7.1f} us  "
                  "wall " + " ".join(f"{wall_us(call, 200):7.1f}" for _ in range(3)), flush=True)
        try:
            scheduled = schedule_manually(spec, cfg, inputs, sched, lambda p, t=tuning: override(p, t, SMS))[0]
            fec = nvf.FusionExecutorCache(scheduled.fusion, auto_schedule=False)
            print(f"FEC {kind} {direction} ok={close(fec.execute(inputs), ref)}", flush=True)
        except Exception as e:
            msg = str(e).strip().splitlines()
            print(f"fail FEC auto_schedule=False {kind} {direction}: {msg[0][:200] if msg else repr(e)}", flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--host"]:
        host()
    else:
        for shape in sys.argv[1:]:
            for kind in ("rmsnorm", "layernorm"):
                sweep(kind, shape)
