"""Pointwise ops and cast: unary, binary and ternary elementwise ops, typed as nvFuser types them.

Their operands are cast to nvFuser's common dtype (segkit.ops.promotion: BFloat16 + BFloat16 is Float,
computed in float32; Int * 0.5 is Double) and the torch reference runs on them, on meta tensors for the dtype
rule, so the rule and the interpreter can never disagree. Op x dtype pairs nvFuser accepts but cannot compile
(NO_REDUCED_FLOAT_KERNEL, NO_INTEGRAL_KERNEL, mod on floats) are refused while recording, saying so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from segkit.dtypes import DataType, from_torch
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, RunContext, out_like, register, uncompilable
from segkit.ops.promotion import REDUCED_FLOATS, common_dtype, is_integral


def _sample(x: Any, scalar_only: bool) -> Any:
    """A stand-in for dtype inference: 1-d meta tensors for tensors, numbers for scalars."""
    if isinstance(x, Value):
        if x.is_tensor:
            return torch.empty((1,), dtype=x.dtype.torch, device="meta")
        dt = x.dtype
    else:
        return x
    if scalar_only:
        return torch.ones((), dtype=dt.torch if dt is not DataType.Null else torch.float64)
    if dt is DataType.Bool:
        return True
    if dt.torch.is_complex:
        return 1 + 1j
    return 1.5 if dt.is_float else 3


def _promoted_sample(x: Any, compute: DataType) -> torch.Tensor:
    """An operand already cast to nvFuser's common dtype: a 1-d meta tensor, or a 0-d tensor for a scalar."""
    if isinstance(x, Value) and x.is_tensor:
        return torch.empty((1,), dtype=compute.torch, device="meta")
    return torch.ones((), dtype=compute.torch)


def _pointwise_infer(name: str, fn: Callable, operands: tuple[str, ...]):
    """The shape rule, and the dtype found by running ``fn`` on meta tensors whose promoted operands
    already hold ``compute`` (nvFuser's common dtype; None: the op does not promote)."""
    def infer(a: dict, compute: DataType | None = None, promoted: tuple[str, ...] = ()) -> list[Out]:
        vals = [a[o] for o in operands]
        tensors = [v for v in vals if isinstance(v, Value) and v.is_tensor]
        scalar_only = not tensors
        try:
            sample = fn(*[_promoted_sample(a[o], compute) if compute is not None and o in promoted
                          else _sample(a[o], scalar_only) for o in operands])
        except Exception as e:  # torch's own dtype rules reject the combination
            dts = ", ".join(v.dtype.name if isinstance(v, Value) else repr(v) for v in vals)
            raise InferError(f"{name} does not accept operands of dtypes ({dts}): {e}") from None
        dtype = from_torch(sample.dtype) if isinstance(sample, torch.Tensor) else DataType.Double
        if scalar_only:
            return [Out(dtype)]
        # nvFuser broadcasts lower-rank tensors on the left (csrc/ops/utils.cpp maybeBroadcast), like numpy
        n = max(t.ndim for t in tensors)
        padded = [((1,) * (n - t.ndim) + tuple(t.shape), (True,) * (n - t.ndim) + t.broadcast,
                   (False,) * (n - t.ndim) + t.expanded, t) for t in tensors]
        shape, bcast, exp = [], [], []
        for d in range(n):
            sizes = {s[d] for s, b, e, _ in padded if not (b[d] and not e[d])}
            known = {s for s in sizes if s != -1}
            if len(known) > 1:
                desc = ", ".join(f"{t.name}{list(t.shape)}" for t in tensors)
                raise InferError(f"{name}: sizes of dim {d} do not match (lower ranks broadcast on the left): {desc}")
            if known:
                shape.append(known.pop())
            elif sizes:
                shape.append(-1)
            else:
                shape.append(1)
            all_b = all(b[d] for _, b, _, _ in padded)
            bcast.append(all_b)
            exp.append(all_b and any(e[d] for _, _, e, _ in padded))
        return [Out(dtype, tuple(shape), tuple(bcast), tuple(exp))]

    return infer


def _is_int(x: Any) -> bool:
    if isinstance(x, torch.Tensor):
        return not (x.dtype.is_floating_point or x.dtype.is_complex)
    return isinstance(x, int)


