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
