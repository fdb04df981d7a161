"""Thunder + Liger-Kernel: Liger's RMSNorm, RoPE, SwiGLU and fused linear cross entropy bound as a Thunder executor,
a rival of the step table (benchmarks/model_step.py, variant "thunder-liger"). Not product code.

The method is Thunder's tutorial "Thunder bindings for Liger operators" (lightning-thunder,
notebooks/liger_kernel.ipynb): an ``OperatorExecutor("liger")``; for each op a forward and a backward operator that
call Liger's kernel functions (``liger_kernel.ops.*``), and an implementation whose execution transform runs the
forward alone and whose grad transform runs the forward, then the backward on its output's grad; trace transforms
turn what the model computes into those ops (``LigerPatterns``, benchmarks/liger_patterns.py). Where it differs:

* each op the executor takes is a composite symbol whose decomposition is the models' own math in Thunder's torch
  ops, claimed only where its checker accepts (a CUDA tensor, float16 / bfloat16 / float32, shapes Liger's kernels
  take); anything else decomposes and runs on Thunder's own executors. The notebook's operators are opaque and have
  no way back;
* litgpt 0.5.13's ``RMSNorm`` and ``LLaMAMLP`` and Hugging Face's ``LlamaRMSNorm`` / ``LlamaMLP`` are Python over
  torch ops: a pattern over the trace finds them (the notebook patches litgpt's RMSNorm to call
  ``F.rms_norm`` and matches silu -> mul as here). ``F.rms_norm`` itself (``ltorch.rms_norm``) is bound as the
  notebook binds it, in Liger's "gemma" casting (Thunder's decomposition weighs in fp32), not "llama";
* litgpt's ``apply_rope`` reaches a symbol through an executor lookaside (the notebook's ``replaces=``) and q's and
  k's calls are merged into Liger's one q + k kernel (its MergeRopeTransform); Hugging Face's
  ``apply_rotary_pos_emb`` takes q and k together and maps onto that kernel directly;
* fused linear cross entropy: the notebook's linear -> cross_entropy, and litgpt's chunked cross entropy too;
* Liger 0.8.5's signatures: ``rms_norm_forward`` / ``rms_norm_backward`` take ``row_mode`` (and ``in_place``),
  ``fused_linear_cross_entropy_forward`` returns seven values and is told to compute the grads (Thunder runs it
  without autograd, so ``requires_grad`` says nothing);
* Liger writes some operands in place (RoPE's q and k, and dq and dk in its backward; SwiGLU's backward over its
  saved inputs; RMSNorm's backward over dY). A Thunder trace is functional: q, k and SwiGLU's inputs are Liger's to
  overwrite only where the pattern showed that nothing else reads them (``writable``), dq and dk never; elsewhere
  Liger gets a copy (only where it would work in place). RMSNorm's backward never writes dY (``in_place=False``:
  the grad of a sum reaches both of its inputs as one tensor).

Liger's kernels are imported at their first run (Triton, GPU only); building the executor and tracing need neither.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import sys

import torch

from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grads
from thunder.extend import OperatorExecutor
import thunder.torch as ltorch

liger_ex = OperatorExecutor("liger", version="liger-kernel 0.8.5 (Thunder's tutorial bindings)")

#: where the checkers accept a tensor; the CPU tests add "cpu" to see the claims in a trace (nothing runs there)
DEVICES = ("cuda",)
DTYPES = (dtypes.float16, dtypes.bfloat16, dtypes.float32)
MAX_WIDTH = 65536  # liger_kernel.ops.utils.calculate_settings: one Triton block per row, at most 64 Ki elements


def _ops(name: str):
    return importlib.import_module(f"liger_kernel.ops.{name}")


def _ok(*tensors) -> bool:
    """Every tensor a CUDA (``DEVICES``) tensor of a dtype Liger's kernels take, all of one dtype."""
    return (all(isinstance(t, TensorProxy) and t.device.type in DEVICES and t.dtype in DTYPES for t in tensors)
            and len({t.dtype for t in tensors}) == 1)


def _owned(t: torch.Tensor) -> torch.Tensor:
    """``t``, or a copy where Liger's RoPE would rotate ``t``'s own memory: it works in place on
    ``t.transpose(1, 2)`` when that is contiguous, on a contiguous copy otherwise."""
    return t.clone() if t.transpose(1, 2).is_contiguous() else t


def _mine(t: torch.Tensor, writable: bool) -> torch.Tensor:
    """``t`` contiguous, and a buffer Liger may overwrite: ``t`` itself only where ``writable``."""
    c = t.contiguous()
    return c if writable or c is not t else t.clone()


