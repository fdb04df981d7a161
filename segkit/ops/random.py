"""Catalogue entries for nvFuser's random ops: uniform, normal, rand_like, randn_like.

nvFuser draws from its own Philox stream (seeded per fusion run, or by ``rng_seed`` / ``rng_offset``);
the reference interpreter cannot reproduce that stream, so these ops are marked ``random``: the
reference draws from the same distribution with torch (deterministically when a seed is given), and
``segkit.check`` compares their outputs by shape, dtype, range and moments (segkit.compare.compare_random).
"""

from __future__ import annotations

from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, RunContext, out_like, register, runtime_ints, \
    static_shape, tensor_arg


def _generator(a: dict, device: torch.device) -> torch.Generator | None:
    """A torch generator seeded from (rng_seed, rng_offset) when given, so a seeded fusion is repeatable."""
    if a.get("rng_seed") is None:
        return None
    return torch.Generator(device=device).manual_seed(int(a["rng_seed"]) * 1_000_003 + int(a["rng_offset"]))


def _dist_infer(name: str, p1: str, p2: str):
    def infer(a: dict) -> list[Out]:
        for k in (p1, p2):
            if isinstance(a[k], Value) and a[k].is_tensor:
                raise InferError(f"{name}: {k} must be a scalar, got tensor {a[k].describe()}")
        if (a["rng_seed"] is None) != (a["rng_offset"] is None):
            raise InferError(f"{name}: rng_seed and rng_offset must be provided together")
        dtype = a["dtype"]
        if not isinstance(dtype, DataType) or not dtype.is_float:
            raise InferError(f"{name}: random distributions only create floating point types, got dtype={dtype!r}")
        shape = static_shape(a["shape"], "shape")
        return [Out(dtype, tuple(shape), (False,) * len(shape), (False,) * len(shape))]

    return infer


def _draw(kind: str, shape: list[int], a: dict, ctx: RunContext, lo: Any, hi: Any, dtype: torch.dtype):
    gen = _generator(a, ctx.device)
    if kind == "uniform":
        x = torch.rand(shape, generator=gen, dtype=torch.float64, device=ctx.device)
        return (x * (float(hi) - float(lo)) + float(lo)).to(dtype)
    x = torch.randn(shape, generator=gen, dtype=torch.float64, device=ctx.device)
    return (x * float(hi) + float(lo)).to(dtype)


def _keyword_only(name: str):
    def check(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if 3 < len(args) <= 6 and isinstance(args[3], DataType):
            # the legacy frontend's positional order until PR #1283 (0.1.2, 2023-11): shape, dtype, rng_seed, rng_offset
            extra = dict(zip(("dtype", "rng_seed", "rng_offset"), args[3:]))
            if set(extra) & set(kwargs):
                twice = ", ".join(sorted(set(extra) & set(kwargs)))
                raise TypeError(f"{name}: got {twice} positionally and by keyword")
            args, kwargs = args[:3], {**kwargs, **extra}
        if len(args) > 3:
            raise TypeError(f"{name} takes 3 positional arguments; rng_seed, rng_offset and dtype are keyword-only")
        return args, kwargs

    return check


def _dist(name: str, p1: str, p2: str) -> None:
    def run(a: dict, ctx: RunContext):
        return _draw(name, runtime_ints(a["shape"]), a, ctx, a[p1], a[p2], a["dtype"].torch)

    attrs = (("shape", REQUIRED), ("rng_seed", None), ("rng_offset", None), ("dtype", DataType.Float))
    register(OpDef(name, (p1, p2), attrs, _dist_infer(name, p1, p2), run, random=True,
                   overloads=_keyword_only(name), doc=f"random tensor ({p1}, {p2}); rng_seed / rng_offset are keyword-only in nvFuser"))


def _like_infer(name: str):
    def infer(a: dict) -> list[Out]:
        x = tensor_arg(a["x"], f"{name}'s x")
        if not x.dtype.is_float:
            raise InferError(f"{name}: input must have a floating point type, got {x.describe()}")
        return [out_like(x)]

    return infer


def _like_op(name: str, kind: str) -> None:
    def run(a: dict, ctx: RunContext):
        x = a["x"]
        return _draw(kind, list(x.shape), a, RunContext(device=x.device), 0, 1, x.dtype)

    register(OpDef(name, ("x",), (), _like_infer(name), run, random=True,
                   doc=f"{kind} [0, 1) random values shaped like x" if kind == "uniform" else
                   "standard normal random values shaped like x"))


_dist("uniform", "minval", "maxval")
_dist("normal", "mean", "std")
_like_op("rand_like", "uniform")
_like_op("randn_like", "normal")
