"""The catalogue's core: what an op entry is (:class:`OpDef`), the one table of entries, and the helpers the
op families share to write their shape rules.

Each :class:`OpDef` has the signature nvfuser_direct uses (tensor operands positional, attributes by keyword,
as nvFuser's own repro scripts write them), a shape/dtype rule (``infer``), a torch reference (``run``), and
the facts passes read instead of switching on op names (view op, layout rule, size attributes, reduction
kind, ...). The families (segkit.ops.pointwise, reduce, shape, creation, indexing, matmul, random) fill
``CATALOGUE`` through :func:`register` when segkit.ops imports them; this module imports none of them.
"""

from __future__ import annotations

import difflib

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.ir import Value

#: The default of an attribute that has none: the caller must give it.
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
      without one is never treated as an alias. Rules live in segkit.ops.view_layouts.
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
    #: Each output element depends only on the operands' elements at its position (pointwise ops, cast):
    #: segkit.reuse merges repeats of such an op of one operand.
    elementwise: bool = False
    #: For a reduction over ``dims``, how it combines elements: "sum", "product", or "extremum" (max, min: the
    #: result is one of the elements, so any grouping of the reduction gives the same value). segkit.reuse
    #: regroups reductions by it.
    reduction_kind: str | None = None
    #: For an extremum reduction, the comparison op that holds where an element beats the running result ("gt"
    #: for max, "lt" for min): segkit.reuse clips a reduction's input to a narrower one's result with it.
    extremum_beats: str | None = None
    #: The op marks a segment boundary (segment_set): nvFuser never fuses across it, so bookend does not cut
    #: again where one already is.
    segment_boundary: bool = False

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
                near = difflib.get_close_matches(k, params, n=1)
                raise TypeError(f"got an unexpected keyword argument {k!r}"
                                + (f": did you mean {near[0]}=?" if near else "")
                                + f" (expected one of {', '.join(params)})")
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