# --------------------------------------------------------------------------- RMSNorm
# casting_mode: Liger's names. "gemma": everything in fp32, cast back at the end (litgpt's RMSNorm, ltorch.rms_norm);
# "llama": the normalized x cast back before the weight (Hugging Face's LlamaRMSNorm).
def _rms_fwd_meta(x, w, eps, casting_mode):
    return TensorProxy(like=x), TensorProxy(like=x, shape=(math.prod(x.shape[:-1]),), dtype=dtypes.float32)


def _rms_fwd_impl(x, w, eps, casting_mode):
    y, _, rstd, *_ = _ops("rms_norm").rms_norm_forward(x.contiguous(), w, eps, 0.0, casting_mode, None)
    return y, rstd


def _rms_bwd_meta(dy, x, w, rstd, casting_mode):
    return TensorProxy(like=x), TensorProxy(like=w)


def _rms_bwd_impl(dy, x, w, rstd, casting_mode):
    ops = _ops("rms_norm")
    n = x.shape[-1]
    block, warps = ops.calculate_settings(n)
    return ops.rms_norm_backward(dy.contiguous(), x.contiguous().view(-1, n), w, rstd, 0.0,
                                 ops._str_to_casting_mode[casting_mode], block, warps, False, None)


rms_fwd = liger_ex.register_operator("liger_rms_norm_forward", meta=_rms_fwd_meta, fn=_rms_fwd_impl)
rms_bwd = liger_ex.register_operator("liger_rms_norm_backward", meta=_rms_bwd_meta, fn=_rms_bwd_impl)


def rms_norm_reference(x, w, eps, casting_mode):
    """The models' RMSNorm in Thunder's ops: litgpt's ("gemma") or Hugging Face Llama's ("llama")."""
    xf = ltorch.to(x, dtypes.float32)
    normed = ltorch.mul(xf, ltorch.rsqrt(ltorch.add(ltorch.mean(ltorch.mul(xf, xf), -1, True), eps)))
    if casting_mode == "llama":
        return ltorch.mul(w, ltorch.to(normed, x.dtype))
    return ltorch.to(ltorch.mul(normed, ltorch.to(w, dtypes.float32)), x.dtype)


rms_norm = liger_ex.register_operator("liger_rms_norm", like=rms_norm_reference)


def _rms_checker(x, w, eps, casting_mode) -> bool:
    """x (..., N) and a weight (N,); Hugging Face's order (weight times the cast x) keeps x's dtype only for a
    weight of x's dtype."""
    same = w.dtype == x.dtype or casting_mode == "gemma"
    return (_ok(x) and _ok(w) and same and x.ndim >= 1 and tuple(w.shape) == (x.shape[-1],)
            and 0 < x.shape[-1] <= MAX_WIDTH and x.numel() > 0 and casting_mode in ("gemma", "llama"))


def _rms_grad(x, w, eps, casting_mode):
    y, rstd = rms_fwd(x, w, eps, casting_mode)
    put_grads((x, w), rms_bwd(get_grad(y), x, w, rstd, casting_mode))
    return y


liger_ex.register_implementation(rms_norm, checker=_rms_checker, grad_transform=_rms_grad,
                                 execution_transform=lambda x, w, eps, mode: rms_fwd(x, w, eps, mode)[0])


def _f_rms_eps(a, eps):
    """ltorch.rms_norm's default eps: that of the dtype it computes in (fp32 for half types)."""
    if eps is not None:
        return eps
    return torch.finfo(torch.float32 if a.dtype in (dtypes.bfloat16, dtypes.float16) else
                       dtypes.to_torch_dtype(a.dtype)).eps


liger_ex.register_implementation(
    ltorch.rms_norm,  # F.rms_norm, the notebook's binding: weight required, normalized over the last dim
    checker=lambda a, shape, w=None, eps=None: (w is not None and tuple(shape) == (a.shape[-1],)
                                                and _rms_checker(a, w, 0.0, "gemma")),
    execution_transform=lambda a, shape, w=None, eps=None: rms_fwd(a, w, _f_rms_eps(a, eps), "gemma")[0],
    grad_transform=lambda a, shape, w=None, eps=None: _rms_grad(a, w, _f_rms_eps(a, eps), "gemma"))


