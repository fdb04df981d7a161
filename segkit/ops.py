"""The op catalogue: one entry per nvFuser op segkit can record.

Each :class:`OpDef` has the signature nvfuser_direct uses (tensor operands
positional, attributes by keyword, as nvFuser's own repro scripts write them),
a shape/dtype rule (``infer``), a torch reference (``run``), and whether it is
a meta (view-like) op for alias analysis. Pointwise ops are typed as nvFuser
types them (segkit/promotion.py: BFloat16 + BFloat16 is Float, computed in
float32; Int * 0.5 is Double): their operands are cast to nvFuser's common
dtype and the torch reference runs on them, on meta tensors for the dtype
rule, so the rule and the interpreter can never disagree. Op x dtype pairs
nvFuser accepts but cannot compile (NO_REDUCED_FLOAT_KERNEL, mod on floats,
16-bit sum/prod/min) are refused while recording, saying so.

nvfuser_direct 0.2.36 has no ``mean``, ``amax`` or ``amin`` op; the recording
frontend offers ``mean`` as sum * (1/N), exactly as Thunder decomposes it.

Families with more to say live in their own modules, registered into the one
CATALOGUE when this module is imported: ops_indexing (gather/scatter/embedding,
scans, sort, topk, triu), ops_matmul (matmul, linear, grouped_mm, attention),
ops_random (uniform, normal, rand_like, randn_like). ``REFUSED`` lists the
nvFuser ops segkit deliberately does not record, with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F

from segkit import promotion, views
from segkit.dtypes import DataType, from_torch
from segkit.ir import Value

REQUIRED = object()


class InferError(ValueError):
    """An op's arguments do not fit its shape rule (the frontend adds the call site)."""


@dataclass
class Out:
    """What ``infer`` says about one output."""

    dtype: DataType
    shape: tuple[int, ...] | None = None
    broadcast: tuple[bool, ...] = ()
    expanded: tuple[bool, ...] = ()


