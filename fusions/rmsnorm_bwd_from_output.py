"""RMSNorm backward from its output (Apex's ``memory_efficient=True``): dx and dw from y, dy, rstd and weight.

The standard backward (rmsnorm_bwd) reads the norm's input x; this one reads the forward's output y instead,
which the next op (the attention or MLP projection) saves for its own backward anyway, so x need not be kept:

  xhat = y / w   (0 where w = 0: fusions._norm.xhat_from_output)
  dx   = rstd * (w dy - xhat * mean(y dy)),   dw = sum_rows(dy * xhat)

The row sum mean(g * xhat), g = w dy, is mean(y dy) (a zero weight's column adds 0 to it either way), but xhat
itself must come from y / w: dx's second term and dw are linear in it, and no arrangement of the algebra removes
it. A tiny weight is divided by as it is: y was rounded relative to its own size, so y / w keeps xhat to y's
rounding (Apex's memory-efficient kernel instead divides by w clamped to at least eps in magnitude,
``clamp_by_magnitude`` in its csrc/layer_norm_cuda_kernel.cu, which scales xhat by |w| / eps below it). Where w is
exactly 0, y is 0 whatever x was: that column's xhat is not in y, and its dw and the xhat term of its dx come out
0 (the standard backward's dw there is sum_rows(dy * xhat), so such a weight would not move): use rmsnorm_bwd
where a weight may be exactly 0. Hugging Face's rounding (``round_normed``) is refused.
"""

from __future__ import annotations

import torch

import fusions._norm as N
import fusions.rmsnorm_bwd as rmsnorm_bwd
from fusions.configs import NormConfig, block_norm_configs
from fusions.spec import FusionSpec, dt

NAME = "rmsnorm_bwd_from_output"


def define(fd, cfg: NormConfig) -> None:
    N.refuse_round_normed(NAME, cfg)
    y = N.define_x(fd, cfg)
    dy = N.define_x(fd, cfg)
    rstd = N.define_stat(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, y, dy, rstd, w, cfg):
        fd.add_output(out)


def body(fd, y, dy, rstd, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(dx, dw) from tensors already in ``fd``: y and dy of rank ``ndim`` (default the config's)."""
    n, f32 = len(cfg.shape) if ndim is None else ndim, dt(fd, "Float")
    dyf = fd.ops.cast(dy, dtype=f32)
    rstd_b = N.per_row(fd, rstd, n)
    return rmsnorm_bwd.grads(fd, N.xhat_from_output(fd, y, w, None, cfg, n), dyf, rstd_b, w, cfg, n)


def forward_output(x: torch.Tensor, rstd: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None,
                   mean: torch.Tensor | None = None) -> torch.Tensor:
    """y = (x - mean) * rstd * w (+ b) in fp32, rounded to x's dtype: the forward's output these backwards read."""
    xc = x.float() - (mean.float().unsqueeze(-1) if mean is not None else 0.0)
    y = xc * rstd.float().unsqueeze(-1) * w.float()
    return (y + b.float() if b is not None else y).to(x.dtype)


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """rmsnorm_bwd's inputs (the same draws: its x for the same seed) with x replaced by the forward's y."""
    std = rmsnorm_bwd.inputs(cfg, device, gen)
    return {"y": forward_output(std["x"], std["rstd"], std["weight"]), "dy": std["dy"], "rstd": std["rstd"],
            "weight": std["weight"]}


def xhat64(y: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """float64 xhat = (y - b) / w, 0 where w = 0 (the builders' rule)."""
    y, w = N.f64(y), N.f64(w)
    yc = y - N.f64(b) if b is not None else y
    nonzero = w != 0
    return torch.where(nonzero, yc / torch.where(nonzero, w, torch.ones_like(w)), torch.zeros_like(yc))


def reference(inp: dict, cfg: NormConfig) -> tuple:
    dy, w, rstd = N.f64(inp["dy"]), N.f64(inp["weight"]), N.f64(inp["rstd"]).unsqueeze(-1)
    return rmsnorm_bwd.reference_grads(xhat64(inp["y"], w), dy, w, rstd)


def bytes_floor(cfg: NormConfig) -> int:
    """Read y, dy, the weight and the fp32 rstd, write dx and dw (rmsnorm_bwd's floor, y in x's place)."""
    return rmsnorm_bwd.bytes_floor(cfg)


SPEC = FusionSpec(NAME, block_norm_configs(1e-6, False), define, inputs, reference, ("dx", "dw"), __doc__,
                  bytes_floor=bytes_floor)