# --------------------------------------------------------------------------- RoPE
# q (B, nh, T, d) and k (B, nkv, T, d) in one kernel, tables cos / sin (1 or B, T, d) whose halves repeat (litgpt's
# and Hugging Face's caches are built so; Liger reads the first half only). ``writable``: q and k are the pattern's
# to overwrite (benchmarks.liger_patterns).
def _rope_fwd_impl(q, k, cos, sin, writable):
    if not writable:
        q, k = _owned(q), _owned(k)
    q, k, _, _ = _ops("rope").rope_forward(q, k, cos, sin)
    return q, k


def _rope_bwd_impl(dq, dk, cos, sin):
    return _ops("rope").rope_backward(_owned(dq), _owned(dk), cos, sin)


rope_fwd = liger_ex.register_operator("liger_rope_forward", fn=_rope_fwd_impl,
                                      meta=lambda q, k, cos, sin, writable: (TensorProxy(like=q), TensorProxy(like=k)))
rope_bwd = liger_ex.register_operator("liger_rope_backward", fn=_rope_bwd_impl,
                                      meta=lambda dq, dk, cos, sin: (TensorProxy(like=dq), TensorProxy(like=dk)))


def rope_reference(x, cos, sin, cast_back):
    """``x * cos + rotate_half(x) * sin`` over x (B, heads, T, d), the tables (B, T, d) broadcast over the heads:
    litgpt's apply_rope (the promoted result cast back to x's dtype) or Hugging Face's (the promoted dtype)."""
    half = x.shape[-1] // 2
    rotated = ltorch.cat((ltorch.neg(ltorch.getitem(x, (..., slice(half, None)))),
                          ltorch.getitem(x, (..., slice(None, half)))), -1)
    out = ltorch.add(ltorch.mul(x, ltorch.unsqueeze(cos, 1)), ltorch.mul(rotated, ltorch.unsqueeze(sin, 1)))
    return ltorch.to(out, x.dtype) if cast_back else out


def _rope_pair_reference(q, k, cos, sin, cast_back, writable):
    return rope_reference(q, cos, sin, cast_back), rope_reference(k, cos, sin, cast_back)


rope = liger_ex.register_operator("liger_rope", like=_rope_pair_reference)
#: litgpt's apply_rope on one tensor: what the lookaside records; LigerPatterns pairs q's and k's into ``rope``
litgpt_rope = liger_ex.register_operator("liger_litgpt_apply_rope",
                                         like=lambda x, cos, sin: rope_reference(x, cos, sin, True))


def _rope_checker(q, k, cos, sin, cast_back, writable) -> bool:
    """q and k (B, heads, T, d) of one dtype, d even; cos and sin (1 or B, T, d), no grad; without litgpt's cast
    back the result stays q's dtype only with tables of q's dtype."""
    if not (_ok(q, k) and _ok(cos, sin) and q.ndim == k.ndim == 4 and cos.ndim == 3):
        return False
    (b, _, t, d), (cb, ct, cd) = q.shape, cos.shape
    return (k.shape[0] == b and tuple(k.shape[2:]) == (t, d) and d % 2 == 0 and tuple(sin.shape) == tuple(cos.shape)
            and cb in (1, b) and (ct, cd) == (t, d) and not (cos.requires_grad or sin.requires_grad)
            and (cast_back or cos.dtype == q.dtype))


def _rope_grad(q, k, cos, sin, cast_back, writable):
    qo, ko = rope_fwd(q, k, cos, sin, writable)
    put_grads((q, k), rope_bwd(get_grad(qo), get_grad(ko), cos, sin))
    return qo, ko


liger_ex.register_implementation(rope, checker=_rope_checker, grad_transform=_rope_grad,
                                 execution_transform=lambda q, k, cos, sin, cast_back, writable: rope_fwd(
                                     q, k, cos, sin, writable))


def _litgpt_apply_rope(x, cos, sin):
    """litgpt.model.apply_rope, under the liger executor: its checks, then the one-tensor symbol (tables of any
    rank litgpt takes: viewed as litgpt views them)."""
    if cos.ndim != 3:
        raise ValueError(f"cos must be three-dimensional, but shape is {cos.shape}")
    if cos.shape != sin.shape:
        raise ValueError(f"cos, sin must have same shape, but cos.shape={cos.shape}, sin.shape={sin.shape}")
    if x.ndim == 4:
        return litgpt_rope(x, cos, sin)
    shape = tuple(cos.shape[:1]) + (1,) * (x.ndim - 3) + tuple(cos.shape[1:])  # litgpt's alignment, x not 4-D
    c, s = ltorch.reshape(cos, shape), ltorch.reshape(sin, shape)
    half = x.shape[-1] // 2
    rotated = ltorch.cat((ltorch.neg(ltorch.getitem(x, (..., slice(half, None)))),
                          ltorch.getitem(x, (..., slice(None, half)))), -1)
    return ltorch.to(ltorch.add(ltorch.mul(x, c), ltorch.mul(rotated, s)), x.dtype)


