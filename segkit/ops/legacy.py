"""Ops of nvFuser's legacy Python frontend (the ``nvfuser`` package, 2023-2026) that nvfuser_direct dropped:
each is recorded as the catalogue ops it stands for (a composite: it never appears in the IR), so repro
scripts pasted from old issue threads run unchanged.

* ``tensor_sizes(arg)``: one Int scalar per dim (the legacy ``TensorSizesRecord``, later ``shape``);
* ``at(arg, index)``: one entry of a vector (``fd.define_vector`` / ``shape``), which segkit keeps as a list;
* ``add_alpha(arg1, arg2, alpha)`` / ``sub_alpha``: ``arg1 +/- arg2 * alpha``, operands and alpha first cast to
  the operands' common dtype as nvFuser's csrc/ops/arith.cpp ``add_alpha`` / ``sub_alpha`` do.
"""

from __future__ import annotations

from typing import Any

from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, register, tensor_arg
from segkit.ops.promotion import common_dtype


def _decomposed(*_: Any) -> None:
    """A composite's shape rule and reference: never called, since it is recorded as the ops it stands for."""
    raise AssertionError("a composite is recorded as other ops, never inferred or run itself")


def _tensor_sizes(fd: Any, a: dict) -> list[Value]:
    x = tensor_arg(a["arg"], "tensor_sizes's arg")
    if x.ndim == 0:
        return []
    sizes = fd.ops.shape(x)
    return list(sizes) if isinstance(sizes, tuple) else [sizes]


def _at(fd: Any, a: dict) -> Any:
    vec, index = a["arg"], a["index"]
    if isinstance(vec, Value) and not vec.is_tensor:  # the shape of a rank-1 tensor comes back as one scalar
        vec = [vec]
    if not isinstance(vec, (list, tuple)):
        raise InferError(f"at takes a vector (a list from define_vector or shape), got {vec!r}")
    if isinstance(index, bool) or not isinstance(index, int) or not -len(vec) <= index < len(vec):
        raise InferError(f"at: index {index!r} is out of range for a vector of size {len(vec)}")
    return vec[index]


def _with_alpha(combine: str):
    def decompose(fd: Any, a: dict) -> Value:
        x, y, alpha = a["arg1"], a["arg2"], a["alpha"]
        if isinstance(alpha, Value) and alpha.is_tensor:
            raise InferError(f"{combine}_alpha: alpha must be a scalar, got tensor {alpha.describe()}")
        try:
            common = common_dtype([x, y])
        except ValueError as e:
            raise InferError(f"{combine}_alpha: {e}") from None
        x, y, alpha = (fd.ops.cast(v, dtype=common) if isinstance(v, Value) and v.dtype is not common else v
                       for v in (x, y, alpha))
        if not isinstance(alpha, Value):  # a Python number is cast to the common dtype, as promoteValues does
            alpha = fd.define_scalar(alpha, dtype=common)
        return getattr(fd.ops, combine)(x, fd.ops.mul(y, alpha))

    return decompose


register(OpDef("tensor_sizes", ("arg",), (), _decomposed, _decomposed, decompose=_tensor_sizes,
               doc="legacy: the sizes of arg as Int scalars (recorded as shape)"))
register(OpDef("at", ("arg",), (("index", REQUIRED),), _decomposed, _decomposed, decompose=_at, literal_operands=False,
               doc="legacy: one entry of a vector"))
for _combine in ("add", "sub"):
    register(OpDef(f"{_combine}_alpha", ("arg1", "arg2", "alpha"), (), _decomposed, _decomposed,
                   decompose=_with_alpha(_combine), literal_operands=False,
                   doc=f"legacy: arg1 {'+' if _combine == 'add' else '-'} arg2 * alpha"))
