"""Exploration for norm backward at hidden 256 (where Inductor is 1.5-2x faster than nvFuser's fused
inner-outer kernel): the fused fusion against the same definition split into a dx-only and a dw(/db)-only
fusion run back to back (the second reads x and dy again, from L2 when they fit). CUPTI kernel time, cold L2.

    python lab/explore/norm_bwd_split.py [SHAPE ...]
"""
import sys

from lab.explore.common import build, close, norm_case
from benchmarks.harness import kernel_us


def explore(kind: str, shape: str) -> None:
    spec, cfg, inputs, floor = norm_case(kind, "bwd", shape)
    fused = build(spec, cfg)
    ref = fused.execute(inputs)
    n_out = len(ref)
    dx_fd, dw_fd = build(spec, cfg, [0]), build(spec, cfg, list(range(1, n_out)))

    def split():
        return dx_fd.execute(inputs) + dw_fd.execute(inputs)

    for tag, fn in (("fused (default)", lambda: fused.execute(inputs)), ("split dx | dw", split)):
        out = fn()
        us = kernel_us(fn)
        print(f"RES {kind:9s} {shape:18s} {tag:18s} {us:7.1f} us  {100 * floor / us:5.1f}% floor  "
              f"ok={close(out, ref)}", flush=True)


for shape in sys.argv[1:] or ["sweep_4096x256", "sweep_16384x256", "sweep_65536x256"]:
    for kind in ("rmsnorm", "layernorm"):
        explore(kind, shape)
