"""Pieces shared by the layer norm and RMSNorm builders and references."""

from __future__ import annotations

import torch

from fusions.configs import NormConfig
from fusions.spec import dt, nv_dtype, randn


def contiguous(n: int) -> list[bool]:
    return [True] * n


def define_x(fd, cfg: NormConfig):
    return fd.define_tensor(shape=list(cfg.shape), contiguity=contiguous(len(cfg.shape)), dtype=_dt(fd, cfg.dtype))


def define_vec(fd, cfg: NormConfig, dtype: torch.dtype | None = None):
    return fd.define_tensor(shape=[cfg.hidden], contiguity=[True], dtype=_dt(fd, dtype or cfg.dtype))


def define_stat(fd, cfg: NormConfig):
    """mean / rstd: one fp32 value per row, shape x.shape[:-1]."""
    rows = list(cfg.shape[:-1])
    return fd.define_tensor(shape=rows, contiguity=contiguous(len(rows)), dtype=dt(fd, "Float"))


def io(fd, cfg: NormConfig):
    """The I/O DataType of the config, in the frontend of fd."""
    return _dt(fd, cfg.dtype)


def _dt(fd, dtype: torch.dtype):
    return dt(fd, nv_dtype(dtype).name)


def per_row(fd, t, ndim: int):
    """A per-row statistic broadcast against x (new last dim)."""
    return fd.ops.broadcast(t, is_broadcast_dim=[False] * (ndim - 1) + [True])


def per_col(fd, t, ndim: int):
    """A hidden-sized vector (weight, bias) broadcast against x (new row dims)."""
    return fd.ops.broadcast(t, is_broadcast_dim=[True] * (ndim - 1) + [False])


def row_dims(ndim: int) -> list[int]:
    return list(range(ndim - 1))


def x_weight_bias(cfg: NormConfig, gen: torch.Generator) -> dict[str, torch.Tensor]:
    out = {"x": randn(cfg.shape, gen, cfg.dtype, scale=2.0, shift=0.5),
           "weight": randn((cfg.hidden,), gen, cfg.dtype, scale=0.5, shift=1.0)}
    if cfg.bias:
        out["bias"] = randn((cfg.hidden,), gen, cfg.dtype, scale=0.5)
    return out


def f64(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float64)


def ln_stats(x: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    """float64 mean and rstd over the last dim (biased variance, as layer norm uses)."""
    x = f64(x)
    mean = x.mean(-1)
    var = ((x - mean.unsqueeze(-1)) ** 2).mean(-1)
    return mean, (var + eps).rsqrt()


def rms_rstd(x: torch.Tensor, eps: float) -> torch.Tensor:
    x = f64(x)
    return ((x * x).mean(-1) + eps).rsqrt()