def legacy_spellings(renamed: dict[str, str] | None = None,
                     then: Callable[[tuple, dict], tuple[tuple, dict]] | None = None,
                     positional: Callable[[tuple, dict], tuple[tuple, dict]] | None = None):
    """An ``overloads`` function for an op's older spellings in nvFuser's legacy Python frontend: ``positional``
    rewrites a call in an older positional form first, then each older keyword in ``renamed`` (old -> current)
    becomes the current one (a TypeError when both are given), then ``then`` (the op's own overloads) runs.
    tests/test_legacy_spellings.py lists every spelling with the nvFuser source that accepted it."""
    renamed = renamed or {}

    def normalize(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if positional is not None:
            args, kwargs = positional(args, kwargs)
        for old, new in renamed.items():
            if old in kwargs:
                if new in kwargs:
                    raise TypeError(f"got {old}= (nvFuser's older name of {new}=) and {new}=; give one")
                kwargs[new] = kwargs.pop(old)
        return then(args, kwargs) if then is not None else (args, kwargs)

    return normalize


@dataclass
class RunContext:
    """Run-time facts an op may need: the device constants go on, the Op being run,
    and ``resolve`` (IR argument -> run-time value) for ops that read their producers."""

    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    op: Any = None
    resolve: Callable[[Any], Any] = lambda x: x


#: Every op segkit records, by name (filled by :func:`register`).
CATALOGUE: dict[str, OpDef] = {}
#: Ops scripts call that nvFuser lacks, each recorded as catalogue ops through its ``decompose`` (never in
#: the IR, so nothing downstream sees them).
COMPOSITES: dict[str, OpDef] = {}


def register(opdef: OpDef) -> OpDef:
    """Add an entry to CATALOGUE, or to COMPOSITES when it has a ``decompose`` (recorded as other ops)."""
    (COMPOSITES if opdef.decompose is not None else CATALOGUE)[opdef.name] = opdef
    return opdef


def get(name: str) -> OpDef | None:
    return CATALOGUE.get(name)


def reductions() -> frozenset[str]:
    """The ops that reduce over ``dims``: one tensor operand, a ``dims`` attribute, not a view (the reduction
    reuse pass and the fuzzer read this rather than keep their own lists)."""
    return frozenset(name for name, opdef in CATALOGUE.items()
                     if not opdef.meta and len(opdef.operands) == 1 and "dims" in dict(opdef.attrs))


def is_segment_boundary(op: Any) -> bool:
    """Whether a recorded op (anything with a ``name``) marks a segment boundary (``OpDef.segment_boundary``)."""
    opdef = CATALOGUE.get(op.name)
    return opdef is not None and opdef.segment_boundary


# --------------------------------------------------------------------------- helpers for shape rules
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


def tensor_arg(a: Any, what: str) -> Value:
    """``a`` if it is a recorded tensor, else an InferError naming ``what``."""
    if not isinstance(a, Value) or not a.is_tensor:
        raise InferError(f"{what} must be a tensor, got {a!r}")
    return a


def norm_dim(d: int, ndim: int, what: str = "dim") -> int:
    """``d`` wrapped into [0, ndim) (negative from the end), or an InferError when it is no int or out of range."""
    if not isinstance(d, int) or isinstance(d, bool):
        raise InferError(f"{what} must be an int, got {d!r}")
    if not -ndim <= d < max(ndim, 1):
        raise InferError(f"{what} {d} is out of range for a tensor of rank {ndim}")
    return d % ndim if ndim else 0


def norm_dims(dims: Any, ndim: int) -> list[int]:
    """An int or a list of dims, each normalised by :func:`norm_dim`; a repeated dim is an InferError."""
    if isinstance(dims, int):
        dims = [dims]
    if not isinstance(dims, (list, tuple)):
        raise InferError(f"dims must be a list of ints, got {dims!r}")
    out = [norm_dim(d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise InferError(f"dims {list(dims)} repeat a dim")
    return out


def out_like(v: Value, shape=None, broadcast=None, expanded=None, dtype=None) -> Out:
    """An output like ``v``: its dtype, shape and flags unless given."""
    return Out(
        dtype or v.dtype,
        tuple(v.shape if shape is None else shape),
        tuple(v.broadcast if broadcast is None else broadcast),
        tuple(v.expanded if expanded is None else expanded),
    )


def runtime_ints(xs: Sequence[Any]) -> list[int]:
    """Run-time values of a size list (Python ints or 0-d tensors) as ints."""
    return [int(x) for x in xs]


def scalar_kind(x: Any) -> str:
    """'int', 'float', 'complex' or 'bool' of a recorded scalar or a Python number."""
    if isinstance(x, Value):
        t = x.dtype.torch
        return "complex" if t.is_complex else "float" if t.is_floating_point else "bool" if t == torch.bool else "int"
    return "bool" if isinstance(x, bool) else "int" if isinstance(x, int) else "complex" if isinstance(x, complex) else "float"


def uncompilable(name: str, dtype: DataType, why: str, fix: str = "cast it to Float first") -> InferError:
    """The refusal of an op nvFuser accepts but cannot compile a kernel for."""
    return InferError(f"nvFuser cannot compile {name} on {dtype.name}: {why}; {fix}")


# --------------------------------------------------------------------------- what segkit does not record
#: Hints for op names people reach for that nvFuser spells differently or lacks.
HINTS = {
    "amax": "nvFuser has no amax: use fd.ops.max(x, dims=...)",
    "amin": "nvFuser has no amin: use fd.ops.min(x, dims=...)",
    "view": "use fd.ops.reshape(x, new_shape=...)",
    "transpose": "use fd.ops.permute(x, dims=...)",
    "unsqueeze": "use fd.ops.broadcast(x, is_broadcast_dim=...)",
    # legacy frontend ops nvfuser_direct dropped and segkit does not decompose
    "batch_norm": "the legacy frontend's batch_norm (which also writes running_mean / running_var in place) is not "
                  "recorded: write it with var_mean, sub, mul and add_output(..., alias_input=) for the running stats",
    "index_put_accumulate": "the legacy frontend's index_put_accumulate (2025) is not recorded: nvfuser_direct has no "
                            "such op (its scatter overwrites repeated indices, it does not accumulate)",
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
