"""Hypothesis strategies for random, valid fusions, weighted toward what breaks fusing compilers.

A case is built op by op through segkit's recording ``FusionDefinition``, so it
is valid by construction (the frontend checks every op) and prints as a repro
script. What is generated:

* inputs of random rank, odd and size-1 sizes, dtypes (float, bf16, half,
  double, int, bool), allocation orders, padded (non-contiguous) and stride-0
  (expanded) dims;
* chains of meta ops (reshape split / merge / flatten, permute, slice, pad,
  cat, broadcast, expand, squeeze, ...) before and after compute;
* pointwise math and comparisons (discovered from the op catalogue), casts,
  ``where``; reductions (inner, outer, several dims, var / var_mean / welford)
  and normalizations (reduce, broadcast back, combine with the input);
* scans (cumsum, cummax, ...), matmul / linear with a new weight input, triu;
* ops whose operands need a domain (``segkit.fuzz.domains``, which also says what is left out and why):
  integer and bitwise ops, numerically wild math, indexing with in-range indices, creation ops,
  sorting where ties cannot matter, complex parts, extents;
* several outputs: intermediates, views of inputs, the same tensor twice;
* a quarter of the cases with symbolic input sizes (-1), as Thunder defines its fusions.

Dead ops and unused inputs are dropped before a case is returned.

Compute runs on Float/Double values (low-precision and integer tensors are cast
in first, as Thunder's traces do), so the reference and a correct compiler
agree within the dtype tolerances of ``segkit.compare``; only the integer and
indexing steps of ``segkit.fuzz.domains`` compute on integers, exactly.

:data:`OP_WEIGHTS` is the explicit table of what is generated and how often;
pointwise and reduction ops come from the catalogue (``pointwise_ops``,
``reduction_ops``), so ops added to it are generated without edits here.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from hypothesis import strategies as st

from segkit import ops as catalogue
from segkit.dtypes import DataType
from segkit.errors import FusionDefinitionError, SegkitError
from segkit.fuzz.domains import DOMAIN_STEPS, DomainSteps
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion
from segkit.ir import Value, ops_needed_by
from segkit.layout import Layout
from segkit.minimize import rebuild
from segkit.printing import emit_repro

#: How often each generator step is drawn (relative weights). Meta ops first: they are what
#: breaks schedulers and alias analysis when mixed with compute.
OP_WEIGHTS: dict[str, int] = {
    "reshape": 10, "expand": 9, "permute": 6, "slice": 6, "broadcast": 5, "squeeze": 3, "pad": 3, "cat": 3,
    "broadcast_in_dim": 1, "select": 1, "set": 1, "segment_set": 1, "stride_order": 1,
    "unary": 7, "binary": 9, "where": 2, "ternary": 1, "cast": 3,
    "reduction": 6, "normalize": 4, "scan": 2, "matmul": 2, "linear": 1, "triu": 1,
    # ops whose operands need a domain (segkit.fuzz.domains): rarer than the above
    "integer": 2, "wild": 2, "clamp": 1, "threshold": 1, "addcmul": 1, "index": 3, "scatter": 1,
    "creation": 1, "sort": 1, "complex": 1, "extent": 1,
}

#: Pointwise ops by name -> weight; catalogue pointwise ops not named here get DEFAULT_WEIGHT.
#: Numerically wild ops (overflow or domain errors on random inputs) are never drawn here: the "wild" step
#: (segkit.fuzz.domains) emits them on their safe domains.
POINTWISE_WEIGHTS: dict[str, int] = {
    "add": 6, "mul": 6, "sub": 4, "div": 2, "maximum": 2, "minimum": 2,
    "neg": 3, "abs": 3, "exp": 3, "tanh": 3, "sigmoid": 3, "relu": 3, "silu": 2, "rsqrt": 1, "sqrt": 1,
    "sin": 2, "cos": 2, "log": 1, "reciprocal": 1, "erf": 2,
    "gt": 2, "lt": 2, "ge": 1, "le": 1, "eq": 1, "ne": 1, "isnan": 1,
    "pow": 0, "lgamma": 0, "erfinv": 0, "nextafter": 0, "exp2": 0, "expm1": 1, "tan": 0, "sinh": 0, "cosh": 0,
}
DEFAULT_WEIGHT = 1

#: Reduction ops (catalogue ops with a ``dims`` attribute) -> weight; unknown ones get DEFAULT_WEIGHT.
REDUCTION_WEIGHTS: dict[str, int] = {"sum": 6, "max": 3, "min": 2, "prod": 1, "var": 2, "var_mean": 3, "welford": 3}

#: Attributes a reduction may have that the generator knows how to fill.
_REDUCTION_ATTRS = {"dims", "keepdim", "dtype", "correction"}

INPUT_DTYPES = [(DataType.Float, 6), (DataType.BFloat16, 3), (DataType.Half, 2), (DataType.Double, 1),
                (DataType.Int, 1), (DataType.Int32, 1), (DataType.Bool, 1)]
COMPUTE = (DataType.Float, DataType.Double)
LOW = (DataType.BFloat16, DataType.Half)
SIZES = [1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64, 127, 128, 256]
MAX_RANK = 5


def _weighted(table: list[tuple[Any, int]]) -> st.SearchStrategy:
    """Pick from (item, weight) pairs: a repeated sample, so shrinking goes toward the first items."""
    return st.sampled_from([item for item, w in table for _ in range(w)])


# --------------------------------------------------------------------------- catalogue probing
def _probe(name: str, dtypes: tuple[DataType, ...]) -> DataType | None:
    """The output dtype of catalogue op ``name`` on same-shape tensors of ``dtypes`` (None if it refuses),
    found by recording it and running the reference on a sample."""
    try:
        fd = FusionDefinition()
        xs = [fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=dt) for dt in dtypes]
        out = getattr(fd.ops, name)(*xs)
        if not isinstance(out, Value) or out.shape != (2, 3):
            return None
        fd.add_output(out)
        sample = [torch.linspace(0.1, 0.9, 6).reshape(2, 3).to(dt.torch) for dt in dtypes]
        first, again = fd.execute(sample)[0], fd.execute(sample)[0]
        if not torch.equal(first.nan_to_num(), again.nan_to_num()):
            return None  # random ops cannot be compared with a reference
        return out.dtype
    except (SegkitError, RuntimeError, TypeError, ValueError):
        return None


@functools.cache
def pointwise_ops() -> dict[str, dict[str, list[str]]]:
    """Catalogue pointwise ops by arity and result: {"unary"|"binary"|"ternary": {"math"|"predicate": names}}.

    An op qualifies when it has no attributes, is not a view, and maps Float tensors of one shape to a
    tensor of that shape (Float: "math", Bool: "predicate")."""
    out: dict[str, dict[str, list[str]]] = {k: {"math": [], "predicate": []} for k in ("unary", "binary", "ternary")}
    arity = {1: "unary", 2: "binary", 3: "ternary"}
    for name, opdef in sorted(catalogue.CATALOGUE.items()):
        if opdef.meta or opdef.attrs or len(opdef.operands) not in arity or name == "where":
            continue
        dt = _probe(name, (DataType.Float,) * len(opdef.operands))
        if dt is DataType.Float:
            out[arity[len(opdef.operands)]]["math"].append(name)
        elif dt is DataType.Bool:
            out[arity[len(opdef.operands)]]["predicate"].append(name)
    return out


@functools.cache
def reduction_ops() -> tuple[str, ...]:
    """The catalogue's reductions (``ops.reductions()``) whose other attributes we can fill."""
    return tuple(sorted(name for name in catalogue.reductions()
                        if all(a in _REDUCTION_ATTRS or d is not catalogue.REQUIRED
                               for a, d in catalogue.get(name).attrs)))


