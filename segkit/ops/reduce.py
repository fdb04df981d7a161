"""Reductions: sum, prod, max, min over ``dims``; var, var_mean and welford; and ``mean``, which
nvfuser_direct lacks and the recording frontend offers as sum * (1/N), exactly as Thunder decomposes it.

A 16-bit or 8-bit float sum / prod / min / var is refused while recording: nvFuser reduces in the operand's
dtype and its runtime lacks those operators for those types, so the kernel would not compile.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, RunContext, legacy_spellings, norm_dims, register, \
    tensor_arg, uncompilable
from segkit.ops.promotion import REDUCED_FLOATS


def _reduced(x: Value, dims: list[int], keepdim: bool, dtype: DataType) -> Out:
    shape, bc, ex = [], [], []
    for d in range(x.ndim):
        if d in dims:
            if keepdim:
                shape.append(1), bc.append(True), ex.append(False)
        else:
            shape.append(x.shape[d]), bc.append(x.broadcast[d]), ex.append(x.expanded[d])
    return Out(dtype, tuple(shape), tuple(bc), tuple(ex))


def _sum_dtype(x: Value, dtype: DataType) -> DataType:
    if dtype is not DataType.Null:
        return dtype
    return x.dtype if x.dtype.is_float or x.dtype.torch.is_complex else DataType.Int


def _reduction_overloads(name: str):
    """nvFuser's three reduction overloads, as one canonical call ``(arg, dims, keepdim, dtype)``:
    ``(arg, dtype=Null)`` over every dim, ``(arg, dim: int, keepdim, dtype)`` and
    ``(arg, dims: list, keepdim, dtype)``."""

    def normalize(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if len(args) >= 2 and isinstance(args[1], DataType):  # (arg, dtype): every dim
            if len(args) > 2 or {"dim", "dims", "keepdim", "dtype"} & set(kwargs):
                raise TypeError(f"{name}(arg, dtype) reduces every dim and takes no other argument")
            args, kwargs = args[:1], {**kwargs, "dtype": args[1]}
        if len(args) >= 2 and isinstance(args[1], int) and not isinstance(args[1], bool):
            args = (args[0], [args[1]], *args[2:])
        if "dim" in kwargs:
            dim = kwargs.pop("dim")
            if "dims" in kwargs or len(args) > 1:
                raise TypeError(f"{name}: give dim= or dims=, not both")
            if not isinstance(dim, int) or isinstance(dim, bool):
                raise TypeError(f"{name}: dim= takes one int (dims= takes a list), got {dim!r}")
            kwargs["dims"] = [dim]
        if kwargs.get("dtype", DataType.Null) is None:  # a Python None spelling of DataType.Null
            kwargs["dtype"] = DataType.Null
        has_dims = len(args) > 1 or kwargs.get("dims") is not None
        if not has_dims and (len(args) > 2 or "keepdim" in kwargs):
            raise TypeError(f"{name}: keepdim needs dim= or dims= (nvFuser's every-dim overload takes only dtype=)")
        return args, kwargs

    # the legacy frontend's names before nvFuser 0.1.6 (PR #1741, 2024-02): axis= for one dim, axes= for a list
    return legacy_spellings({"axis": "dim", "axes": "dims"}, then=normalize)


#: The reductions nvFuser cannot compile in a 16-bit float, and what their kernel lacks: nvFuser's runtime
#: defines max for __half / __bfloat and no other reduction operator.
_NO_REDUCED_REDUCTION = {"sum": "operator +", "prod": "operator *", "min": "min"}


def _reduction(name: str, reduce: Callable, with_dtype: bool, kind: str, beats: str | None = None) -> OpDef:
    def infer(a: dict) -> list[Out]:
        x = tensor_arg(a["arg"], f"{name}'s arg")
        dims = norm_dims(a["dims"], x.ndim) if a["dims"] is not None else list(range(x.ndim))
        if not isinstance(a["dtype"], DataType):
            raise InferError(f"dtype must be a DataType, got {a['dtype']!r}")
        if not with_dtype and a["dtype"] is not DataType.Null:
            raise InferError(f"dtype={a['dtype']!r}: nvFuser's {name} takes no dtype other than DataType.Null")
        dtype = _sum_dtype(x, a["dtype"]) if with_dtype else x.dtype
        if dtype in REDUCED_FLOATS and name in _NO_REDUCED_REDUCTION:
            raise uncompilable(name, dtype, f"nvFuser reduces in {dtype.name} and its runtime has no {dtype.name} "
                                            f"{_NO_REDUCED_REDUCTION[name]} (runtime/helpers.cu, bf16_support.cu, "
                                            "fp16_support.cu), so its kernel does not compile",
                               "pass dtype=DataType.Float" if with_dtype else "cast arg to Float first")
        return [_reduced(x, dims, bool(a["keepdim"]), dtype)]

    def run(a: dict, ctx: RunContext):
        x = a["arg"]
        dims = range(x.ndim) if a["dims"] is None else [a["dims"]] if isinstance(a["dims"], int) else a["dims"]
        dims = sorted(d % x.ndim for d in dims)
        if with_dtype:
            if a["dtype"] is not DataType.Null:
                x = x.to(a["dtype"].torch)
            elif not (x.dtype.is_floating_point or x.dtype.is_complex):
                x = x.to(torch.int64)
        return reduce(x, dims, bool(a["keepdim"])) if dims else x.clone()

    attrs = (("dims", None), ("keepdim", False), ("dtype", DataType.Null))
    return register(OpDef(name, ("arg",), attrs, infer, run, overloads=_reduction_overloads(name),
                          reduction_kind=kind, extremum_beats=beats))


def _prod(x, dims, keepdim):
    """Product over several dims, accumulated in float32 for 16-bit floats (as nvFuser does), rounded once."""
    out_dtype = x.dtype
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=keepdim)
    return x.to(out_dtype)


_reduction("sum", lambda x, d, k: torch.sum(x, d, keepdim=k), True, "sum")
_reduction("prod", _prod, True, "product")
_reduction("max", lambda x, d, k: torch.amax(x, d, keepdim=k), False, "extremum", "gt")
_reduction("min", lambda x, d, k: torch.amin(x, d, keepdim=k), False, "extremum", "lt")


def _var_infer(n_out: int, keepdim_attr: bool):
    def infer(a: dict) -> list[Out]:
        x = tensor_arg(a["arg"], "arg")
        if not x.dtype.is_float:
            raise InferError(f"variance needs a floating-point tensor, got {x.dtype.name}")
        if n_out == 2 and x.dtype in (DataType.Half, DataType.BFloat16, DataType.Float8_e4m3fn, DataType.Float8_e5m2):
            raise InferError(f"var_mean is not supported for {x.dtype.name} (nvFuser's rule): cast arg to Float first")
        if n_out == 1 and x.dtype in REDUCED_FLOATS:
            raise uncompilable("var", x.dtype, f"nvFuser's variance starts with a mean, a sum in {x.dtype.name}, and "
                                               f"its runtime has no {x.dtype.name} operator + (csrc/ops/normalization.cpp"
                                               ", runtime/helpers.cu), so its kernel does not compile",
                               "cast arg to Float first")
        if a.get("correction", 0) < 0:
            raise InferError(f"correction must be non-negative, got {a['correction']}")
        dims = norm_dims(a["dims"], x.ndim)
        out = _reduced(x, dims, bool(a.get("keepdim", False)) if keepdim_attr else False, x.dtype)
        outs = [out] * min(n_out, 2)
        if n_out == 3:
            # nvFuser's count is DataType::Index (Int32 or Int64 by the kernel's index mode; see check._index_as_int64)
            outs.append(Out(DataType.Index, out.shape, out.broadcast, out.expanded))
        return outs

    return infer


def _var_mean_rounded(x: torch.Tensor, dims, correction: int, keepdim: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Variance and mean computed in double precision and rounded once to the operand's precision: the
    correctly rounded answer, the same on every device. torch's own float32 kernels round differently on
    CPU and CUDA (a mean or variance that is exactly 0 may come out a tiny nonzero), and a later ``x / mean``
    or ``x / var`` turns that rounding into a different Inf or a huge error, where nvFuser's Welford
    (csrc/ops/normalization.cpp, variance_mean) is exact (fuzz finding f008)."""
    var, mean = torch.var_mean(x.to(torch.float64), dims, correction=correction, keepdim=keepdim)
    return var.to(x.dtype), mean.to(x.dtype)


