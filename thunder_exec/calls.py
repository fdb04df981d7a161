"""One claimed call's facts, built once: the config of each fusion spec it runs, its signature (what the tuning
table and the step evidence key it by) and its shape key (``segkit_fuse``'s ``OP@SHAPE``), and the runners that
execute it.

A family file (norms, rope, qkv_rope) asks here for its call's ``Call`` objects (one per spec: forward, backward)
from the call's plain values; they are made once per distinct call and kept (a forward and a backward of one
config share it), so the checker, the transforms, the translators and the alone pass (thunder_exec.decide) all
read the same object instead of building the config again. At run time the opaque symbols ask for their runner by
the same plain values (no config is built on the per-call path); the runner cache (fusions.runner.RUNNERS) is
keyed here and nowhere else in thunder_exec.

One shape convention per family: a norm's config has x's own shape where it is 2-D or 3-D with no size-1 row dim,
else (rows, hidden) (``runner_shape``); a RoPE's x is (B, H, T, n) with H the product of the middle dims
(``rope_shape``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import torch

from fusions.configs import ApplyRopeConfig, NormConfig, RopeConfig, unit_row_dims
from fusions.runner import RUNNERS, SpecRunner, runner
from fusions.spec import signature
from thunder_exec.base import torch_dtype


def call_shape(cfg) -> str:
    """The shape a ``segkit_fuse`` key ``OP@SHAPE`` names for a call of config ``cfg``: rows x hidden for a norm
    (``NormConfig``), x's shape for a RoPE (``ApplyRopeConfig``), e.g. "131072x128", "4x16x2048x128"."""
    dims = (cfg.rows, cfg.hidden) if hasattr(cfg, "hidden") else cfg.shape
    return "x".join(str(d) for d in dims)


@dataclass(frozen=True)
class Call:
    """One call of fusion spec ``spec`` with config ``cfg``: its ``signature`` (fusions.spec.signature) and its
    ``shape`` key (``call_shape``), computed once with the config."""

    spec: str
    cfg: Any
    signature: str
    shape: str

    @classmethod
    def of(cls, spec: str, cfg) -> Call:
        return cls(spec, cfg, signature(cfg), call_shape(cfg))

    def runner(self, policy: str, check: bool, outputs: tuple[int, ...] | None = None) -> SpecRunner:
        """segkit's fusion for this call under the bookend ``policy`` and ``check`` (``outputs``: the ones kept)."""
        return runner(self.spec, self.cfg, policy, check, outputs)


