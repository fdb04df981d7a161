"""Pieces shared by the qkv split + RoPE forward and backward builders."""

from __future__ import annotations

import torch

from fusions.configs import RopeConfig
from fusions.spec import dt, nv_dtype


def io(fd, cfg: RopeConfig):
    return dt(fd, nv_dtype(cfg.dtype).name)


def define_cos_sin(fd, cfg: RopeConfig):
    shape = [cfg.T, cfg.rope_n_elem]
    return tuple(fd.define_tensor(shape=shape, contiguity=[True, True], dtype=io(fd, cfg)) for _ in range(2))


def axis_slice(fd, x, shape: list[int], axis: int, lo: int, hi: int):
    """x[lo:hi] along ``axis`` for a tensor of static ``shape``."""
    return fd.ops.slice(x, start_indices=[lo if d == axis else 0 for d in range(len(shape))],
                        end_indices=[hi if d == axis else n for d, n in enumerate(shape)])


def last_dim_slice(fd, x, ndim: int, shape: list[int], lo: int, hi: int):
    """x[..., lo:hi] for a tensor of static ``shape``."""
    return axis_slice(fd, x, shape, ndim - 1, lo, hi)


def table(fd, t, ndim: int, t_dim: int | None = None):
    """cos/sin (T, rope_n_elem) cast to fp32 and broadcast to rank ``ndim``, T at ``t_dim`` (default ndim - 2)."""
    t_dim = ndim - 2 if t_dim is None else t_dim
    return fd.ops.broadcast(fd.ops.cast(t, dtype=dt(fd, "Float")),
                            is_broadcast_dim=[d not in (t_dim, ndim - 1) for d in range(ndim)])


def half_tables(fd, cos, sin, cfg: RopeConfig, ndim: int, t_dim: int) -> tuple:
    """(cos_lo, cos_hi, sin_lo, sin_hi): each RoPE half of the tables sliced off its fusion input (a slice of
    a product is one nvFuser's resize scheduler refuses), fp32, broadcast to rank ``ndim`` with T at ``t_dim``."""
    rn, half = cfg.rope_n_elem, cfg.rope_n_elem // 2
    return tuple(table(fd, axis_slice(fd, t, [cfg.T, rn], 1, lo, hi), ndim, t_dim)
                 for t in (cos, sin) for lo, hi in ((0, half), (half, rn)))


def adjoint_halves(fd, g_lo, g_hi, tables: tuple) -> list:
    """RoPE's adjoint written per half, from the gradient's halves and ``half_tables``:
    d_lo = g_lo cos_lo + g_hi sin_hi, d_hi = g_hi cos_hi - g_lo sin_lo."""
    c_lo, c_hi, s_lo, s_hi = tables
    return [fd.ops.add(fd.ops.mul(g_lo, c_lo), fd.ops.mul(g_hi, s_hi)),
            fd.ops.sub(fd.ops.mul(g_hi, c_hi), fd.ops.mul(g_lo, s_lo))]


def rope_sum(fd, a, b, round_to=None):
    """a + b of the two fp32 RoPE products (x cos, rot(x) sin, or their adjoints); with ``round_to`` (a 16-bit
    DataType: x and the tables share it, so eager PyTorch computes in it) each product and the sum are rounded to
    it, as eager rounds them, and the result is back in fp32."""
    if round_to is None:
        return fd.ops.add(a, b)
    f32 = dt(fd, "Float")

    def r(t):
        return fd.ops.cast(fd.ops.cast(t, dtype=round_to), dtype=f32)
    return r(fd.ops.add(r(a), r(b)))


def rounding(fd, x_dtype: torch.dtype, table_dtype: torch.dtype):
    """The DataType eager PyTorch computes RoPE's products in when it is 16-bit (x and tables share it), else
    None (fp32: the fusions' own compute dtype)."""
    if x_dtype == table_dtype and x_dtype in (torch.bfloat16, torch.float16):
        return dt(fd, nv_dtype(x_dtype).name)
    return None


def rotate(fd, a, b, ndim: int):
    """cat((a, b), last dim): the half-rotation (and its transpose) as one op."""
    return fd.ops.cat([a, b], dim=ndim - 1)


def cos_sin(T: int, n_elem: int, dtype: torch.dtype, device="cpu", base: int = 10000) -> tuple[torch.Tensor, torch.Tensor]:
    """RoPE tables as litgpt builds them: angle t * base^(-2i/n) for each half, repeated."""
    inv = base ** (-torch.arange(0, n_elem, 2, dtype=torch.float64, device=device) / n_elem)
    ang = torch.arange(T, dtype=torch.float64, device=device)[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos().to(dtype), ang.sin().to(dtype)


def rope_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """float64 NeoX RoPE written per element pair (i, i + n/2), independent of the cat form."""
    h = x.shape[-1] // 2
    lo, hi = x[..., :h], x[..., h:]
    c_lo, c_hi, s_lo, s_hi = cos[..., :h], cos[..., h:], sin[..., :h], sin[..., h:]
    return torch.cat([lo * c_lo - hi * s_lo, hi * c_hi + lo * s_hi], dim=-1)
