"""QK-norm + RoPE, forward and backward, written per RoPE half: the formulation ``sliced_inputs`` of both specs.

Every slice is taken of a fusion input (q, k, dq_out, dk_out, the weights, the tables), the norm's sums add the two
halves' sums, RoPE (or its adjoint) is written per half (fusions._rope.adjoint_halves) and each output is one cat of
its two 16-bit halves: no slice of a computed tensor, the form nvFuser 0.2.36's resize scheduler took in one kernel
for the qkv split + RoPE backward (docs/design/rope_bwd.md). Which form nvFuser runs faster here is the GPU's to say
(``segkit tune``); the values are the same math.
"""

from __future__ import annotations

import fusions._qk_norm_rope as Q
import fusions._rope as R
from fusions.configs import QKNormRopeConfig
from fusions.rope_fwd import table
from fusions.spec import dt, nv_dtype


def _halves(fd, t, shape: list[int]) -> tuple:
    """t[..., :n/2] and t[..., n/2:] of an input of static ``shape``, in fp32."""
    n, f32 = shape[-1], dt(fd, "Float")
    return tuple(fd.ops.cast(R.axis_slice(fd, t, shape, len(shape) - 1, lo, hi), dtype=f32)
                 for lo, hi in ((0, n // 2), (n // 2, n)))


def _tables(fd, cos, sin, cfg: QKNormRopeConfig) -> tuple:
    """(cos_lo, cos_hi, sin_lo, sin_hi), each half sliced off its input, broadcast against (B, H, T, D / 2)."""
    shape = [cfg.T, cfg.head_dim] if cfg.cos_batch == 1 else [cfg.batch, cfg.T, cfg.head_dim]
    return tuple(table(fd, h, cfg) for t in (cos, sin) for h in _halves(fd, t, shape))


def _weights(fd, w, cfg: QKNormRopeConfig, part: str) -> tuple:
    """The applied weight's halves (weight_offset + w), fp32, broadcast against (B, T, H, D / 2)."""
    if cfg.norm == "head":
        halves, bcast = _halves(fd, w, [cfg.head_dim]), [True, True, True, False]
    else:
        shape = [cfg.heads(part), cfg.head_dim]
        halves, bcast = _halves(fd, fd.ops.reshape(w, new_shape=shape), shape), [True, True, False, False]
    if cfg.weight_offset:
        halves = tuple(fd.ops.add(h, cfg.weight_offset) for h in halves)
    return tuple(fd.ops.broadcast(h, is_broadcast_dim=bcast) for h in halves)


def _sum_halves(fd, a_lo, b_lo, a_hi, b_hi, cfg: QKNormRopeConfig):
    """sum(a b) over the norm's dims, the two halves' sums added."""
    f32, dims = dt(fd, "Float"), Q.norm_dims(cfg)
    return fd.ops.add(fd.ops.sum(fd.ops.mul(a_lo, b_lo), dims=dims, dtype=f32),
                      fd.ops.sum(fd.ops.mul(a_hi, b_hi), dims=dims, dtype=f32))


def _size(cfg: QKNormRopeConfig, part: str) -> int:
    return cfg.head_dim if cfg.norm == "head" else cfg.heads(part) * cfg.head_dim


def _cat(fd, lo, hi, dtype):
    return fd.ops.cat([fd.ops.cast(lo, dtype=dtype), fd.ops.cast(hi, dtype=dtype)], dim=3)


def define_fwd(fd, cfg: QKNormRopeConfig) -> None:
    """qk_norm_rope_fwd's inputs and outputs, per half."""
    xs, ws, cos, sin = Q.define_fwd_inputs(fd, cfg)
    c_lo, c_hi, s_lo, s_hi = _tables(fd, cos, sin, cfg)
    ys, rstds = [], []
    for x, w, p in zip(xs, ws, Q.PARTS):
        x_lo, x_hi = _halves(fd, x, Q.proj_shape(cfg, p))
        ms = fd.ops.div(_sum_halves(fd, x_lo, x_lo, x_hi, x_hi, cfg), float(_size(cfg, p)))
        rstd = fd.ops.rsqrt(fd.ops.add(ms, cfg.eps))
        rstd_b = Q.stat_broadcast(fd, rstd, cfg)
        n_lo, n_hi = (Q.to_heads(fd, fd.ops.mul(fd.ops.mul(h, rstd_b), wh))
                      for h, wh in zip((x_lo, x_hi), _weights(fd, w, cfg, p)))
        y_lo = fd.ops.sub(fd.ops.mul(n_lo, c_lo), fd.ops.mul(n_hi, s_lo))
        y_hi = fd.ops.add(fd.ops.mul(n_hi, c_hi), fd.ops.mul(n_lo, s_hi))
        ys.append(_cat(fd, y_lo, y_hi, Q.io(fd, cfg)))
        rstds.append(rstd)
    for out in ys + rstds:
        fd.add_output(out)


def define_bwd(fd, cfg: QKNormRopeConfig) -> None:
    """qk_norm_rope_bwd's inputs and outputs, per half."""
    io, f32 = Q.io(fd, cfg), dt(fd, "Float")
    dys, xs, rstds, ws, cos, sin = Q.define_bwd_inputs(fd, cfg)
    tables = _tables(fd, cos, sin, cfg)
    dxs, dws = [], []
    for dy, x, rstd, w, p in zip(dys, xs, rstds, ws, Q.PARTS):
        dn = [Q.to_heads(fd, h) for h in R.adjoint_halves(fd, *_halves(fd, dy, Q.heads_shape(cfg, p)), tables)]
        rstd_b = Q.stat_broadcast(fd, rstd, cfg)
        xhat = [fd.ops.mul(h, rstd_b) for h in _halves(fd, x, Q.proj_shape(cfg, p))]
        g = [fd.ops.mul(d, wh) for d, wh in zip(dn, _weights(fd, w, cfg, p))]
        mean = fd.ops.mul(_sum_halves(fd, g[0], xhat[0], g[1], xhat[1], cfg), 1.0 / _size(cfg, p))
        mean_b = Q.stat_broadcast(fd, mean, cfg)
        dx = [fd.ops.mul(fd.ops.sub(gh, fd.ops.mul(xh, mean_b)), rstd_b) for gh, xh in zip(g, xhat)]
        dxs.append(_cat(fd, *dx, io))
        dims = [0, 1, 2] if cfg.norm == "head" else [0, 1]
        dw = fd.ops.cat([fd.ops.sum(fd.ops.mul(d, xh), dims=dims, dtype=f32) for d, xh in zip(dn, xhat)],
                        dim=0 if cfg.norm == "head" else 1)
        if cfg.norm == "width":
            dw = fd.ops.reshape(dw, new_shape=[cfg.weight_size(p)])
        dws.append(fd.ops.cast(dw, dtype=dt(fd, nv_dtype(cfg.weight_dtype).name)))
    for out in dxs + dws:
        fd.add_output(out)
