"""Residual add + RMSNorm forward in one fusion: h = x + residual (the new residual, returned), y = h * rstd * w.

As a pre-norm block writes it (litgpt's ``x = attention_output + x`` then ``norm_2(x)``, Hugging Face's
``hidden_states = residual + hidden_states`` then the post-attention norm): h is rounded to x's dtype, as the
eager add returns it, and the norm reads that rounded h, so the backward (add_rmsnorm_bwd), which reads h, sees
the values the statistics came from. Statistics in fp32 (rmsnorm_fwd.body).
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.rmsnorm_fwd as rmsnorm_fwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.spec import FusionSpec, dt, randn


def define(fd, cfg: NormConfig) -> None:
    x = N.define_x(fd, cfg)
    residual = N.define_x(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, x, residual, w, cfg):
        fd.add_output(out)


def residual_sum(fd, x, residual, cfg: NormConfig):
    """x + residual in fp32, rounded once to x's dtype (what the eager add returns)."""
    f32 = dt(fd, "Float")
    return fd.ops.cast(fd.ops.add(fd.ops.cast(x, dtype=f32), fd.ops.cast(residual, dtype=f32)), dtype=N.io(fd, cfg))


def body(fd, x, residual, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(y, h, rstd) from tensors already in ``fd``: x and residual of rank ``ndim`` (default the config's)."""
    h = residual_sum(fd, x, residual, cfg)
    y, rstd = rmsnorm_fwd.body(fd, h, w, cfg, ndim)
    return y, h, rstd


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    xw = N.x_weight_bias(cfg, gen)
    return {"x": xw["x"], "residual": randn(cfg.shape, gen, cfg.dtype, scale=2.0), "weight": xw["weight"]}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    h = rounded_sum(inp)
    y, rstd = rmsnorm_fwd.reference({"x": h, "weight": inp["weight"]}, cfg)
    return y, h, rstd


def rounded_sum(inp: dict) -> torch.Tensor:
    """float64 x + residual rounded to x's dtype, as the fusion returns h and normalises it."""
    return (N.f64(inp["x"]) + N.f64(inp["residual"])).to(inp["x"].dtype).to(torch.float64)


def bytes_floor(cfg: NormConfig) -> int:
    """Read x, the residual and the weight, write y and h, and the fp32 rstd the backward reads."""
    return cfg.dtype.itemsize * (4 * cfg.rows * cfg.hidden + cfg.hidden) + 4 * cfg.rows


SPEC = FusionSpec("add_rmsnorm_fwd", block_norm_configs(1e-6, False), define, inputs, reference, ("y", "h", "rstd"),
                  __doc__, bytes_floor=bytes_floor)
