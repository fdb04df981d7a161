"""Layer norm forward: y = (x - mean) * rstd * w + b over the last dim; also returns mean and rstd.

Statistics in fp32, two-pass: the mean, then the mean of the centred squares. That is what nvFuser's segmenter
makes of a Welford ``var_mean`` in a persistent kernel anyway, and written out, a manual schedule (which skips
the segmenter) gets the same kernel where with var_mean it ran longer. The centred
x stays in registers: one normalization kernel.
"""

from __future__ import annotations

import torch

import fusions._norm as N
from fusions.configs import NormConfig, norm_configs
from fusions.norm_tune import fwd_candidates
from fusions.spec import FusionSpec, dt


def define(fd, cfg: NormConfig) -> None:
    x = N.define_x(fd, cfg)
    w = N.define_vec(fd, cfg)
    b = N.define_vec(fd, cfg) if cfg.bias else None
    for out in body(fd, x, w, b, cfg):
        fd.add_output(out)


def body(fd, x, w, b, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(y, mean, rstd) from tensors already in ``fd`` (the builder's inputs, or a region's tensors when Thunder's
    nvFuser executor fuses segkit's layer norm; thunder_exec.norms): x of rank ``ndim`` (default the config's);
    ``w`` / ``b`` None for a norm without weight / bias."""
    n = len(cfg.shape) if ndim is None else ndim
    f32, inv_h = dt(fd, "Float"), 1.0 / cfg.hidden
    xf = fd.ops.cast(x, dtype=f32)
    mean = fd.ops.mul(fd.ops.sum(xf, dims=[n - 1], dtype=f32), inv_h)
    xc = fd.ops.sub(xf, N.per_row(fd, mean, n))
    var = fd.ops.mul(fd.ops.sum(fd.ops.mul(xc, xc), dims=[n - 1], dtype=f32), inv_h)
    rstd = fd.ops.rsqrt(fd.ops.add(var, cfg.eps))
    y = fd.ops.mul(xc, N.per_row(fd, rstd, n))
    if w is not None:
        y = fd.ops.mul(y, N.per_col(fd, fd.ops.cast(w, dtype=f32), n))
    if b is not None:
        y = fd.ops.add(y, N.per_col(fd, fd.ops.cast(b, dtype=f32), n))
    return fd.ops.cast(y, dtype=N.io(fd, cfg)), mean, rstd


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return N.x_weight_bias(cfg, gen)


def reference(inp: dict, cfg: NormConfig) -> tuple:
    mean, rstd = N.ln_stats(inp["x"], cfg.eps)
    y = (N.f64(inp["x"]) - mean.unsqueeze(-1)) * rstd.unsqueeze(-1) * N.f64(inp["weight"])
    if cfg.bias:
        y = y + N.f64(inp["bias"])
    return y, mean, rstd


def bytes_floor(cfg: NormConfig) -> int:
    """Read x, the weight and bias, write y (no autograd: the statistics stay in registers)."""
    return cfg.dtype.itemsize * (2 * cfg.rows * cfg.hidden + 2 * cfg.hidden)


SPEC = FusionSpec("layernorm_fwd", norm_configs(1e-5, True), define, inputs, reference, ("y", "mean", "rstd"),
                  __doc__, candidates=fwd_candidates, bytes_floor=bytes_floor)
