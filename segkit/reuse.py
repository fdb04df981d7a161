"""Reduction reuse: feed each wider reduction from the narrowest reduction of the same value that covers it.

float8 recipes take abs-max of one tensor per row, per column and over all; compilers read the tensor once per
reduction although ``max(x, [0, 1]) == max(max(x, [1]), [0])`` (pytorch/pytorch#136267, whose workaround was a
hand-written FX pass). This pass finds, on segkit's IR, reductions of the same kind (``max``, ``min``, ``sum``)
and output dtype over nested dim sets of the same value, and rewrites each wider one to reduce the narrowest
one's output instead (keepdim on either side is bridged with ``squeeze`` / ``broadcast``). Values computed by
the same elementwise prologue (``cast``, ``abs``, ``neg``, any attribute-free unary op) are merged first, so
``abs(cast(x))`` written once per reduction, as tracers emit it, counts as one value.

``inner_outer="outer"`` (or ``"inner"``) also pairs a max / min over the trailing dims with one over the
complementary leading dims (rowwise and columnwise amax) into the pattern of nvFuser's inner-outer persistent
scheduler (``Pair``), so that both can share one read of the tensor.

``max`` / ``min`` are exact in any order. ``sum`` is reassociated (the partial sums are rounded to the output
dtype first), so it is reused only when that dtype is float32 / float64 / complex or an integer type; a
half-precision sum is left alone and the plan says so.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from segkit.args import FusionLike, checked
from segkit import ops as catalogue
from segkit.dtypes import DataType
from segkit.errors import SegkitError
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion
from segkit.ir import Fusion, Op, Value

#: The reduction kinds (the catalogue's ``OpDef.reduction_kind``) this pass regroups: max / min and sum
REDUCTION_KINDS = ("extremum", "sum")
#: sum outputs whose partial sums are exact (integers) or rounded no worse than nvFuser's own parallel order
SUM_REASSOCIATES = frozenset({DataType.Float, DataType.Double, DataType.ComplexFloat, DataType.ComplexDouble,
                              DataType.Int, DataType.Int32, DataType.Index, DataType.UInt64})
SITE = "inserted by segkit.reuse_reductions"
INNER_OUTER = (None, "outer", "inner")


@dataclass
class Merge:
    """``duplicate`` is computed exactly like ``kept`` (same elementwise op of the same value): its uses read ``kept``."""

    duplicate: Value
    kept: Value


@dataclass
class Reuse:
    """The reduction defining ``wide`` (over ``dims`` of the source) now reduces ``narrow`` (over ``narrow_dims``)."""

    kind: str
    wide: Value
    narrow: Value
    dims: tuple[int, ...]
    narrow_dims: tuple[int, ...]


@dataclass
class Pair:
    """A row-wise ``inner`` reduction (over the trailing dims) and a column-wise ``outer`` one (over the others) of
    the same ``src``. ``where(src > row, row, src)`` (``<`` for min) equals ``src``, since no element exceeds its own
    row's max (a NaN row gives NaN either way), and reading it after the row reduction is broadcast back makes
    ``src`` the persistent buffer nvFuser's inner-outer scheduler wants. ``side`` says which reduction reads it:
    ``"outer"`` (the column reduction, ``row`` being ``inner``) or ``"inner"`` (the row reduction, of a second row
    reduction taken first: the norm backward's shape, whose column reductions do not depend on its row ones)."""

    kind: str
    inner: Value
    outer: Value
    inner_dims: tuple[int, ...]
    side: str


@dataclass
class Skipped:
    """A wide reduction that a narrower one covers but that the pass left alone, and why."""

    wide: Value
    narrow: Value
    reason: str


@dataclass
class ReusePlan:
    """What ``reuse_reductions`` decided for one fusion; ``apply()`` gives the rewritten fusion."""

    fd: Any
    merges: list[Merge] = field(default_factory=list)
    reuses: list[Reuse] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)

    @property
    def fusion(self) -> Fusion:
        return as_fusion(self.fd)

    @property
    def changed(self) -> bool:
        return bool(self.merges or self.reuses or self.pairs)

    def apply(self) -> FusionDefinition:
        """A new fusion with the merges and reuses made (same inputs and outputs, in the same order).
        A builder's nvFuser tuning is not carried: it was chosen for the fusion before the rewrite."""
        return FusionDefinition.from_fusion(_rewrite(self))

    def describe(self) -> str:
        lines = []
        for m in self.merges:
            lines.append(f"  merge {m.duplicate.name} into {m.kept.name}: same {m.kept.definition.name} of the same value")
        for r in self.reuses:
            note = (" (sum reassociated: partial sums kept in " + r.wide.dtype.name + ")"
                    if catalogue.get(r.kind).reduction_kind == "sum" else "")
            lines.append(f"  {r.wide.name} = {r.kind} over dims {list(r.dims)} now reads {r.narrow.name} "
                         f"({r.kind} over dims {list(r.narrow_dims)}){note}")
        for p in self.pairs:
            op = {"gt": ">", "lt": "<"}[catalogue.get(p.kind).extremum_beats]
            reader, row = (p.outer, p.inner.name) if p.side == "outer" else (p.inner, f"a second {p.kind}")
            lines.append(f"  {reader.name} reads where(src {op} row, row, src) = src, row = {row} over dims "
                         f"{list(p.inner_dims)}; with {p.outer.name} over the other dims: one inner-outer pattern")
        for s in self.skipped:
            lines.append(f"  left {s.wide.name} alone (covered by {s.narrow.name}): {s.reason}")
        if not lines:
            lines.append("  no reductions of the same value over nested dims: nothing to reuse")
        before = full_size_reductions(self.fusion)
        after = full_size_reductions(_rewrite(self)) if self.changed else before
        passes = ", ".join(f"{n}: {before[n]} -> {after.get(n, 0)}" for n in before)
        head = "reduction reuse (max/min exact; sum only in float32/float64/complex/integer dtypes)"
        return "\n".join([head, *lines] + ([f"  full-size reductions per input: {passes}"] if passes else []))


