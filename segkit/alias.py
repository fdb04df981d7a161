"""Alias analysis: which tensors can be views of another, and the layout that makes them so.

A Python re-creation of nvFuser's csrc/alias_analysis.cpp on segkit's IR. Ops
are visited in topological order; each meta op tries to carry its input's
preferred layout (allocation order of logical dims + contiguity) to its
output. When it can, the output is an alias of the input:

* set, segment_set, permute: the layout is carried (permute renames dims);
* reshape: the size-1 dims it drops are squeezed, each group of dims is
  merged (dims must be adjacent in allocation order, outer contiguous, no
  expanded dim merged or split) then split, and size-1 dims it adds go last;
* slice: order kept; scanning from innermost out, the next non-broadcast dim
  outside a sliced dim becomes non-contiguous; slicing an expanded dim is not
  an alias;
* broadcast: new broadcast dims go last; squeeze drops dims; expand carries.

Every other op (pad, cat, casts, arithmetic, reductions) computes values.
Each alias maps to a root by walking sources up; fusion inputs are never
aliases, and a root may be an intermediate.
"""

from __future__ import annotations

from dataclasses import dataclass

from segkit.interp import as_fusion
from segkit.ir import Fusion, Op, Value
from segkit.layout import Layout
from segkit.ops import normalize_slice, reshape_groups, static

#: Ops whose output may alias their input.
META_OPS = frozenset({"set", "segment_set", "permute", "reshape", "slice", "broadcast", "broadcast_in_dim",
                      "squeeze", "expand"})


def own_layout(v: Value) -> Layout:
    """The layout a tensor has when nothing is preferred: its define_tensor layout, else row-major."""
    if v.contiguity is not None:
        return Layout.from_stride_order(v.stride_order, v.contiguity)
    return Layout.row_major([None if b else True for b in v.broadcast])


@dataclass
class AliasAnalysis:
    """Result of the analysis: for each alias, its source, root and preferred layout."""

    fusion: Fusion
    source: dict[int, Value]
    layout: dict[int, Layout]

    def root(self, v: Value) -> Value | None:
        """The tensor ``v`` is a (transitive) view of, or None when ``v`` is not an alias."""
        if id(v) not in self.source:
            return None
        r = v
        while id(r) in self.source:
            r = self.source[id(r)]
        return r

    def is_alias(self, v: Value) -> bool:
        return id(v) in self.source

    def preferred_layout(self, v: Value) -> Layout:
        return self.layout.get(id(v)) or own_layout(v)

    def aliases(self) -> dict[Value, Value]:
        return {v: self.root(v) for v in self.fusion.tensors() if self.is_alias(v)}


def _carry(in_layout: Layout, dim_map: dict[int, int]) -> Layout:
    """Map in dims to out dims (dims without an image are dropped), keeping allocation order."""
    order, contig = [], []
    for d, c in zip(in_layout.order, in_layout.contiguity):
        if d in dim_map:
            order.append(dim_map[d])
            contig.append(c)
    return Layout(tuple(order), tuple(contig))


def _merge(outer_exp: bool, outer: bool | None, inner_exp: bool, inner: bool | None) -> tuple[bool, bool | None]:
    """(mergeable, contiguity) of merging two allocated dims without a copy (nvFuser's table)."""
    if outer is None and not outer_exp:
        return True, inner
    if inner is None and not inner_exp:
        return True, outer
    if outer_exp and inner_exp:
        return True, None
    if outer_exp or inner_exp:
        return False, None
    return (True, inner) if outer else (False, None)


def _split(c: bool | None) -> tuple[bool | None, bool | None]:
    if c is None:
        return None, None
    return (True, True) if c else (True, False)


