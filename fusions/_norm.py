"""Pieces shared by the layer norm and RMSNorm builders and references."""

from __future__ import annotations

import math

import torch

from fusions.configs import NormConfig
from fusions.spec import dt, nv_dtype, randn
from segkit.errors import ArgumentError
from segkit.tuning import NvTuning


def contiguous(n: int) -> list[bool]:
    return [True] * n


def define_x(fd, cfg: NormConfig):
    return fd.define_tensor(shape=list(cfg.shape), contiguity=contiguous(len(cfg.shape)), dtype=_dt(fd, cfg.dtype))


def define_vec(fd, cfg: NormConfig, dtype: torch.dtype | None = None):
    return fd.define_tensor(shape=[cfg.hidden], contiguity=[True], dtype=_dt(fd, dtype or cfg.weight_dtype))


def define_stat(fd, cfg: NormConfig):
    """mean / rstd: one fp32 value per row, shape x.shape[:-1]."""
    rows = list(cfg.shape[:-1])
    return fd.define_tensor(shape=rows, contiguity=contiguous(len(rows)), dtype=dt(fd, "Float"))


def io(fd, cfg: NormConfig):
    """The I/O DataType of the config, in the frontend of fd."""
    return _dt(fd, cfg.dtype)


def param(fd, cfg: NormConfig):
    """The weight / bias DataType (dw and db are returned in it)."""
    return _dt(fd, cfg.weight_dtype)


def _dt(fd, dtype: torch.dtype):
    return dt(fd, nv_dtype(dtype).name)


def rounded(fd, t, cfg: NormConfig):
    """fp32 ``t`` rounded to x's dtype and back (where the source computes a step in x's dtype)."""
    return fd.ops.cast(fd.ops.cast(t, dtype=io(fd, cfg)), dtype=dt(fd, "Float"))


def per_row(fd, t, ndim: int):
    """A per-row statistic broadcast against x (new last dim)."""
    return fd.ops.broadcast(t, is_broadcast_dim=[False] * (ndim - 1) + [True])


def per_col(fd, t, ndim: int):
    """A hidden-sized vector (weight, bias) broadcast against x (new row dims)."""
    return fd.ops.broadcast(t, is_broadcast_dim=[True] * (ndim - 1) + [False])


def row_dims(ndim: int) -> list[int]:
    return list(range(ndim - 1))


def xhat_from_output(fd, y, w, b, cfg: NormConfig, ndim: int):
    """fp32 xhat = (y - b) / w recovered from a norm's output ``y`` (``b`` None without bias), for the backward
    from the output (fusions/rmsnorm_bwd_from_output.py). A zero weight is never divided by: its column's xhat is
    0, since y there is b whatever x was, so the x it came from is not in y. A tiny nonzero weight is divided by
    as it is (no clamp): y was rounded relative to its own size, so y / w keeps xhat to y's rounding."""
    f32 = dt(fd, "Float")
    yf, wf = fd.ops.cast(y, dtype=f32), fd.ops.cast(w, dtype=f32)
    if b is not None:
        yf = fd.ops.sub(yf, per_col(fd, fd.ops.cast(b, dtype=f32), ndim))
    nonzero = fd.ops.ne(wf, 0.0)
    w_safe = fd.ops.where(nonzero, wf, 1.0)  # 1 where w is 0: y / 1 stays finite, and the mask zeroes it
    kept = fd.ops.cast(nonzero, dtype=f32)
    return fd.ops.mul(fd.ops.div(yf, per_col(fd, w_safe, ndim)), per_col(fd, kept, ndim))


def refuse_round_normed(spec: str, cfg: NormConfig) -> None:
    """The backward from the output recovers xhat from y = w * xhat rounded once; Hugging Face's rounding of
    xhat before the weight (``round_normed``) is not modelled there."""
    if cfg.round_normed:
        raise ArgumentError(f"{spec}: config {cfg.name!r} has round_normed=True, which this backward does not "
                            f"model; use rmsnorm_bwd (from x) for Hugging Face's rounded RMSNorm")


def x_weight_bias(cfg: NormConfig, gen: torch.Generator) -> dict[str, torch.Tensor]:
    out = {"x": randn(cfg.shape, gen, cfg.dtype, scale=2.0, shift=0.5),
           "weight": randn((cfg.hidden,), gen, cfg.weight_dtype, scale=0.5, shift=1.0)}
    if cfg.bias:
        out["bias"] = randn((cfg.hidden,), gen, cfg.weight_dtype, scale=0.5)
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


def fwd_tuning(cfg: NormConfig) -> NvTuning | None:
    """nvFuser schedule for the RMSNorm forward at hidden 384, where the default inner persistent heuristics
    put 1-2 rows (48-thread vectors) in a block and leave loads out of flight: 4 rows per block, for RMSNorm at
    hidden 384 with many rows and 16-bit I/O only. Elsewhere (hidden 256, where the kernel gains less than a
    manual schedule's host time costs; hidden 1024 and wider; the layer norm forward) nvFuser's default stays.
    """
    rows, hidden = math.prod(cfg.shape[:-1]), cfg.hidden
    if cfg.dtype not in (torch.bfloat16, torch.float16):
        return None
    if 256 < hidden <= 512 and rows >= 1 << 18:
        return NvTuning("1-2 rows per block at hidden 384 leave loads out of flight: 4 rows, 1.32x kernel, "
                        "1.2x per call", scheduler="inner_persistent", rows_per_block=4)
    return None


def bwd_tuning(cfg: NormConfig, layer_norm: bool) -> NvTuning | None:
    """nvFuser schedule for norm backward where its default inner-outer persistent heuristics fall short
    (16-bit I/O only; fp32 keeps the default):

    * hidden 256: dx and dw (+ db) as two fusions, the second reading x and dy again (from L2 when they fit): no
      safe inner-outer parameters helped the fused kernel (two rows per block race on shared memory).
    * hidden 384 with many rows: the default's 48-thread blocks leave the GPU latency-bound: vectorize 4
      (96-thread blocks), cap registers at 40, 16 blocks per SM.
    * 384 < hidden <= 1024, hidden >= 16384, and layer norm with >= 65536 rows at hidden >= 4096: nvFuser's
      warp-specialized TMA scheduler (``ws_normalization``).
    * otherwise the default: overriding its parameters gained less than a manual schedule's host time per call.

    Where the tuning table has an entry for the GPU, its winner replaces this rule (at 576000 x 384 a
    hand-written schedule, fusions/norm_bwd_rows.py).
    """
    rows, hidden = math.prod(cfg.shape[:-1]), cfg.hidden
    if cfg.dtype not in (torch.bfloat16, torch.float16):
        return None
    if hidden == 256 and rows >= 4096:
        outputs = 3 if layer_norm else 2
        return NvTuning("the fused inner-outer kernel is poor at hidden 256: dx and dw as two fusions, 1.2-1.8x",
                        split=((0,), tuple(range(1, outputs))))
    if 256 < hidden <= 512 and rows >= 1 << 18:
        return NvTuning("48-thread blocks at hidden 384 leave the GPU latency-bound: 1.4-1.5x faster",
                        scheduler="inner_outer_persistent", vectorize=4, maxrregcount=40, blocks_per_sm=16)
    if 512 < hidden <= 1024 or hidden >= 16384 or (layer_norm and rows >= 65536 and hidden >= 4096):
        return NvTuning("nvFuser's warp-specialized normalization scheduler is faster here",
                        enable_options=("ws_normalization",))
    return None
