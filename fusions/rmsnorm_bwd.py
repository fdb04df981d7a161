"""RMSNorm backward: dx and dw in one fusion, from x, dy, rstd and weight.

Same single-kernel intent as layernorm_bwd (inner-outer persistent scheduler):

  xhat = x * rstd,  g = dy * w
  dx   = rstd * (g - xhat * mean(g * xhat))
  dw   = sum_rows(dy * xhat)

One inner_outer_persistent kernel in bf16; in fp32 nvFuser segments it into several kernels at some shapes
where layer norm backward stays one, not yet traced to the scheduler's persistent-buffer check.
"""

from __future__ import annotations

import torch

import fusions._norm as N
from fusions.configs import NormConfig, norm_configs
from fusions.norm_tune import bwd_candidates
from fusions.spec import FusionSpec, dt, randn


def define(fd, cfg: NormConfig) -> None:
    x = N.define_x(fd, cfg)
    dy = N.define_x(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, x, dy, rstd, w, cfg):
        fd.add_output(out)


def body(fd, x, dy, rstd, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw) from tensors already in ``fd`` (the builder's inputs, or a region's tensors when Thunder's nvFuser
    executor fuses segkit's RMSNorm backward; thunder_exec.norms): x and dy of rank ``ndim`` (default the
    config's), rstd one fp32 value per row."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    xf, dyf = fd.ops.cast(x, dtype=f32), fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    xhat = fd.ops.mul(xf, rstd_b)
    return grads(fd, xhat, dyf, rstd_b, w, cfg, n)


def grads(fd, xhat, dyf, rstd_b, w, cfg: NormConfig, n: int, add_to_dx=None) -> tuple:
    """(dx, dw) in the config's dtypes from fp32 ``xhat``, ``dyf`` and the broadcast ``rstd_b``, however xhat was
    had (from x here, from the output in rmsnorm_bwd_from_output); ``add_to_dx``: a gradient added to dx in fp32
    before its one rounding (the residual stream's, in add_rmsnorm_bwd)."""
    f32 = dt(fd, "Float")
    g = fd.ops.mul(dyf, N.per_col(fd, fd.ops.cast(w, dtype=f32), n))
    dw_terms = fd.ops.mul(dyf, xhat)
    if cfg.round_normed:  # eager autograd of ``w * xhat.to(dtype)``: dy * w and dy * xhat in x's dtype
        g = N.rounded(fd, g, cfg)
        dw_terms = N.rounded(fd, fd.ops.mul(dyf, N.rounded(fd, xhat, cfg)), cfg)
    mean_gx = fd.ops.mul(fd.ops.sum(fd.ops.mul(g, xhat), dims=[n - 1], dtype=f32), 1.0 / cfg.hidden)
    dx = fd.ops.mul(fd.ops.sub(g, fd.ops.mul(xhat, N.per_row(fd, mean_gx, n))), rstd_b)
    if add_to_dx is not None:
        dx = fd.ops.add(dx, fd.ops.cast(add_to_dx, dtype=f32))
    dw = fd.ops.sum(dw_terms, dims=N.row_dims(n), dtype=f32)
    return fd.ops.cast(dx, dtype=N.io(fd, cfg)), fd.ops.cast(dw, dtype=N.param(fd, cfg))


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    xw = N.x_weight_bias(cfg, gen)
    return {"x": xw["x"], "dy": randn(cfg.shape, gen, cfg.dtype), "rstd": N.rms_rstd(xw["x"], cfg.eps).float(),
            "weight": xw["weight"]}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    x, dy, w = N.f64(inp["x"]), N.f64(inp["dy"]), N.f64(inp["weight"])
    rstd = N.f64(inp["rstd"]).unsqueeze(-1)
    return reference_grads(x * rstd, dy, w, rstd)


def reference_grads(xhat, dy, w, rstd) -> tuple:
    """float64 (dx, dw) from xhat, dy, w and rstd (broadcast per row), however xhat was had."""
    g = dy * w
    dx = rstd * (g - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx, (dy * xhat).sum(tuple(range(dy.ndim - 1)))


def bytes_floor(cfg: NormConfig) -> int:
    """Read x, dy, the weight and the fp32 rstd, write dx and dw."""
    s, M, N = cfg.dtype.itemsize, cfg.rows, cfg.hidden
    return s * (3 * M * N + 2 * N) + 4 * M


SPEC = FusionSpec("rmsnorm_bwd", norm_configs(1e-6, False), define, inputs, reference, ("dx", "dw"), __doc__,
                  lambda cfg: N.bwd_tuning(cfg, layer_norm=False), candidates=bwd_candidates, bytes_floor=bytes_floor)
