"""Pieces shared by the layer norm and RMSNorm builders and references."""

from __future__ import annotations

import math

import torch

from fusions.configs import NormConfig
from fusions.spec import dt, nv_dtype, randn
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
    put 1-2 rows (48-thread vectors) in a block and leave loads out of flight.

    Measured on one H200 (nvFuser 0.2.36, bf16, y only, cold L2, one process; benchmarks/results/
    h200-2026-11-23/: norm_fwd_sweep*.log for the kernels, norm_fwd_*.json for the host wall per call):

    * 576000 x 384, 4 rows per block: RMSNorm kernel 348.5 -> 263.3 us, wall per call 371 -> 299 us; layer
      norm kernel 350.9 -> 325.8 us but wall 372 -> 372 us (8 rows: 295.8 / 350.8 us kernel).
    * hidden 256, 8 rows per block: kernels 1.07-1.20x faster (RMSNorm 65536 / 16384 / 4096 rows 22.1 -> 19.0,
      7.30 -> 6.06, 3.14 -> 2.62 us), yet every call slower: a manual schedule runs through
      ``manual_execute``, which costs 25-50 us more host time per call than ``fd.execute`` (4096 x 256 wall
      21.6 -> 69.2 us). Not used.
    * Hidden 1024 and wider: neither more rows per block nor ws_normalization moved the kernel.

    So only RMSNorm at hidden 384 with many rows, 16-bit I/O (fp32 was not measured); the layer norm
    forward keeps nvFuser's default everywhere.
    """
    rows, hidden = math.prod(cfg.shape[:-1]), cfg.hidden
    if cfg.dtype not in (torch.bfloat16, torch.float16):
        return None
    if 256 < hidden <= 512 and rows >= 1 << 18:
        return NvTuning("1-2 rows per block at hidden 384 leave loads out of flight: 4 rows, 1.32x kernel, "
                        "1.2x per call", scheduler="inner_persistent", rows_per_block=4)
    return None


def bwd_tuning(cfg: NormConfig, layer_norm: bool) -> NvTuning | None:
    """nvFuser schedule for norm backward where its default inner-outer persistent heuristics fall short.

    Measured on one H200 (nvFuser 0.2.36, bf16, cold-L2 kernel time, side by side with the default in
    one process; benchmarks/results/h200-2026-11-21-tuning/ has the sweeps, benchmarks/explore/ the script):

    * hidden 384 (576000 rows): the default launches 48-thread blocks, 8 per SM (46% of the bytes floor
      for RMSNorm). Vectorize 4 instead of 8 (96-thread blocks), cap registers at 40 and launch 16 blocks
      per SM: RMSNorm 680 -> 446 us, layer norm 891 -> 641 us. Two rows per block (bdimy 2) was faster
      still but returned wrong results in some runs (nvFuser's multi-reduction-per-block smem race, the
      reason its heuristic pins bdimy to 1), so it is not used.
    * hidden 256: nvFuser's fused inner-outer kernel reached 7-33% of the floor and no safe inner-outer
      parameters helped (two rows per block races, above). dx and dw (+ db) as two fusions, the second
      reading x and dy again (from L2 when they fit): RMSNorm 4096 / 16384 / 65536 rows 16.1 -> 11.1,
      30.4 -> 18.2, 72.1 -> 57.7 us; layer norm 22.1 -> 12.4, 41.6 -> 22.7, 86.0 -> 72.4 us
      (benchmarks/explore/norm_bwd_split.py).
    * 384 < hidden <= 1024 and hidden >= 16384: nvFuser's warp-specialized TMA scheduler
      (``ws_normalization``) beats the default, e.g. 65536 x 1024 RMSNorm 132 -> 114 us, layer norm
      158 -> 127 us; 16384 x 16384 RMSNorm 439 -> 411 us; 65536 x 16384 layer norm 1840 -> 1560 us.
      Same for layer norm with >= 65536 rows and hidden >= 4096 (65536 x 4096: 444 -> 423 us).
      At hidden 256 and 4096-8192 (fewer rows) it was slower or equal.
    * 4096-65536 rows at hidden 1024-16384 otherwise: replacing the inner-outer persistent batch, grid, register
      cap or buffer projection gained at most 2.3% (CUPTI, benchmarks/results/h200-2026-11-23-final/
      norm_bwd_inner_outer.log), less than the 21-64 us of host time a manual schedule adds per call
      (manual_host.log), so they keep the default.

    Only 16-bit I/O was measured (fp32 RMSNorm backward segments into several kernels), so fp32 keeps the
    default. Where the tuning table has an entry for the GPU (576000 x 384 on the H100 and the H200), its
    winner replaces this rule: there a hand-written schedule, fusions/norm_bwd_rows.py.
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