def _as_t(x: Any, like: Any) -> Any:
    """torch functions that refuse Python numbers get a 0-d tensor (no type promotion weight)."""
    if isinstance(x, torch.Tensor):
        return x
    dev = like.device if isinstance(like, torch.Tensor) else "cpu"
    return torch.tensor(x, device=dev)


def _tensor_fn(fn: Callable) -> Callable:
    def call(*xs):
        like = next((x for x in xs if isinstance(x, torch.Tensor)), None)
        return fn(*[_as_t(x, like) for x in xs])

    return call


def _by_zero_on_cuda(dividend: torch.Tensor) -> torch.Tensor:
    """What an nvFuser kernel gives for an integer ``a / 0`` or ``a % 0``. nvFuser emits C's ``/`` and ``%`` for
    integer div, mod, fmod and remainder (csrc/codegen.cpp genBinaryOp; runtime/helpers.cu fmod, remainder),
    which CUDA leaves undefined and NVIDIA GPUs answer with all ones: -1 for 32-bit and narrower integers, and
    for int64 2**32 - 1 where the dividend is >= 0 and -1 where it is negative (the 64-bit division is
    emulated; as documented in pytorch's test_binary_ufuncs.py test_fmod_remainder_by_zero_integral, and
    https://github.com/pytorch/pytorch/issues/135330 for int64 division)."""
    ones = torch.full_like(dividend, -1)
    if dividend.dtype == torch.int64:
        return torch.where(dividend >= 0, torch.full_like(dividend, 2**32 - 1), ones)
    return ones


def _int_by_zero(fn: Callable) -> Callable:
    """``fn`` (an integer division or modulo) with nvFuser's answers where the divisor is 0: a kernel's
    (:func:`_by_zero_on_cuda`) for tensors, and nvFuser's host error for scalar arithmetic, which its
    expression evaluator refuses (csrc/ir/internal_nodes.cpp BinaryOp::evaluate)."""
    def call(a, b):
        a, b = _as_t(a, b), _as_t(b, a)
        if (not (_is_int(a) and _is_int(b)) or a.dtype == torch.bool or b.device.type == "meta"
                or not bool((b == 0).any())):  # on meta tensors the dtype rule runs: no values to look at
            return fn(a, b)
        if a.ndim == 0 and b.ndim == 0:
            raise ZeroDivisionError("Integer division by zero detected (nvFuser refuses it in scalar arithmetic)")
        zero = b == 0
        result = fn(a, torch.where(zero, torch.ones_like(b), b))
        dividend = a.expand(result.shape).to(result.dtype)
        return torch.where(zero, _by_zero_on_cuda(dividend), result)

    return call


def _div(a, b):
    if _is_int(a) and _is_int(b):
        return torch.div(_as_t(a, b), b, rounding_mode="trunc")
    return a / b


def _where(c, x, y):
    c = _as_t(c, x if isinstance(x, torch.Tensor) else y)
    return torch.where(c, x, y)


def _clamp(x, lo, hi):
    """min(max(x, lo), hi) with lo and hi cast to x's dtype first (as nvFuser does: csrc/ops/arith.cpp clamp)."""
    lo, hi = (_as_t(b.item() if isinstance(b, torch.Tensor) else b, x).to(x.dtype) for b in (lo, hi))
    return torch.minimum(torch.maximum(x, lo), hi)


#: nvFuser's TypePromotionConfigs (csrc/type_promotion.h) as arguments of promotion.common_dtype:
#: "float" = float_op_config (integral and Bool inputs become Float), "default" = default_op_config,
#: "where" = default_op_config without the 16-bit -> Float step (csrc/ops/arith.cpp ``where``);
#: every one of them but "where" computes Half/BFloat16/Float8 in Float. "keep": the op does not promote.
_PROMOTION = {"float": {"int_to_float": True}, "default": {}, "where": {"half_to_float": False}}