def _var_run(a, ctx):
    return _var_mean_rounded(a["arg"], a["dims"], a["correction"], a["keepdim"])[0]


def _var_mean_run(a, ctx):
    return _var_mean_rounded(a["arg"], a["dims"], a["correction"], a["keepdim"])


def _welford_run(a, ctx):
    x, dims = a["arg"], a["dims"]
    n = math.prod(x.shape[d] for d in dims)
    var, avg = torch.var_mean(x.to(torch.float64), dims, correction=0)
    return avg.to(x.dtype), (var * n).to(x.dtype), torch.full_like(avg, n, dtype=torch.int64)


_VAR_ATTRS = (("dims", REQUIRED), ("correction", 1), ("keepdim", False))
#: var and var_mean took axes= in the legacy frontend until PR #1741 (2024-02)
_VAR_SPELLINGS = legacy_spellings({"axes": "dims"})
register(OpDef("var", ("arg",), _VAR_ATTRS, _var_infer(1, True), _var_run, overloads=_VAR_SPELLINGS))
register(OpDef("var_mean", ("arg",), _VAR_ATTRS, _var_infer(2, True), _var_mean_run, overloads=_VAR_SPELLINGS,
               doc="returns (var, mean)"))
register(OpDef("welford", ("arg",), (("dims", REQUIRED),), _var_infer(3, False), _welford_run,
               doc="returns (avg, var_sum, n)"))


def _mean(fd: Any, a: dict) -> Any:
    """mean = sum * (1/N): nvfuser_direct has no mean op; Thunder decomposes it the same way."""
    arg, dims = a["arg"], a["dims"]
    total = fd.ops.sum(arg, dims=dims, keepdim=a["keepdim"], dtype=a["dtype"])
    reduced = norm_dims(dims, arg.ndim) if dims is not None else list(range(arg.ndim))
    sizes = [arg.shape[d] for d in reduced]
    if all(s != -1 for s in sizes):
        return fd.ops.mul(total, 1.0 / math.prod(sizes))
    n = fd.ops.size(arg, dim=reduced[0])
    for d in reduced[1:]:
        n = fd.ops.mul(n, fd.ops.size(arg, dim=d))
    return fd.ops.div(total, fd.ops.cast(n, dtype=DataType.Double))


def _mean_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    return [_reduced(x, norm_dims(a["dims"], x.ndim) if a["dims"] is not None else list(range(x.ndim)),
                     bool(a["keepdim"]), x.dtype)]


register(OpDef("mean", ("arg",), (("dims", REQUIRED), ("keepdim", False), ("dtype", None)), _mean_infer,
               lambda a, ctx: None, decompose=_mean, doc="not an nvFuser op: recorded as sum * (1/N)"))
