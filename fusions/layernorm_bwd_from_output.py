"""Layer norm backward from its output (Apex's ``memory_efficient=True``): dx, dw, db from y, dy, rstd, w and b.

As rmsnorm_bwd_from_output, with xhat = (y - b) / w (0 where w = 0), and no mean read: it is in y already.

  g = w dy,  dx = rstd * (g - mean(g) - xhat * mean(dy (y - b))),  dw = sum_rows(dy * xhat),  db = sum_rows(dy)

With a bias, y - b cancels where |w xhat| is small beside |b|: y was rounded relative to |y|, so xhat = (y - b) / w
carries y's rounding times |y| / |w xhat| (Apex's memory-efficient kernel reads y the same way). A zero weight
gives its column xhat 0, dw 0 and no xhat term in dx, as in rmsnorm_bwd_from_output.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.layernorm_bwd as layernorm_bwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.rmsnorm_bwd_from_output import forward_output, xhat64
from fusions.spec import FusionSpec, dt, randn


def define(fd, cfg: NormConfig) -> None:
    y = N.define_x(fd, cfg)
    dy = N.define_x(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    b = N.define_vec(fd, cfg) if cfg.bias else None
    for out in body(fd, y, dy, rstd, w, b, cfg):
        fd.add_output(out)


def body(fd, y, dy, rstd, w, b, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw, db) from tensors already in ``fd``; ``b`` None for a norm without bias."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    dyf = fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    return layernorm_bwd.grads(fd, N.xhat_from_output(fd, y, w, b, cfg, n), dyf, rstd_b, w, cfg, n)


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """layernorm_bwd's draws (x, weight, bias, dy: its x for the same seed), with x replaced by the forward's y."""
    xwb = N.x_weight_bias(cfg, gen)
    dy = randn(cfg.shape, gen, cfg.dtype)
    mean, rstd = (s.float() for s in N.ln_stats(xwb["x"], cfg.eps))
    out = {"y": forward_output(xwb["x"], rstd, xwb["weight"], xwb.get("bias"), mean), "dy": dy, "rstd": rstd,
           "weight": xwb["weight"]}
    if cfg.bias:
        out["bias"] = xwb["bias"]
    return out


def reference(inp: dict, cfg: NormConfig) -> tuple:
    dy, w, rstd = N.f64(inp["dy"]), N.f64(inp["weight"]), N.f64(inp["rstd"]).unsqueeze(-1)
    return layernorm_bwd.reference_grads(xhat64(inp["y"], w, inp.get("bias")), dy, w, rstd)


def bytes_floor(cfg: NormConfig) -> int:
    """Read y, dy, the weight, the bias and the fp32 rstd (no mean), write dx, dw and db."""
    s, M, H = cfg.dtype.itemsize, cfg.rows, cfg.hidden
    return s * (3 * M * H + (4 if cfg.bias else 3) * H) + 4 * M


SPEC = FusionSpec("layernorm_bwd_from_output", block_norm_configs(1e-5, True), define, inputs, reference,
                  ("dx", "dw", "db"), __doc__, bytes_floor=bytes_floor)