def _pointwise(name: str, fn: Callable, operands: tuple[str, ...], doc: str = "",
               check: Callable[[dict], None] | None = None, literal_operands: bool = True,
               promote: str = "default", promoted: tuple[str, ...] | None = None) -> OpDef:
    """An elementwise op typed as nvFuser types it: the ``promoted`` operands (default: all) are cast to
    nvFuser's common dtype under the ``promote`` config (see _PROMOTION) and ``fn`` computes in it, so a
    BFloat16 add is a float32 add returning Float, as on nvFuser. ``check`` adds nvFuser's own argument
    rules (and refusals of what nvFuser cannot compile) before the dtype rule runs."""
    inferred = _pointwise_infer(name, fn, operands)
    promoted = operands if promoted is None else promoted

    def compute_dtype(vals: list[Any]) -> DataType | None:
        if promote == "keep":
            return None
        return common_dtype(vals, **_PROMOTION[promote])

    def infer(a: dict) -> list[Out]:
        if check is not None:
            check(a)
        try:
            compute = compute_dtype([a[o] for o in promoted])
        except ValueError as e:
            raise InferError(f"{name}: {e}") from None
        return inferred(a, compute, promoted)

    def run(a: dict, ctx: RunContext):
        recorded = ctx.op.args if ctx.op is not None and ctx.op.name == name else None
        compute = compute_dtype([recorded[o] if recorded is not None else a[o] for o in promoted])
        scalar_only = not any(isinstance(a[o], torch.Tensor) and a[o].ndim > 0 for o in operands)
        tensors = [a[o] for o in operands if isinstance(a[o], torch.Tensor)]
        # a literal joins its tensor operands' device: ops such as gcd refuse a CPU 0-d operand beside a CUDA one
        device = max(tensors, key=lambda t: t.ndim).device if tensors else None
        vals = []
        for o in operands:
            v = a[o]
            if compute is not None and o in promoted:
                v = (v.to(compute.torch) if isinstance(v, torch.Tensor)
                     else torch.tensor(v, dtype=compute.torch, device=device))
            elif scalar_only and not isinstance(v, torch.Tensor):
                v = torch.tensor(v)  # scalar arithmetic: compute on 0-d tensors
            vals.append(v)
        return fn(*vals)

    return register(OpDef(name, operands, (), infer, run, doc=doc, literal_operands=literal_operands,
                          elementwise=True))


