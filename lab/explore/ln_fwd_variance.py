"""Exploration for the nanoGPT layer norm forward target: how the variance is written changes the kernel.

nvFuser lowers ``var_mean`` (Welford) in a persistent kernel to two passes (the builder now writes those
two passes itself, see fusions/layernorm_fwd.py), so layer norm does two
dependent block reductions (mean, then the centred squares) where RMSNorm does one. A one-pass variance
over shifted data, E[(x-K)^2] - E[x-K]^2 with K the row's first element (Chan, Golub & LeVeque's shifted
algorithm: K lies in the row's range, so there is no catastrophic cancellation when |mean| >> std), makes
the two sums independent. Each variant's y (the only output, as inference needs) is timed with the
benchmarks' CUPTI timer, cold L2, one process, and checked against the float64 reference.

    python lab/explore/ln_fwd_variance.py [SHAPE ...]      (default: nanogpt and three larger ones)
"""
import sys

import nvfuser_direct as nvf

from lab.explore.common import build, norm_case
from benchmarks.harness import KernelTimer, kernel_us
from fusions import _norm as N
from fusions.spec import dt
from segkit.nvfuser.run import PlainFusion, segment_groups

VARIANTS = ("var_mean", "two_pass", "one_pass_shifted", "one_pass_unshifted")  # two_pass: the builder's


def define(fd, cfg, variant: str) -> None:
    """Layer norm forward, y only, with the variance written as ``variant`` (any but the builder's two-pass)."""
    n, f32, inv_h = len(cfg.shape), dt(fd, "Float"), 1.0 / cfg.hidden
    x, w = N.define_x(fd, cfg), N.define_vec(fd, cfg)
    b = N.define_vec(fd, cfg)
    xf = fd.ops.cast(x, dtype=f32)
    if variant == "var_mean":
        var, mean = fd.ops.var_mean(xf, dims=[n - 1], correction=0, keepdim=False)
        xc = fd.ops.sub(xf, N.per_row(fd, mean, n))
    else:
        d = xf
        if variant == "one_pass_shifted":
            first = fd.ops.slice(x, start_indices=[0] * n, end_indices=list(cfg.shape[:-1]) + [1],
                                 strides=[1] * n)
            k = fd.ops.cast(fd.ops.squeeze(first, dims=[n - 1]), dtype=f32)
            d = fd.ops.sub(xf, N.per_row(fd, k, n))
        m1 = fd.ops.mul(fd.ops.sum(d, dims=[n - 1], dtype=f32), inv_h)
        m2 = fd.ops.mul(fd.ops.sum(fd.ops.mul(d, d), dims=[n - 1], dtype=f32), inv_h)
        var = fd.ops.sub(m2, fd.ops.mul(m1, m1))
        xc = fd.ops.sub(d, N.per_row(fd, m1, n))
    rstd = fd.ops.rsqrt(fd.ops.add(var, cfg.eps))
    y = fd.ops.mul(fd.ops.mul(xc, N.per_row(fd, rstd, n)), N.per_col(fd, fd.ops.cast(w, dtype=f32), n))
    y = fd.ops.add(y, N.per_col(fd, fd.ops.cast(b, dtype=f32), n))
    fd.add_output(fd.ops.cast(y, dtype=N.io(fd, cfg)))


def explore(shape: str) -> None:
    spec, cfg, inputs, floor = norm_case("layernorm", "fwd", shape)
    ref = spec.reference(dict(zip(("x", "weight", "bias"), inputs)), cfg)[0]
    for variant in VARIANTS:
        if variant == "two_pass":
            fd = build(spec, cfg, keep=[0])
        else:
            with nvf.FusionDefinition() as fd:
                define(fd, cfg, variant)
        try:
            out = fd.execute(inputs)
        except Exception as e:
            print(f"fail {shape} {variant}: {str(e).strip().splitlines()[0][:160]}", flush=True)
            continue
        err = ((out[0].double() - ref).abs().max() / ref.abs().max()).item()
        us = kernel_us(lambda: fd.execute(inputs))
        timer = KernelTimer()
        timer(), fd.execute(inputs), timer()
        print(f"RES layernorm {shape:20s} {variant:20s} {us:8.2f} us  {us / floor:5.2f}x floor  "
              f"kernels={timer.kernel_counts[-1]} [{','.join(segment_groups(PlainFusion(fd), []))}]  rel_err={err:.2e}", flush=True)


if __name__ == "__main__":
    for shape in sys.argv[1:] or ["nanogpt", "sweep_4096x1024", "llama2_7b", "sweep_16384x4096"]:
        explore(shape)