@checked
def reuse_reductions(fd: FusionLike, inner_outer: Literal["outer", "inner"] | None = None) -> ReusePlan:
    """Plan the reuse of narrower reductions by wider ones (see module docstring); ``plan.apply()`` realizes it.
    With ``inner_outer`` ("outer" or "inner", the side that reads the clipped value), a max / min over the trailing
    dims and one over the complementary leading dims of the same value are also paired into nvFuser's inner-outer
    pattern (see ``Pair``)."""
    if inner_outer not in INNER_OUTER:
        raise ValueError(f"inner_outer must be one of {INNER_OUTER}, got {inner_outer!r}")
    fusion = as_fusion(fd)
    canon, merges = _merge_prologues(fusion)
    groups: dict[tuple, list[tuple[Op, frozenset[int]]]] = {}
    for op in fusion.ops:
        red = _reduction(op)
        if red is not None:
            src, dims = red
            groups.setdefault((op.name, canon[id(src)], op.output.dtype), []).append((op, dims))
    plan = ReusePlan(fd, merges)
    for members in groups.values():
        minimal = []
        for op, dims in members:
            covers = [(o, d) for o, d in members if d < dims]
            if not covers:
                minimal.append((op, dims))
                continue
            narrow, ndims = max(covers, key=lambda c: (len(c[1]), -_numel(c[0].output), -fusion.ops.index(c[0])))
            if catalogue.get(op.name).reduction_kind == "sum" and op.output.dtype not in SUM_REASSOCIATES:
                plan.skipped.append(Skipped(op.output, narrow.output, f"a {op.output.dtype.name} sum would round its "
                                            "partial sums once more (reuse only in float32/float64/integer dtypes)"))
                continue
            plan.reuses.append(Reuse(op.name, op.output, narrow.output, tuple(sorted(dims)), tuple(sorted(ndims))))
        if inner_outer and catalogue.get(members[0][0].name).reduction_kind == "extremum":
            plan.pairs += _pairs(minimal, inner_outer)
    return plan


def _pairs(minimal: list[tuple[Op, frozenset[int]]], side: str) -> list[Pair]:
    """(inner, outer) reductions of one value: dims {k, .., n-1} and {0, .., k-1}; each reduction in one pair."""
    pairs, used = [], set()
    for inner, idims in minimal:
        n = inner.args["arg"].ndim
        k = n - len(idims)
        if k < 1 or idims != frozenset(range(k, n)) or id(inner) in used:
            continue
        for outer, odims in minimal:
            if odims == frozenset(range(k)) and id(outer) not in used:
                used.update((id(inner), id(outer)))
                pairs.append(Pair(inner.name, inner.output, outer.output, tuple(sorted(idims)), side))
                break
    return pairs


