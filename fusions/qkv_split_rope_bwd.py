"""Gradient of qkv split + RoPE w.r.t. qkv, from dq, dk, dv (B, n_head, T, hs); cos/sin constant.

RoPE is y = x cos + rot(x) sin with rot(x) = cat(-x2, x1), so its adjoint is dx = dy cos + rot^T(dy sin) with
rot^T(g) = cat(g2, -g1). The grouped-query expand's adjoint is a sum over the q_per_kv copies, done before the
(linear) RoPE adjoint so it runs on n_query_groups heads. Everything accumulates in fp32; dq, dk and dv are cast
to the I/O dtype right before they are concatenated into the qkv layout (the same values as casting after the
cat), so that the tensors nvFuser passes between the segments it makes of this fusion are 16-bit, not fp32.

Other formulations, tuning-table / ``segkit tune`` choices:

* ``sliced_sum``: the grouped-query sum as adds of the q_per_kv slices, every op pointwise, slice or cat
  (nvFuser still segments it);
* ``sliced_inputs``: every slice taken of a fusion input and RoPE's adjoint written per half, which nvFuser
  0.2.36's resize scheduler runs as ONE kernel for multi-head configs (it refuses a resize of a broadcast ID,
  so a slice must never take a product with the broadcast cos/sin tables); grouped-query configs stay above two
  kernels, since their sums are reductions the resize scheduler refuses;
* ``sums_then_cat`` (fusions/rope_bwd_sums_then_cat.py): the grouped-query sums in one fusion, RoPE's adjoint
  and one last-axis cat in another;
* ``slices_halves``, ``slices_heads``, ``slices_per_group`` (fusions/qkv_rope_bwd_slices.py): no cat of q, k and v;
  each piece written in place into its view of a preallocated dqkv (``add_output(..., alias_input=)``).
"""

from __future__ import annotations

import torch

import fusions._rope as R
from fusions.configs import RopeConfig, rope_configs
from fusions.qkv_rope_bwd_slices import VARIANTS as SLICES
from fusions.rope_bwd_sums_then_cat import SUMS_THEN_CAT
from fusions.spec import FusionSpec, dt, randn
from segkit.tuning.search import Candidate, SpecCandidates


def _rope_adjoint(fd, g, shape: list[int], cfg: RopeConfig, cos, sin):
    """dL/dx of RoPE for g of static ``shape`` (fp32 in, fp32 out), pass-through past rope_n_elem."""
    n, rn, half = len(shape), cfg.rope_n_elem, cfg.rope_n_elem // 2
    gr = R.last_dim_slice(fd, g, n, shape, 0, rn) if rn < cfg.head_size else g
    rshape = shape[:-1] + [rn]
    gs = fd.ops.mul(gr, R.table(fd, sin, n))
    rot_t = R.rotate(fd, R.last_dim_slice(fd, gs, n, rshape, half, rn),
                     fd.ops.neg(R.last_dim_slice(fd, gs, n, rshape, 0, half)), n)
    out = fd.ops.add(fd.ops.mul(gr, R.table(fd, cos, n)), rot_t)
    if rn == cfg.head_size:
        return out
    return R.rotate(fd, out, R.last_dim_slice(fd, g, n, shape, rn, cfg.head_size), n)


def _sum_copies(fd, g, shape: list[int]):
    """The sum over dim 2 (the q_per_kv copies) of g of static ``shape`` as adds of its slices, kept as a dim
    of 1: pointwise, so the fusion needs no reduction segment (``sliced_sum``)."""
    acc = None
    for q in range(shape[2]):
        part = R.axis_slice(fd, g, shape, 2, q, q + 1)
        acc = part if acc is None else fd.ops.add(acc, part)
    return acc


def _define_grads(fd, cfg: RopeConfig):
    """The fusion's inputs: dq, dk, dv (B, n_head, T, hs) in the I/O dtype, then cos and sin."""
    grads = [fd.define_tensor(shape=[cfg.batch, cfg.n_head, cfg.T, cfg.head_size], contiguity=[True] * 4,
                              dtype=R.io(fd, cfg)) for _ in range(3)]
    return (*grads, *R.define_cos_sin(fd, cfg))


