"""``LigerPatterns``: the trace transform that turns what litgpt and Hugging Face's Llama compute into the symbols
the liger executor binds (benchmarks/liger_thunder.py), as Thunder's tutorial "Thunder bindings for Liger operators"
does with its MergeRopeTransform and FuseSwigLUTransform. It runs on the computation trace before autodiff, only
when the liger executor is in the executor list, and finds, by dataflow from the op that ends each:

* RMSNorm: ``cast(mul(x_f32 * rsqrt(mean(x_f32 * x_f32 | x_f32 ** 2, -1, keepdim) + eps), w_f32), x.dtype)``
  (litgpt's RMSNorm; Liger's "gemma" casting) and ``mul(w, cast(x_f32 * rsqrt(...), x.dtype))`` (Hugging Face's
  LlamaRMSNorm; "llama"): in Thunder 0.2.6 both are separate torch ops (mul or pow, mean, add, rsqrt, mul, to),
  not one symbol;
* SwiGLU: ``mul(silu(a), b)`` (litgpt's LLaMAMLP, Hugging Face's LlamaMLP: ``ltorch.silu`` then ``ltorch.mul``);
* RoPE: litgpt's two ``apply_rope`` calls on q and k (the lookaside's one-tensor symbols, sharing cos and sin)
  merged into Liger's q + k symbol, placed where the second one was when nothing reads the first one's output
  before it;
* the LM head and its loss: ``cross_entropy(linear(x, w) [reshaped to rows], targets)`` (the tutorial's
  FuseLinearCrossEntropyTransform), or litgpt's ``chunked_cross_entropy`` (logits split into rows of 128, a
  ``reduction="none"`` cross entropy each, ``cat``, ``sum``: the sum is replaced, its division stays). The step
  table's Blocks and Hugging Face cases end in a synthetic loss on the hidden states or the logits: nothing to fuse.

Each match becomes the executor's composite symbol with the ended op's output, so what reads it is unchanged; the
ops it no longer needs are dead code, which Thunder removes. Where the checker refuses (not CUDA, another dtype)
the symbol decomposes into the same math. A match also tells Liger which operands it may overwrite
(``writable``): RoPE's q and k, SwiGLU's a and b, when they are computed here and read by nothing else.
"""

from __future__ import annotations

import functools
import inspect

from thunder.core import dtypes, prims, utils
from thunder.core.proxies import TensorProxy, variableify
from thunder.core.trace import TraceProvenance, from_trace, tracectx
from thunder.core.transform_common import Transform
import thunder.torch as ltorch

from benchmarks import liger_thunder as lt

_CASTS = {prims.PrimIDs.CONVERT_ELEMENT_TYPE, ltorch.to.id}


def _leaves(bsym) -> list:
    return [leaf for sub in bsym.subsymbols for leaf in _leaves(sub)] if bsym.subsymbols else [bsym]


def may_view(bsym) -> bool:
    """Whether ``bsym``'s output may share its input's memory: the prims it comes down to that make tensors are shape
    prims alone (reshape, transpose, slice, broadcast, shallow copy: view, split, getitem, a same-dtype ``to``...) or
    casts to the dtype they had (queries such as ``prims.shape`` make no tensor and do not count)."""
    def shape_only(b) -> bool:
        if b.sym.id == prims.PrimIDs.CONVERT_ELEMENT_TYPE:
            return b.args[0].dtype == b.output.dtype
        return prims.OpTags.SHAPE_OP in (b.sym.tags or ())
    return all(shape_only(b) for b in _leaves(bsym) if any(isinstance(o, TensorProxy) for o in b.flat_outs))