def _static_dims(op: Op, ndim: int) -> frozenset[int] | None:
    dims = op.args.get("dims")
    if dims is None:
        return frozenset(range(ndim))
    dims = [dims] if isinstance(dims, int) else dims
    if not dims or not all(isinstance(d, int) and not isinstance(d, bool) for d in dims):
        return None  # no dims (a copy) or symbolic ones: not this pass's business
    return frozenset(d % ndim for d in dims)


def _reduction(op: Op) -> tuple[Value, frozenset[int]] | None:
    """(source, reduced dims) of a reusable reduction op, else None."""
    opdef = catalogue.get(op.name)
    if opdef is None or opdef.reduction_kind not in REDUCTION_KINDS or len(op.outputs) != 1:
        return None
    src = op.args.get("arg")
    if not (isinstance(src, Value) and src.is_tensor and src.ndim > 0):
        return None
    dims = _static_dims(op, src.ndim)
    return None if dims is None else (src, dims)


def _is_prologue(op: Op) -> bool:
    """An elementwise op whose output is fixed by its one tensor operand and its dtype attribute, if any (cast, abs,
    neg, ...); not a meta op (set / segment_set carry segmentation intent), not a random one."""
    opdef = catalogue.get(op.name)
    if opdef is None or opdef.meta or opdef.random or len(op.outputs) != 1 or not op.output.is_tensor:
        return False
    return opdef.elementwise and len(opdef.operands) == 1 and all(a == "dtype" for a, _ in opdef.attrs)


def _merge_prologues(fusion: Fusion) -> tuple[dict[int, Any], list[Merge]]:
    """Canonical key of every value (equal keys: equal values) and the prologue duplicates to merge."""
    canon: dict[int, Any] = {id(v): id(v) for v in fusion.values}
    first: dict[Any, Value] = {}
    outputs = {id(v) for v in fusion.outputs}
    merges = []
    for op in fusion.ops:
        if not _is_prologue(op):
            continue
        out, src = op.output, op.inputs[0]
        key = (op.name, canon[id(src)], op.args.get("dtype"))
        kept = first.setdefault(key, out)
        if kept is out:
            continue
        canon[id(out)] = canon[id(kept)]
        if id(out) not in outputs:  # an output computed twice stays two outputs
            merges.append(Merge(out, kept))
    return canon, merges


def _numel(v: Value) -> float:
    return math.inf if -1 in v.shape else math.prod(v.shape)


def full_size_reductions(fd: Any) -> dict[str, int]:
    """Per tensor input: how many reductions read it, or a value of its size computed from it without a
    reduction (cast, abs, where, a reshape): the passes over the input a kernel per reduction makes."""
    fusion = as_fusion(fd)
    reductions = catalogue.reductions()
    out = {}
    for x in fusion.inputs:
        if not x.is_tensor:
            continue
        size = _numel(x)
        frontier, seen, readers = [x], {id(x)}, set()
        while frontier:
            v = frontier.pop()
            for op in fusion.uses(v):
                if op.name in reductions:
                    readers.add(id(op))
                    continue
                for o in op.outputs:
                    if o.is_tensor and _numel(o) == size and id(o) not in seen:
                        seen.add(id(o))
                        frontier.append(o)
        out[x.name] = len(readers)
    return out


# --------------------------------------------------------------------------- realization
def _make_op(fusion: Fusion, name: str, args: dict, outputs: list[Value] | None = None) -> Op:
    """A catalogue op with its defaults bound and its output inferred (or given: ``outputs``)."""
    opdef = catalogue.get(name)
    bound = opdef.bind([], args)
    if outputs is None:
        outputs = [fusion.new_value(o.dtype, o.shape, broadcast=o.broadcast, expanded=o.expanded)
                   for o in opdef.infer(bound)]
    return Op(name, bound, outputs, SITE)


def _reduce_from(fusion: Fusion, old: Op, r: Reuse, narrow: Value) -> list[Op]:
    """Ops computing ``old``'s output from ``narrow``: the remaining dims reduced, keepdim bridged."""
    keep_narrow = bool(r.narrow.definition.args.get("keepdim"))  # the original op: narrow's may be rewritten too
    keep_wide = bool(old.args.get("keepdim"))
    rest = [d for d in r.dims if d not in r.narrow_dims]
    if not keep_narrow:  # the narrow output lost its reduced dims: shift the rest down
        rest = [d - sum(n < d for n in r.narrow_dims) for d in rest]
    args = {"arg": narrow, "dims": rest, "keepdim": keep_narrow}
    if catalogue.get(r.kind).reduction_kind == "sum":  # a sum keeps its accumulation dtype
        args["dtype"] = old.args.get("dtype")
    wide = old.output
    if keep_wide == keep_narrow:
        return [_make_op(fusion, r.kind, args, [wide])]
    red = _make_op(fusion, r.kind, args)
    if keep_narrow:  # every reduced dim is size 1 now: squeeze them all
        return [red, _make_op(fusion, "squeeze", {"arg": red.output, "dims": list(r.dims)}, [wide])]
    ndim = len(wide.shape)
    flags = [d in r.dims for d in range(ndim)]
    return [red, _make_op(fusion, "broadcast", {"arg": red.output, "is_broadcast_dim": flags}, [wide])]


