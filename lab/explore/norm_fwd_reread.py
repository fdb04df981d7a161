"""Exploration for issue 38's wide-row forward (hidden >= 4096, where nvFuser's inner-persistent kernel trails
torch.compile by 3-6% at copy bandwidth): the norm forward with x passed to the fusion once per pass over it, so
no pass keeps the row in registers or shared memory. Each later pass reads the row again, mostly from L2 (the
row was read moments before), as a looped Triton reduction does. RMSNorm: x for sum(x^2), x again for y; layer
norm: x for the mean, x again for the variance about it, x a third time for y. The same tensor goes in each time.

nvFuser segments that fusion. (The rows schedule loading x once per pass inside one kernel, commits c412af1 and
8347075, lost too and was removed: lab/runs/h200-2026-11-26-fwd-reread-rows-probe/.)

Side by side in one process, y alone (the inference forward the suite times), CUPTI kernel time with a cold L2:
the spec's own fusion (nvFuser's defaults), segkit as tuned for this GPU, the re-reading fusion, the rows
schedule (fusions/norm_fwd_rows.py) at 128-512 threads per row, torch.compile as the forward suite sets it up
(benchmarks/executors.py). Each is checked against the spec's float64 reference first.

    python lab/explore/norm_fwd_reread.py [KIND:SHAPE ...]   (default: wide-row shapes)
"""
import sys

import nvfuser_direct as nvf
import torch

import fusions._norm as N
from benchmarks.executors import norm_forward
from lab.explore.common import build, norm_case, reporter
from fusions.norm_fwd_rows import FwdRows, FwdRowsSchedule
from fusions.spec import dt
from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.nvfuser.timing import kernel_breakdown

DEFAULT = [f"{k}:{s}" for k in ("rmsnorm", "layernorm")
           for s in ("sweep_16384x8192", "sweep_65536x8192", "sweep_16384x16384", "llama2_70b", "sweep_65536x4096")]


def define_reread(fd, kind: str, cfg) -> None:
    """y of the ``kind`` norm with x defined once per pass (inputs: x, weight, (bias,) x, (x,))."""
    f32, n = dt(fd, "Float"), len(cfg.shape)
    x_stats = fd.ops.cast(N.define_x(fd, cfg), dtype=f32)
    w = fd.ops.cast(N.define_vec(fd, cfg), dtype=f32)
    b = fd.ops.cast(N.define_vec(fd, cfg), dtype=f32) if cfg.bias else None
    x_out = fd.ops.cast(N.define_x(fd, cfg), dtype=f32)
    last = [n - 1]
    if kind == "rmsnorm":
        ms = fd.ops.div(fd.ops.sum(fd.ops.mul(x_stats, x_stats), dims=last), float(cfg.hidden))
        centred = x_out
        rstd = fd.ops.rsqrt(fd.ops.add(ms, cfg.eps))
    else:
        mean = N.per_row(fd, fd.ops.div(fd.ops.sum(x_stats, dims=last), float(cfg.hidden)), n)
        x_var = fd.ops.cast(N.define_x(fd, cfg), dtype=f32)
        d = fd.ops.sub(x_var, mean)
        rstd = fd.ops.rsqrt(fd.ops.add(fd.ops.div(fd.ops.sum(fd.ops.mul(d, d), dims=last), float(cfg.hidden)),
                                       cfg.eps))
        centred = fd.ops.sub(x_out, mean)
    y = fd.ops.mul(fd.ops.mul(centred, N.per_row(fd, rstd, n)), N.per_col(fd, w, n))
    if b is not None:
        y = fd.ops.add(y, N.per_col(fd, b, n))
    fd.add_output(fd.ops.cast(y, dtype=N.io(fd, cfg)))


def explore(case: str) -> None:
    kind, shape = case.split(":")
    spec, cfg, inputs, floor = norm_case(kind, "fwd", shape)
    report = reporter(kind, shape, floor)
    x, named = inputs[0], dict(zip(["x", "weight", "bias"], inputs))
    (want,) = spec.reference(named, cfg)[:1]
    default = build(spec, cfg, keep=[0])
    with nvf.FusionDefinition() as reread:
        define_reread(reread, kind, cfg)
    reread_args = inputs + [x] * (1 if kind == "rmsnorm" else 2)
    compiled = norm_forward(kind, cfg, "torch.compile", named)
    tuned = norm_forward(kind, cfg, "segkit", named)
    runs = [("nvFuser defaults", lambda: default.execute(inputs)),
            ("segkit (as tuned)", lambda: list(tuned.fn())[:1]),
            ("re-read (x per pass)", lambda: reread.execute(reread_args)),
            ("torch.compile", lambda: [compiled.fn()])]
    for tidx in (128, 256, 512):
        for rows in (1, 2, 4):
            try:
                hand = FwdRows(spec.name, cfg, FwdRowsSchedule(rows, vec=8, tidx=tidx)).with_outputs((0,))
            except SegkitError:  # the schedule does not fit this shape
                continue
            runs.append((f"rows {tidx}x{rows}", lambda hand=hand: hand.execute(inputs)))
    for tag, fn in runs:
        try:
            (y,) = fn()
            (d,) = compare([want], [y])
            kernels = kernel_breakdown(fn)
        except Exception as e:  # noqa: BLE001  (a probe reports every variant it can)
            print(f"FAIL {case} {tag}: {type(e).__name__}: {str(e).strip().splitlines()[:1]}", flush=True)
            continue
        report(tag, sum(k.us for k in kernels), d.ok, f"{len(kernels)} kernel(s), max rel err {d.rel_err:.1e}")


if __name__ == "__main__":
    for case in sys.argv[1:] or DEFAULT:
        explore(case)
        torch.cuda.empty_cache()
