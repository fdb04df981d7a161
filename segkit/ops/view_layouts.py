"""How a view op carries its input's layout to its output: the per-op rules alias analysis uses.

Each rule takes the Op, its input tensor and the input's preferred layout
(allocation order of logical dims + contiguity) and returns the layout that
makes the output a view of the input, or None when the output must be
computed. Each view op's catalogue entry names its rule in
``OpDef.view_layout``; these are Python re-creations of nvFuser's
csrc/alias_analysis.cpp rules. The size arithmetic they share with the view
ops' shape rules (reshape groups, slice bounds, broadcast_in_dim's dims) lives
here too, so segkit.ops.shape imports it from below.
"""

from __future__ import annotations

from collections.abc import Sequence

from segkit.ir import Op, Value
from segkit.layout import Layout
from segkit.ops.catalogue import InferError, norm_dim, static


# --------------------------------------------------------------------------- size arithmetic
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


def normalize_slice(start: int, end: int, size: int) -> tuple[int, int]:
    """torch/nvFuser slice normalisation: negative from the end, clamped to [0, size]."""
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


# --------------------------------------------------------------------------- layout rules
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


def identity(op: Op, x: Value, lay: Layout) -> Layout:
    """set, segment_set, expand: the layout is carried unchanged."""
    return lay


def permute(op: Op, x: Value, lay: Layout) -> Layout:
    dims = [d % x.ndim for d in op.args["dims"]]
    return _carry(lay, {d: j for j, d in enumerate(dims)})


def squeeze(op: Op, x: Value, lay: Layout) -> Layout:
    dropped = {d % x.ndim for d in op.args["dims"]}
    keep = [d for d in range(x.ndim) if d not in dropped]
    return _carry(lay, {d: j for j, d in enumerate(keep)})


def _broadcast_to(lay: Layout, old: list[int], new: list[int]) -> Layout:
    mapped = _carry(lay, dict(enumerate(old)))
    return Layout(mapped.order + tuple(new), mapped.contiguity + (None,) * len(new))


def broadcast(op: Op, x: Value, lay: Layout) -> Layout:
    """New broadcast dims go last (innermost) in allocation order."""
    flags = op.args["is_broadcast_dim"]
    return _broadcast_to(lay, [j for j, f in enumerate(flags) if not f], [j for j, f in enumerate(flags) if f])


def broadcast_in_dim(op: Op, x: Value, lay: Layout) -> Layout:
    old = broadcast_dims(op.args)
    return _broadcast_to(lay, old, [j for j in range(op.outputs[0].ndim) if j not in old])


def reshape(op: Op, x: Value, lay: Layout) -> Layout | None:
    return _reshape_layout(x, op.outputs[0], lay)


def slice_(op: Op, x: Value, lay: Layout) -> Layout | None:
    return _slice_layout(x, op, lay)
