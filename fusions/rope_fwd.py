"""RoPE as litgpt's ``apply_rope`` and Hugging Face's ``apply_rotary_pos_emb`` apply it to one of q or k:
y = x cos + cat(-x2, x1) sin on x (B, H, T, n), cos / sin (cos_batch, T, n) broadcast over H, in fp32, cast to
x's dtype (litgpt) or the promoted one (Hugging Face under autocast: bf16 q, fp32 tables, fp32 y). A partial rotary (pythia, phi-2) passes its first rope_n_elem columns as x.

Where x and the tables share a 16-bit dtype, eager PyTorch computes each product and the sum in it: the fusion
rounds where it rounds (fusions._rope.rope_sum), so a claimed RoPE gives eager's bits.

The tables keep their own dtype (litgpt keeps them fp32 under a bf16 model): x is cast up, never the tables down,
which is what eager PyTorch's type promotion computes for x * cos.
"""

from __future__ import annotations

import torch

import fusions._rope as R
from fusions.configs import ApplyRopeConfig, apply_rope_configs
from fusions.spec import FusionSpec, dt, nv_dtype, randn
from segkit.layout import laid_out


def define_tables(fd, cfg: ApplyRopeConfig):
    B, _, T, n = cfg.shape
    shape = [T, n] if cfg.cos_batch == 1 else [B, T, n]
    return tuple(fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dt(fd, nv_dtype(cfg.tables).name))
                 for _ in range(2))


def table(fd, t, cfg: ApplyRopeConfig, ndim: int = 4):
    """cos or sin ((T, n), or (B, T, n) with cfg.cos_batch B) cast to fp32 and broadcast against x of rank ``ndim``
    ((B, H, T, n) by default)."""
    rows = [True] * (ndim - 2) if cfg.cos_batch == 1 else [False] + [True] * (ndim - 3)
    return fd.ops.broadcast(fd.ops.cast(t, dtype=dt(fd, "Float")), is_broadcast_dim=rows + [False, False])


def define_inputs(fd, cfg: ApplyRopeConfig, dtype: torch.dtype) -> tuple:
    """x (or dy) of cfg.shape and ``dtype`` (laid out as cfg.x_stride_order), cos and sin: every input defined
    before the first op (repro scripts keep that order)."""
    order = list(cfg.x_stride_order) if cfg.x_stride_order is not None else None
    x = fd.define_tensor(shape=list(cfg.shape), contiguity=[True] * 4, dtype=dt(fd, nv_dtype(dtype).name),
                         stride_order=order)
    return (x, *define_tables(fd, cfg))


def halves(fd, t, shape: list[int]) -> tuple:
    """t[..., :n/2] and t[..., n/2:] for t of static ``shape``."""
    n = shape[-1]
    return (R.last_dim_slice(fd, t, len(shape), shape, 0, n // 2),
            R.last_dim_slice(fd, t, len(shape), shape, n // 2, n))


def define(fd, cfg: ApplyRopeConfig) -> None:
    fd.add_output(body(fd, *define_inputs(fd, cfg, cfg.dtype), cfg))


def body(fd, x, cos, sin, cfg: ApplyRopeConfig, shape: tuple[int, ...] | None = None):
    """y from tensors already in ``fd`` (the builder's inputs, or a region's tensors when Thunder's nvFuser executor
    fuses segkit's RoPE; thunder_exec.rope): x of static ``shape`` (default cfg.shape; any rank >= 3, T and n
    last), cos and sin as ``define_tables`` defines them."""
    shape = list(cfg.shape if shape is None else shape)
    xf = fd.ops.cast(x, dtype=dt(fd, "Float"))
    x1, x2 = halves(fd, xf, shape)
    rotated = R.rotate(fd, fd.ops.neg(x2), x1, len(shape))
    y = R.rope_sum(fd, fd.ops.mul(xf, table(fd, cos, cfg, len(shape))),
                   fd.ops.mul(rotated, table(fd, sin, cfg, len(shape))), R.rounding(fd, cfg.dtype, cfg.tables))
    return fd.ops.cast(y, dtype=dt(fd, nv_dtype(cfg.out).name))


def make_tables(cfg: ApplyRopeConfig, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    B, _, T, n = cfg.shape
    cos, sin = R.cos_sin(T, n, cfg.tables, device)
    if cfg.cos_batch != 1:
        cos, sin = (t.expand(B, T, n).contiguous() for t in (cos, sin))
    return cos, sin


def inputs(cfg: ApplyRopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    cos, sin = make_tables(cfg, device)
    return {"x": laid_out(randn(cfg.shape, gen, cfg.dtype), cfg.x_stride_order), "cos": cos, "sin": sin}


def broadcast_table(t: torch.Tensor) -> torch.Tensor:
    """(T, n) or (B, T, n) float64 table, shaped to broadcast against (B, H, T, n)."""
    t = t.to(torch.float64)
    return t[:, None] if t.ndim == 3 else t


def reference(inp: dict, cfg: ApplyRopeConfig) -> tuple:
    return (R.rope_pairs(inp["x"].to(torch.float64), broadcast_table(inp["cos"]), broadcast_table(inp["sin"])),)


SPEC = FusionSpec("rope_fwd", apply_rope_configs(), define, inputs, reference, ("y",), __doc__)
