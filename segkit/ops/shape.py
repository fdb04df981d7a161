"""Shape and view ops: broadcast, broadcast_in_dim, expand, reshape, permute, squeeze, slice, set,
segment_set, stride_order, pad, cat, select, and the size queries size and shape.

The view (meta) ops name their alias layout rule from segkit.ops.view_layouts; shape rules follow nvFuser's
csrc/ops/alias.cpp, and slice's constant-bound checks are those of its python_direct binding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

import segkit.ops.view_layouts as view_layouts
from segkit.dtypes import DataType
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, legacy_spellings, norm_dim, norm_dims, out_like, \
    register, runtime_ints, scalar_kind, static, static_shape, tensor_arg
from segkit.ops.view_layouts import broadcast_dims, normalize_slice, reshape_groups


# --------------------------------------------------------------------------- view ops
def _broadcast_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
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
    x = tensor_arg(a["arg"], "arg")
    target = static_shape(a["shape"], "shape")
    if len(target) != x.ndim:
        raise InferError(f"expand to {target} needs rank {x.ndim} like {x.describe()}")
    o = _expand_flags(x.shape, x.broadcast, x.expanded, target, "expand")
    o.dtype = x.dtype
    return [o]


def _broadcast_in_dim_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
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


def _only_broadcast_dims_grow(name: str, ctx, x: torch.Tensor, target: list[int], dims: Sequence[int]) -> None:
    """nvFuser binds a dim recorded as symbolic (-1, not a broadcast) to its run-time size, so an operand dim that
    is 1 at run time cannot be expanded to a larger output size there (nvFuser: "Attempting to bind ... but it's
    already set to 1", https://github.com/csarofeen/pytorch/issues/2359); torch would silently broadcast it. A dim
    recorded with the static size 1 does expand (Thunder's GQA traces expand a 1-wide slice). ``dims[i]`` is the
    output dim of operand dim ``i``."""
    recorded = ctx.op.args.get("arg") if ctx.op is not None and ctx.op.name == name else None
    if not isinstance(recorded, Value):
        return
    for i, d in enumerate(dims):
        if x.shape[i] != target[d] and target[d] != -1 and recorded.shape[i] == -1 and not recorded.broadcast[i]:
            raise ValueError(f"{name}: dim {i} of {recorded.name} (defined {recorded.describe()}, not a broadcast "
                             f"dim) has size {x.shape[i]} at run time and cannot become size {target[d]}; nvFuser "
                             f"refuses it too: define that dim with size 1 (a broadcast) to expand it")


def _broadcast_in_dim_run(a, ctx):
    x, target, bdims = a["arg"], runtime_ints(a["shape"]), sorted(d % len(a["shape"]) for d in a["broadcast_dims"])
    _only_broadcast_dims_grow("broadcast_in_dim", ctx, x, target, bdims)
    view = [1] * len(target)
    for i, d in enumerate(bdims):
        view[d] = x.shape[i]
    return x.reshape(view).expand(target)


def _expand_run(a, ctx):
    x, target = a["arg"], runtime_ints(a["shape"])
    _only_broadcast_dims_grow("expand", ctx, x, target, range(x.ndim))
    return x.expand(target)


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
    x = tensor_arg(a["arg"], "arg")
    target = _reshape_target(x, a["new_shape"])
    bc = [s == 1 for s in target]
    ex = [False] * len(target)
    groups = reshape_groups(x.shape, target)
    for gi, gj in groups or []:
        if len(gi) == 1 and len(gj) == 1 and x.expanded[gi[0]]:
            bc[gj[0]], ex[gj[0]] = True, True
    return [Out(x.dtype, tuple(target), tuple(bc), tuple(ex))]


def _permute_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    dims = norm_dims(a["dims"], x.ndim)
    if sorted(dims) != list(range(x.ndim)):
        raise InferError(f"dims {a['dims']} is not a permutation of the {x.ndim} dims of {x.describe()}")
    return [out_like(x, [x.shape[d] for d in dims], [x.broadcast[d] for d in dims], [x.expanded[d] for d in dims])]


def _squeeze_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    dims = norm_dims(a["dims"], x.ndim)
    for d in dims:
        if x.expanded[d] and not a["squeeze_expanded"]:
            raise InferError(f"squeeze of dim {d} of {x.describe()}: it is expanded; pass squeeze_expanded=True")
        if not x.broadcast[d] and x.shape[d] not in (1, -1):
            raise InferError(f"squeeze of dim {d} of {x.describe()}: its size is {x.shape[d]}, not 1")
    keep = [d for d in range(x.ndim) if d not in dims]
    return [out_like(x, [x.shape[d] for d in keep], [x.broadcast[d] for d in keep], [x.expanded[d] for d in keep])]


def _squeeze_run(a, ctx):
    x = a["arg"]
    for d in sorted((d % x.ndim for d in a["dims"]), reverse=True):
        x = x.select(d, 0)
    return x


def _slice_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
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
    starts, ends = runtime_ints(a["start_indices"]), runtime_ints(a["end_indices"])
    strides = runtime_ints(a["strides"]) if a["strides"] is not None else [1] * x.ndim
    index = []
    for d in range(x.ndim):
        s, e = normalize_slice(starts[d], ends[d], x.shape[d])
        index.append(slice(s, e, strides[d]))
    return x[tuple(index)]


def _identity_infer(a: dict) -> list[Out]:
    x = a[next(iter(a))]
    if isinstance(x, Value) and x.is_tensor:
        return [out_like(x)]
    if isinstance(x, Value):
        return [Out(x.dtype)]
    raise InferError(f"expected a tensor or scalar, got {x!r}")


def _identity_run(a, ctx):
    return a[next(iter(a))]


def _stride_order_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    order = norm_dims(a["stride_order"], x.ndim)
    if sorted(order) != list(range(x.ndim)):
        raise InferError(f"stride_order {a['stride_order']} is not a permutation of {x.ndim} dims")
    return [out_like(x)]


def _stride_order_run(a, ctx):
    """A copy whose strides follow stride_order (nvFuser's: for each dim, 0 = innermost)."""
    x, so = a["arg"], [d % max(a["arg"].ndim, 1) for d in a["stride_order"]]
    order = sorted(range(x.ndim), key=lambda d: -so[d])  # allocation order, outermost first
    return x.permute(order).contiguous().permute([order.index(d) for d in range(x.ndim)])


def _drop_original_shape(name: str):
    """The legacy ``(arg, original_shape, new_shape | dims)`` form of reshape / squeeze (until nvFuser 0.0.22 / 0.1.5:
    PRs #1043, #1325): ``original_shape`` restated the operand's sizes; it is checked against them and dropped."""

    def rewrite(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if "original_shape" in kwargs:
            original = kwargs.pop("original_shape")
        elif len(args) == 3 and isinstance(args[1], (list, tuple)) and isinstance(args[2], (list, tuple)):
            original, args = args[1], (args[0], args[2])
        else:
            return args, kwargs
        x = args[0] if args else kwargs.get("arg")
        if not isinstance(original, (list, tuple)) or any(isinstance(s, bool) or not isinstance(s, int)
                                                          for s in original):
            raise TypeError(f"{name}: original_shape must be a list of ints, got {original!r}")
        if isinstance(x, Value) and x.is_tensor:
            if len(original) != x.ndim or any(k not in (-1, o) and o != -1 for k, o in zip(x.shape, original)):
                raise TypeError(f"{name}: original_shape {list(original)} (the legacy spelling) does not match "
                                f"{x.describe()}")
        return args, kwargs

    return rewrite


register(OpDef("broadcast", ("arg",), (("is_broadcast_dim", REQUIRED),), _broadcast_infer, _broadcast_run, meta=True,
               view_layout=view_layouts.broadcast))
register(OpDef("broadcast_in_dim", ("arg",), (("shape", REQUIRED), ("broadcast_dims", REQUIRED)),
               _broadcast_in_dim_infer, _broadcast_in_dim_run, meta=True,
               view_layout=view_layouts.broadcast_in_dim, size_attrs=("shape",),
               overloads=legacy_spellings({"output_shape": "shape"})))  # output_shape= until PR #721 (0.0.18, 2023-08)
register(OpDef("expand", ("arg",), (("shape", REQUIRED),), _expand_infer,
               _expand_run, meta=True,
               view_layout=view_layouts.identity, size_attrs=("shape",)))
register(OpDef("reshape", ("arg",), (("new_shape", REQUIRED),), _reshape_infer,
               lambda a, ctx: a["arg"].reshape(runtime_ints(a["new_shape"])), meta=True,
               view_layout=view_layouts.reshape, size_attrs=("new_shape",),
               overloads=legacy_spellings(positional=_drop_original_shape("reshape"))))
register(OpDef("permute", ("arg",), (("dims", REQUIRED),), _permute_infer,
               lambda a, ctx: a["arg"].permute(a["dims"]), meta=True, view_layout=view_layouts.permute))
register(OpDef("squeeze", ("arg",), (("dims", REQUIRED), ("squeeze_expanded", False)),
               _squeeze_infer, _squeeze_run, meta=True, view_layout=view_layouts.squeeze,
               overloads=legacy_spellings(positional=_drop_original_shape("squeeze"))))
register(OpDef("slice", ("arg",), (("start_indices", REQUIRED), ("end_indices", REQUIRED), ("strides", None),
                                   ("manual_normalization", False)), _slice_infer, _slice_run, meta=True,
               view_layout=view_layouts.slice_, size_attrs=("start_indices", "end_indices"), bookend_forks=True))
register(OpDef("set", ("x",), (), _identity_infer, _identity_run, meta=True, view_layout=view_layouts.identity))
register(OpDef("segment_set", ("x",), (), _identity_infer, _identity_run, meta=True, view_layout=view_layouts.identity,
               segment_boundary=True, doc="identity that forces a segment boundary"))
register(OpDef("stride_order", ("arg",), (("stride_order", REQUIRED),), _stride_order_infer, _stride_order_run,
               doc="copy with a new memory layout (values unchanged)"))


# --------------------------------------------------------------------------- pad, cat, select
def _pad_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    widths = static_shape(a["pad_widths"], "pad_widths")
    if a["value"] is not None and scalar_kind(a["value"]) != scalar_kind(x):  # nvFuser's hasSimilarDtype
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
    return F.pad(a["arg"], runtime_ints(a["pad_widths"]), value=0 if v is None else v if isinstance(v, complex) else float(v))


def _cat_infer(a: dict) -> list[Out]:
    ts = a["tensors"]
    if not isinstance(ts, (list, tuple)) or not ts:
        raise InferError("cat needs a non-empty list of tensors")
    ts = [tensor_arg(t, "each cat input") for t in ts]
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
        widths = runtime_ints(ctx.resolve(value.definition.args["pad_widths"]))
        k = t.ndim - 1 - dim
        lo, hi = (widths[2 * k], widths[2 * k + 1]) if 2 * k + 1 < len(widths) else (0, 0)
        pieces.append((lo, t.narrow(dim, lo, t.shape[dim] - lo - hi)))
    return torch.cat([p for _, p in sorted(pieces, key=lambda x: x[0])], dim)


def _select_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    d = norm_dim(a["dim"], x.ndim)
    keep = [i for i in range(x.ndim) if i != d]
    return [out_like(x, [x.shape[i] for i in keep], [x.broadcast[i] for i in keep], [x.expanded[i] for i in keep])]


register(OpDef("pad", ("arg",), (("pad_widths", REQUIRED), ("value", None)), _pad_infer, _pad_run,
               size_attrs=("pad_widths",)))
register(OpDef("cat", ("tensors",), (("dim", REQUIRED), ("manual_padding", False)), _cat_infer, _cat_run))
# nvfuser_direct's select takes its index as a Val (a number is recorded as a constant scalar): its binding
# refuses a plain int.
register(OpDef("select", ("arg", "index"), (("dim", REQUIRED),), _select_infer,
               lambda a, ctx: a["arg"].select(a["dim"], int(a["index"])), scalar_operands=("index",)))


# --------------------------------------------------------------------------- sizes
def _size_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    norm_dim(a["dim"], x.ndim)
    return [Out(DataType.Int)]


def _shape_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "arg")
    return [Out(DataType.Int) for _ in range(x.ndim)]


def fold_size(args: dict) -> Any:
    """Record-time value of ``size(arg, dim)`` when that dim is static (else None)."""
    s = args["arg"].shape[args["dim"]]
    return None if s == -1 else s


def _fold_shape(args: dict) -> tuple:
    return tuple(None if s == -1 else s for s in args["arg"].shape)


register(OpDef("size", ("arg",), (("dim", REQUIRED),), _size_infer,
               lambda a, ctx: a["arg"].shape[a["dim"]], fold=fold_size))
register(OpDef("shape", ("arg",), (), _shape_infer, lambda a, ctx: tuple(a["arg"].shape), fold=_fold_shape))