# --------------------------------------------------------------------------- norms
def runner_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape segkit's norm fusion is defined at for x of ``shape``: x's own when it is 2-D or 3-D with no
    size-1 row dim (fusions.configs.unit_row_dims says why), else (rows, hidden)."""
    if len(shape) in (2, 3) and not unit_row_dims(shape):
        return shape
    return (math.prod(shape[:-1]), shape[-1])


@functools.lru_cache(maxsize=512)
def _norm_config(shape: tuple[int, ...], dtype: torch.dtype, param_dtype: torch.dtype, eps: float, bias: bool,
                 round_normed: bool) -> NormConfig:
    return NormConfig("thunder", runner_shape(shape), dtype, eps, bias, None if param_dtype == dtype else param_dtype,
                      round_normed)


@functools.lru_cache(maxsize=512)
def _norm_call(spec: str, shape: tuple[int, ...], dtype: torch.dtype, param_dtype: torch.dtype, eps: float,
               bias: bool, round_normed: bool) -> Call:
    return Call.of(spec, _norm_config(shape, dtype, param_dtype, eps, bias, round_normed))


def norm_call(spec: str, a, weight, eps: float, bias: bool = False, round_normed: bool = False) -> Call:
    """The call of norm ``spec`` on x ``a`` (a proxy or a tensor) with ``weight`` (None: x's dtype) and ``bias``."""
    io = torch_dtype(a.dtype)
    param = io if weight is None else torch_dtype(weight.dtype)
    return _norm_call(spec, tuple(a.shape), io, param, float(eps), bias, round_normed)


def norm_calls(kind: str, a, weight, eps: float, bias: bool = False, round_normed: bool = False) -> tuple[Call, Call]:
    """The (forward, backward) calls of a norm ``kind`` ("rmsnorm" | "layernorm") on x ``a`` with ``weight`` and
    ``bias`` (the forward's; the backward's config has none)."""
    return (norm_call(f"{kind}_fwd", a, weight, eps, bias, round_normed),
            norm_call(f"{kind}_bwd", a, weight, eps, False, round_normed))


def norm_runner(spec: str, a: torch.Tensor, param_dtype: torch.dtype, eps: float, bias: bool, policy: str,
                check: bool, outputs: tuple[int, ...] | None = None, round_normed: bool = False) -> SpecRunner:
    """The runner of norm ``spec`` for x ``a``, looked up by plain values (shape, dtype, ...)."""
    def make() -> SpecRunner:
        return _norm_call(spec, tuple(a.shape), a.dtype, param_dtype, float(eps), bias, round_normed).runner(
            policy, check, outputs)

    return RUNNERS.get((spec, a.shape, a.dtype, param_dtype, eps, bias, policy, check, outputs, round_normed), make)


# --------------------------------------------------------------------------- RoPE
def rope_shape(x) -> tuple[int, int, int, int]:
    """x as RoPE's (B, H, T, n): H the product of the middle dims."""
    return (x.shape[0], math.prod(x.shape[1:-2]), x.shape[-2], x.shape[-1])


@functools.lru_cache(maxsize=512)
def _rope_config(shape: tuple[int, int, int, int], cos_numel: int, io: torch.dtype, table: torch.dtype,
                 out: torch.dtype, x_stride_order) -> ApplyRopeConfig:
    T, n = shape[2], shape[3]
    return ApplyRopeConfig("thunder", shape, cos_numel // (T * n), io, None if table == io else table,
                           None if out == io else out, x_stride_order)


@functools.lru_cache(maxsize=512)
def _rope_call(spec: str, shape: tuple[int, int, int, int], cos_numel: int, io: torch.dtype, table: torch.dtype,
               out: torch.dtype, x_stride_order) -> Call:
    return Call.of(spec, _rope_config(shape, cos_numel, io, table, out, x_stride_order))


def rope_call(spec: str, x, cos, x_dtype, out_dtype, x_stride_order=None) -> Call:
    """The call of RoPE ``spec`` on x ``x`` (or dy): x as ``rope_shape``, the tables' batch, x's and y's dtypes,
    x's layout where it is permuted (a run-time tensor's; a trace's proxies have none). The backward's call on dy
    has the forward's config."""
    return _rope_call(spec, rope_shape(x), math.prod(cos.shape), torch_dtype(x_dtype), torch_dtype(cos.dtype),
                      torch_dtype(out_dtype), x_stride_order)


def rope_calls(x, cos, out_dtype) -> tuple[Call, Call]:
    """The (forward, backward) calls of a RoPE on x ``x`` with result dtype ``out_dtype``."""
    return rope_call("rope_fwd", x, cos, x.dtype, out_dtype), rope_call("rope_bwd", x, cos, x.dtype, out_dtype)


def rope_runner(spec: str, x, cos, x_dtype, out_dtype, policy: str, check: bool, order) -> SpecRunner:
    """The runner of RoPE ``spec`` for x ``x``, looked up by plain values."""
    return RUNNERS.get((spec, x.shape, x_dtype, out_dtype, cos.shape, cos.dtype, policy, check, order),
                       lambda: rope_call(spec, x, cos, x_dtype, out_dtype, order).runner(policy, check))


# --------------------------------------------------------------------------- qkv split + RoPE
def qkv_config(qkv, n_head, n_query_groups, head_size, rope_n_elem) -> RopeConfig:
    """The qkv split + RoPE config of a call (a ValueError names an impossible geometry)."""
    B, T, _ = qkv.shape
    return RopeConfig("thunder", B, n_head * head_size, n_head, n_query_groups, head_size, rope_n_elem, T,
                      torch_dtype(qkv.dtype))


def qkv_runner(spec, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check) -> SpecRunner:
    """The runner of qkv split + RoPE ``spec`` for ``qkv``, looked up by plain values."""
    return RUNNERS.get(
        (spec, qkv.shape, qkv.dtype, n_head, n_query_groups, head_size, rope_n_elem, policy, check),
        lambda: runner(spec, qkv_config(qkv, n_head, n_query_groups, head_size, rope_n_elem), policy, check))


def clear() -> None:
    """Forget the calls made (their configs; the runners are fusions.runner's, ``runner.clear_caches()``)."""
    for made in (_norm_config, _norm_call, _rope_config, _rope_call):
        made.cache_clear()