class Graph:
    """Who produces and who reads each proxy of a trace's top level."""

    def __init__(self, trace) -> None:
        self.producers = utils.producers(trace)
        self.consumers = utils.consumers(trace)

    def op(self, t, *ids):
        """``t``'s producer if it is one of ``ids``."""
        b = self.producers.get(t, None) if isinstance(t, TensorProxy) else None
        return b if b is not None and b.sym.id in ids else None

    def readers(self, t) -> list:
        return self.consumers.get(t, [])

    def writable(self, t, allowed: set[int]) -> bool:
        """Nothing but the bound symbols ``allowed`` (by id) reads ``t`` or a tensor it may be a view of, and it is
        computed in this trace (not an input, nor a view of one, nor returned)."""
        while True:
            if any(id(b) not in allowed for b in self.readers(t)):
                return False
            producer = self.producers.get(t, None)
            if producer is None or producer.sym.id == prims.PrimIDs.UNPACK_TRIVIAL:
                return False
            if not may_view(producer):
                return True
            t, allowed = producer.flat_proxy_args[0], {id(producer)}


@functools.cache
def _signature(sym) -> inspect.Signature:
    return inspect.signature(sym.meta)


def _args(bsym) -> dict:
    """``bsym``'s arguments by name, defaults filled in (ltorch.mean's ``dim``, cross_entropy's ``reduction``)."""
    bound = _signature(bsym.sym).bind(*bsym.args, **bsym.kwargs)
    bound.apply_defaults()
    return bound.arguments


def _normed(g: Graph, t):
    """(x, eps) where ``t`` is ``x_f32 * rsqrt(mean(x_f32 * x_f32, -1, keepdim=True) + eps)``, x_f32 fp32 (x cast
    to fp32 once, or x itself), else None."""
    mul = g.op(t, ltorch.mul.id)
    for xf, r in (mul.args, mul.args[::-1]) if mul is not None else ():
        rsqrt = g.op(r, ltorch.rsqrt.id)
        add = rsqrt and g.op(rsqrt.args[0], ltorch.add.id)
        if add is None or _args(add).get("alpha") not in (1, None):
            continue
        mean, eps = add.args[:2] if _number(add.args[1]) else add.args[1::-1]
        mean = g.op(mean, ltorch.mean.id)
        if mean is None or not _number(eps) or not isinstance(xf, TensorProxy) or xf.dtype != dtypes.float32:
            continue
        m = _args(mean)
        dim = tuple(m["dim"]) if isinstance(m["dim"], (list, tuple)) else (m["dim"],)
        square = g.op(mean.args[0], ltorch.mul.id, ltorch.pow.id)
        if square is None or dim not in ((-1,), (xf.ndim - 1,)) or not m["keepdim"] or m["dtype"] is not None:
            continue
        a, b = square.args[:2]
        if _same(a, xf) and (_same(b, xf) or (_number(b) and b == 2)):
            return _uncast_once(g, xf), float(eps)
    return None


def _same(a, b) -> bool:
    """One proxy (by name: a trace may hold two objects for it); ``==`` on proxies would trace a comparison."""
    return isinstance(a, TensorProxy) and isinstance(b, TensorProxy) and a.name == b.name


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _uncast_once(g: Graph, t):
    """The tensor ``t`` was cast from (one cast), or ``t``."""
    cast = g.op(t, *_CASTS)
    return cast.args[0] if cast is not None else t


def match_rms_norm(g: Graph, bsym):
    """(x, w, eps, casting_mode) for an RMSNorm ending in ``bsym``, else None."""
    if bsym.sym.id in _CASTS:  # litgpt: (normed * w.float()).to(x.dtype)
        mul = g.op(bsym.args[0], ltorch.mul.id)
        for normed, w in (mul.args, mul.args[::-1]) if mul is not None else ():
            found = _normed(g, normed)
            if found and isinstance(w, TensorProxy) and found[0].dtype == bsym.output.dtype:
                w = _uncast_once(g, w) if w.dtype == dtypes.float32 else w
                if tuple(w.shape) == (found[0].shape[-1],):
                    return found[0], w, found[1], "gemma"
    if bsym.sym.id == ltorch.mul.id:  # Hugging Face: w * normed.to(x.dtype)
        for w, cast in (bsym.args, bsym.args[::-1]):
            back = g.op(cast, *_CASTS)
            found = back and _normed(g, back.args[0])
            if found and isinstance(w, TensorProxy) and found[0].dtype == cast.dtype and \
                    tuple(w.shape) == (found[0].shape[-1],):
                return found[0], w, found[1], "llama"
    return None