@functools.cache
def scan_ops() -> tuple[str, ...]:
    """Catalogue ops that run along one dim (cumsum, cummax, ...): one tensor operand, a required ``dim``,
    other attributes defaulted, and a result of the input's shape and dtype (so no index outputs, whose
    order on ties is not defined)."""
    names = []
    for name, opdef in sorted(catalogue.CATALOGUE.items()):
        attrs = dict(opdef.attrs)
        if opdef.meta or opdef.operands != ("arg",) or attrs.get("dim", None) is not catalogue.REQUIRED:
            continue
        if any(d is catalogue.REQUIRED for a, d in attrs.items() if a != "dim"):
            continue
        try:
            fd = FusionDefinition()
            x = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float)
            out = getattr(fd.ops, name)(x, dim=1)
        except SegkitError:
            continue
        if isinstance(out, Value) and out.shape == (2, 3) and out.dtype is DataType.Float:
            names.append(name)
    return tuple(names)


def generated_ops() -> set[str]:
    """Every catalogue op the generator can emit (the denominator of op coverage)."""
    pw = pointwise_ops()
    names = {n for kind in pw.values() for group in kind.values() for n in group
             if POINTWISE_WEIGHTS.get(n, DEFAULT_WEIGHT) > 0}
    names -= set(pw["ternary"]["predicate"])
    names |= set(reduction_ops()) | set(scan_ops()) | {"where", "cast"}
    names |= {k for k in OP_WEIGHTS if OP_WEIGHTS[k] > 0} - {"scan"}
    names |= {n for step, ops in DOMAIN_STEPS.items() if OP_WEIGHTS.get(step, 0) > 0 for n in ops}
    return {n for n in names if catalogue.get(n) is not None}


