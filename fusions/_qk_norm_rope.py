"""Pieces shared by the QK-norm + RoPE forward and backward builders and references.

q and k enter as the projections viewed (B, T, heads, head_dim), a free view of the (B, T, heads * head_dim) that
the q / k projections return; the norm reduces over head_dim (cfg.norm "head") or over heads and head_dim ("width",
OLMo2's norm of the whole projection), so one layout serves both.
"""

from __future__ import annotations

import torch

import fusions._norm as N
from fusions._rope import cos_sin
from fusions.configs import QKNormRopeConfig
from fusions.rope_fwd import broadcast_table, halves, table
from fusions.spec import dt, nv_dtype, randn

PARTS = ("q", "k")


def form(cfg: QKNormRopeConfig) -> str:
    """The model whose norm the config writes (fusions.torch_models.qk_norm_rope's ``form``): "olmo2" (the
    width norm), "gemma3" (weight applied as 1 + w) or "qwen3"."""
    if cfg.norm == "width":
        if cfg.weight_offset:
            raise ValueError(f"{cfg.name}: no model norms the whole width with an offset weight (OLMo2 has none)")
        return "olmo2"
    if cfg.weight_offset not in (0.0, 1.0):
        raise ValueError(f"{cfg.name}: weight_offset {cfg.weight_offset} is neither Qwen3's 0 nor Gemma3's 1")
    return "gemma3" if cfg.weight_offset else "qwen3"


def io(fd, cfg: QKNormRopeConfig):
    return dt(fd, nv_dtype(cfg.dtype).name)


def proj_shape(cfg: QKNormRopeConfig, part: str) -> list[int]:
    """q or k as the fusion takes it: the projection viewed (B, T, heads, head_dim)."""
    return [cfg.batch, cfg.T, cfg.heads(part), cfg.head_dim]


def heads_shape(cfg: QKNormRopeConfig, part: str) -> list[int]:
    """q or k as attention takes it: (B, heads, T, head_dim)."""
    return [cfg.batch, cfg.heads(part), cfg.T, cfg.head_dim]


def stat_shape(cfg: QKNormRopeConfig, part: str) -> list[int]:
    """rstd: one fp32 value per (B, T, head) ("head") or per (B, T) ("width")."""
    return [cfg.batch, cfg.T] + ([cfg.heads(part)] if cfg.norm == "head" else [])


def norm_dims(cfg: QKNormRopeConfig) -> list[int]:
    """The dims of (B, T, heads, head_dim) the norm reduces over."""
    return [3] if cfg.norm == "head" else [2, 3]


def contiguous_input(fd, shape: list[int], dtype):
    return fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dtype)


def define_weight(fd, cfg: QKNormRopeConfig, part: str):
    return contiguous_input(fd, [cfg.weight_size(part)], dt(fd, nv_dtype(cfg.weight_dtype).name))


def define_tables(fd, cfg: QKNormRopeConfig) -> tuple:
    shape = [cfg.T, cfg.head_dim] if cfg.cos_batch == 1 else [cfg.batch, cfg.T, cfg.head_dim]
    return tuple(contiguous_input(fd, shape, dt(fd, nv_dtype(cfg.tables).name)) for _ in range(2))


def define_fwd_inputs(fd, cfg: QKNormRopeConfig) -> tuple:
    """The forward's inputs in define order: [q, k], [w_q, w_k], cos, sin."""
    xs = [contiguous_input(fd, proj_shape(cfg, p), io(fd, cfg)) for p in PARTS]
    ws = [define_weight(fd, cfg, p) for p in PARTS]
    return (xs, ws, *define_tables(fd, cfg))


def define_bwd_inputs(fd, cfg: QKNormRopeConfig) -> tuple:
    """The backward's inputs in define order: [dq_out, dk_out], [q, k], [rstd_q, rstd_k], [w_q, w_k], cos, sin."""
    dys = [contiguous_input(fd, heads_shape(cfg, p), io(fd, cfg)) for p in PARTS]
    xs = [contiguous_input(fd, proj_shape(cfg, p), io(fd, cfg)) for p in PARTS]
    rstds = [contiguous_input(fd, stat_shape(cfg, p), dt(fd, "Float")) for p in PARTS]
    ws = [define_weight(fd, cfg, p) for p in PARTS]
    return (dys, xs, rstds, ws, *define_tables(fd, cfg))


def to_heads(fd, t):
    """(B, T, H, D) <-> (B, H, T, D): the head split's transpose (its own inverse)."""
    return fd.ops.permute(t, dims=[0, 2, 1, 3])


def stat_broadcast(fd, rstd, cfg: QKNormRopeConfig):
    """rstd broadcast against (B, T, H, D)."""
    new = [False, True] if cfg.norm == "head" else [True, True]
    return fd.ops.broadcast(rstd, is_broadcast_dim=[False, False] + new)