def _hf_apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """Hugging Face Llama's apply_rotary_pos_emb: Liger's q + k symbol for the (B, heads, T, d) layout."""
    if unsqueeze_dim == 1 and q.ndim == 4 and cos.ndim == 3:
        return rope(q, k, cos, sin, False, False)
    c, s = ltorch.unsqueeze(cos, unsqueeze_dim), ltorch.unsqueeze(sin, unsqueeze_dim)

    def one(x):
        half = x.shape[-1] // 2
        rotated = ltorch.cat((ltorch.neg(ltorch.getitem(x, (..., slice(half, None)))),
                              ltorch.getitem(x, (..., slice(None, half)))), -1)
        return ltorch.add(ltorch.mul(x, c), ltorch.mul(rotated, s))
    return one(q), one(k)


# --------------------------------------------------------------------------- SwiGLU
def _swiglu_fwd_impl(a, b):
    return _ops("swiglu").swiglu_forward(a.contiguous(), b.contiguous())[2]


def _swiglu_bwd_impl(a, b, dc, writable):
    """Liger writes the grads over a and b (its saved inputs): they are the pattern's, or copies."""
    return _ops("swiglu").swiglu_backward(_mine(a, writable), _mine(b, writable), dc.contiguous())


swiglu_fwd = liger_ex.register_operator("liger_swiglu_forward", fn=_swiglu_fwd_impl,
                                        meta=lambda a, b: TensorProxy(like=a))
swiglu_bwd = liger_ex.register_operator("liger_swiglu_backward", fn=_swiglu_bwd_impl,
                                        meta=lambda a, b, dc, writable: (TensorProxy(like=a), TensorProxy(like=b)))
swiglu = liger_ex.register_operator("liger_swiglu",
                                    like=lambda a, b, writable: ltorch.mul(ltorch.silu(a, False), b))


def _swiglu_grad(a, b, writable):
    c = swiglu_fwd(a, b)
    put_grads((a, b), swiglu_bwd(a, b, get_grad(c), writable))
    return c


liger_ex.register_implementation(
    swiglu, grad_transform=_swiglu_grad, execution_transform=lambda a, b, writable: swiglu_fwd(a, b),
    checker=lambda a, b, writable: (_ok(a, b) and tuple(a.shape) == tuple(b.shape) and a.numel() > 0
                                    and a.shape[-1] <= MAX_WIDTH))


# --------------------------------------------------------------------------- fused linear cross entropy
# The LM head and the loss in one: Liger computes the logits chunk by chunk and never keeps them, taking the grads of
# x and w in the forward (scaled by the loss's grad in the backward). x (..., H), w (V, H), targets (...) int64, no
# bias; reduction "mean" or "sum". ``chunk``: the model computed the sum as litgpt's chunked_cross_entropy does,
# ``chunk`` rows at a time (the decomposition repeats it; Liger chunks by its own rule).
def _flce(x, w, targets, ignore_index, reduction, grads: bool):
    return _ops("fused_linear_cross_entropy").fused_linear_cross_entropy_forward(
        x.reshape(-1, x.shape[-1]), w, targets.reshape(-1), ignore_index=ignore_index, reduction=reduction,
        compute_gradients=grads, weight_requires_grad=grads)


def _flce_fwd_impl(x, w, targets, ignore_index, reduction):
    out = _flce(x, w, targets, ignore_index, reduction, True)
    return out[0].to(x.dtype), out[4], out[5]


def _flce_fwd_meta(x, w, targets, ignore_index, reduction):
    rows = (math.prod(x.shape[:-1]), x.shape[-1])
    return TensorProxy(like=x, shape=()), TensorProxy(like=x, shape=rows), TensorProxy(like=w)


def _flce_bwd_impl(g, dx, dw):
    """Liger scales the forward's grads (its own buffers) in place by the loss's grad."""
    dx, dw, _ = _ops("fused_linear_cross_entropy").fused_linear_cross_entropy_backward(g, dx, dw, None)
    return dx, dw


flce_fwd = liger_ex.register_operator("liger_fused_linear_cross_entropy_forward", meta=_flce_fwd_meta,
                                      fn=_flce_fwd_impl)
