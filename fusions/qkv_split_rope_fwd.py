"""litgpt qkv split + NeoX RoPE forward: qkv (B, T, (n_head + 2 groups) hs) -> q, k, v (B, n_head, T, hs).

view -> permute -> split into q, k, v -> RoPE on the first rope_n_elem of q
and k (the rest passed through) -> grouped-query expand of k and v.

k is roped *before* the grouped-query expand, on its n_query_groups heads:
q_per_kv times less work, and it keeps the fusion off the chain
reshape -> permute -> slice -> expand -> reshape -> compute, on which nvFuser
0.2.36 computes a wrong k (see ../shared/gpu/README.md and the GQA test).

Multi-head configs with RoPE over the whole head (Llama-2) take another path:
q and k are adjacent in qkv's (B, T, groups, 3, hs) layout, so they are sliced
and roped together in that layout and only the outputs are permuted, which
nvFuser runs as ONE resize kernel instead of one per tensor. With partial RoPE
(phi-2) the joint path was slower, so partial-RoPE and grouped-query configs
keep the split. Grouped-query configs return k and v of n_head heads (the
reshape merging the expanded group dim cannot be a view): v's copies are one
more kernel, and k is roped in its own kernel and copied by another, split by a
``segment_set`` (fused, one kernel roped and wrote every copy at half the copy
bandwidth or less, H200). The fused k is kept as the formulation "k_fused".
"""

from __future__ import annotations

import torch

import fusions._rope as R
from fusions.configs import RopeConfig, rope_configs
from fusions.spec import FusionSpec, dt, randn


def _rope(fd, x, cfg: RopeConfig, shape: list[int], t_dim: int, cos, sin):
    """RoPE on x of static ``shape`` (T at ``t_dim``, head_size last) in fp32, cast back; columns past
    rope_n_elem pass through."""
    f32, n = dt(fd, "Float"), len(shape)
    rn, half = cfg.rope_n_elem, cfg.rope_n_elem // 2
    xr = R.last_dim_slice(fd, x, n, shape, 0, rn) if rn < cfg.head_size else x
    rshape = shape[:-1] + [rn]
    x1 = fd.ops.cast(R.last_dim_slice(fd, xr, n, rshape, 0, half), dtype=f32)
    x2 = fd.ops.cast(R.last_dim_slice(fd, xr, n, rshape, half, rn), dtype=f32)
    rotated = R.rotate(fd, fd.ops.neg(x2), x1, n)
    round_to = R.rounding(fd, cfg.dtype, cfg.dtype) if cfg.rounding == "eager" else None
    roped = R.rope_sum(fd, fd.ops.mul(fd.ops.cast(xr, dtype=f32), R.table(fd, cos, n, t_dim)),
                       fd.ops.mul(rotated, R.table(fd, sin, n, t_dim)), round_to)
    roped = fd.ops.cast(roped, dtype=R.io(fd, cfg))
    if rn == cfg.head_size:
        return roped
    return R.rotate(fd, roped, R.last_dim_slice(fd, x, n, shape, rn, cfg.head_size), n)


def _expand_groups(fd, t, cfg: RopeConfig):
    """(B, groups, T, hs) -> (B, n_head, T, hs), each group repeated q_per_kv times."""
    B, G, Q, T, H = cfg.batch, cfg.n_query_groups, cfg.q_per_kv, cfg.T, cfg.head_size
    t = fd.ops.broadcast(t, is_broadcast_dim=[False, False, True, False, False])
    return fd.ops.reshape(fd.ops.expand(t, shape=[B, G, Q, T, H]), new_shape=[B, G * Q, T, H])


def _define_joint_qk(fd, cfg: RopeConfig, x, cos, sin) -> None:
    """Multi-head, full-width RoPE: rope q and k as one (B, T, G, 2, hs) slice of x (B, T, G, 3, hs), then
    permute each output to (B, n_head, T, hs)."""
    B, T, G, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.head_size

    def heads(t, shape: list[int], lo: int, hi: int):
        t = fd.ops.slice(t, start_indices=[0, 0, 0, lo, 0], end_indices=shape[:3] + [hi, H])
        return fd.ops.squeeze(fd.ops.permute(t, dims=[0, 2, 3, 1, 4]), dims=[2])

    qk = _rope(fd, fd.ops.slice(x, start_indices=[0] * 5, end_indices=[B, T, G, 2, H]), cfg, [B, T, G, 2, H], 1,
               cos, sin)
    fd.add_output(heads(qk, [B, T, G, 2, H], 0, 1))
    fd.add_output(heads(qk, [B, T, G, 2, H], 1, 2))
    fd.add_output(heads(x, [B, T, G, 3, H], 2, 3))