#: The unary ops of one operand ``x``, by name: the torch function each one's reference applies.
UNARY = {
    "abs": torch.abs, "neg": torch.neg, "exp": torch.exp, "exp2": torch.exp2, "expm1": torch.expm1,
    "log": torch.log, "log2": torch.log2, "log10": torch.log10, "log1p": torch.log1p,
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "tanh": torch.tanh,
    "sigmoid": torch.sigmoid, "sin": torch.sin, "cos": torch.cos, "tan": torch.tan,
    "asin": torch.asin, "acos": torch.acos, "atan": torch.atan, "sinh": torch.sinh,
    "cosh": torch.cosh, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh,
    "erf": torch.erf, "erfc": torch.erfc, "erfinv": torch.erfinv, "lgamma": torch.lgamma,
    "ceil": torch.ceil, "floor": torch.floor, "round": torch.round, "trunc": torch.trunc,
    "frac": torch.frac, "sign": torch.sign, "signbit": torch.signbit, "relu": torch.relu,
    "silu": F.silu, "isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite,
    "isneginf": torch.isneginf, "isposinf": torch.isposinf, "logical_not": torch.logical_not,
    "bitwise_not": torch.bitwise_not,
}
#: The binary ops of operands ``lhs`` and ``rhs``, by name: the torch function each one's reference applies.
BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _int_by_zero(_div), "truediv": _tensor_fn(torch.true_divide), "pow": _tensor_fn(torch.pow),
    "fmod": _int_by_zero(torch.fmod), "mod": _int_by_zero(torch.fmod), "remainder": _int_by_zero(torch.remainder),
    "maximum": _tensor_fn(torch.maximum), "minimum": _tensor_fn(torch.minimum),
    "atan2": _tensor_fn(torch.atan2), "nextafter": _tensor_fn(torch.nextafter),
    "eq": lambda a, b: _as_t(a, b) == b, "ne": lambda a, b: _as_t(a, b) != b,
    "lt": lambda a, b: _as_t(a, b) < b, "le": lambda a, b: _as_t(a, b) <= b,
    "gt": lambda a, b: _as_t(a, b) > b, "ge": lambda a, b: _as_t(a, b) >= b,
    "logical_and": _tensor_fn(torch.logical_and), "logical_or": _tensor_fn(torch.logical_or),
    "bitwise_and": _tensor_fn(torch.bitwise_and), "bitwise_or": _tensor_fn(torch.bitwise_or),
    "bitwise_xor": _tensor_fn(torch.bitwise_xor),
    "bitwise_left_shift": _tensor_fn(torch.bitwise_left_shift),
    "bitwise_right_shift": _tensor_fn(torch.bitwise_right_shift),
}
#: Pointwise ops nvFuser types with float_op_config (csrc/ops/arith.cpp: NVFUSER_DEFINE_UNARY_FLOAT_OP,
#: NVFUSER_DEFINE_BINARY_FLOAT_OP): integral and Bool inputs become Float, 16-bit floats compute in Float.
FLOAT_OPS = frozenset({
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "exp2", "expm1", "erf", "erfc",
    "erfinv", "erfcinv", "lgamma", "log", "log10", "log1p", "log2", "reciprocal", "rsqrt", "sigmoid", "sin",
    "sinh", "sqrt", "tan", "tanh", "truediv", "atan2",
})
#: Pointwise ops nvFuser applies to their input's own dtype, no promotion (csrc/ops/arith.cpp:
#: NVFUSER_DEFINE_UNARY_OP, unaryIsOp, abs, logical_not / bitwise_not, threshold, clamp; sign in
#: csrc/ops/composite.cpp casts back to the input's dtype). Every other pointwise op uses default_op_config.
KEEP_DTYPE_OPS = frozenset({
    "abs", "ceil", "floor", "frac", "relu", "round", "silu", "trunc", "sign", "isfinite", "isinf", "isnan",
    "isneginf", "isposinf", "isreal", "logical_not", "bitwise_not", "logical_and", "logical_or", "threshold",
    "clamp", "real", "imag", "complex", "logical_right_shift",
})
#: Ops nvFuser applies to a Half/BFloat16/Float8 input without promoting it and whose kernel function has no
#: overload for those types: nvFuser's runtime defines only abs, max and isfinite for __half/__bfloat
#: (runtime/helpers.cu) and those structs have no arithmetic or comparison operators (runtime/bf16_support.cu,
#: fp16_support.cu), so NVRTC fails (nvFuser 0.2.36 reports an INTERNAL ASSERT at
#: csrc/runtime/compiled_kernel.cpp). segkit refuses them while recording.
NO_REDUCED_FLOAT_KERNEL = frozenset({
    "ceil", "floor", "frac", "relu", "round", "silu", "trunc", "isinf", "isnan", "isneginf", "isposinf",
    "clamp", "threshold",
})
#: Ops nvFuser applies to an integral or Bool input without promoting it, whose runtime function exists for
#: float and double only (runtime/helpers.cu): the call is ambiguous and NVRTC fails.
NO_INTEGRAL_KERNEL = frozenset({"frac", "silu"})


def _kernel_exists_check(name: str, operand: str):
    """Refuse ``operand`` dtypes nvFuser's runtime has no ``name`` for (NO_REDUCED_FLOAT_KERNEL, NO_INTEGRAL_KERNEL)."""
    def check(a: dict) -> None:
        dt = _dtype_of(a[operand])
        if dt in REDUCED_FLOATS:
            raise uncompilable(name, dt, f"nvFuser applies {name} to {operand} without promoting it to Float and "
                                         f"its runtime has no {dt.name} {name} (runtime/helpers.cu), so its kernel "
                                         "does not compile", f"cast {operand} to Float first")
        if name in NO_INTEGRAL_KERNEL and dt is not None and (is_integral(dt) or dt is DataType.Bool):
            raise uncompilable(name, dt, f"nvFuser applies {name} to {operand} without promoting it and its runtime "
                                         f"has {name} for float and double only (runtime/helpers.cu), so the call "
                                         "is ambiguous and its kernel does not compile", f"cast {operand} to Float first")
    return check