def _pick_pointwise(draw, arity: str, kind: str) -> str | None:
    names = pointwise_ops()[arity][kind]
    table = [(n, POINTWISE_WEIGHTS.get(n, DEFAULT_WEIGHT)) for n in names]
    table = [(n, w) for n, w in table if w > 0]
    return draw(_weighted(table)) if table else None


# --------------------------------------------------------------------------- input layouts
def input_strides(shape: list[int], order: list[int], padded: set[int], expanded: set[int]) -> list[int]:
    """Strides of a tensor allocated in ``order`` (logical dims, outermost first), where each dim in
    ``padded`` has a one-element gap (so nvFuser sees it as not contiguous) and ``expanded`` dims stride 0."""
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        if d in expanded:
            continue
        strides[d] = step + (1 if d in padded and shape[d] > 1 else 0)
        step = strides[d] * shape[d]
    return strides


def strided_inputs(fd: Any, device: str = "meta", shapes: list | None = None) -> list[Any]:
    """Inputs for a fusion's definitions: its declared allocation order, a padded dim wherever
    contiguity is False, stride 0 for expanded dims (used for cases and for minimized candidates alike);
    ``shapes``: each input's run-time size, for a fusion whose recorded sizes are symbolic (-1)."""
    out = []
    for i, v in enumerate(as_fusion(fd).inputs):
        if not v.is_tensor:
            out.append(v.value if v.value is not None else (1.5 if v.dtype.is_float else 3))
            continue
        shape = list(shapes[i]) if shapes is not None else list(v.shape)
        lay = Layout.from_stride_order(v.stride_order, v.contiguity)
        padded = {d for d, c in zip(lay.order, lay.contiguity) if c is False}
        expanded = {d for d in range(v.ndim) if v.expanded[d]}
        strides = input_strides(shape, list(lay.order), padded, expanded)
        out.append(torch.empty_strided(shape, strides, dtype=v.dtype.torch, device=device))
    return out


# --------------------------------------------------------------------------- the builder
@dataclass
class Case:
    """One generated fusion: the recorded definition, its inputs' layouts (meta tensors) and its script."""

    fd: FusionDefinition
    inputs: list[Any]
    script: str = ""

    @property
    def ops(self) -> list[str]:
        return [op.name for op in self.fd.fusion.ops]

    def pairs(self) -> set[tuple[str, str]]:
        """(producer op, consumer op) edges: what op-pair coverage counts."""
        return {(x.definition.name, op.name) for op in self.fd.fusion.ops for x in op.inputs
                if x.definition is not None}


