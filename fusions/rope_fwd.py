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


def define_tables(fd, cfg: ApplyRopeConfig):
    B, _, T, n = cfg.shape
    shape = [T, n] if cfg.cos_batch == 1 else [B, T, n]
    return tuple(fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dt(fd, nv_dtype(cfg.tables).name))
                 for _ in range(2))


def table(fd, t, cfg: ApplyRopeConfig):
    """cos or sin cast to fp32 and broadcast against x (B, H, T, n)."""
    dims = [True, True, False, False] if cfg.cos_batch == 1 else [False, True, False, False]
    return fd.ops.broadcast(fd.ops.cast(t, dtype=dt(fd, "Float")), is_broadcast_dim=dims)


def define_inputs(fd, cfg: ApplyRopeConfig, dtype: torch.dtype):
    """x (or dy) of cfg.shape and ``dtype`` cast to fp32, cos, sin, and half the last dim."""
    x = fd.define_tensor(shape=list(cfg.shape), contiguity=[True] * 4, dtype=dt(fd, nv_dtype(dtype).name))
    cos, sin = define_tables(fd, cfg)  # every input defined before the first op (repro scripts keep that order)
    return fd.ops.cast(x, dtype=dt(fd, "Float")), cos, sin, cfg.shape[-1] // 2


def halves(fd, t, cfg: ApplyRopeConfig, half: int):
    shape = list(cfg.shape)
    return R.last_dim_slice(fd, t, 4, shape, 0, half), R.last_dim_slice(fd, t, 4, shape, half, shape[-1])


def define(fd, cfg: ApplyRopeConfig) -> None:
    xf, cos, sin, half = define_inputs(fd, cfg, cfg.dtype)
    x1, x2 = halves(fd, xf, cfg, half)
    rotated = R.rotate(fd, fd.ops.neg(x2), x1, 4)
    y = R.rope_sum(fd, fd.ops.mul(xf, table(fd, cos, cfg)), fd.ops.mul(rotated, table(fd, sin, cfg)),
                   R.rounding(fd, cfg.dtype, cfg.tables))
    fd.add_output(fd.ops.cast(y, dtype=dt(fd, nv_dtype(cfg.out).name)))


def make_tables(cfg: ApplyRopeConfig, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    B, _, T, n = cfg.shape
    cos, sin = R.cos_sin(T, n, cfg.tables, device)
    if cfg.cos_batch != 1:
        cos, sin = (t.expand(B, T, n).contiguous() for t in (cos, sin))
    return cos, sin


def inputs(cfg: ApplyRopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    cos, sin = make_tables(cfg, device)
    return {"x": randn(cfg.shape, gen, cfg.dtype), "cos": cos, "sin": sin}


def broadcast_table(t: torch.Tensor) -> torch.Tensor:
    """(T, n) or (B, T, n) float64 table, shaped to broadcast against (B, H, T, n)."""
    t = t.to(torch.float64)
    return t[:, None] if t.ndim == 3 else t


def reference(inp: dict, cfg: ApplyRopeConfig) -> tuple:
    return (R.rope_pairs(inp["x"].to(torch.float64), broadcast_table(inp["cos"]), broadcast_table(inp["sin"])),)


SPEC = FusionSpec("rope_fwd", apply_rope_configs(), define, inputs, reference, ("y",), __doc__)