def _mod_check(a: dict) -> None:
    dt = common_dtype([a["lhs"], a["rhs"]])
    if not (is_integral(dt) or dt is DataType.Bool):
        raise uncompilable("mod", dt, "nvFuser's kernel computes mod with C's % operator, which takes integers only "
                                      "(csrc/type.cpp)", "use fmod or remainder, or cast to an integer dtype")


def _nextafter_check(a: dict) -> None:
    dt = common_dtype([a["lhs"], a["rhs"]], half_to_float=False)
    if dt not in (DataType.Float, DataType.Double):
        raise InferError(f"nextafter: promoted type must be single or double precision float but found {dt.name} "
                         "(nvFuser's float_only_op_config, csrc/type_promotion.cpp)")


def _where_check(a: dict) -> None:
    c = a["condition"]
    if _dtype_of(c) is not DataType.Bool and not isinstance(c, bool):
        got = c.dtype.name if isinstance(c, Value) else repr(c)
        raise InferError(f"where: condition should be of DataType Bool, not {got} (nvFuser's rule)")


def _promotion_of(name: str) -> str:
    return "float" if name in FLOAT_OPS else "keep" if name in KEEP_DTYPE_OPS else "default"


_CHECKS = {"mod": _mod_check, "nextafter": _nextafter_check}
_CHECKS.update({name: _kernel_exists_check(name, "x") for name in NO_REDUCED_FLOAT_KERNEL & set(UNARY)})
for _name, _fn in UNARY.items():
    _pointwise(_name, _fn, ("x",), check=_CHECKS.get(_name), promote=_promotion_of(_name))
for _name, _fn in BINARY.items():
    _pointwise(_name, _fn, ("lhs", "rhs"), check=_CHECKS.get(_name), promote=_promotion_of(_name))
_pointwise("where", _where, ("condition", "x", "y"), check=_where_check, promote="where", promoted=("x", "y"))
_pointwise("lerp", _tensor_fn(torch.lerp), ("x", "y", "weight"))
_pointwise("clamp", _clamp, ("input", "min", "max"), check=_kernel_exists_check("clamp", "input"),
           promote="keep")


def _dtype_of(x: Any) -> DataType | None:
    return x.dtype if isinstance(x, Value) else None


def _is_integral(dt: DataType | None) -> bool:
    return dt is not None and dt is not DataType.Bool and not dt.is_float and not dt.torch.is_complex


def _ints_only(name: str):
    def check(a: dict) -> None:
        for k, v in a.items():
            if isinstance(v, Value) and not _is_integral(v.dtype) or isinstance(v, (float, complex, bool)):
                got = v.dtype.name if isinstance(v, Value) else repr(v)
                raise InferError(f"{name}: {k} must have an integral dtype (nvFuser's rule), got {got}")
    return check


def _upcast_float(fn: Callable) -> Callable:
    """A float op computed in double and returned in its input's dtype (already nvFuser's Float or Double)."""
    def call(x):
        return fn(x.to(torch.float64)).to(x.dtype)
    return call


def _logical_right_shift(x, shift):
    """nvFuser's formula (csrc/ops/arith.cpp): an arithmetic shift whose sign-fill is masked off."""
    x = _as_t(x, shift)
    shift = _as_t(shift, x)
    bits = 64 if x.dtype == torch.int64 else 32
    mask = torch.where(shift >= bits, torch.tensor(-1, dtype=x.dtype, device=x.device),
                       torch.bitwise_left_shift(torch.ones_like(shift, dtype=x.dtype), shift) - 1)
    shifted_mask = torch.bitwise_left_shift(mask, bits - shift)
    right = torch.bitwise_right_shift(x, shift)
    return torch.where(torch.signbit(x), torch.bitwise_xor(shifted_mask, right), right)


def _complex_check(a: dict) -> None:
    r, i = a["real"], a["imag"]
    for k, v in (("real", r), ("imag", i)):
        if not isinstance(v, Value):
            raise InferError(f"complex: {k} must be a tensor or a scalar of the fusion (fd.define_scalar), "
                             f"got {v!r}; nvFuser's binding takes no Python number here")
    if r.dtype is not i.dtype or r.dtype not in (DataType.Float, DataType.Double):
        raise InferError(f"complex needs real and imag of one dtype, Float or Double; got {r.dtype.name} and {i.dtype.name}")
    if r.is_tensor != i.is_tensor:
        raise InferError("complex takes two tensors or two scalars (nvFuser has no tensor-scalar overload)")


