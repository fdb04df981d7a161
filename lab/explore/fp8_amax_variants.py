"""fp8 amax formulations on nvFuser: the builder as written, through segkit.reuse_reductions (with and without inner_outer pairing), and the
inner_outer / two_stage variants (fusions/fp8_amax.py): segments and schedulers nvFuser chose (its profiler),
exactness against the float64 reference, and event time per call with L2 flushed (launch gaps included; the
benchmark suite has CUPTI kernel time). Run: python -m lab.explore.fp8_amax_variants [SHAPE ...]"""
import sys
from dataclasses import replace

import torch

import fusions
from lab.explore.common import GBS, reporter
from benchmarks.harness import event_us
from benchmarks.workloads import AMAX_SHAPES, amax_bytes
from segkit.nvfuser.run import compiled, run_nvfuser
from segkit.reuse import reuse_reductions

SPEC = fusions.get("fp8_amax")
SETS = {"row+all": ("row", "all"), "row+col+all": ("row", "col", "all")}


def fusions_for(cfg):
    yield "direct", SPEC.build(cfg)
    yield "direct+reuse", reuse_reductions(SPEC.build(cfg)).apply()
    if "col" in cfg.amaxes:
        for side in ("outer", "inner"):
            yield f"direct+reuse+io_{side}", reuse_reductions(SPEC.build(cfg), inner_outer=side).apply()
        for variant in ("inner_outer", "inner_outer_rows", "two_stage"):
            yield variant, SPEC.build(replace(cfg, variant=variant))


for shape in sys.argv[1:] or AMAX_SHAPES:
    base = SPEC.config(shape)
    inputs = list(SPEC.make_inputs(base, device="cuda").values())
    for set_name, amaxes in SETS.items():
        cfg = replace(base, amaxes=amaxes)
        want = SPEC.reference({"x": inputs[0]}, cfg)
        report = reporter(set_name, shape, amax_bytes(cfg) / GBS / 1e3)
        for tag, fd in fusions_for(cfg):
            try:
                run = run_nvfuser(fd, inputs)
            except Exception as e:  # nvFuser refuses a formulation: that is the finding
                print(f"RES {set_name:9s} {shape:20s} {tag:26s} FAILED {str(e).strip().splitlines()[0][:200]}",
                      flush=True)
                continue
            ok = all(torch.equal(g, w.float()) for g, w in zip(run.outputs, want))
            nvfd = compiled(fd)
            us = event_us(lambda: nvfd.execute(inputs))
            report(tag, us, ok, f"{run.kernel_count} kernels, segments {' '.join(run.groups)}")