def _rewrite(plan: ReusePlan) -> Fusion:
    fusion, vmap = plan.fusion.copy()
    for m in plan.merges:
        fusion.replace_uses(vmap[id(m.duplicate)], vmap[id(m.kept)])
    for p in plan.pairs:
        if p.side == "outer":
            _clip_to_row(fusion, p, vmap[id(p.inner)], vmap[id(p.outer)].definition)
        else:
            reader = vmap[id(p.inner)].definition
            first = _make_op(fusion, p.kind, {"arg": reader.args["arg"], "dims": list(p.inner_dims)})
            _clip_to_row(fusion, p, _add_before(fusion, reader, first), reader, keepdim=False)
    for r in plan.reuses:
        wide = vmap[id(r.wide)]
        old = wide.definition
        new_ops = _reduce_from(fusion, old, r, vmap[id(r.narrow)])
        i = fusion.ops.index(old)
        fusion.ops[i:i + 1] = []
        for k, op in enumerate(new_ops):
            fusion.add_op(op, i + k)
        _check_same_shape(plan, r, wide, new_ops)
    fusion.prune()
    fusion.ops = _stable_topological(fusion)
    return fusion


def _clip_to_row(fusion: Fusion, p: Pair, row: Value, reader: Op, keepdim: bool | None = None) -> None:
    """Make ``reader`` reduce ``where(src > row, row, src)`` (``<`` for min), inserted right before it."""
    src = reader.args["arg"]
    if not (p.inner.definition.args.get("keepdim") if keepdim is None else keepdim):
        flags = [d in p.inner_dims for d in range(src.ndim)]
        row = _add_before(fusion, reader, _make_op(fusion, "broadcast", {"arg": row, "is_broadcast_dim": flags}))
    beats = catalogue.get(p.kind).extremum_beats
    cmp = _add_before(fusion, reader, _make_op(fusion, beats, {"lhs": src, "rhs": row}))
    clipped = _add_before(fusion, reader, _make_op(fusion, "where", {"condition": cmp, "x": row, "y": src}))
    reader.args = {**reader.args, "arg": clipped}


def _add_before(fusion: Fusion, anchor: Op, op: Op) -> Value:
    fusion.add_op(op, fusion.ops.index(anchor))
    return op.output


def _check_same_shape(plan: ReusePlan, r: Reuse, wide: Value, new_ops: list[Op]) -> None:
    opdef = catalogue.get(new_ops[-1].name)
    inferred = opdef.infer(new_ops[-1].args)[0]
    if tuple(inferred.shape) != tuple(wide.shape) or inferred.dtype != wide.dtype:
        raise SegkitError(f"reuse_reductions: rewriting {r.wide.name} from {r.narrow.name} gives "
                          f"{inferred.dtype.name}{list(inferred.shape)}, not {wide.describe()}")


def _stable_topological(fusion: Fusion) -> list[Op]:
    """The ops in an order where producers come first, otherwise as close to the current order as possible
    (a wide reduction may now read a narrow one recorded after it)."""
    index = {id(op): i for i, op in enumerate(fusion.ops)}
    producers = {id(op): {id(v.definition) for v in op.inputs if v.definition is not None and id(v.definition) in index}
                 for op in fusion.ops}
    waiting = {k: len(p) for k, p in producers.items()}
    users: dict[int, list[Op]] = {}
    for op in fusion.ops:
        for p in producers[id(op)]:
            users.setdefault(p, []).append(op)
    ready = [(index[id(op)], op) for op in fusion.ops if waiting[id(op)] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, op = heapq.heappop(ready)
        order.append(op)
        for u in users.get(id(op), []):
            waiting[id(u)] -= 1
            if waiting[id(u)] == 0:
                heapq.heappush(ready, (index[id(u)], u))
    if len(order) != len(fusion.ops):
        raise SegkitError("reuse_reductions: internal error, the rewritten fusion has a cycle")
    return order