def define(fd, cfg: RopeConfig, k_apart: bool = True) -> None:
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    qkv = fd.define_tensor(shape=[B, T, cfg.qkv_width], contiguity=[True] * 3, dtype=R.io(fd, cfg))
    cos, sin = R.define_cos_sin(fd, cfg)
    x = fd.ops.reshape(qkv, new_shape=[B, T, G, Q + 2, H])
    if Q == 1 and cfg.rope_n_elem == H:
        _define_joint_qk(fd, cfg, x, cos, sin)
        return
    p = fd.ops.permute(x, dims=[0, 2, 3, 1, 4])

    def part(lo: int, hi: int):
        return fd.ops.slice(p, start_indices=[0, 0, lo, 0, 0], end_indices=[B, G, hi, T, H])

    q = _rope(fd, fd.ops.reshape(part(0, Q), new_shape=[B, G * Q, T, H]), cfg, [B, G * Q, T, H], 2, cos, sin)
    k = _rope(fd, fd.ops.squeeze(part(Q, Q + 1), dims=[2]), cfg, [B, G, T, H], 2, cos, sin)
    v = fd.ops.squeeze(part(Q + 1, Q + 2), dims=[2])
    if Q > 1:  # grouped-query attention: each k/v head serves q_per_kv query heads
        if k_apart:  # k roped once, written once, then copied by a kernel of its own
            k = fd.ops.segment_set(k)
        k, v = (_expand_groups(fd, t, cfg) for t in (k, v))
    fd.add_output(q)
    fd.add_output(k)
    fd.add_output(v)


def inputs(cfg: RopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    cos, sin = R.cos_sin(cfg.T, cfg.rope_n_elem, cfg.dtype, device)
    return {"qkv": randn((cfg.batch, cfg.T, cfg.qkv_width), gen, cfg.dtype), "cos": cos, "sin": sin}


def split_heads(qkv: torch.Tensor, cfg: RopeConfig) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """float64 q (B, n_head, T, hs) and un-expanded k, v (B, groups, T, hs) by index arithmetic."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    x = qkv.to(torch.float64).reshape(B, T, G, Q + 2, H)
    q = x[:, :, :, :Q].permute(0, 2, 3, 1, 4).reshape(B, G * Q, T, H)
    return q, x[:, :, :, Q].transpose(1, 2), x[:, :, :, Q + 1].transpose(1, 2)


def reference(inp: dict, cfg: RopeConfig) -> tuple:
    q, k, v = split_heads(inp["qkv"], cfg)
    cos, sin = inp["cos"].to(torch.float64), inp["sin"].to(torch.float64)
    rn = cfg.rope_n_elem
    q = torch.cat([R.rope_pairs(q[..., :rn], cos, sin), q[..., rn:]], dim=-1)
    k = torch.cat([R.rope_pairs(k[..., :rn], cos, sin), k[..., rn:]], dim=-1)
    k, v = (t.repeat_interleave(cfg.q_per_kv, dim=1) for t in (k, v))
    return q, k, v


def bytes_floor(cfg: RopeConfig) -> int:
    """Read the q and k columns, write roped q and k; v is read and written (expanded to n_head heads) only with
    grouped-query attention, a view of qkv otherwise."""
    s, B, T, hs = cfg.dtype.itemsize, cfg.batch, cfg.T, cfg.head_size
    heads = B * cfg.n_head * T * hs
    tables = 2 * T * cfg.rope_n_elem
    v = 0 if cfg.n_query_groups == cfg.n_head else B * T * cfg.n_query_groups * hs + heads
    return s * (B * T * (cfg.n_head + cfg.n_query_groups) * hs + 2 * heads + v + tables)


SPEC = FusionSpec("qkv_split_rope_fwd", rope_configs(), define, inputs, reference, ("q", "k", "v"), __doc__,
                  bytes_floor=bytes_floor, formulations={"k_fused": lambda fd, cfg: define(fd, cfg, k_apart=False)})
