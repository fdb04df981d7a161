"""Residual add + layer norm forward in one fusion: h = x + residual (returned), y = (h - mean) * rstd * w + b.

h is rounded to x's dtype and normalised as rounded (add_rmsnorm_fwd says why); statistics in fp32, two-pass
(layernorm_fwd.body). Returns y, h, mean and rstd.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.add_rmsnorm_fwd as add_rmsnorm_fwd
import fusions.layernorm_fwd as layernorm_fwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.spec import FusionSpec, randn


def define(fd, cfg: NormConfig) -> None:
    x = N.define_x(fd, cfg)
    residual = N.define_x(fd, cfg)
    w = N.define_vec(fd, cfg)
    b = N.define_vec(fd, cfg) if cfg.bias else None
    for out in body(fd, x, residual, w, b, cfg):
        fd.add_output(out)


def body(fd, x, residual, w, b, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(y, h, mean, rstd) from tensors already in ``fd``; ``b`` None for a norm without bias."""
    h = add_rmsnorm_fwd.residual_sum(fd, x, residual, cfg)
    y, mean, rstd = layernorm_fwd.body(fd, h, w, b, cfg, ndim)
    return y, h, mean, rstd


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    xwb = N.x_weight_bias(cfg, gen)
    return {"x": xwb.pop("x"), "residual": randn(cfg.shape, gen, cfg.dtype, scale=2.0), **xwb}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    h = add_rmsnorm_fwd.rounded_sum(inp)
    y, mean, rstd = layernorm_fwd.reference({**inp, "x": h}, cfg)
    return y, h, mean, rstd


def bytes_floor(cfg: NormConfig) -> int:
    """Read x, the residual, the weight and bias, write y and h, and the fp32 mean and rstd the backward reads."""
    return cfg.dtype.itemsize * (4 * cfg.rows * cfg.hidden + 2 * cfg.hidden) + 8 * cfg.rows


SPEC = FusionSpec("add_layernorm_fwd", block_norm_configs(1e-5, True), define, inputs, reference,
                  ("y", "h", "mean", "rstd"), __doc__, bytes_floor=bytes_floor)