def _imag_check(a: dict) -> None:
    dt = _dtype_of(a["x"])
    if dt is None or not dt.torch.is_complex:
        raise InferError(f"imag is not supported for non-complex values, got {dt.name if dt else repr(a['x'])}")


def _scalars_only(name: str, *params: str):
    def check(a: dict) -> None:
        for k in params:
            if isinstance(a[k], Value) and a[k].is_tensor:
                raise InferError(f"{name}: {k} must be a scalar, got tensor {a[k].describe()}")
    return check


def _threshold(x, thresh, value):
    """x <= thresh ? value : x, with thresh and value cast to x's dtype first (as nvFuser does)."""
    x = _as_t(x, None)
    t = torch.tensor(thresh.item() if isinstance(thresh, torch.Tensor) else thresh).to(x.dtype).to(x.device)
    v = torch.tensor(value.item() if isinstance(value, torch.Tensor) else value).to(x.dtype).to(x.device)
    return torch.where(x <= t, v, x)


def _addcmul(a, b, c, alpha):
    """a + b * (c * alpha) in the operands' common dtype, alpha cast to it first (nvFuser's order)."""
    like = next((x for x in (a, b, c) if isinstance(x, torch.Tensor)), None)
    common = torch.result_type(_as_t(a, like), _as_t(b, like) + _as_t(c, like)) if like is not None else None
    a, b, c = (_as_t(x, like).to(common) for x in (a, b, c))
    s = torch.tensor(alpha.item() if isinstance(alpha, torch.Tensor) else alpha).to(common).to(a.device)
    return a + b * (c * s)


def _all(*checks: Callable[[dict], None]) -> Callable[[dict], None]:
    def check(a: dict) -> None:
        for c in checks:
            c(a)
    return check


_pointwise("erfcinv", _upcast_float(lambda x: torch.erfinv(1 - x)), ("x",), promote="float",
           doc="erfinv(1 - x), computed in double (torch has no erfcinv)")
_pointwise("isreal", torch.isreal, ("x",), promote="keep")
_pointwise("real", _tensor_fn(torch.real), ("x",), promote="keep", doc="the real part; a copy for real dtypes")
_pointwise("imag", _tensor_fn(torch.imag), ("x",), check=_imag_check, promote="keep")
_pointwise("complex", _tensor_fn(torch.complex), ("real", "imag"), check=_complex_check, literal_operands=False,
           promote="keep")
_pointwise("gcd", _tensor_fn(torch.gcd), ("lhs", "rhs"), check=_ints_only("gcd"))
_pointwise("logical_right_shift", _logical_right_shift, ("lhs", "rhs"), check=_ints_only("logical_right_shift"),
           promote="keep")
_pointwise("threshold", _threshold, ("input", "threshold", "value"), promote="keep",
           check=_all(_scalars_only("threshold", "threshold", "value"),
                      _kernel_exists_check("threshold", "input")))
_pointwise("addcmul", _addcmul, ("input1", "input2", "input3", "alpha"), check=_scalars_only("addcmul", "alpha"),
           promoted=("input1", "input2", "input3"), doc="input1 + input2 * input3 * alpha")

# --------------------------------------------------------------------------- cast
def _cast_infer(a: dict) -> list[Out]:
    x, dtype = a["arg"], a["dtype"]
    if not isinstance(dtype, DataType):
        raise InferError(f"dtype must be a DataType, got {dtype!r}")
    if isinstance(x, Value) and x.is_tensor:
        return [out_like(x, dtype=dtype)]
    return [Out(dtype)]


def _cast_run(a: dict, ctx: RunContext):
    x, dtype = a["arg"], a["dtype"]
    if isinstance(x, torch.Tensor):
        return x.to(dtype.torch)
    return torch.tensor(x).to(dtype.torch)


register(OpDef("cast", ("arg",), (("dtype", REQUIRED),), _cast_infer, _cast_run, elementwise=True))
