"""Residual add + layer norm backward in one fusion: dx = layernorm_bwd(dy; h) + dh, dw and db.

dx is the gradient of x and of the residual alike (add_rmsnorm_bwd says why), summed in fp32 and rounded once.
Reads h, dy, dh, the fp32 mean and rstd and the weight; the norm's math is layernorm_bwd.grads.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.add_layernorm_fwd as add_layernorm_fwd
import fusions.layernorm_bwd as layernorm_bwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.spec import FusionSpec, dt, randn


def define(fd, cfg: NormConfig) -> None:
    h = N.define_x(fd, cfg)
    dy = N.define_x(fd, cfg)
    dh = N.define_x(fd, cfg)
    mean = N.define_stat(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, h, dy, dh, mean, rstd, w, cfg):
        fd.add_output(out)


def body(fd, h, dy, dh, mean, rstd, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw, db) from tensors already in ``fd``: h, dy and dh of rank ``ndim`` (default the config's)."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    hf, dyf = fd.ops.cast(h, dtype=f32), fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    xhat = fd.ops.mul(fd.ops.sub(hf, N.per_row(fd, mean, n)), rstd_b)
    return layernorm_bwd.grads(fd, xhat, dyf, rstd_b, w, cfg, n, add_to_dx=dh)


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    fwd = add_layernorm_fwd.inputs(cfg, device, gen)
    h = (fwd["x"].float() + fwd["residual"].float()).to(cfg.dtype)
    mean, rstd = N.ln_stats(h, cfg.eps)
    return {"h": h, "dy": randn(cfg.shape, gen, cfg.dtype), "dh": randn(cfg.shape, gen, cfg.dtype),
            "mean": mean.float(), "rstd": rstd.float(), "weight": fwd["weight"]}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    dx, dw, db = layernorm_bwd.reference({**inp, "x": inp["h"]}, cfg)
    return dx + N.f64(inp["dh"]), dw, db


def bytes_floor(cfg: NormConfig) -> int:
    """Read h, dy, dh, the weight and the fp32 mean and rstd, write dx, dw and db."""
    s, M, H = cfg.dtype.itemsize, cfg.rows, cfg.hidden
    return s * (4 * M * H + 3 * H) + 8 * M


SPEC = FusionSpec("add_layernorm_bwd", block_norm_configs(1e-5, True), define, inputs, reference, ("dx", "dw", "db"),
                  __doc__, bytes_floor=bytes_floor)