def match_swiglu(g: Graph, bsym):
    """(a, b, writable) for ``silu(a) * b`` ending in ``bsym`` (a and b of one shape), else None."""
    if bsym.sym.id != ltorch.mul.id:
        return None
    for s, b in (bsym.args, bsym.args[::-1]):
        silu = g.op(s, ltorch.silu.id)
        if silu is None or _args(silu)["inplace"] or not isinstance(b, TensorProxy):
            continue
        a = silu.args[0]
        if tuple(a.shape) != tuple(b.shape):
            continue
        silu_gone = [id(r) for r in g.readers(s)] == [id(bsym)]  # silu's only reader is replaced: it dies
        writable = silu_gone and g.writable(a, {id(silu)}) and g.writable(b, {id(bsym)}) and not _same(a, b)
        return a, b, writable
    return None


def _lm_head(g: Graph, logits):
    """(x, w) where ``logits`` (N, V) is ``linear(x, w)`` without bias, or its reshape to rows."""
    if not isinstance(logits, TensorProxy) or logits.ndim != 2:
        return None
    rows = g.op(logits, ltorch.reshape.id, ltorch.view.id)
    linear = g.op(rows.args[0] if rows is not None else logits, ltorch.linear.id)
    if linear is None or _args(linear)["bias"] is not None or linear.args[1].shape[0] != logits.shape[1]:
        return None
    return linear.args[0], linear.args[1]


def _plain_ce(bsym, reductions: tuple[str, ...]):
    """cross_entropy's (ignore_index, reduction) where ``bsym`` is one without class weights or label smoothing."""
    if bsym is None:
        return None
    a = _args(bsym)
    plain = a["weight"] is None and a["size_average"] is None and a["reduce"] is None and a["label_smoothing"] == 0
    return (a["ignore_index"], a["reduction"]) if plain and a["reduction"] in reductions else None


def match_flce(g: Graph, bsym):
    """(x, w, targets, ignore_index, reduction, chunk) for a loss on an LM head's logits ending in ``bsym``:
    ``cross_entropy(linear(x, w) [as rows], targets)`` (Thunder's tutorial's pattern), or litgpt's
    chunked_cross_entropy's sum, ``sum(cat([cross_entropy(l, t, reduction="none") for l, t in zip(logits.split(c),
    targets.split(c))]))``; else None."""
    if bsym.sym.id == ltorch.cross_entropy.id:
        found, head = _plain_ce(bsym, ("mean", "sum")), _lm_head(g, bsym.args[0])
        return (*head, bsym.args[1], *found, None) if found and head else None
    if bsym.sym.id != ltorch.sum.id:
        return None
    total = _args(bsym)
    if total["dim"] is not None or total["keepdim"] or total["dtype"] is not None:
        return None
    cat = g.op(bsym.args[0], ltorch.cat.id)
    if cat is None or _args(cat)["dim"] != 0:
        return None
    losses = [g.op(t, ltorch.cross_entropy.id) for t in cat.args[0]]
    found = {_plain_ce(ce, ("none",)) for ce in losses}
    if None in found or len(found) != 1:
        return None
    splits = [g.op(ce.args[i], ltorch.split.id) for ce in losses for i in (0, 1)]
    if None in splits:
        return None
    by_logits, by_targets = splits[0::2], splits[1::2]
    split_l, split_t = by_logits[0], by_targets[0]
    names = lambda ts: [t.name for t in ts]  # noqa: E731
    in_order = (all(s is split_l for s in by_logits) and all(s is split_t for s in by_targets)
                and names(ce.args[0] for ce in losses) == names(split_l.output)
                and names(ce.args[1] for ce in losses) == names(split_t.output))
    a, b = _args(split_l), _args(split_t)
    chunk = a["size_or_sections"]
    if not (in_order and isinstance(chunk, int) and b["size_or_sections"] == chunk and a["dim"] == b["dim"] == 0):
        return None
    head, targets = _lm_head(g, split_l.args[0]), split_t.args[0]
    if head is None or targets.ndim != 1:
        return None
    return (*head, targets, found.pop()[0], "sum", chunk)


