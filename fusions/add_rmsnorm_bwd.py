"""Residual add + RMSNorm backward in one fusion: dx = rmsnorm_bwd(dy; h) + dh, and dw.

h = x + residual feeds both the norm and the residual stream, so h's gradient is the norm's dx plus dh (the
residual stream's gradient from the next block), and it is the gradient of x and of the residual alike: one
tensor, ``dx``, serves both. The two are summed in fp32 and rounded once (eager rounds the norm's dx, then the
sum). Reads h, dy, dh, the fp32 rstd and the weight; the norm's math is rmsnorm_bwd.grads.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.add_rmsnorm_fwd as add_rmsnorm_fwd
import fusions.rmsnorm_bwd as rmsnorm_bwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.spec import FusionSpec, dt, randn


def define(fd, cfg: NormConfig) -> None:
    h = N.define_x(fd, cfg)
    dy = N.define_x(fd, cfg)
    dh = N.define_x(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, h, dy, dh, rstd, w, cfg):
        fd.add_output(out)


def body(fd, h, dy, dh, rstd, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw) from tensors already in ``fd``: h, dy and dh of rank ``ndim`` (default the config's)."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    hf, dyf = fd.ops.cast(h, dtype=f32), fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    return rmsnorm_bwd.grads(fd, fd.ops.mul(hf, rstd_b), dyf, rstd_b, w, cfg, n, add_to_dx=dh)


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    fwd = add_rmsnorm_fwd.inputs(cfg, device, gen)
    h = (fwd["x"].float() + fwd["residual"].float()).to(cfg.dtype)
    return {"h": h, "dy": randn(cfg.shape, gen, cfg.dtype), "dh": randn(cfg.shape, gen, cfg.dtype),
            "rstd": N.rms_rstd(h, cfg.eps).float(), "weight": fwd["weight"]}


def reference(inp: dict, cfg: NormConfig) -> tuple:
    dx, dw = rmsnorm_bwd.reference({"x": inp["h"], "dy": inp["dy"], "rstd": inp["rstd"], "weight": inp["weight"]},
                                   cfg)
    return dx + N.f64(inp["dh"]), dw


def bytes_floor(cfg: NormConfig) -> int:
    """Read h, dy, dh, the weight and the fp32 rstd, write dx and dw."""
    s, M, H = cfg.dtype.itemsize, cfg.rows, cfg.hidden
    return s * (4 * M * H + 2 * H) + 4 * M


SPEC = FusionSpec("add_rmsnorm_bwd", block_norm_configs(1e-6, False), define, inputs, reference, ("dx", "dw"),
                  __doc__, bytes_floor=bytes_floor)