flce_loss = liger_ex.register_operator(
    "liger_fused_linear_cross_entropy_loss", meta=lambda x, w, targets, ignore_index, reduction: TensorProxy(
        like=x, shape=()),
    fn=lambda x, w, targets, ignore_index, reduction: _flce(x, w, targets, ignore_index, reduction,
                                                            False)[0].to(x.dtype))
flce_bwd = liger_ex.register_operator("liger_fused_linear_cross_entropy_backward", fn=_flce_bwd_impl,
                                      meta=lambda g, dx, dw: (TensorProxy(like=dx), TensorProxy(like=dw)))


def flce_reference(x, w, targets, ignore_index, reduction, chunk):
    """cross_entropy(linear(x, w) as (N, V) rows, targets as (N,)), or with ``chunk`` litgpt's chunked sum."""
    logits = ltorch.reshape(ltorch.linear(x, w), (-1, w.shape[0]))
    t = ltorch.reshape(targets, (-1,))
    if chunk is None:
        return ltorch.cross_entropy(logits, t, ignore_index=ignore_index, reduction=reduction)
    losses = [ltorch.cross_entropy(a, b, ignore_index=ignore_index, reduction="none")
              for a, b in zip(ltorch.split(logits, chunk), ltorch.split(t, chunk))]
    return ltorch.sum(ltorch.cat(losses, 0))


flce = liger_ex.register_operator("liger_fused_linear_cross_entropy", like=flce_reference)


def _flce_checker(x, w, targets, ignore_index, reduction, chunk) -> bool:
    return (_ok(x, w) and isinstance(targets, TensorProxy) and targets.device.type in DEVICES
            and targets.dtype == dtypes.int64 and x.ndim >= 2 and w.ndim == 2 and w.shape[1] == x.shape[-1]
            and targets.numel() == math.prod(x.shape[:-1]) > 0 and reduction in ("mean", "sum")
            and (chunk is None or reduction == "sum"))


def _flce_grad(x, w, targets, ignore_index, reduction, chunk):
    loss, dx, dw = flce_fwd(x, w, targets, ignore_index, reduction)
    dx, dw = flce_bwd(get_grad(loss), dx, dw)
    put_grads((x, w), (ltorch.reshape(dx, x.shape), dw))
    return loss


liger_ex.register_implementation(
    flce, checker=_flce_checker, grad_transform=_flce_grad,
    execution_transform=lambda x, w, targets, ignore_index, reduction, chunk: flce_loss(
        x, w, targets, ignore_index, reduction))


# --------------------------------------------------------------------------- the executor
def unavailable(device: str) -> str | None:
    """Why the liger executor cannot run here (one line), or None."""
    if not device.startswith("cuda"):
        return f"Liger-Kernel's Triton kernels need a CUDA device, not {device!r}"
    if importlib.util.find_spec("liger_kernel") is None:
        return "liger_kernel is not installed"
    return None


def executor() -> OperatorExecutor:
    """The liger executor, with lookasides for the RoPE functions of litgpt and Hugging Face's Llama imported by now
    (looked up at each call: the step table may import litgpt's modules afresh). Use it first in the executor list
    and with ``transforms=[LigerPatterns()]`` (benchmarks.liger_patterns), which finds the rest."""
    litgpt = sys.modules.get("litgpt.model")
    if litgpt is not None:
        liger_ex._lookasides[litgpt.apply_rope] = _litgpt_apply_rope
    llama = sys.modules.get("transformers.models.llama.modeling_llama")
    if llama is not None:
        liger_ex._lookasides[llama.apply_rotary_pos_emb] = _hf_apply_rotary_pos_emb
    return liger_ex


FORWARD = {"RMSNorm": rms_fwd, "RoPE": rope_fwd, "SwiGLU": swiglu_fwd, "FLCE": flce_fwd}
BACKWARD = {"RMSNorm": rms_bwd, "RoPE": rope_bwd, "SwiGLU": swiglu_bwd, "FLCE": flce_bwd}


def claims(fn) -> dict[str, tuple[int, int]]:
    """Liger's forward and backward operators in ``fn``'s last execution traces, per op."""
    import thunder

    fw = [b.sym for b in thunder.last_traces(fn)[-1].bound_symbols]
    bw = [b.sym for b in thunder.last_backward_traces(fn)[-1].bound_symbols]
    return {op: (fw.count(FORWARD[op]), bw.count(BACKWARD[op])) for op in FORWARD}
