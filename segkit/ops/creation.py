"""Creation ops: ``full`` (a tensor of one value) and ``iota`` (an arithmetic sequence), with nvFuser's
argument checks (csrc/ops/arith.cpp)."""

from __future__ import annotations

import math

import torch

from segkit.dtypes import DataType
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, legacy_spellings, register, runtime_ints, \
    scalar_kind, static, static_shape


def _full_infer(a: dict) -> list[Out]:
    shape = static_shape(a["shape"], "shape")
    if not isinstance(a["dtype"], DataType):
        raise InferError(f"dtype must be a DataType, got {a['dtype']!r}")
    return [Out(a["dtype"], tuple(shape), (False,) * len(shape), (False,) * len(shape))]


def _full_run(a, ctx):
    v = a["fill_value"]
    return torch.full(runtime_ints(a["shape"]), v.item() if isinstance(v, torch.Tensor) else v,
                      dtype=a["dtype"].torch, device=ctx.device)


def _iota_infer(a: dict) -> list[Out]:
    """nvFuser's checks (csrc/ops/arith.cpp iota): integer length; start and step of dtype's kind."""
    dtype = a["dtype"]
    if not isinstance(dtype, DataType) or dtype.torch.is_complex or dtype is DataType.Bool:
        raise InferError(f"iota dtype must be an integer or floating DataType, got {dtype!r}")
    want = "float" if dtype.is_float else "int"
    if scalar_kind(a["length"]) != "int":
        raise InferError(f"length must be integer, but get dtype {getattr(a['length'], 'dtype', a['length'])!r}")
    for name in ("start", "step"):
        if a[name] is not None and scalar_kind(a[name]) != want:
            raise InferError(f"iota: {name} dtype does not match specified dtype argument {dtype!r}")
    if isinstance(static(a["step"]), (int, float)) and static(a["step"]) == 0:
        raise InferError("iota: step value must not equal zero.")
    n = static(a["length"])
    return [Out(a["dtype"], (-1 if n is None else n,), (False,), (False,))]


def _iota_run(a, ctx):
    start = 0 if a["start"] is None else a["start"]
    step = 1 if a["step"] is None else a["step"]
    if not all(math.isfinite(x) for x in (a["length"], start, step)):
        raise ValueError("iota: length, start, step must be finite numbers.")
    if step == 0:
        raise ValueError("iota: step value must not equal zero.")
    n = int(a["length"])
    return (torch.arange(n, device=ctx.device, dtype=torch.float64) * step + start).to(a["dtype"].torch)


register(OpDef("full", (), (("shape", REQUIRED), ("fill_value", REQUIRED), ("dtype", REQUIRED)),
               _full_infer, _full_run, literal_operands=False, size_attrs=("shape",),
               overloads=legacy_spellings({"size": "shape", "arg": "fill_value"})))  # until PR #593 (0.0.16, 2023-08)
register(OpDef("iota", ("length",), (("start", None), ("step", None), ("dtype", DataType.Int)),
               _iota_infer, _iota_run))