def rope_pairs(g: Graph, bsyms: list) -> dict[int, tuple]:
    """litgpt's one-tensor RoPE symbols paired by their tables, in order: {id(second): (first, second)} where the
    first's output is read only after the second."""
    position = {id(b): i for i, b in enumerate(bsyms)}
    waiting, pairs = {}, {}
    for i, b in enumerate(bsyms):
        if b.sym.id != lt.litgpt_rope.id:
            continue
        key = (b.args[1].name, b.args[2].name)
        first = waiting.pop(key, None)
        if first is None:
            waiting[key] = b
            continue
        q, k = first.args[0], b.args[0]
        late = all(position[id(r)] > i for r in g.readers(first.output))
        if late and q.ndim == k.ndim == 4 and (q.shape[0], *q.shape[2:]) == (k.shape[0], *k.shape[2:]):
            pairs[id(b)] = (first, b)
        else:
            waiting[key] = b
    return pairs


def _bind(trace, sym, args: tuple, outputs):
    """``sym(*args)`` recorded in ``trace`` (its decomposition with it) with ``outputs`` as its output proxies."""
    trace.push_scope([])
    with tracectx(trace):
        made = sym(*args)
    (bsym,) = trace.pop_scope()
    made, outputs = (made, outputs) if isinstance(made, tuple) else ((made,), (outputs,))
    return bsym.from_bsym_swap_proxies({variableify(m): o for m, o in zip(made, outputs)})


def rewrite(trace):
    """``trace`` with its RMSNorm, RoPE, SwiGLU and LM head + cross entropy as the liger executor's symbols."""
    g = Graph(trace)
    pairs = rope_pairs(g, trace.bound_symbols)
    dropped = {id(first) for first, _ in pairs.values()}
    new = from_trace(trace)
    changed = False
    for bsym in trace.bound_symbols:
        if id(bsym) in dropped:
            changed = True
            continue
        made = None
        if id(bsym) in pairs:
            first, second = pairs[id(bsym)]
            q, k, cos, sin = first.args[0], second.args[0], *second.args[1:3]
            writable = g.writable(q, {id(first)}) and g.writable(k, {id(second)})
            made = _bind(new, lt.rope, (q, k, cos, sin, True, writable), (first.output, second.output))
        elif bsym.sym.id == lt.rope.id:  # Hugging Face's q + k call, from the lookaside: what it may overwrite
            q, k, cos, sin, cast_back, _ = bsym.args
            writable = g.writable(q, {id(bsym)}) and g.writable(k, {id(bsym)})
            made = _bind(new, lt.rope, (q, k, cos, sin, cast_back, writable), bsym.output)
        elif (found := match_rms_norm(g, bsym)) is not None:
            made = _bind(new, lt.rms_norm, found, bsym.output)
        elif (found := match_swiglu(g, bsym)) is not None:
            made = _bind(new, lt.swiglu, found, bsym.output)
        elif (found := match_flce(g, bsym)) is not None:
            made = _bind(new, lt.flce, found, bsym.output)
        changed |= made is not None
        new.bound_symbols.append(made if made is not None else bsym)
    if not changed:
        return trace
    new.set_provenance(TraceProvenance("LigerPatterns (benchmarks.liger_patterns)"))
    return new


class LigerPatterns(Transform):
    """The models' RMSNorm, RoPE, SwiGLU and LM head + cross entropy as the liger executor's symbols; nothing unless
    that executor is among the jit's executors."""

    def transform_traces_pre_prologue(self, prologue_trace, computation_trace, epilogue_trace, **kwargs):
        if lt.liger_ex not in (kwargs.get("executors_list") or ()):
            return prologue_trace, computation_trace, epilogue_trace
        return prologue_trace, rewrite(computation_trace), epilogue_trace
