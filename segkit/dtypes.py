"""nvFuser's DataType, spelled as nvfuser_direct spells it, with its torch equivalents."""

from __future__ import annotations

import enum

import torch


class DataType(enum.Enum):
    """Stand-in for ``nvfuser_direct.DataType``: same member names, so scripts need no edits."""

    Double = "Double"
    Float = "Float"
    Half = "Half"
    BFloat16 = "BFloat16"
    Float8_e4m3fn = "Float8_e4m3fn"
    Float8_e5m2 = "Float8_e5m2"
    Float8_e8m0fnu = "Float8_e8m0fnu"
    Float4_e2m1fn = "Float4_e2m1fn"
    Float4_e2m1fn_x2 = "Float4_e2m1fn_x2"
    Int = "Int"
    Int32 = "Int32"
    Index = "Index"
    UInt64 = "UInt64"
    Bool = "Bool"
    ComplexFloat = "ComplexFloat"
    ComplexDouble = "ComplexDouble"
    Null = "Null"

    def __repr__(self) -> str:
        return f"DataType.{self.name}"

    __str__ = __repr__

    def __call__(self) -> DataType:
        """nvFuser spells a tensor's dtype ``t.dtype()``; calling a DataType gives itself so that works."""
        return self

    @property
    def torch(self) -> torch.dtype:
        try:
            return _TO_TORCH[self]
        except KeyError:
            raise ValueError(f"{self!r} has no torch dtype") from None

    @property
    def is_float(self) -> bool:
        return self.torch.is_floating_point

    @property
    def itemsize(self) -> int:
        return self.torch.itemsize


_TO_TORCH = {
    DataType.Double: torch.float64,
    DataType.Float: torch.float32,
    DataType.Half: torch.float16,
    DataType.BFloat16: torch.bfloat16,
    DataType.Float8_e4m3fn: torch.float8_e4m3fn,
    DataType.Float8_e5m2: torch.float8_e5m2,
    DataType.Float8_e8m0fnu: torch.float8_e8m0fnu,
    DataType.Float4_e2m1fn_x2: torch.float4_e2m1fn_x2,
    DataType.Int: torch.int64,
    DataType.Index: torch.int64,
    DataType.Int32: torch.int32,
    DataType.UInt64: torch.uint64,
    DataType.Bool: torch.bool,
    DataType.ComplexFloat: torch.complex64,
    DataType.ComplexDouble: torch.complex128,
}
_FROM_TORCH = {v: k for k, v in reversed(list(_TO_TORCH.items()))}


def from_torch(dtype: torch.dtype) -> DataType:
    """The nvFuser DataType of a torch dtype."""
    try:
        return _FROM_TORCH[dtype]
    except KeyError:
        raise ValueError(f"torch dtype {dtype} has no nvFuser DataType") from None


def of_python(value) -> DataType:
    """DataType nvFuser gives a Python literal: bool -> Bool, int -> Int, float -> Double."""
    if isinstance(value, bool):
        return DataType.Bool
    if isinstance(value, int):
        return DataType.Int
    if isinstance(value, float):
        return DataType.Double
    if isinstance(value, complex):
        return DataType.ComplexDouble
    raise TypeError(f"{value!r} is not a scalar nvFuser accepts")


def python_value(x, dtype: DataType):
    """A scalar (Python number or 0-d tensor) as the Python type ``dtype`` stands for."""
    if isinstance(x, torch.Tensor):
        x = x.item()
    if dtype is DataType.Bool:
        return bool(x)
    if dtype.torch.is_complex:
        return complex(x)
    return float(x) if dtype.is_float else int(x)

