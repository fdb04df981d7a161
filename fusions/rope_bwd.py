"""Gradient of RoPE (fusions.rope_fwd) w.r.t. x: dx = dy cos + rot^T(dy sin), rot^T(g) = cat(g2, -g1), in fp32,
cast to x's dtype; cos / sin are constants (position tables). Where dy and the tables share a 16-bit dtype the
products and the sum are rounded to it, as eager autograd computes them (fusions._rope.rope_sum)."""

from __future__ import annotations

import torch

import fusions._rope as R
from fusions.configs import ApplyRopeConfig, apply_rope_configs
from fusions.rope_fwd import broadcast_table, define_inputs, halves, make_tables, table
from fusions.spec import FusionSpec, dt, nv_dtype, randn
from segkit.layout import laid_out


def define(fd, cfg: ApplyRopeConfig) -> None:
    fd.add_output(body(fd, *define_inputs(fd, cfg, cfg.out), cfg))


def body(fd, g, cos, sin, cfg: ApplyRopeConfig, shape: tuple[int, ...] | None = None):
    """dx from tensors already in ``fd`` (the builder's inputs, or a region's tensors when Thunder's nvFuser
    executor fuses segkit's RoPE backward; thunder_exec.rope): the gradient ``g`` of static ``shape`` (default
    cfg.shape; any rank >= 3), cos and sin as rope_fwd.define_tables defines them."""
    shape = list(cfg.shape if shape is None else shape)
    gf = fd.ops.cast(g, dtype=dt(fd, "Float"))
    gs1, gs2 = halves(fd, fd.ops.mul(gf, table(fd, sin, cfg, len(shape))), shape)
    rot_t = R.rotate(fd, gs2, fd.ops.neg(gs1), len(shape))
    dx = R.rope_sum(fd, fd.ops.mul(gf, table(fd, cos, cfg, len(shape))), rot_t, R.rounding(fd, cfg.out, cfg.tables))
    return fd.ops.cast(dx, dtype=dt(fd, nv_dtype(cfg.dtype).name))


def inputs(cfg: ApplyRopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    cos, sin = make_tables(cfg, device)
    return {"dy": laid_out(randn(cfg.shape, gen, cfg.out), cfg.x_stride_order), "cos": cos, "sin": sin}


def reference(inp: dict, cfg: ApplyRopeConfig) -> tuple:
    """float64 adjoint by the pair formula: x_i feeds y_i (cos) and y_{i+n/2} (sin), x_{i+n/2} feeds y_{i+n/2}
    (cos) and y_i (-sin)."""
    g, cos, sin = inp["dy"].to(torch.float64), broadcast_table(inp["cos"]), broadcast_table(inp["sin"])
    h = g.shape[-1] // 2
    lo, hi = g[..., :h], g[..., h:]
    return (torch.cat([lo * cos[..., :h] + hi * sin[..., h:], hi * cos[..., h:] - lo * sin[..., :h]], dim=-1),)


SPEC = FusionSpec("rope_bwd", apply_rope_configs(), define, inputs, reference, ("dx",), __doc__)