def weight_broadcast(fd, w, cfg: QKNormRopeConfig, part: str):
    """The applied weight (weight_offset + w) in fp32, broadcast against (B, T, H, D)."""
    wf = fd.ops.cast(w, dtype=dt(fd, "Float"))
    if cfg.weight_offset:
        wf = fd.ops.add(wf, cfg.weight_offset)
    if cfg.norm == "head":
        return fd.ops.broadcast(wf, is_broadcast_dim=[True, True, True, False])
    wf = fd.ops.reshape(wf, new_shape=[cfg.heads(part), cfg.head_dim])
    return fd.ops.broadcast(wf, is_broadcast_dim=[True, True, False, False])


def rope(fd, x, cos, sin, cfg: QKNormRopeConfig, part: str):
    """NeoX RoPE of fp32 x (B, H, T, D): x cos + cat(-x2, x1) sin, fp32."""
    x1, x2 = halves(fd, x, heads_shape(cfg, part))
    rotated = fd.ops.cat([fd.ops.neg(x2), x1], dim=3)
    return fd.ops.add(fd.ops.mul(x, table(fd, cos, cfg)), fd.ops.mul(rotated, table(fd, sin, cfg)))


def rope_adjoint(fd, g, cos, sin, cfg: QKNormRopeConfig, part: str):
    """RoPE's adjoint of fp32 g (B, H, T, D): g cos + cat(s2, -s1) with s = g sin, fp32."""
    s1, s2 = halves(fd, fd.ops.mul(g, table(fd, sin, cfg)), heads_shape(cfg, part))
    return fd.ops.add(fd.ops.mul(g, table(fd, cos, cfg)), fd.ops.cat([s2, fd.ops.neg(s1)], dim=3))


# float64 references and inputs

def exact_rstd(x: torch.Tensor, cfg: QKNormRopeConfig) -> torch.Tensor:
    """float64 rstd of q or k (B, T, H, D) over the config's norm dims."""
    x = N.f64(x)
    return ((x * x).mean(dim=tuple(norm_dims(cfg))) + cfg.eps).rsqrt()


def applied_weight(w: torch.Tensor, cfg: QKNormRopeConfig, part: str) -> torch.Tensor:
    """float64 weight_offset + w, shaped to broadcast against (B, T, H, D)."""
    w = N.f64(w) + cfg.weight_offset
    return w if cfg.norm == "head" else w.reshape(cfg.heads(part), cfg.head_dim)


def stat_view(rstd: torch.Tensor, cfg: QKNormRopeConfig) -> torch.Tensor:
    """rstd shaped to broadcast against (B, T, H, D)."""
    return rstd[..., None] if cfg.norm == "head" else rstd[..., None, None]


def tables64(inp: dict) -> tuple[torch.Tensor, torch.Tensor]:
    return broadcast_table(inp["cos"]), broadcast_table(inp["sin"])


def make_tables(cfg: QKNormRopeConfig, device: str) -> dict[str, torch.Tensor]:
    cos, sin = cos_sin(cfg.T, cfg.head_dim, cfg.tables, device)
    if cfg.cos_batch != 1:
        cos, sin = (t.expand(cfg.batch, cfg.T, cfg.head_dim).contiguous() for t in (cos, sin))
    return {"cos": cos, "sin": sin}


def make_proj_and_weights(cfg: QKNormRopeConfig, gen: torch.Generator) -> dict[str, torch.Tensor]:
    """q, k (B, T, heads, head_dim) and their norm weights (around 1 as applied, offset or not)."""
    out = {p: randn(proj_shape(cfg, p), gen, cfg.dtype, scale=2.0, shift=0.5) for p in PARTS}
    for p in PARTS:
        out[f"w_{p}"] = randn((cfg.weight_size(p),), gen, cfg.weight_dtype, scale=0.5, shift=1.0 - cfg.weight_offset)
    return out


def bytes_tables(cfg: QKNormRopeConfig) -> int:
    return 2 * cfg.cos_batch * cfg.T * cfg.head_dim * cfg.tables.itemsize


def bytes_weights(cfg: QKNormRopeConfig) -> int:
    return sum(cfg.weight_size(p) for p in PARTS) * cfg.weight_dtype.itemsize


def elements(cfg: QKNormRopeConfig) -> int:
    """Elements of q and k together."""
    return cfg.batch * cfg.T * (cfg.n_head + cfg.n_kv_heads) * cfg.head_dim


def stats(cfg: QKNormRopeConfig) -> int:
    """fp32 rstd values of q and k together."""
    per = (lambda p: cfg.heads(p)) if cfg.norm == "head" else (lambda p: 1)
    return cfg.batch * cfg.T * sum(per(p) for p in PARTS)