def _reshape_layout(x: Value, out: Value, lay: Layout) -> Layout | None:
    if -1 in x.shape or -1 in out.shape:
        return None
    # 1. squeeze: size-1 broadcast dims disappear
    kept = [d for d in range(x.ndim) if not (x.shape[d] == 1 and not x.expanded[d])]
    alloc = [(d, c) for d, c in zip(lay.order, lay.contiguity) if d in kept]
    new_out = [j for j in range(out.ndim) if out.shape[j] != 1]
    groups = reshape_groups([x.shape[d] for d in kept], [out.shape[j] for j in new_out])
    if groups is None:
        return None
    result: list[tuple[object, bool | None]] = [(("in", d), c) for d, c in alloc]
    for gi, gj in groups:
        in_dims = [kept[i] for i in gi]
        out_dims = [new_out[j] for j in gj]
        if len(in_dims) == 1 and len(out_dims) == 1:
            result = [(("out", out_dims[0]) if k == ("in", in_dims[0]) else k, c) for k, c in result]
            continue
        if any(x.expanded[d] for d in in_dims):
            return None  # an expanded dim merged or split is materialised (nvFuser #1126)
        keys = [k for k, _ in result]
        # merge left to right: each next dim must follow the merged one in allocation order
        pos = keys.index(("in", in_dims[0]))
        merged_c = result[pos][1]
        for d in in_dims[1:]:
            if pos + 1 >= len(result) or result[pos + 1][0] != ("in", d):
                return None  # not adjacent in allocation order
            ok, merged_c = _merge(False, merged_c, False, result[pos + 1][1])
            if not ok:
                return None
            del result[pos + 1]
        # split into the output dims, outer first
        pieces, c = [], merged_c
        for j in out_dims[:-1]:
            outer, c = _split(c)
            pieces.append((("out", j), outer))
        pieces.append((("out", out_dims[-1]), c))
        result[pos : pos + 1] = pieces
    order = [k[1] for k, _ in result]
    contig = [c for _, c in result]
    for j in range(out.ndim):  # 3. broadcast: added size-1 dims go last
        if out.shape[j] == 1:
            order.append(j)
            contig.append(None)
    return Layout(tuple(order), tuple(contig))


def _slice_layout(x: Value, op: Op, lay: Layout) -> Layout | None:
    starts, ends = static(op.args["start_indices"]), static(op.args["end_indices"])
    sliced = set()
    for d in range(x.ndim):
        s, e, size = starts[d], ends[d], x.shape[d]
        if s is None or e is None or size == -1:
            sliced.add(d)
            continue
        if not op.args["manual_normalization"]:
            s, e = normalize_slice(s, e, size)
        if (s, e) != (0, size):
            sliced.add(d)
    if any(x.expanded[d] for d in sliced):
        return None  # slicing an expanded broadcast makes a real dim
    out_bcast = op.outputs[0].broadcast
    contig = list(lay.contiguity)
    flag = False
    for i in range(len(lay.order) - 1, -1, -1):
        d = lay.order[i]
        if out_bcast[d]:
            contig[i] = None
        elif flag:
            contig[i] = False
            flag = False
        if d in sliced:
            flag = True
    return Layout(lay.order, tuple(contig))


def _out_layout(op: Op, x: Value, lay: Layout) -> Layout | None:
    """The layout that makes op's output a view of x, or None."""
    out = op.outputs[0]
    name = op.name
    if name in ("set", "segment_set", "expand"):
        return lay
    if name == "permute":
        dims = [d % x.ndim for d in op.args["dims"]]
        return _carry(lay, {d: j for j, d in enumerate(dims)})
    if name == "squeeze":
        dropped = {d % x.ndim for d in op.args["dims"]}
        keep = [d for d in range(x.ndim) if d not in dropped]
        return _carry(lay, {d: j for j, d in enumerate(keep)})
    if name in ("broadcast", "broadcast_in_dim"):
        if name == "broadcast":
            flags = op.args["is_broadcast_dim"]
            new = [j for j, f in enumerate(flags) if f]
            old = [j for j, f in enumerate(flags) if not f]
        else:
            old = list(op.args["broadcast_dims"])
            new = [j for j in range(out.ndim) if j not in old]
        mapped = _carry(lay, dict(enumerate(old)))
        return Layout(mapped.order + tuple(new), mapped.contiguity + (None,) * len(new))
    if name == "reshape":
        return _reshape_layout(x, out, lay)
    if name == "slice":
        return _slice_layout(x, op, lay)
    return None


def analyze(fd) -> AliasAnalysis:
    """Run the alias analysis over a recorded fusion."""
    fusion = as_fusion(fd)
    source: dict[int, Value] = {}
    layout: dict[int, Layout] = {}
    for op in fusion.ops:
        if op.name not in META_OPS or not op.outputs[0].is_tensor:
            continue
        x = op.args[next(iter(op.args))]
        if not isinstance(x, Value) or not x.is_tensor:
            continue
        lay = _out_layout(op, x, layout.get(id(x)) or own_layout(x))
        if lay is not None:
            source[id(op.outputs[0])] = x
            layout[id(op.outputs[0])] = lay
    return AliasAnalysis(fusion, source, layout)


def find_aliases(fd) -> dict[Value, Value]:
    """alias -> root, for every tensor that can be a view (aliases only)."""
    return analyze(fd).aliases()


def preferred_layouts(fd) -> dict[Value, Layout]:
    """Every tensor's preferred layout: what makes an alias a view, else its own layout."""
    a = analyze(fd)
    return {v: a.preferred_layout(v) for v in a.fusion.tensors()}
