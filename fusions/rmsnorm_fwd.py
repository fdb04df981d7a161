"""RMSNorm forward: y = x * rstd * w, rstd = 1/sqrt(mean(x^2) + eps), statistics in fp32.

``round_normed`` (Hugging Face's Llama-style norm): ``x * rstd`` is rounded to x's dtype before the weight
multiplies it, as ``self.weight * hidden_states.to(input_dtype)`` rounds in bf16 / fp16 (two roundings, not one).
"""

from __future__ import annotations

import torch

import fusions._norm as N
from fusions.configs import NormConfig, norm_configs
from fusions.norm_tune import fwd_candidates
from fusions.spec import FusionSpec, dt


def define(fd, cfg: NormConfig) -> None:
    x = N.define_x(fd, cfg)
    w = N.define_vec(fd, cfg)
    for out in body(fd, x, w, cfg):
        fd.add_output(out)


def body(fd, x, w, cfg: NormConfig, ndim: int | None = None) -> tuple:
    """(y, rstd) from tensors ``x`` and ``w`` already in ``fd`` (the builder's inputs, or a region's tensors when
    Thunder's nvFuser executor fuses segkit's RMSNorm; thunder_exec.norms): x of rank ``ndim`` (default the
    config's), normalised over its last dim of cfg.hidden."""
    n = len(cfg.shape) if ndim is None else ndim
    xf = fd.ops.cast(x, dtype=dt(fd, "Float"))
    ms = fd.ops.div(fd.ops.sum(fd.ops.mul(xf, xf), dims=[n - 1], dtype=dt(fd, "Float")), float(cfg.hidden))
    rstd = fd.ops.rsqrt(fd.ops.add(ms, cfg.eps))
    normed = fd.ops.mul(xf, N.per_row(fd, rstd, n))
    if cfg.round_normed:  # Hugging Face's Llama-style norm rounds here, then multiplies in x's dtype
        normed = N.rounded(fd, normed, cfg)
    y = fd.ops.mul(normed, N.per_col(fd, fd.ops.cast(w, dtype=dt(fd, "Float")), n))
    return fd.ops.cast(y, dtype=N.io(fd, cfg)), rstd


def inputs(cfg: NormConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return N.x_weight_bias(cfg, gen)


def reference(inp: dict, cfg: NormConfig) -> tuple:
    rstd = N.rms_rstd(inp["x"], cfg.eps)
    return N.f64(inp["x"]) * rstd.unsqueeze(-1) * N.f64(inp["weight"]), rstd


def bytes_floor(cfg: NormConfig) -> int:
    """Read x and the weight, write y (no autograd: the statistics stay in registers)."""
    return cfg.dtype.itemsize * (2 * cfg.rows * cfg.hidden + cfg.hidden)


SPEC = FusionSpec("rmsnorm_fwd", norm_configs(1e-6, False), define, inputs, reference, ("y", "rstd"), __doc__,
                  N.fwd_tuning, candidates=fwd_candidates, bytes_floor=bytes_floor)
