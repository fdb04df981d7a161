"""nvFuser's type promotion, so a recorded op gets the dtype nvFuser gives it, not the one torch would.

Follows nvFuser 0.2.36: ``computeTypes`` in csrc/type_promotion.cpp (torch-like categories: tensors of rank
>= 1, 0-dim tensors, scalars) and ``promoteType`` in csrc/type.h (C++'s usual arithmetic conversions, then
the 16-bit and 8-bit floats). Where it departs from torch:

* a Double scalar is not demoted to the default dtype: Int tensor * 0.5 is Double (torch: Float);
* after the common dtype is found, Half, BFloat16 and the Float8 types become Float for nearly every op
  (``cast_half_to_float``): BFloat16 + BFloat16 is Float, computed in float32 (csrc/ops/arith.cpp);
* ``float_op_config`` ops (sin, exp, truediv, ...) turn integral and Bool inputs into Float.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from segkit.dtypes import DataType, from_torch, of_python
from segkit.ir import Value

#: The floating dtypes nvFuser computes in Float (csrc/type_promotion.cpp, computeTypes).
REDUCED_FLOATS = frozenset({DataType.Half, DataType.BFloat16, DataType.Float8_e4m3fn, DataType.Float8_e5m2})

_INTEGRAL = frozenset({DataType.Int, DataType.Int32, DataType.Index, DataType.UInt64})
_COMPLEX = frozenset({DataType.ComplexFloat, DataType.ComplexDouble})
#: C++'s usual arithmetic conversions over the dtypes with a native C++ type, lowest first.
_NATIVE_RANK = [DataType.Bool, DataType.Int32, DataType.Int, DataType.Float, DataType.Double,
                DataType.ComplexFloat, DataType.ComplexDouble]


def is_integral(dt: DataType) -> bool:
    return dt in _INTEGRAL


def is_floating(dt: DataType) -> bool:
    return dt not in _COMPLEX and dt not in _INTEGRAL and dt not in (DataType.Bool, DataType.Null) and dt.is_float


def is_complex(dt: DataType) -> bool:
    return dt in _COMPLEX


def promote_type(a: DataType, b: DataType) -> DataType:
    """csrc/type.h ``promoteType``: same dtype stays; Index wins over integers; Double + ComplexFloat is
    ComplexDouble (ATen's rule); native C++ types by C++'s conversions; then Double + any float is Double,
    two floats are Float, complex beats a 16-bit float, a 16-bit float beats integers and Bool."""
    if a is b:
        return a
    if DataType.Index in (a, b) and is_integral(a) and is_integral(b):
        return DataType.Index
    if {a, b} == {DataType.Double, DataType.ComplexFloat}:
        return DataType.ComplexDouble
    if a in _NATIVE_RANK and b in _NATIVE_RANK:
        return max(a, b, key=_NATIVE_RANK.index)
    if DataType.Double in (a, b) and is_floating(a) and is_floating(b):
        return DataType.Double
    if is_floating(a) and is_floating(b):
        return DataType.Float
    for t in (a, b):
        if is_complex(t):
            return t
    for t in (a, b):
        if is_floating(t):
            return t
    raise ValueError(f"nvFuser cannot promote {a!r} and {b!r} to a common dtype (csrc/type.h promoteType)")


def _skip_null(a: DataType | None, b: DataType | None) -> DataType | None:
    if a is None:
        return b
    if b is None:
        return a
    return promote_type(a, b)


def _complex_of(dt: DataType) -> DataType:
    return DataType.ComplexDouble if dt is DataType.Double else DataType.ComplexFloat


def _combine(higher: DataType | None, lower: DataType | None) -> DataType | None:
    """``combineCategories``: the higher category wins unless the lower one is a wider kind of number."""
    if higher is not None and is_complex(higher):
        return higher
    if lower is not None and is_complex(lower):
        return _complex_of(higher) if higher is not None and is_floating(higher) else lower
    if higher is not None and is_floating(higher):
        return higher
    if higher is DataType.Bool or (lower is not None and is_floating(lower)):
        return _skip_null(higher, lower)
    return higher if higher is not None else lower


def _category(x: Any) -> tuple[DataType, str]:
    """(dtype, category): 'dim' for tensors of rank >= 1, 'zero' for 0-dim tensors, 'wrapped' for scalars
    (recorded Values, or run-time torch tensors and Python numbers)."""
    if isinstance(x, torch.Tensor):
        return from_torch(x.dtype), "dim" if x.ndim else "zero"
    if isinstance(x, Value):
        if x.is_tensor:
            return x.dtype, "dim" if x.ndim > 0 else "zero"
        return x.dtype, "wrapped"
    return of_python(x), "wrapped"


def common_dtype(operands: Sequence[Any], *, int_to_float: bool = False, half_to_float: bool = True) -> DataType:
    """nvFuser's ``computeTypes`` over recorded Values and Python numbers (float -> Double, int -> Int,
    bool -> Bool, complex -> ComplexDouble, as nvfuser_direct's bindings make them)."""
    cats = [_category(x) for x in operands]
    dtypes = {dt for dt, _ in cats}
    if len(dtypes) == 1:
        common = dtypes.pop()
    else:
        dim = zero = wrapped = None
        for dt, kind in cats:
            if kind == "dim":
                dim = _skip_null(dim, dt)
            elif kind == "zero":
                zero = _skip_null(zero, dt)
            else:  # a 16-bit or 8-bit float scalar counts as Float
                wrapped = _skip_null(wrapped, DataType.Float if dt in REDUCED_FLOATS else dt)
        common = _combine(dim, _combine(zero, wrapped))
    if int_to_float and (is_integral(common) or common is DataType.Bool):
        common = DataType.Float
    if half_to_float and common in REDUCED_FLOATS:
        common = DataType.Float
    return common
