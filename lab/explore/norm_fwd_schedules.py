"""Exploration for the nanoGPT layer norm forward target (kernel time within 1.5x of the bytes floor): nvFuser's
inner persistent schedule for the forward with a few heuristic parameters replaced, CUPTI kernel time with a
cold L2 (the benchmark harness's timer), correctness against the default schedule.

    python lab/explore/norm_fwd_schedules.py [SHAPE ...]      (default: nanogpt)
    python lab/explore/norm_fwd_schedules.py --sweep SHAPE ...  (y only: default, ws, rows per block)
"""
import sys

import thunder
import torch
import torch.nn.functional as F
from nvfuser_direct import schedule, SchedulerType

from lab.explore.common import build, close, norm_case, reporter, schedule_manually
from benchmarks.harness import kernel_us
from segkit.tuning import NvTuning
from segkit.nvfuser.tuned import override


def explore(kind: str, shape: str) -> None:
    spec, cfg, inputs, floor = norm_case(kind, "fwd", shape)
    default = build(spec, cfg)
    ref = default.execute(inputs)

    def report(tag, us, ok=True, extra=""):
        print(f"RES {kind:9s} {shape:12s} {tag:34s} {us:7.2f} us  {us / floor:5.2f}x floor  ok={ok} {extra}",
              flush=True)

    report("default fd.execute", kernel_us(lambda: default.execute(inputs)))
    report("default fd.execute (again)", kernel_us(lambda: default.execute(inputs)))
    y_only = build(spec, cfg, keep=[0])  # what inference needs (Thunder's own forward fusion returns only y)
    out = y_only.execute(inputs)
    report("y only (no statistics out)", kernel_us(lambda: y_only.execute(inputs)), close(out, ref[:1]))
    stock = thunder.jit(lambda *a: F.layer_norm(a[0], (cfg.hidden,), *a[1:], cfg.eps) if kind == "layernorm"
                        else F.rms_norm(a[0], (cfg.hidden,), a[1], cfg.eps))
    with torch.no_grad():
        out = stock(*inputs)
        report("stock thunder (same process)", kernel_us(lambda: stock(*inputs)), close([out], ref[:1]))
    for opts in (["ws_normalization"],):
        fo = build(spec, cfg)
        try:
            out = fo.execute(inputs, _enable_options=opts)
            report(f"enable {opts[0]}", kernel_us(lambda: fo.execute(inputs, _enable_options=opts)), close(out, ref))
        except Exception as e:
            print("fail", opts, str(e).strip().splitlines()[0][:160] if str(e).strip() else repr(e))
    p0 = schedule.compute_heuristics(build(spec, cfg).fusion, SchedulerType.inner_persistent, inputs)
    print(str(p0)[:2500])
    variants = {"manual copy": {}}
    for v in (4, 2):
        if v < p0.unroll_factor_inner_reduction:
            variants[f"vect {v}"] = {"vectorize": v}
    for u in (2, 4):
        variants[f"unroll iter {u}"] = {"extra": {"unroll_factor_iter_dom": u}}
    for b in (2, 4):
        variants[f"rows per block {b}"] = {"rows_per_block": b}
    for tag, change in variants.items():
        manual_variant(spec, cfg, inputs, ref, lambda us, ok, extra, tag=tag: report(tag, us, ok, extra), **change)


def manual_variant(spec, cfg, inputs, ref, report, vectorize=None, rows_per_block=None, extra=None,
                   keep=None) -> None:
    """nvFuser's inner persistent heuristics for the fusion with vectorize / rows per block replaced as a
    builder's ``NvTuning`` replaces them (``segkit.nvfuser.tuned.override``) and any ``extra`` heuristic parameters
    set, scheduled and run manually; ``report(us, ok, launch)``, or a ``fail`` line."""
    tuning = NvTuning("exploration", scheduler="inner_persistent", vectorize=vectorize, rows_per_block=rows_per_block)

    def tweak(p):
        override(p, tuning, torch.cuda.get_device_properties(0).multi_processor_count)
        for name, value in (extra or {}).items():
            setattr(p, name, value)

    try:
        fm, p = schedule_manually(spec, cfg, inputs, SchedulerType.inner_persistent, tweak, keep)
        out = fm.manual_execute(inputs, p)
        report(kernel_us(lambda: fm.manual_execute(inputs, p)), close(out, ref),
               f"block=({p.lparams.bdimx},{p.lparams.bdimy}) grid=({p.lparams.gdimx},{p.lparams.gdimy})")
    except Exception as e:
        print("fail", tuning.describe(), extra or "",
              str(e).strip().splitlines()[0][:160] if str(e).strip() else repr(e), flush=True)


def sweep(kind: str, shape: str) -> None:
    """The forward with y as its only output (what inference runs): nvFuser's default against
    ``ws_normalization`` and inner persistent schedules with several rows per block and narrower vectors."""
    spec, cfg, inputs, floor = norm_case(kind, "fwd", shape)
    fd = build(spec, cfg, keep=[0])
    ref = fd.execute(inputs)
    report = reporter(kind, shape, floor)
    report("default (y only)", kernel_us(lambda: fd.execute(inputs)))
    ws = build(spec, cfg, keep=[0])
    out = ws.execute(inputs, _enable_options=["ws_normalization"])
    report("ws_normalization", kernel_us(lambda: ws.execute(inputs, _enable_options=["ws_normalization"])),
           close(out, ref))
    for vect in (None, 4):
        for rows in (1, 2, 4, 8):
            tag = f"rows/block {rows}" + (f" vect {vect}" if vect else "")
            manual_variant(spec, cfg, inputs, ref, lambda us, ok, extra, tag=tag: report(tag, us, ok, extra),
                           vectorize=vect, rows_per_block=rows, keep=[0])


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--sweep"]:
        for shape in args[1:]:
            for kind in ("rmsnorm", "layernorm"):
                sweep(kind, shape)
    else:
        for shape in args or ["nanogpt"]:
            for kind in ("layernorm", "rmsnorm"):
                explore(kind, shape)
