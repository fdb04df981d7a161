"""Catalogue entries for indexing, scan and sort ops: index_select, gather, take_along_axis, scatter,
embedding_fwd, cumsum/cumprod/cummin/cummax, argsort, topk, triu.

Shape rules follow nvFuser's csrc/ops/indexing.cpp and arith.cpp (scan, topk, argsort); the references
are the ATen calls nvFuser's own expression evaluator makes for these ops.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from segkit.dtypes import DataType
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, RunContext, legacy_spellings, norm_dim, out_like, \
    register, static, tensor_arg


def _index(v: Any, op: str, what: str = "index") -> Value:
    t = tensor_arg(v, f"{op}'s {what}")
    if t.dtype not in (DataType.Int, DataType.Int32):
        raise InferError(f"{op}: {what} must be an Int or Int32 tensor, got {t.describe()}")
    return t


def _dim(a: dict, x: Value, op: str) -> int:
    if x.ndim == 0:
        raise InferError(f"{op} can not be applied to a 0-d tensor ({x.describe()})")
    return norm_dim(a["dim"], x.ndim)


def _same_rank(op: str, *ts: Value) -> None:
    if len({t.ndim for t in ts}) != 1:
        raise InferError(f"{op}: tensor arguments have different ranks: {', '.join(t.describe() for t in ts)}")


# --------------------------------------------------------------------------- index_select, gather, take_along_axis
def _index_select_infer(a: dict) -> list[Out]:
    x, idx = tensor_arg(a["arg"], "index_select's arg"), _index(a["index"], "index_select")
    d = _dim(a, x, "index_select")
    if idx.ndim > 1:
        raise InferError(f"index_select: index must be a 1-d or 0-d tensor, got {idx.describe()}")
    shape, bc, ex = list(x.shape), list(x.broadcast), list(x.expanded)
    if idx.ndim == 0:
        shape[d], bc[d], ex[d] = 1, True, False
    else:
        shape[d], bc[d], ex[d] = idx.shape[0], idx.broadcast[0], idx.expanded[0]
    return [Out(x.dtype, tuple(shape), tuple(bc), tuple(ex))]


def _index_select_run(a: dict, ctx: RunContext):
    x, idx = a["arg"], a["index"]
    return torch.index_select(x, a["dim"] % x.ndim, idx.reshape(-1))


def _gather_infer(a: dict) -> list[Out]:
    x, idx = tensor_arg(a["arg"], "gather's arg"), _index(a["index"], "gather")
    _same_rank("gather", x, idx)
    d = _dim(a, x, "gather")
    for i in range(x.ndim):
        if i != d and -1 not in (x.shape[i], idx.shape[i]) and idx.shape[i] > x.shape[i]:
            raise InferError(f"gather: index {idx.describe()} is larger than arg {x.describe()} in dim {i}")
    return [out_like(idx, dtype=x.dtype)]


def _take_along_axis_infer(a: dict) -> list[Out]:
    x, idx = tensor_arg(a["arg"], "take_along_axis's arg"), _index(a["index"], "take_along_axis")
    _same_rank("take_along_axis", x, idx)
    d = _dim(a, x, "take_along_axis")
    shape, bc, ex = [], [], []
    for i in range(x.ndim):
        from_index = i == d or (x.broadcast[i] and (not idx.broadcast[i] or idx.expanded[i]))
        src = idx if from_index else x
        if not from_index and not idx.broadcast[i] and -1 not in (x.shape[i], idx.shape[i]) \
                and x.shape[i] != idx.shape[i]:
            raise InferError(f"take_along_axis: arg {x.describe()} and index {idx.describe()} differ in dim {i} "
                             "(only dim may differ; size-1 broadcast dims broadcast)")
        shape.append(src.shape[i]), bc.append(src.broadcast[i]), ex.append(src.expanded[i])
    return [Out(x.dtype, tuple(shape), tuple(bc), tuple(ex))]


def _take_along_axis_run(a: dict, ctx: RunContext):
    x, idx = a["arg"], a["index"]
    return torch.take_along_dim(x, idx.long(), a["dim"] % x.ndim)


def _scatter_infer(a: dict) -> list[Out]:
    x, idx, src = tensor_arg(a["arg"], "scatter's arg"), _index(a["index"], "scatter"), a["src"]
    if not isinstance(src, Value):
        raise InferError(f"scatter: src must be a tensor or a scalar of the fusion (fd.define_scalar), got {src!r}")
    _same_rank("scatter", x, idx, *([src] if src.is_tensor else []))
    _dim(a, x, "scatter")
    if src.is_tensor and src.dtype is not x.dtype:
        raise InferError(f"scatter: src {src.describe()} must have arg's dtype {x.dtype.name}")
    return [out_like(x)]


def _scatter_run(a: dict, ctx: RunContext):
    x, idx, src, d = a["arg"], a["index"].long(), a["src"], a["dim"] % a["arg"].ndim
    if isinstance(src, torch.Tensor):
        return torch.scatter(x, d, idx, src)
    return torch.scatter(x, d, idx, torch.tensor(src, dtype=x.dtype).item())


register(OpDef("index_select", ("arg", "index"), (("dim", REQUIRED),), _index_select_infer, _index_select_run))
#: the legacy frontend named gather's and take_along_axis's operand arg1= (every version, 2023-03 to 2026-02)
_ARG1 = legacy_spellings({"arg1": "arg"})
register(OpDef("gather", ("arg", "index"), (("dim", REQUIRED),), _gather_infer,
               lambda a, ctx: torch.gather(a["arg"], a["dim"] % a["arg"].ndim, a["index"].long()), overloads=_ARG1))
register(OpDef("take_along_axis", ("arg", "index"), (("dim", REQUIRED),), _take_along_axis_infer,
               _take_along_axis_run, overloads=_ARG1))
register(OpDef("scatter", ("arg", "index", "src"), (("dim", REQUIRED),), _scatter_infer, _scatter_run,
               literal_operands=False, doc="torch.scatter without accumulation (src a tensor or a fusion scalar)"))


# --------------------------------------------------------------------------- embedding
_EMBEDDING_OPTIONS = ("padding_idx", "max_norm", "norm_type", "scale_grad_by_freq", "sparse")


def _embedding_infer(a: dict) -> list[Out]:
    idx, w = _index(a["input"], "embedding_fwd", "input"), tensor_arg(a["weight"], "embedding_fwd's weight")
    if idx.ndim < 1:
        raise InferError(f"embedding_fwd: input must be at least 1-d, got {idx.describe()}")
    if w.ndim != 2:
        raise InferError(f"embedding_fwd: weight must be 2-d, got {w.describe()}")
    for k in _EMBEDDING_OPTIONS:
        v = a[k]
        if v is not None and not (isinstance(v, Value) and not v.is_tensor):
            raise InferError(f"embedding_fwd: {k} must be a scalar of the fusion (fd.define_scalar) or None, got {v!r}")
    return [Out(w.dtype, (*idx.shape, w.shape[1]), (*idx.broadcast, w.broadcast[1]), (*idx.expanded, w.expanded[1]))]


def _embedding_run(a: dict, ctx: RunContext):
    w = a["weight"]
    if a["max_norm"] is not None:
        w = w.clone()  # torch renormalizes the rows it looks up in place
    return F.embedding(a["input"].long(), w, padding_idx=a["padding_idx"], max_norm=a["max_norm"],
                       norm_type=2.0 if a["norm_type"] is None else float(a["norm_type"]),
                       scale_grad_by_freq=bool(a["scale_grad_by_freq"]), sparse=bool(a["sparse"]))


register(OpDef("embedding_fwd", ("input", "weight"), tuple((k, None) for k in _EMBEDDING_OPTIONS),
               _embedding_infer, _embedding_run, doc="F.embedding forward (max_norm renormalizes a copy)"))


# --------------------------------------------------------------------------- scans
def _scan(name: str, torch_scan, combine) -> None:
    def infer(a: dict) -> list[Out]:
        x = tensor_arg(a["arg"], f"{name}'s arg")
        d = _dim(a, x, name)
        if x.expanded[d]:  # nvFuser's scan() asserts this when the op is defined (csrc/ops/arith.cpp)
            raise InferError(f"{name} along dim {d} of {x.describe()}: that dim is an expanded broadcast (size "
                             f"{x.shape[d]}, stride 0), and nvFuser refuses it: \"Closed-form scan of expanded "
                             f"dimension is not yet implemented\"")
        init = a["init"]
        if isinstance(init, Value) and init.is_tensor:
            raise InferError(f"{name}: init must be a scalar, got {init.describe()}")
        return [out_like(x)]

    def run(a: dict, ctx: RunContext):
        x, d = a["arg"], a["dim"] % a["arg"].ndim
        out = torch_scan(x, d)
        if a["init"] is not None:  # the scan starts from init instead of the op's identity
            out = combine(out, torch.tensor(a["init"], dtype=out.dtype, device=out.device))
        return out

    register(OpDef(name, ("arg",), (("dim", REQUIRED), ("init", None)), infer, run,
                   doc="inclusive scan along dim; same dtype as arg"))


_scan("cumsum", torch.cumsum, torch.add)
_scan("cumprod", torch.cumprod, torch.mul)
_scan("cummax", lambda x, d: torch.cummax(x, d).values, torch.maximum)
_scan("cummin", lambda x, d: torch.cummin(x, d).values, torch.minimum)


# --------------------------------------------------------------------------- sort, topk, triu
def _argsort_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "argsort's arg")
    if x.ndim == 0:
        return [Out(DataType.Int, (), (), ())]
    norm_dim(a["dim"], x.ndim)
    return [out_like(x, dtype=DataType.Int)]


def _argsort_run(a: dict, ctx: RunContext):
    x = a["arg"]
    if x.ndim == 0:
        return torch.zeros((), dtype=torch.int64, device=x.device)
    return torch.argsort(x, dim=a["dim"] % x.ndim, descending=bool(a["descending"]), stable=bool(a["stable"]))


def _topk_infer(a: dict) -> list[Out]:
    x, k = tensor_arg(a["arg"], "topk's arg"), a["k"]
    if not isinstance(k, Value) or k.is_tensor or k.dtype is not DataType.Int:
        raise InferError(f"topk: k must be an Int scalar of the fusion (fd.define_scalar(n, dtype=DataType.Int)), "
                         f"got {k!r}; nvFuser's binding takes no Python number")
    kv = static(k)
    if x.ndim == 0:
        if a["dim"] not in (0, -1) or kv not in (None, 1):
            raise InferError(f"topk of a 0-d tensor needs dim 0 or -1 and k 1, got dim {a['dim']}, k {kv}")
        return [Out(x.dtype, (), (), ()), Out(DataType.Int, (), (), ())]
    d = norm_dim(a["dim"], x.ndim)
    if kv is not None and (kv < 0 or (x.shape[d] != -1 and kv > x.shape[d])):
        raise InferError(f"topk: k={kv} is out of range for dim {d} of {x.describe()}")
    shape = list(x.shape)
    shape[d] = -1 if kv is None else kv
    bc = [b if i != d else False for i, b in enumerate(x.broadcast)]
    ex = [e if i != d else False for i, e in enumerate(x.expanded)]
    return [Out(x.dtype, tuple(shape), tuple(bc), tuple(ex)), Out(DataType.Int, tuple(shape), tuple(bc), tuple(ex))]


def _topk_run(a: dict, ctx: RunContext):
    x = a["arg"]
    if x.ndim == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    # sorted=False leaves the order to the implementation; a sorted answer is one of the valid ones
    values, indices = torch.topk(x, int(a["k"]), dim=a["dim"] % x.ndim, largest=bool(a["largest"]), sorted=True)
    return values, indices


def _triu_infer(a: dict) -> list[Out]:
    x = tensor_arg(a["arg"], "triu's arg")
    if x.ndim < 2:
        raise InferError(f"triu needs a tensor of 2 or more dims, got {x.describe()}")
    if not isinstance(a["diagonal"], int) or isinstance(a["diagonal"], bool):
        raise InferError(f"triu: diagonal must be a Python int, got {a['diagonal']!r}")
    return [out_like(x)]


register(OpDef("argsort", ("arg",), (("dim", REQUIRED), ("descending", False), ("stable", False)),
               _argsort_infer, _argsort_run, doc="indices (Int) that sort arg along dim"))
register(OpDef("topk", ("arg", "k"), (("dim", -1), ("largest", True), ("sorted", False)), _topk_infer, _topk_run,
               literal_operands=False, doc="(values, indices); with sorted=False the order is unspecified"))
register(OpDef("triu", ("arg",), (("diagonal", 0),), _triu_infer,
               lambda a, ctx: torch.triu(a["arg"], a["diagonal"])))