def define_sliced_inputs(fd, cfg: RopeConfig) -> None:
    """Every slice taken of a fusion input, no rotation cat: each gradient's RoPE halves are sliced off its
    (B, n_head, T, hs) input, cast, reshaped and permuted to the output's (B, T, G, Q, .) layout, and RoPE's
    adjoint is written per half (``_rope.adjoint_halves``), its pieces concatenated straight into the output
    (multi-head: one cat for q, k and v; grouped-query: one per gradient, then one over the heads, after the
    grouped-query sums of dk and dv in the input layout)."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    rn, half = cfg.rope_n_elem, cfg.rope_n_elem // 2
    f32, io = dt(fd, "Float"), R.io(fd, cfg)
    dq, dk, dv, cos, sin = _define_grads(fd, cfg)
    kv_heads = cfg.n_head
    if Q > 1:  # (B, G, T, H) fp32
        dk, dv = (fd.ops.sum(fd.ops.reshape(fd.ops.cast(g, dtype=f32), new_shape=[B, G, Q, T, H]), dims=[2],
                             dtype=f32) for g in (dk, dv))
        kv_heads = G

    def cols(t, heads: int, lo: int, hi: int):
        """t[..., lo:hi] of a (B, heads, T, H) tensor, in fp32 and the output layout (B, T, G, heads / G, hi - lo)."""
        t = R.axis_slice(fd, t, [B, heads, T, H], 3, lo, hi) if (lo, hi) != (0, H) else t
        t = fd.ops.reshape(fd.ops.cast(t, dtype=f32), new_shape=[B, G, heads // G, T, hi - lo])
        return fd.ops.permute(t, dims=[0, 3, 1, 2, 4])

    tables = R.half_tables(fd, cos, sin, cfg, 5, 1)

    def pieces(g, heads: int) -> list:
        out = R.adjoint_halves(fd, cols(g, heads, 0, half), cols(g, heads, half, rn), tables)
        return [fd.ops.cast(p, dtype=io) for p in out + ([cols(g, heads, rn, H)] if rn < H else [])]

    parts = [pieces(dq, cfg.n_head), pieces(dk, kv_heads), [fd.ops.cast(cols(dv, kv_heads, 0, H), dtype=io)]]
    if Q == 1:  # (B, T, G, 1, 3 H): every piece lands in one cat
        d = fd.ops.cat([p for ps in parts for p in ps], dim=4)
    else:
        d = fd.ops.cat([ps[0] if len(ps) == 1 else fd.ops.cat(ps, dim=4) for ps in parts], dim=3)
    fd.add_output(fd.ops.reshape(d, new_shape=[B, T, cfg.qkv_width]))


def define(fd, cfg: RopeConfig, sliced_sum: bool = False) -> None:
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    f32, io = dt(fd, "Float"), R.io(fd, cfg)
    *grads, cos, sin = _define_grads(fd, cfg)
    dq, dk, dv = (fd.ops.reshape(fd.ops.cast(g, dtype=f32), new_shape=[B, G, Q, T, H]) for g in grads)
    if Q > 1 and sliced_sum:
        dk, dv = (_sum_copies(fd, g, [B, G, Q, T, H]) for g in (dk, dv))
    elif Q > 1:  # adjoint of the grouped-query expand
        dk, dv = (fd.ops.sum(g, dims=[2], keepdim=True, dtype=f32) for g in (dk, dv))
    dq = _rope_adjoint(fd, dq, [B, G, Q, T, H], cfg, cos, sin)
    dk = _rope_adjoint(fd, dk, [B, G, 1, T, H], cfg, cos, sin)
    d = fd.ops.cat([fd.ops.cast(t, dtype=io) for t in (dq, dk, dv)], dim=2)  # (B, G, Q + 2, T, H)
    fd.add_output(fd.ops.reshape(fd.ops.permute(d, dims=[0, 3, 1, 2, 4]), new_shape=[B, T, cfg.qkv_width]))


def inputs(cfg: RopeConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    shape = (cfg.batch, cfg.n_head, cfg.T, cfg.head_size)
    cos, sin = R.cos_sin(cfg.T, cfg.rope_n_elem, cfg.dtype, device)
    return {"dq": randn(shape, gen, cfg.dtype), "dk": randn(shape, gen, cfg.dtype), "dv": randn(shape, gen, cfg.dtype),
            "cos": cos, "sin": sin}


def reference(inp: dict, cfg: RopeConfig) -> tuple:
    """float64 adjoint by the pair formula: for i < n/2, x_i feeds y_i (cos) and y_{i+n/2} (sin)."""
    B, T, G, Q, H = cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv, cfg.head_size
    cos, sin = inp["cos"].to(torch.float64), inp["sin"].to(torch.float64)
    rn, h = cfg.rope_n_elem, cfg.rope_n_elem // 2

    def adjoint(g: torch.Tensor) -> torch.Tensor:
        lo, hi = g[..., :h], g[..., h:rn]
        d_lo = lo * cos[:, :h] + hi * sin[:, h:]
        d_hi = hi * cos[:, h:] - lo * sin[:, :h]
        return torch.cat([d_lo, d_hi, g[..., rn:]], dim=-1)

    dq, dk, dv = (inp[n].to(torch.float64).reshape(B, G, Q, T, H) for n in ("dq", "dk", "dv"))
    dq, dk, dv = adjoint(dq), adjoint(dk.sum(2)), dv.sum(2)
    x = torch.empty(B, T, G, Q + 2, H, dtype=torch.float64, device=dq.device)
    x[:, :, :, :Q] = dq.permute(0, 3, 1, 2, 4)
    x[:, :, :, Q] = dk.transpose(1, 2)
    x[:, :, :, Q + 1] = dv.transpose(1, 2)
    return (x.reshape(B, T, cfg.qkv_width),)


def candidates(cfg: RopeConfig, sm_count: int, quick: bool = True) -> SpecCandidates:
    """Early: grouped-query configs' sums, then one last-axis cat (fusions/rope_bwd_sums_then_cat.py); every config's
    pieces written into slices of dqkv, no cat of q, k and v (fusions/qkv_rope_bwd_slices.py)."""
    return SpecCandidates(first=([Candidate(SUMS_THEN_CAT)] if cfg.q_per_kv > 1 else []) + [Candidate(v) for v in SLICES])


def bytes_floor(cfg: RopeConfig) -> int:
    """Read dq, dk, dv and the tables, write dqkv."""
    s, B, T = cfg.dtype.itemsize, cfg.batch, cfg.T
    return s * (3 * B * cfg.n_head * T * cfg.head_size + B * T * cfg.qkv_width + 2 * T * cfg.rope_n_elem)


SPEC = FusionSpec("qkv_split_rope_bwd", rope_configs(), define, inputs, reference, ("dqkv",), __doc__,
                  formulations={"sliced_sum": lambda fd, cfg: define(fd, cfg, sliced_sum=True),
                                "sliced_inputs": define_sliced_inputs},
                  candidates=candidates, bytes_floor=bytes_floor)
