"""Layer norm backward: dx, dw, db in one fusion, from x, dy, mean, rstd and weight.

Written for nvFuser's inner-outer persistent scheduler, which computes the
per-row (inner) reductions of dx and the per-column (outer) reductions of
dw/db in one kernel: statistics come in as inputs (no recomputation), x and dy
are cast to fp32 in registers (no materialised fp32 copies), outputs are cast
to the I/O dtype at the end.

  xhat = (x - mean) * rstd,  g = dy * w
  dx   = rstd * (g - mean(g) - xhat * mean(g * xhat))
  dw   = sum_rows(dy * xhat),  db = sum_rows(dy)
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
    mean = N.define_stat(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, x, dy, mean, rstd, w, cfg):
        fd.add_output(out)


def body(fd, x, dy, mean, rstd, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw, db) from tensors already in ``fd`` (the builder's inputs, or a region's tensors when Thunder's
    nvFuser executor fuses segkit's layer norm backward; thunder_exec.norms): x and dy of rank ``ndim`` (default
    the config's), mean and rstd one fp32 value per row; ``w`` None for a norm without weight (dw is then
    sum_rows(dy * xhat) all the same, and unused)."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    xf, dyf = fd.ops.cast(x, dtype=f32), fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    xhat = fd.ops.mul(fd.ops.sub(xf, N.per_row(fd, mean, n)), rstd_b)
    return grads(fd, xhat, dyf, rstd_b, w, cfg, n)


def grads(fd, xhat, dyf, rstd_b, w, cfg: NormConfig, n: int, add_to_dx=None) -> tuple:
    """(dx, dw, db) in the config's dtypes from fp32 ``xhat``, ``dyf`` and the broadcast ``rstd_b``, however xhat
    was had (from x and the mean here, from the output in layernorm_bwd_from_output); ``add_to_dx``: a gradient
    added to dx in fp32 before its one rounding (the residual stream's, in add_layernorm_bwd)."""
    f32 = dt(fd, "Float")
    g = dyf if w is None else fd.ops.mul(dyf, N.per_col(fd, fd.ops.cast(w, dtype=f32), n))
    inv_h = 1.0 / cfg.hidden
    mean_g = fd.ops.mul(fd.ops.sum(g, dims=[n - 1], dtype=f32), inv_h)
    mean_gx = fd.ops.mul(fd.ops.sum(fd.ops.mul(g, xhat), dims=[n - 1], dtype=f32), inv_h)
    inner = fd.ops.sub(fd.ops.sub(g, N.per_row(fd, mean_g, n)), fd.ops.mul(xhat, N.per_row(fd, mean_gx, n)))
    dx = fd.ops.mul(inner, rstd_b)
    if add_to_dx is not None:
        dx = fd.ops.add(dx, fd.ops.cast(add_to_dx, dtype=f32))
    dw = fd.ops.sum(fd.ops.mul(dyf, xhat), dims=N.row_dims(n), dtype=f32)
    db = fd.ops.sum(dyf, dims=N.row_dims(n), dtype=f32)
    return (fd.ops.cast(dx, dtype=N.io(fd, cfg)), fd.ops.cast(dw, dtype=N.param(fd, cfg)),
            fd.ops.cast(db, dtype=N.param(fd, cfg)))


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    xw = N.x_weight_bias(cfg, gen)
    mean, rstd = N.ln_stats(xw["x"], cfg.eps)
    return {"x": xw["x"], "dy": randn(cfg.shape, gen, cfg.dtype), "mean": mean.float(), "rstd": rstd.float(),
            "weight": xw["weight"]}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    x, dy, w = N.f64(inp["x"]), N.f64(inp["dy"]), N.f64(inp["weight"])
    mean, rstd = N.f64(inp["mean"]).unsqueeze(-1), N.f64(inp["rstd"]).unsqueeze(-1)
    return reference_grads((x - mean) * rstd, dy, w, rstd)


def reference_grads(xhat, dy, w, rstd) -> tuple:
    """float64 (dx, dw, db) from xhat, dy, w and rstd (broadcast per row), however xhat was had."""
    g = dy * w
    dx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    rows = tuple(range(dy.ndim - 1))
    return dx, (dy * xhat).sum(rows), dy.sum(rows)


def bytes_floor(cfg: NormConfig) -> int:
    """Read x, dy, the weight and the fp32 mean and rstd, write dx, dw and db."""
    s, M, N = cfg.dtype.itemsize, cfg.rows, cfg.hidden
    return 3 * s * (M * N + N) + 8 * M


SPEC = FusionSpec("layernorm_bwd", norm_configs(1e-5, True), define, inputs, reference, ("dx", "dw", "db"), __doc__,
                  lambda cfg: N.bwd_tuning(cfg, layer_norm=True), candidates=bwd_candidates, bytes_floor=bytes_floor)