@dataclass
class _Builder(DomainSteps):
    draw: Callable
    max_elements: int
    fd: FusionDefinition = field(default_factory=FusionDefinition)
    pool: list[Value] = field(default_factory=list)

    # -- helpers ------------------------------------------------------------
    def fits(self, shape) -> bool:
        return math.prod(shape) <= self.max_elements and len(shape) <= MAX_RANK

    def pick(self, accept: Callable[[Value], bool] = lambda v: True) -> Value | None:
        """A pool tensor, usually a recent one (so ops form chains)."""
        cands = [v for v in self.pool if accept(v)]
        if not cands:
            return None
        if self.draw(st.integers(0, 3)) > 0:
            cands = cands[-3:]
        return cands[self.draw(st.integers(0, len(cands) - 1))]

    def new_input(self, shape: list[int] | None = None, dtype: DataType | None = None,
                  broadcast_ok: tuple[bool, ...] = (), expand: dict[int, bool] | None = None) -> Value:
        """A new fusion input with a random layout; ``expand`` fixes whether given dims are stride-0."""
        draw = self.draw
        if shape is None:
            rank = draw(st.integers(1, 4))
            shape = [draw(st.sampled_from(SIZES)) for _ in range(rank)]
            while math.prod(shape) > self.max_elements:
                shape[shape.index(max(shape))] //= 2
        if dtype is None:
            dtype = draw(_weighted(INPUT_DTYPES))
        n = len(shape)
        shape = list(shape)
        for d in range(n):  # a second operand may broadcast where the first has size > 1
            if d < len(broadcast_ok) and broadcast_ok[d] and draw(st.integers(0, 5)) == 0:
                shape[d] = 1
        order = list(range(n)) if draw(st.integers(0, 2)) else list(draw(st.permutations(range(n))))
        padded = {d for d in range(n) if shape[d] > 1 and draw(st.integers(0, 5)) == 0}
        expanded = {d for d in range(n) if shape[d] > 1 and draw(st.integers(0, 6)) == 0}
        for d, on in (expand or {}).items():
            expanded = expanded | {d} if on and shape[d] > 1 else expanded - {d}
        strides = input_strides(shape, order, padded, expanded)
        v = self.fd.define_tensor(sizes=shape, strides=strides, dtype=dtype, static_sizes=True)
        self.pool.append(v)
        return v

    def compute_view(self, v: Value) -> Value:
        """``v`` as a Float/Double value: low-precision, integer and bool tensors are cast in first."""
        if v.dtype in COMPUTE:
            return v
        out = self.fd.ops.cast(v, dtype=DataType.Float)
        self.pool.append(out)
        return out

    def same_dtype(self, v: Value, dtype: DataType) -> Value:
        return v if v.dtype == dtype else self.record(self.fd.ops.cast(v, dtype=dtype))

    def operand_like(self, x: Value) -> Value:
        """A second operand for a pointwise op on ``x``: x itself, a compatible pool tensor, or a new input."""
        choice = self.draw(st.integers(0, 5))
        if choice == 0:
            return x

        def compatible(v: Value) -> bool:
            if v is x or v.ndim != x.ndim:
                return False
            return all(a == b or (ba and not ea) or (bb and not eb) for a, b, ba, bb, ea, eb in
                       zip(x.shape, v.shape, x.broadcast, v.broadcast, x.expanded, v.expanded))

        if choice <= 2:
            other = self.pick(compatible)
            if other is not None:
                return self.compute_view(other)
        return self.compute_view(self.new_input(list(x.shape), broadcast_ok=tuple(True for _ in x.shape)))

    def record(self, out: Any) -> Value:
        outs = out if isinstance(out, tuple) else (out,)
        for v in outs:
            if isinstance(v, Value) and v.is_tensor:
                self.pool.append(v)
        return outs[0]

    # -- meta ops -----------------------------------------------------------
    def reshape(self) -> Value | None:
        x = self.pick()
        if x is None:
            return None
        shape, n, draw = list(x.shape), x.ndim, self.draw
        mode = draw(st.sampled_from(["merge", "merge", "split", "split", "flatten", "regroup"]))
        if mode == "merge" and n >= 2:
            # merges that take in a broadcast (or expanded) dim are where view logic goes wrong: favour them
            bcast = [d for d in range(n - 1) if x.broadcast[d] or x.broadcast[d + 1]]
            d = draw(st.sampled_from(bcast)) if bcast and draw(st.booleans()) else draw(st.integers(0, n - 2))
            new = shape[:d] + [shape[d] * shape[d + 1]] + shape[d + 2:]
        elif mode in ("split", "regroup") and n < MAX_RANK:
            d = draw(st.integers(0, n - 1))
            s = shape[d]
            factors = [f for f in range(1, s + 1) if s % f == 0]
            f = draw(st.sampled_from(factors))
            new = shape[:d] + [f, s // f] + shape[d + 1:]
            if mode == "regroup" and len(new) >= 3:
                e = draw(st.integers(0, len(new) - 2))
                new = new[:e] + [new[e] * new[e + 1]] + new[e + 2:]
        else:
            new = [math.prod(shape)]
        if new == shape:
            return None
        return self.record(self.fd.ops.reshape(x, new_shape=new))

    def permute(self) -> Value | None:
        x = self.pick(lambda v: v.ndim >= 2)
        if x is None:
            return None
        dims = list(self.draw(st.permutations(range(x.ndim))))
        if dims == list(range(x.ndim)):
            dims = dims[1:] + dims[:1]
        return self.record(self.fd.ops.permute(x, dims=dims))

    def slice(self) -> Value | None:
        x = self.pick(lambda v: any(s > 1 for s in v.shape))
        if x is None:
            return None
        starts, ends = [], []
        for s in x.shape:
            if s > 1 and self.draw(st.booleans()):
                lo = self.draw(st.integers(0, s - 1))
                starts.append(lo), ends.append(self.draw(st.integers(lo + 1, s)))
            else:
                starts.append(0), ends.append(s)
        if all(e - b == s for b, e, s in zip(starts, ends, x.shape)):
            d = max(range(x.ndim), key=lambda i: x.shape[i])
            starts[d] = 1
        return self.record(self.fd.ops.slice(x, start_indices=starts, end_indices=ends))

    def pad(self) -> Value | None:
        x = self.pick(lambda v: v.dtype.is_float)
        if x is None:
            return None
        k = self.draw(st.integers(1, min(2, x.ndim)))
        widths = [self.draw(st.integers(0, 3)) for _ in range(2 * k)]
        if not any(widths):
            widths[0] = 1
        shape = list(x.shape)
        for i in range(k):
            shape[x.ndim - 1 - i] += widths[2 * i] + widths[2 * i + 1]
        if not self.fits(shape):
            return None
        value = self.draw(st.sampled_from([None, 0.0, 1.5]))
        return self.record(self.fd.ops.pad(x, pad_widths=widths, **({} if value is None else {"value": value})))

    def cat(self) -> Value | None:
        x = self.pick(lambda v: v.dtype.is_float)
        if x is None:
            return None
        d = self.draw(st.integers(0, x.ndim - 1))

        def fits_cat(v: Value) -> bool:
            return (v is not x and v.ndim == x.ndim and v.dtype == x.dtype
                    and all(a == b for i, (a, b) in enumerate(zip(v.shape, x.shape)) if i != d))

        other = self.pick(fits_cat) if self.draw(st.booleans()) else None
        if other is None:
            shape = list(x.shape)
            shape[d] = self.draw(st.sampled_from([1, 2, 3, 5, x.shape[d]]))
            other = self.new_input(shape, x.dtype)
        shape = list(x.shape)
        shape[d] += other.shape[d]
        if not self.fits(shape):
            return None
        pair = [x, other] if self.draw(st.booleans()) else [other, x]
        return self.record(self.fd.ops.cat(pair, dim=d))

    def broadcast(self) -> Value | None:
        x = self.pick(lambda v: v.ndim < MAX_RANK)
        if x is None:
            return None
        flags = [False] * x.ndim
        flags.insert(self.draw(st.integers(0, x.ndim)), True)
        return self.record(self.fd.ops.broadcast(x, is_broadcast_dim=flags))

    def expand(self) -> Value | None:
        x = self.pick(lambda v: any(b and not e for b, e in zip(v.broadcast, v.expanded)))
        if x is None:
            x = self.broadcast()
            if x is None:
                return None
        shape = list(x.shape)
        for d in range(x.ndim):
            if x.broadcast[d] and not x.expanded[d] and self.draw(st.integers(0, 3)):
                shape[d] = self.draw(st.sampled_from([2, 3, 4, 5, 8]))
        if shape == list(x.shape) or not self.fits(shape):
            return None
        return self.record(self.fd.ops.expand(x, shape=shape))

    def broadcast_in_dim(self) -> Value | None:
        x = self.pick(lambda v: v.ndim < MAX_RANK)
        if x is None:
            return None
        at = self.draw(st.integers(0, x.ndim))
        bdims = [i if i < at else i + 1 for i in range(x.ndim)]
        shape = list(x.shape)
        shape.insert(at, self.draw(st.sampled_from([1, 2, 3])))
        if not self.fits(shape):
            return None
        return self.record(self.fd.ops.broadcast_in_dim(x, shape=shape, broadcast_dims=bdims))

    def squeeze(self) -> Value | None:
        x = self.pick(lambda v: v.ndim > 1 and any(s == 1 and not e for s, e in zip(v.shape, v.expanded)))
        if x is None:
            return None
        ones = [d for d in range(x.ndim) if x.shape[d] == 1 and not x.expanded[d]]
        return self.record(self.fd.ops.squeeze(x, dims=[self.draw(st.sampled_from(ones))]))

    def select(self) -> Value | None:
        x = self.pick(lambda v: v.ndim > 1)
        if x is None:
            return None
        d = self.draw(st.integers(0, x.ndim - 1))
        return self.record(self.fd.ops.select(x, index=self.draw(st.integers(0, x.shape[d] - 1)), dim=d))

    def set(self) -> Value | None:
        x = self.pick()
        return None if x is None else self.record(self.fd.ops.set(x))

    def segment_set(self) -> Value | None:
        x = self.pick()
        return None if x is None else self.record(self.fd.ops.segment_set(x))

    def stride_order(self) -> Value | None:
        x = self.pick(lambda v: v.ndim >= 2)
        if x is None:
            return None
        return self.record(self.fd.ops.stride_order(x, stride_order=list(self.draw(st.permutations(range(x.ndim))))))

    # -- compute ------------------------------------------------------------
    def unary(self) -> Value | None:
        x = self.pick()
        name = _pick_pointwise(self.draw, "unary", "math")
        if x is None or name is None:
            return None
        return self.record(getattr(self.fd.ops, name)(self.compute_view(x)))

    def binary(self) -> Value | None:
        x = self.pick()
        if x is None:
            return None
        x = self.compute_view(x)
        kind = "predicate" if self.draw(st.integers(0, 4)) == 0 else "math"
        name = _pick_pointwise(self.draw, "binary", kind)
        if name is None:
            return None
        if self.draw(st.integers(0, 3)) == 0:
            other: Any = self.draw(st.sampled_from([2.0, -0.5, 3, 1e-3]))
        else:
            other = self.operand_like(x)
        lhs, rhs = (x, other) if self.draw(st.integers(0, 3)) else (other, x)
        if not isinstance(lhs, Value):
            lhs, rhs = rhs, lhs
        return self.record(getattr(self.fd.ops, name)(lhs, rhs))

    def ternary(self) -> Value | None:
        x = self.pick()
        name = _pick_pointwise(self.draw, "ternary", "math")
        if x is None or name is None:
            return None
        x = self.compute_view(x)
        a, b = (self.same_dtype(self.operand_like(x), x.dtype) for _ in range(2))
        return self.record(getattr(self.fd.ops, name)(x, a, b))

    def where(self) -> Value | None:
        x = self.pick()
        unary = self.draw(st.integers(0, 2)) == 0
        pred = _pick_pointwise(self.draw, "unary" if unary else "binary", "predicate")
        if x is None or pred is None:
            return None
        x = self.compute_view(x)
        args = (x,) if unary else (x, self.draw(st.sampled_from([0.0, 0.5])))
        cond = self.record(getattr(self.fd.ops, pred)(*args))
        other = self.operand_like(x) if self.draw(st.booleans()) else 0.0
        return self.record(self.fd.ops.where(cond, x, other))

    def cast(self) -> Value | None:
        x = self.pick(lambda v: v.dtype in COMPUTE)
        if x is None:
            return None
        dtype = self.draw(st.sampled_from([DataType.BFloat16, DataType.Half, DataType.Double, DataType.Float]))
        if dtype == x.dtype:
            return None
        return self.record(self.fd.ops.cast(x, dtype=dtype))

    def _reduce_dims(self, x: Value) -> list[int]:
        n, draw = x.ndim, self.draw
        where = draw(st.sampled_from(["inner", "inner", "outer", "outer", "both", "all", "middle"]))
        if where == "inner" or n == 1:
            return [n - 1]
        if where == "outer":
            return [0]
        if where == "both":
            return [0, n - 1]
        if where == "all":
            return list(range(n))
        return [draw(st.integers(0, n - 1))]

    def reduction(self, name: str | None = None) -> tuple[Value, list[int], bool] | None:
        x = self.pick(lambda v: any(s > 1 for s in v.shape))
        names = reduction_ops()
        if x is None or not names:
            return None
        name = name or self.draw(_weighted([(n, REDUCTION_WEIGHTS.get(n, DEFAULT_WEIGHT)) for n in names]))
        x = self.compute_view(x)
        dims = self._reduce_dims(x)
        attrs = dict(catalogue.get(name).attrs)
        kwargs: dict[str, Any] = {"dims": dims}
        keepdim = "keepdim" in attrs and self.draw(st.integers(0, 3)) == 0
        if keepdim:
            kwargs["keepdim"] = True
        if "correction" in attrs:  # a correction as large as the reduced count divides by zero: no signal
            kwargs["correction"] = self.draw(st.sampled_from([0, 1])) if math.prod(x.shape[d] for d in dims) > 1 else 0
        if len(dims) == x.ndim and not keepdim:
            if "keepdim" not in attrs:
                return None  # a rank-0 result: nothing to broadcast back
            kwargs["keepdim"] = keepdim = True
        out = self.record(getattr(self.fd.ops, name)(x, **kwargs))
        return out, dims, keepdim

    def normalize(self) -> Value | None:
        """reduce -> broadcast back -> combine with the input (the shape of every norm kernel)."""
        red = self.reduction(self.draw(st.sampled_from([n for n in ("sum", "max", "var_mean", "welford")
                                                         if n in reduction_ops()] or [None])))
        if red is None:
            return None
        r, dims, keepdim = red
        x = r.definition.inputs[0]
        if r.dtype not in COMPUTE:
            return r
        if not keepdim:
            flags = [d in dims for d in range(x.ndim)]
            r = self.record(self.fd.ops.broadcast(r, is_broadcast_dim=flags))
        name = self.draw(st.sampled_from(["sub", "mul", "div", "add"]))
        return self.record(getattr(self.fd.ops, name)(x, r))

    def scan(self) -> Value | None:
        x = self.pick(lambda v: any(s > 1 for s in v.shape))
        names = scan_ops()
        if x is None or not names:
            return None
        name = self.draw(st.sampled_from(names))
        dims = [d for d in range(x.ndim) if not x.expanded[d]]  # nvFuser refuses a scan along an expanded dim
        if not dims:
            return None
        x = self.compute_view(x)
        return self.record(getattr(self.fd.ops, name)(x, dim=self.draw(st.sampled_from(dims))))

    def matmul(self) -> Value | None:
        """x @ w with a new weight input (the GEMM next to the pointwise and view ops around it)."""
        return self._gemm("matmul")

    def linear(self) -> Value | None:
        return self._gemm("linear")

    def _gemm(self, name: str) -> Value | None:
        """matmul (w is [k, n]) or linear (w is [n, k]) of a view of a tensor of rank >= 2 with a new weight."""
        x = self.pick(lambda v: v.ndim >= 2)
        if x is None:
            return None
        x = self.compute_view(x)
        n = self.draw(st.sampled_from([1, 3, 8, 16, 33]))
        if not self.fits(list(x.shape[:-1]) + [n]):
            return None
        shape, k = ([x.shape[-1], n], 0) if name == "matmul" else ([n, x.shape[-1]], 1)
        # K is stride-0 in the weight exactly when it is in x: nvFuser wants K broadcast in both or neither
        w = self.same_dtype(self.new_input(shape, DataType.Float, expand={k: x.expanded[-1]}), x.dtype)
        return self.record(getattr(self.fd.ops, name)(x, w))

    def triu(self) -> Value | None:
        x = self.pick(lambda v: v.ndim >= 2)
        if x is None:
            return None
        return self.record(self.fd.ops.triu(x, diagonal=self.draw(st.integers(-2, 2))))

    def step(self, name: str) -> Value | None:
        """One generator step; a step the frontend rejects records nothing (ops from the catalogue may
        have rules the generator does not know)."""
        try:
            return self._step(name)
        except FusionDefinitionError:
            return None

    def _step(self, name: str) -> Value | None:
        if name == "reduction":
            red = self.reduction()
            return None if red is None else red[0]
        if name in ("unary", "binary", "ternary", "where", "cast", "normalize", "scan") or name in DOMAIN_STEPS:
            return getattr(self, name)()
        if catalogue.get(name) is None:
            return None  # a table entry this catalogue lacks
        return getattr(self, name)()


@st.composite
def cases(draw, max_ops: int = 10, max_elements: int = 4096, weights: dict[str, int] | None = None) -> Case:
    """A random valid fusion (see the module docstring) with at most ``max_ops`` generator steps and at
    most ``max_elements`` elements per tensor."""
    table = [(k, w) for k, w in (weights or OP_WEIGHTS).items() if w > 0]
    b = _Builder(draw, max_elements)
    for _ in range(draw(st.integers(1, 2))):
        b.new_input()
    last = None
    for _ in range(draw(st.integers(1, max_ops))):
        v = b.step(draw(_weighted(table)))
        last = v if v is not None else last
    computed = [v for v in b.pool if v.definition is not None]
    if not computed:
        last = b.record(b.fd.ops.neg(b.compute_view(b.pool[-1])))
        computed = [last]
    outs = [last or computed[-1]]
    for v in draw(st.lists(st.sampled_from(computed), max_size=2, unique_by=id)):
        if all(v is not o for o in outs):
            outs.append(v)
    if draw(st.integers(0, 9)) == 0:
        outs.append(outs[0])  # the same tensor twice
    for v in outs:
        b.fd.add_output(v)
    inputs = strided_inputs(b.fd)
    return Case(*live(b.fd, inputs, symbolic=draw(st.integers(0, 3)) == 0))


def live(fd: FusionDefinition, inputs: list[Any], symbolic: bool = False) -> tuple[FusionDefinition, list[Any], str]:
    """The fusion without dead ops and unused inputs (so the minimizer, which drops them too, starts from
    the same inputs), the inputs it reads, and its script. ``symbolic``: input sizes become -1, as Thunder
    defines them, op arguments unchanged (``segkit.minimize.specialize`` makes them static again); kept
    static when the frontend refuses that."""
    f = fd.fusion
    live_ops = ops_needed_by(f.outputs)
    read = {id(x) for op in f.ops if id(op) in live_ops for x in op.inputs} | {id(v) for v in f.outputs}
    kept = [x for v, x in zip(f.inputs, inputs) if id(v) in read]
    shapes = {id(v): tuple(-1 if s > 1 and not e else s for s, e in zip(v.shape, v.expanded))
              for v in f.inputs if v.is_tensor}
    try:
        new = rebuild(fd, shapes=shapes if symbolic else None)
    except SegkitError:
        new = rebuild(fd)
    return new, kept, emit_repro(new, kept)