@dataclass(frozen=True)
class OpDef:
    """Everything segkit knows about one op; every pass reads it from here, never by the op's name.

    Fields (all but the first five have defaults, so a new entry states only what applies):

    * ``name``, ``operands``, ``attrs``: nvfuser_direct's signature. Operands are
      passed positionally, attributes by keyword; ``attrs`` is ``((name, default), ...)``
      with ``REQUIRED`` for no default. Printing, nvFuser replay and the minimizer's
      rebuild all call the op through ``call_args``.
    * ``infer(args) -> [Out]``: shape/dtype rule; raises InferError (the frontend
      adds the op and the user's line) for what nvFuser rejects.
    * ``run(args, ctx)``: the torch reference (``ctx``: RunContext).
    * ``meta``: a view (alias) op: its output may be a view of its first operand.
      Alias analysis (segkit.alias) and bookend read it.
    * ``view_layout(op, x, layout) -> Layout | None``: for a meta op, the layout of
      the output that makes it a view of ``x`` (None: not a view here). A meta op
      without one is never treated as an alias. Rules live in segkit.views.
    * ``size_attrs``: attributes that hold sizes or size-derived bounds (shapes,
      slice bounds, pad widths). The minimizer rewrites sizes in them when it
      shrinks a fusion.
    * ``fold(args) -> value | tuple | None``: the record-time value of a scalar
      op's outputs from its IR arguments when the generic fold (running the
      reference on known scalars) cannot see it, e.g. ``size`` of a static dim.
    * ``bookend_forks``: the inputs+outputs bookend policy may walk through a
      tensor read by several ops when they all have this flag (PR #2815 lets
      slices fork; any other fork stops the walk).
    * ``decompose(fd, args)``: record this op as other catalogue ops (for names
      nvFuser lacks but scripts use, e.g. ``mean``); it never appears in the IR.
    * ``literal_operands``: Python numbers given as operands become inline constants.
    * ``scalar_operands``: operands nvFuser's binding takes only as a Val (``select``'s
      index): a number there becomes a named ``define_scalar`` constant instead.
    * ``doc``: one line shown in listings.
    """

    name: str
    operands: tuple[str, ...]
    attrs: tuple[tuple[str, Any], ...]
    infer: Callable[[dict], list[Out]]
    run: Callable[[dict, "RunContext"], Any]
    meta: bool = False
    doc: str = ""
    literal_operands: bool = True  # python numbers given as operands become constant scalars
    #: operands nvFuser's binding takes only as a Val: a number given there becomes a named constant
    #: (``define_scalar``) in replays and scripts, never an inline literal
    scalar_operands: tuple[str, ...] = ()
    view_layout: Callable[..., Any] | None = None
    size_attrs: tuple[str, ...] = ()
    fold: Callable[[dict], Any] | None = None
    bookend_forks: bool = False
    decompose: Callable[..., Any] | None = None
    #: nvFuser's other spellings of the op (pybind overloads, e.g. a reduction's ``dim=``): a function
    #: ``(args, kwargs) -> (args, kwargs)`` giving this entry's canonical call; raises TypeError.
    overloads: Callable[[tuple, dict], tuple[tuple, dict]] | None = None
    #: Which outputs come from nvFuser's random stream (Philox), which the reference cannot reproduce:
    #: True for all of them, or a function of the bound arguments giving one flag per output.
    random: bool | Callable[[dict], Sequence[bool]] = False

    def random_outputs(self, args: dict[str, Any], n_outputs: int) -> list[bool]:
        """One flag per output: does it come from nvFuser's random stream?"""
        if callable(self.random):
            return list(self.random(args))
        return [bool(self.random)] * n_outputs

    @property
    def params(self) -> list[str]:
        return list(self.operands) + [a for a, _ in self.attrs]

    def defaults(self) -> dict[str, Any]:
        return dict(self.attrs)

    def call_args(self, args: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """A bound call as nvFuser's scripts write it: operands positional, attributes that differ from
        their defaults (and required ones) by keyword."""
        defaults = self.defaults()
        kwargs = {k: args[k] for k, _ in self.attrs if defaults[k] is REQUIRED or args[k] != defaults[k]}
        return [args[o] for o in self.operands], kwargs

    def bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
        """Bind a call like Python would; raise TypeError naming the problem."""
        if self.overloads is not None:
            args, kwargs = self.overloads(tuple(args), dict(kwargs))
        params = self.params
        if len(args) > len(params):
            raise TypeError(f"takes at most {len(params)} arguments ({', '.join(params)}), got {len(args)}")
        bound = dict(zip(params, args))
        for k, v in kwargs.items():
            if k not in params:
                raise TypeError(f"got an unexpected keyword argument {k!r} (expected one of {', '.join(params)})")
            if k in bound:
                raise TypeError(f"got multiple values for argument {k!r}")
            bound[k] = v
        for name in self.operands:
            if name not in bound:
                raise TypeError(f"missing required argument {name!r}")
        for name, default in self.attrs:
            if name not in bound:
                if default is REQUIRED:
                    raise TypeError(f"missing required argument {name!r}")
                bound[name] = default
        return {p: bound[p] for p in params}


@dataclass
class RunContext:
    """Run-time facts an op may need: the device constants go on, the Op being run,
    and ``resolve`` (IR argument -> run-time value) for ops that read their producers."""

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    op: Any = None
    resolve: Callable[[Any], Any] = lambda x: x


CATALOGUE: dict[str, OpDef] = {}


def _register(opdef: OpDef) -> OpDef:
    CATALOGUE[opdef.name] = opdef
    return opdef


def get(name: str) -> OpDef | None:
    return CATALOGUE.get(name)


def reductions() -> frozenset[str]:
    """The ops that reduce over ``dims``: one tensor operand, a ``dims`` attribute, not a view (the reduction
    reuse pass and the fuzzer read this rather than keep their own lists)."""
    return frozenset(name for name, opdef in CATALOGUE.items()
                     if not opdef.meta and len(opdef.operands) == 1 and "dims" in dict(opdef.attrs))


# --------------------------------------------------------------------------- helpers
def static(x: Any) -> Any:
    """Record-time value of an argument: ints stay, known scalars give their value, else None."""
    if isinstance(x, Value):
        return None if x.is_tensor else x.value
    if isinstance(x, (list, tuple)):
        return [static(i) for i in x]
    return x


def static_shape(xs: Sequence[Any], what: str) -> list[int]:
    """A shape argument with unknown entries as -1."""
    if not isinstance(xs, (list, tuple)):
        raise InferError(f"{what} must be a list of sizes, got {xs!r}")
    out = []
    for x in xs:
        v = static(x)
        if v is None:
            out.append(-1)
        elif isinstance(v, bool) or not isinstance(v, int):
            raise InferError(f"{what} must hold integers, got {x!r}")
        else:
            out.append(v)
    return out


def _tensor(a: Any, what: str) -> Value:
    if not isinstance(a, Value) or not a.is_tensor:
        raise InferError(f"{what} must be a tensor, got {a!r}")
    return a


def norm_dim(d: int, ndim: int, what: str = "dim") -> int:
    if not isinstance(d, int) or isinstance(d, bool):
        raise InferError(f"{what} must be an int, got {d!r}")
    if not -ndim <= d < max(ndim, 1):
        raise InferError(f"{what} {d} is out of range for a tensor of rank {ndim}")
    return d % ndim if ndim else 0


def norm_dims(dims: Any, ndim: int) -> list[int]:
    if isinstance(dims, int):
        dims = [dims]
    if not isinstance(dims, (list, tuple)):
        raise InferError(f"dims must be a list of ints, got {dims!r}")
    out = [norm_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise InferError(f"dims {list(dims)} repeat a dim")
    return out


def _like(v: Value, shape=None, broadcast=None, expanded=None, dtype=None) -> Out:
    return Out(
        dtype or v.dtype,
        tuple(v.shape if shape is None else shape),
        tuple(v.broadcast if broadcast is None else broadcast),
        tuple(v.expanded if expanded is None else expanded),
    )


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


# --------------------------------------------------------------------------- pointwise
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
        return promotion.common_dtype(vals, **_PROMOTION[promote])

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
        vals = []
        for o in operands:
            v = a[o]
            if compute is not None and o in promoted:
                v = v.to(compute.torch) if isinstance(v, torch.Tensor) else torch.tensor(v, dtype=compute.torch)
            elif scalar_only and not isinstance(v, torch.Tensor):
                v = torch.tensor(v)  # scalar arithmetic: compute on 0-d tensors
            vals.append(v)
        return fn(*vals)

    return _register(OpDef(name, operands, (), infer, run, doc=doc, literal_operands=literal_operands))


_UNARY = {
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
_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _div, "truediv": _tensor_fn(torch.true_divide), "pow": _tensor_fn(torch.pow),
    "fmod": _tensor_fn(torch.fmod), "mod": _tensor_fn(torch.fmod), "remainder": _tensor_fn(torch.remainder),
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


def uncompilable(name: str, dtype: DataType, why: str, fix: str = "cast it to Float first") -> InferError:
    """The refusal of an op nvFuser accepts but cannot compile a kernel for."""
    return InferError(f"nvFuser cannot compile {name} on {dtype.name}: {why}; {fix}")


def _kernel_exists_check(name: str, operand: str):
    """Refuse ``operand`` dtypes nvFuser's runtime has no ``name`` for (NO_REDUCED_FLOAT_KERNEL, NO_INTEGRAL_KERNEL)."""
    def check(a: dict) -> None:
        dt = _dtype_of(a[operand])
        if dt in promotion.REDUCED_FLOATS:
            raise uncompilable(name, dt, f"nvFuser applies {name} to {operand} without promoting it to Float and "
                                         f"its runtime has no {dt.name} {name} (runtime/helpers.cu), so its kernel "
                                         "does not compile", f"cast {operand} to Float first")
        if name in NO_INTEGRAL_KERNEL and dt is not None and (promotion.is_integral(dt) or dt is DataType.Bool):
            raise uncompilable(name, dt, f"nvFuser applies {name} to {operand} without promoting it and its runtime "
                                         f"has {name} for float and double only (runtime/helpers.cu), so the call "
                                         "is ambiguous and its kernel does not compile", f"cast {operand} to Float first")
    return check


def _mod_check(a: dict) -> None:
    dt = promotion.common_dtype([a["lhs"], a["rhs"]])
    if not (promotion.is_integral(dt) or dt is DataType.Bool):
        raise uncompilable("mod", dt, "nvFuser's kernel computes mod with C's % operator, which takes integers only "
                                      "(csrc/type.cpp)", "use fmod or remainder, or cast to an integer dtype")


def _nextafter_check(a: dict) -> None:
    dt = promotion.common_dtype([a["lhs"], a["rhs"]], half_to_float=False)
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
_CHECKS.update({name: _kernel_exists_check(name, "x") for name in NO_REDUCED_FLOAT_KERNEL & set(_UNARY)})
for _name, _fn in _UNARY.items():
    _pointwise(_name, _fn, ("x",), check=_CHECKS.get(_name), promote=_promotion_of(_name))
for _name, _fn in _BINARY.items():
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
    t = torch.tensor(thresh.item() if isinstance(thresh, torch.Tensor) else thresh).to(x.dtype)
    v = torch.tensor(value.item() if isinstance(value, torch.Tensor) else value).to(x.dtype)
    return torch.where(x <= t, v, x)


def _addcmul(a, b, c, alpha):
    """a + b * (c * alpha) in the operands' common dtype, alpha cast to it first (nvFuser's order)."""
    like = next((x for x in (a, b, c) if isinstance(x, torch.Tensor)), None)
    common = torch.result_type(_as_t(a, like), _as_t(b, like) + _as_t(c, like)) if like is not None else None
    a, b, c = (_as_t(x, like).to(common) for x in (a, b, c))
    s = torch.tensor(alpha.item() if isinstance(alpha, torch.Tensor) else alpha).to(common)
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
        return [_like(x, dtype=dtype)]
    return [Out(dtype)]


def _cast_run(a: dict, ctx: RunContext):
    x, dtype = a["arg"], a["dtype"]
    if isinstance(x, torch.Tensor):
        return x.to(dtype.torch)
    return torch.tensor(x).to(dtype.torch)


_register(OpDef("cast", ("arg",), (("dtype", REQUIRED),), _cast_infer, _cast_run))


# --------------------------------------------------------------------------- reductions
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

    return normalize


#: The reductions nvFuser cannot compile in a 16-bit float, and what their kernel lacks: nvFuser's runtime
#: defines max for __half / __bfloat and no other reduction operator.
_NO_REDUCED_REDUCTION = {"sum": "operator +", "prod": "operator *", "min": "min"}


def _reduction(name: str, reduce: Callable, with_dtype: bool) -> OpDef:
    def infer(a: dict) -> list[Out]:
        x = _tensor(a["arg"], f"{name}'s arg")
        dims = norm_dims(a["dims"], x.ndim) if a["dims"] is not None else list(range(x.ndim))
        if not isinstance(a["dtype"], DataType):
            raise InferError(f"dtype must be a DataType, got {a['dtype']!r}")
        if not with_dtype and a["dtype"] is not DataType.Null:
            raise InferError(f"dtype={a['dtype']!r}: nvFuser's {name} takes no dtype other than DataType.Null")
        dtype = _sum_dtype(x, a["dtype"]) if with_dtype else x.dtype
        if dtype in promotion.REDUCED_FLOATS and name in _NO_REDUCED_REDUCTION:
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
    return _register(OpDef(name, ("arg",), attrs, infer, run, overloads=_reduction_overloads(name)))


def _prod(x, dims, keepdim):
    """Product over several dims, accumulated in float32 for 16-bit floats (as nvFuser does), rounded once."""
    out_dtype = x.dtype
    if x.dtype in (torch.float16, torch.bfloat16):
        x = x.float()
    for d in sorted(dims, reverse=True):
        x = torch.prod(x, d, keepdim=keepdim)
    return x.to(out_dtype)


_reduction("sum", lambda x, d, k: torch.sum(x, d, keepdim=k), True)
_reduction("prod", _prod, True)
_reduction("max", lambda x, d, k: torch.amax(x, d, keepdim=k), False)
_reduction("min", lambda x, d, k: torch.amin(x, d, keepdim=k), False)


def _var_infer(n_out: int, keepdim_attr: bool):
    def infer(a: dict) -> list[Out]:
        x = _tensor(a["arg"], "arg")
        if not x.dtype.is_float:
            raise InferError(f"variance needs a floating-point tensor, got {x.dtype.name}")
        if n_out == 2 and x.dtype in (DataType.Half, DataType.BFloat16, DataType.Float8_e4m3fn, DataType.Float8_e5m2):
            raise InferError(f"var_mean is not supported for {x.dtype.name} (nvFuser's rule): cast arg to Float first")
        if n_out == 1 and x.dtype in promotion.REDUCED_FLOATS:
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
    CPU and CUDA (a CUDA mean of [1, -6, 5] is -9e-8, not 0; a CPU variance of 127 equal numbers is 1e-13,
    not 0), and a later ``x / mean`` or ``x / var`` turns that rounding into a different Inf or a 1e7 error.
    nvFuser's Welford (csrc/ops/normalization.cpp, variance_mean) gets those exact cases exactly."""
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
_register(OpDef("var", ("arg",), _VAR_ATTRS, _var_infer(1, True), _var_run))
_register(OpDef("var_mean", ("arg",), _VAR_ATTRS, _var_infer(2, True), _var_mean_run,
                doc="returns (var, mean)"))
_register(OpDef("welford", ("arg",), (("dims", REQUIRED),), _var_infer(3, False), _welford_run,
                doc="returns (avg, var_sum, n)"))


# --------------------------------------------------------------------------- meta ops
def _runtime_ints(xs: Sequence[Any]) -> list[int]:
    return [int(x) for x in xs]


def _broadcast_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    flags = a["is_broadcast_dim"]
    if not isinstance(flags, (list, tuple)) or sum(1 for f in flags if not f) != x.ndim:
        raise InferError(f"is_broadcast_dim {flags!r} must have one False per dim of {x.describe()}")
    shape, bc, ex, i = [], [], [], 0
    for f in flags:
        if f:
            shape.append(1), bc.append(True), ex.append(False)
        else:
            shape.append(x.shape[i]), bc.append(x.broadcast[i]), ex.append(x.expanded[i])
            i += 1
    return [Out(x.dtype, tuple(shape), tuple(bc), tuple(ex))]


def _broadcast_run(a, ctx):
    x = a["arg"]
    for d, f in enumerate(a["is_broadcast_dim"]):
        if f:
            x = x.unsqueeze(d)
    return x


def _expand_flags(x_shape, x_bc, x_ex, target: list[int], name: str) -> Out:
    shape, bc, ex = [], [], []
    for d, (s, b, e, t) in enumerate(zip(x_shape, x_bc, x_ex, target)):
        if t == -1 or t == s:
            shape.append(s), bc.append(b), ex.append(e)
        elif s == 1 or (b and not e):
            shape.append(t), bc.append(True), ex.append(t != 1)
        elif s == -1:
            shape.append(t), bc.append(b), ex.append(e)
        else:
            raise InferError(f"{name} cannot expand dim {d} of size {s} to {t} (only size-1 dims expand)")
    return Out(DataType.Null, tuple(shape), tuple(bc), tuple(ex))


def _expand_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    target = static_shape(a["shape"], "shape")
    if len(target) != x.ndim:
        raise InferError(f"expand to {target} needs rank {x.ndim} like {x.describe()}")
    o = _expand_flags(x.shape, x.broadcast, x.expanded, target, "expand")
    o.dtype = x.dtype
    return [o]


def broadcast_dims(a: dict) -> list[int]:
    """broadcast_in_dim's output dims for the input's dims, as nvFuser takes them: negative dims wrap, each
    dim once, input dims fill them in increasing order."""
    x, rank = a["arg"], len(a["shape"])
    if rank < x.ndim:
        raise InferError(f"The new shape is expected to be greater-then-or-equal to the input: {rank} < {x.ndim}")
    if len(a["broadcast_dims"]) != x.ndim:
        raise InferError(f"broadcast_dims {list(a['broadcast_dims'])} must name one output dim per dim of {x.describe()}")
    dims = [norm_dim(d, rank, "broadcast_dims entry") for d in a["broadcast_dims"]]
    if len(set(dims)) != len(dims):
        raise InferError(f"broadcast_dims {list(a['broadcast_dims'])}: a nonbroadcast dim is specified more than once")
    return sorted(dims)


def _broadcast_in_dim_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    if not isinstance(a["shape"], (list, tuple)):
        raise InferError(f"shape must be a list of sizes, got {a['shape']!r}")
    target = static_shape(a["shape"], "shape")
    bdims = broadcast_dims(a)
    shape, bc, ex = [1] * len(target), [True] * len(target), [False] * len(target)
    for i, d in enumerate(bdims):
        shape[d], bc[d], ex[d] = x.shape[i], x.broadcast[i], x.expanded[i]
    o = _expand_flags(shape, bc, ex, target, "broadcast_in_dim")
    o.dtype = x.dtype
    return [o]


def _broadcast_in_dim_run(a, ctx):
    x, target, bdims = a["arg"], _runtime_ints(a["shape"]), sorted(d % len(a["shape"]) for d in a["broadcast_dims"])
    view = [1] * len(target)
    for i, d in enumerate(bdims):
        view[d] = x.shape[i]
    return x.reshape(view).expand(target)


def reshape_groups(src: Sequence[int], dst: Sequence[int]) -> list[tuple[list[int], list[int]]] | None:
    """Split a static reshape into groups of input dims and output dims with equal products.

    Size-1 dims at a group boundary form groups of their own, so a group with
    one input and one output dim is a dim carried through unchanged. Returns
    None when a size is unknown (-1).
    """
    if any(s < 0 for s in src) or any(s < 0 for s in dst):
        return None
    groups: list[tuple[list[int], list[int]]] = []
    i = j = 0
    while i < len(src) or j < len(dst):
        if i < len(src) and src[i] == 1 and (j >= len(dst) or dst[j] != 1):
            groups.append(([i], []))
            i += 1
            continue
        if j < len(dst) and dst[j] == 1 and (i >= len(src) or src[i] != 1):
            groups.append(([], [j]))
            j += 1
            continue
        if i >= len(src) or j >= len(dst):
            return None
        gi, gj, pi, pj = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while pi != pj:
            if pi < pj and i < len(src):
                gi.append(i)
                pi *= src[i]
                i += 1
            elif pj < pi and j < len(dst):
                gj.append(j)
                pj *= dst[j]
                j += 1
            else:
                return None
        groups.append((gi, gj))
    return groups


def _reshape_target(x: Value, raw: Sequence[Any]) -> list[int]:
    """Static output sizes (-1 where unknown until run time). Only a literal -1 asks for inference;
    a scalar whose value is unknown while recording is a dynamic size, not an inference request."""
    new_shape = static_shape(raw, "new_shape")
    dynamic = [isinstance(r, Value) and static(r) is None for r in raw]
    infer = [i for i, s in enumerate(new_shape) if s == -1 and not dynamic[i]]
    if len(infer) > 1:
        raise InferError(f"reshape to {new_shape}: more than one -1")
    if any(dynamic) or -1 in x.shape:
        return new_shape
    total = math.prod(x.shape)
    if infer:
        known = math.prod(s for i, s in enumerate(new_shape) if i != infer[0])
        if known == 0 or total % known:
            raise InferError(f"cannot reshape {x.describe()} to {new_shape}")
        new_shape[infer[0]] = total // known
    if math.prod(new_shape) != total:
        raise InferError(f"cannot reshape {x.describe()} ({total} elements) to {new_shape}")
    return new_shape


def _reshape_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    target = _reshape_target(x, a["new_shape"])
    bc = [s == 1 for s in target]
    ex = [False] * len(target)
    groups = reshape_groups(x.shape, target)
    for gi, gj in groups or []:
        if len(gi) == 1 and len(gj) == 1 and x.expanded[gi[0]]:
            bc[gj[0]], ex[gj[0]] = True, True
    return [Out(x.dtype, tuple(target), tuple(bc), tuple(ex))]


def _permute_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    dims = norm_dims(a["dims"], x.ndim)
    if sorted(dims) != list(range(x.ndim)):
        raise InferError(f"dims {a['dims']} is not a permutation of the {x.ndim} dims of {x.describe()}")
    return [_like(x, [x.shape[d] for d in dims], [x.broadcast[d] for d in dims], [x.expanded[d] for d in dims])]


def _squeeze_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    dims = norm_dims(a["dims"], x.ndim)
    for d in dims:
        if x.expanded[d] and not a["squeeze_expanded"]:
            raise InferError(f"squeeze of dim {d} of {x.describe()}: it is expanded; pass squeeze_expanded=True")
        if not x.broadcast[d] and x.shape[d] not in (1, -1):
            raise InferError(f"squeeze of dim {d} of {x.describe()}: its size is {x.shape[d]}, not 1")
    keep = [d for d in range(x.ndim) if d not in dims]
    return [_like(x, [x.shape[d] for d in keep], [x.broadcast[d] for d in keep], [x.expanded[d] for d in keep])]


def _squeeze_run(a, ctx):
    x = a["arg"]
    for d in sorted((d % x.ndim for d in a["dims"]), reverse=True):
        x = x.select(d, 0)
    return x


def normalize_slice(start: int, end: int, size: int) -> tuple[int, int]:
    """torch/nvFuser slice normalisation: negative from the end, clamped to [0, size]."""
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def _slice_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    starts = static_shape(a["start_indices"], "start_indices")
    ends = static_shape(a["end_indices"], "end_indices")
    strides = static_shape(a["strides"], "strides") if a["strides"] is not None else [1] * x.ndim
    if a["strides"] is not None and len(strides) != len(starts):
        raise InferError(f"Slice start_indices and strides don't match! Start Indices: {len(starts)} Strides: {len(strides)}")
    if len(starts) != x.ndim:
        raise InferError(f"Number of tensor dimensions does not match slice dimensions! {x.describe()} has {x.ndim}, "
                         f"start_indices has {len(starts)}")
    if len(starts) != len(ends):
        raise InferError(f"Slice indexing attribute dimensions don't match! Start Indices: {len(starts)} End Indices: {len(ends)}")
    # nvFuser's checks on constant bounds (python_direct slice_fn); symbolic ones are checked at run time
    for d in range(x.ndim):
        s0, e0 = static(a["start_indices"][d]), static(a["end_indices"][d])
        st0 = static(a["strides"][d]) if a["strides"] is not None else 1
        if s0 is not None and s0 < 0:
            raise InferError(f"Slice operation start_indices must be greater than or equal to 0. Start Indices: {s0} (dim {d})")
        if s0 is not None and e0 is not None and e0 < s0:
            raise InferError(f"Slice operation end_indices must be greater than or equal to start_indices. "
                             f"Start Indices: {s0} End Indices: {e0} (dim {d})")
        if st0 != 1:
            raise InferError(f"nvFuser Limitation: All slice operation strides must be of const size 1 (dim {d} has {st0})")
    shape, bc, ex = [], [], []
    for d in range(x.ndim):
        size, s, e, st = x.shape[d], starts[d], ends[d], strides[d]
        if size != -1 and s != -1 and e != -1 and not a["manual_normalization"]:
            s, e = normalize_slice(s, e, size)
        if size != -1 and (s, e) == (0, size):
            shape.append(size), bc.append(x.broadcast[d]), ex.append(x.expanded[d])
            continue
        if s == -1 or e == -1:
            shape.append(-1)
        else:
            if a["manual_normalization"] and (s < 0 or e < s or (size != -1 and e > size)):
                raise InferError(f"slice [{s}:{e}] on dim {d} of {x.describe()} is out of range "
                                 "(manual_normalization=True takes indices as already normalised)")
            shape.append(-(-(e - s) // max(st, 1)))
        bc.append(False), ex.append(False)
    return [Out(x.dtype, tuple(shape), tuple(bc), tuple(ex))]


def _slice_run(a, ctx):
    x = a["arg"]
    starts, ends = _runtime_ints(a["start_indices"]), _runtime_ints(a["end_indices"])
    strides = _runtime_ints(a["strides"]) if a["strides"] is not None else [1] * x.ndim
    index = []
    for d in range(x.ndim):
        s, e = normalize_slice(starts[d], ends[d], x.shape[d])
        index.append(slice(s, e, strides[d]))
    return x[tuple(index)]


def _identity_infer(a: dict) -> list[Out]:
    x = a[next(iter(a))]
    if isinstance(x, Value) and x.is_tensor:
        return [_like(x)]
    if isinstance(x, Value):
        return [Out(x.dtype)]
    raise InferError(f"expected a tensor or scalar, got {x!r}")


def _identity_run(a, ctx):
    return a[next(iter(a))]


def _stride_order_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    order = norm_dims(a["stride_order"], x.ndim)
    if sorted(order) != list(range(x.ndim)):
        raise InferError(f"stride_order {a['stride_order']} is not a permutation of {x.ndim} dims")
    return [_like(x)]


_register(OpDef("broadcast", ("arg",), (("is_broadcast_dim", REQUIRED),), _broadcast_infer, _broadcast_run, meta=True,
                view_layout=views.broadcast))
_register(OpDef("broadcast_in_dim", ("arg",), (("shape", REQUIRED), ("broadcast_dims", REQUIRED)),
                _broadcast_in_dim_infer, _broadcast_in_dim_run, meta=True,
                view_layout=views.broadcast_in_dim, size_attrs=("shape",)))
_register(OpDef("expand", ("arg",), (("shape", REQUIRED),), _expand_infer,
                lambda a, ctx: a["arg"].expand(_runtime_ints(a["shape"])), meta=True,
                view_layout=views.identity, size_attrs=("shape",)))
_register(OpDef("reshape", ("arg",), (("new_shape", REQUIRED),), _reshape_infer,
                lambda a, ctx: a["arg"].reshape(_runtime_ints(a["new_shape"])), meta=True,
                view_layout=views.reshape, size_attrs=("new_shape",)))
_register(OpDef("permute", ("arg",), (("dims", REQUIRED),), _permute_infer,
                lambda a, ctx: a["arg"].permute(a["dims"]), meta=True, view_layout=views.permute))
_register(OpDef("squeeze", ("arg",), (("dims", REQUIRED), ("squeeze_expanded", False)),
                _squeeze_infer, _squeeze_run, meta=True, view_layout=views.squeeze))
_register(OpDef("slice", ("arg",), (("start_indices", REQUIRED), ("end_indices", REQUIRED), ("strides", None),
                                    ("manual_normalization", False)), _slice_infer, _slice_run, meta=True,
                view_layout=views.slice_, size_attrs=("start_indices", "end_indices"), bookend_forks=True))
_register(OpDef("set", ("x",), (), _identity_infer, _identity_run, meta=True, view_layout=views.identity))
_register(OpDef("segment_set", ("x",), (), _identity_infer, _identity_run, meta=True, view_layout=views.identity,
                doc="identity that forces a segment boundary"))
def _stride_order_run(a, ctx):
    """A copy whose strides follow stride_order (nvFuser's: for each dim, 0 = innermost)."""
    x, so = a["arg"], [d % max(a["arg"].ndim, 1) for d in a["stride_order"]]
    order = sorted(range(x.ndim), key=lambda d: -so[d])  # allocation order, outermost first
    return x.permute(order).contiguous().permute([order.index(d) for d in range(x.ndim)])


_register(OpDef("stride_order", ("arg",), (("stride_order", REQUIRED),), _stride_order_infer, _stride_order_run,
                doc="copy with a new memory layout (values unchanged)"))


# --------------------------------------------------------------------------- pad, cat, select
def _pad_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    widths = static_shape(a["pad_widths"], "pad_widths")
    if a["value"] is not None and _kind(a["value"]) != _kind(x):  # nvFuser's hasSimilarDtype
        raise InferError(f"Tensor arg and pad value must have the same dtype: {x.describe()} padded with {a['value']!r}")
    if len(widths) % 2 or len(widths) > 2 * x.ndim:
        raise InferError(f"pad_widths {widths} must be pairs (last dim first) for at most {x.ndim} dims")
    shape = list(x.shape)
    for k in range(len(widths) // 2):
        d = x.ndim - 1 - k
        lo, hi = widths[2 * k], widths[2 * k + 1]
        shape[d] = -1 if -1 in (shape[d], lo, hi) else shape[d] + lo + hi
    return [Out(x.dtype, tuple(shape), (False,) * x.ndim, (False,) * x.ndim)]


def _pad_run(a, ctx):
    v = a["value"]
    return F.pad(a["arg"], _runtime_ints(a["pad_widths"]), value=0 if v is None else v if isinstance(v, complex) else float(v))


def _cat_infer(a: dict) -> list[Out]:
    ts = a["tensors"]
    if not isinstance(ts, (list, tuple)) or not ts:
        raise InferError("cat needs a non-empty list of tensors")
    ts = [_tensor(t, "each cat input") for t in ts]
    n = ts[0].ndim
    dim = norm_dim(a["dim"], n)
    if any(t.ndim != n for t in ts):
        raise InferError(f"cat inputs differ in rank: {[t.describe() for t in ts]}")
    shape = list(ts[0].shape)
    if a["manual_padding"]:
        if any(t.definition is None or t.definition.name != "pad" for t in ts):
            raise InferError("cat(manual_padding=True) inputs must each come from pad")
        if any(list(t.shape) != shape for t in ts):
            raise InferError(f"cat(manual_padding=True) needs inputs already padded to one shape: {[t.describe() for t in ts]}")
    else:
        sizes = [t.shape[dim] for t in ts]
        shape[dim] = -1 if -1 in sizes else sum(sizes)
    dtypes = {t.dtype for t in ts}
    if len(dtypes) != 1:
        raise InferError(f"cat inputs differ in dtype: {[t.describe() for t in ts]}")
    return [Out(ts[0].dtype, tuple(shape), (False,) * n, (False,) * n)]


def _cat_run(a, ctx):
    ts, dim = a["tensors"], a["dim"] % a["tensors"][0].ndim
    if not a["manual_padding"]:
        return torch.cat(ts, dim)
    # Each input is already the output's shape: its own region is what its pad
    # did not add along ``dim``; the cat is those regions side by side.
    pieces = []
    for value, t in zip(ctx.op.args["tensors"], ts):
        widths = _runtime_ints(ctx.resolve(value.definition.args["pad_widths"]))
        k = t.ndim - 1 - dim
        lo, hi = (widths[2 * k], widths[2 * k + 1]) if 2 * k + 1 < len(widths) else (0, 0)
        pieces.append((lo, t.narrow(dim, lo, t.shape[dim] - lo - hi)))
    return torch.cat([p for _, p in sorted(pieces, key=lambda x: x[0])], dim)


def _select_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    d = norm_dim(a["dim"], x.ndim)
    keep = [i for i in range(x.ndim) if i != d]
    return [_like(x, [x.shape[i] for i in keep], [x.broadcast[i] for i in keep], [x.expanded[i] for i in keep])]


_register(OpDef("pad", ("arg",), (("pad_widths", REQUIRED), ("value", None)), _pad_infer, _pad_run,
                size_attrs=("pad_widths",)))
_register(OpDef("cat", ("tensors",), (("dim", REQUIRED), ("manual_padding", False)), _cat_infer, _cat_run))
# nvfuser_direct's select takes its index as a Val (a number is recorded as a constant scalar): found by
# `segkit fuzz` on an H100, where replaying it as a plain int was refused by the binding.
_register(OpDef("select", ("arg", "index"), (("dim", REQUIRED),), _select_infer,
                lambda a, ctx: a["arg"].select(a["dim"], int(a["index"])), scalar_operands=("index",)))


# --------------------------------------------------------------------------- creation, sizes
def _full_infer(a: dict) -> list[Out]:
    shape = static_shape(a["shape"], "shape")
    if not isinstance(a["dtype"], DataType):
        raise InferError(f"dtype must be a DataType, got {a['dtype']!r}")
    return [Out(a["dtype"], tuple(shape), (False,) * len(shape), (False,) * len(shape))]


def _full_run(a, ctx):
    v = a["fill_value"]
    return torch.full(_runtime_ints(a["shape"]), v.item() if isinstance(v, torch.Tensor) else v,
                      dtype=a["dtype"].torch, device=ctx.device)


def _kind(x: Any) -> str:
    """'int', 'float', 'complex' or 'bool' of a recorded scalar or a Python number."""
    if isinstance(x, Value):
        t = x.dtype.torch
        return "complex" if t.is_complex else "float" if t.is_floating_point else "bool" if t == torch.bool else "int"
    return "bool" if isinstance(x, bool) else "int" if isinstance(x, int) else "complex" if isinstance(x, complex) else "float"


def _iota_infer(a: dict) -> list[Out]:
    """nvFuser's checks (csrc/ops/arith.cpp iota): integer length; start and step of dtype's kind."""
    dtype = a["dtype"]
    if not isinstance(dtype, DataType) or dtype.torch.is_complex or dtype is DataType.Bool:
        raise InferError(f"iota dtype must be an integer or floating DataType, got {dtype!r}")
    want = "float" if dtype.is_float else "int"
    if _kind(a["length"]) != "int":
        raise InferError(f"length must be integer, but get dtype {getattr(a['length'], 'dtype', a['length'])!r}")
    for name in ("start", "step"):
        if a[name] is not None and _kind(a[name]) != want:
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


def _size_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    norm_dim(a["dim"], x.ndim)
    return [Out(DataType.Int)]


def _shape_infer(a: dict) -> list[Out]:
    x = _tensor(a["arg"], "arg")
    return [Out(DataType.Int) for _ in range(x.ndim)]


_register(OpDef("full", (), (("shape", REQUIRED), ("fill_value", REQUIRED), ("dtype", REQUIRED)),
                _full_infer, _full_run, literal_operands=False, size_attrs=("shape",)))
_register(OpDef("iota", ("length",), (("start", None), ("step", None), ("dtype", DataType.Int)),
                _iota_infer, _iota_run))
def fold_size(args: dict) -> Any:
    """Record-time value of ``size(arg, dim)`` when that dim is static (else None)."""
    s = args["arg"].shape[args["dim"]]
    return None if s == -1 else s


def _fold_shape(args: dict) -> tuple:
    return tuple(None if s == -1 else s for s in args["arg"].shape)


_register(OpDef("size", ("arg",), (("dim", REQUIRED),), _size_infer,
                lambda a, ctx: a["arg"].shape[a["dim"]], fold=fold_size))
_register(OpDef("shape", ("arg",), (), _shape_infer, lambda a, ctx: tuple(a["arg"].shape), fold=_fold_shape))


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
    x = _tensor(a["arg"], "arg")
    return [_reduced(x, norm_dims(a["dims"], x.ndim) if a["dims"] is not None else list(range(x.ndim)),
                     bool(a["keepdim"]), x.dtype)]


#: Ops scripts call that nvFuser lacks, each recorded as catalogue ops through its ``decompose`` (never in
#: the IR, so nothing downstream sees them).
COMPOSITES: dict[str, OpDef] = {
    "mean": OpDef("mean", ("arg",), (("dims", REQUIRED), ("keepdim", False), ("dtype", None)), _mean_infer,
                  lambda a, ctx: None, decompose=_mean, doc="not an nvFuser op: recorded as sum * (1/N)"),
}


#: Hints for op names people reach for that nvFuser spells differently or lacks.
HINTS = {
    "amax": "nvFuser has no amax: use fd.ops.max(x, dims=...)",
    "amin": "nvFuser has no amin: use fd.ops.min(x, dims=...)",
    "view": "use fd.ops.reshape(x, new_shape=...)",
    "transpose": "use fd.ops.permute(x, dims=...)",
    "unsqueeze": "use fd.ops.broadcast(x, is_broadcast_dim=...)",
}


#: nvfuser_direct ops segkit deliberately does not record, and why (tests/test_op_surface.py holds every
#: nvFuser op to being in the catalogue or here).
REFUSED = {
    "scaled_mm": "block-scaled fp8/nvfp4 matmul: its scale layouts and rounding are defined by CUDA kernels "
                 "(cuBLASLt / CUTLASS) a torch reference cannot follow",
    "cutlass_nvfp4_grouped_mm": "a CUTLASS-only nvfp4 grouped GEMM (Blackwell): no torch reference exists",
    "nv_block_quantize": "nvfp4 block quantization: needs Float4_e2m1fn and swizzled block-scale layouts torch lacks",
    "nv_grouped_block_quantize": "grouped nvfp4 block quantization: needs Float4_e2m1fn and swizzled block scales",
    "preprocess_grouped_matmul_input_sf": "a layout op for nvfp4 block scales (swizzle and padding not visible in "
                                          "sizes or strides): nothing to compute on the reference",
}
HINTS.update({name: f"deliberately unsupported: {why}" for name, why in REFUSED.items()})

# Op families kept in their own modules; importing them registers their entries in CATALOGUE.
from segkit import ops_indexing, ops_matmul, ops_random  # noqa: E402,F401
