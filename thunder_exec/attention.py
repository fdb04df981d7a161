"""segkit_ex's attention: causal or unmasked ``scaled_dot_product_attention`` on cuDNN's fused attention, forward
and backward, where Thunder's sdpa executor would call FlashAttention-2.

Why: the kernels of a training step differ between Thunder and torch.compile mostly in attention. Eager PyTorch
(and so torch.compile) dispatches SDPA to cuDNN's attention on Hopper, Thunder 0.2.6's sdpa executor always picks
``aten._scaled_dot_product_flash_attention`` when it can. The results of the model-step benchmark measure the
difference.

What it takes (the checker): CUDA tensors, q / k / v of one 16-bit dtype, (B, H, T, D) with the same B, H and D,
D a multiple of 8 up to 128, no mask, no dropout, and cuDNN attention enabled in torch
(``torch.backends.cuda.cudnn_sdp_enabled()``). Anything else stays with Thunder. The compile option
``segkit_attention`` chooses: "cudnn" (the default), "cudnn-as-is" or "thunder" (off).

Grouped k / v. cuDNN's attention takes k / v with fewer heads than q (each k / v head shared by H_q / H_kv
consecutive q heads, torch's ``enable_gqa``) and returns dk / dv with k / v's heads. ``segkit_grouped_sdpa`` is that
call: models that repeat k / v first (litgpt's ``repeat_interleave``) reach it through thunder_exec.gqa where that
pays (its ``segkit_gqa``); the forward then writes no repeated k / v and the backward sums no groups. Unclaimed, it
is the repeat and Thunder's SDPA.

The layout of q. torch allocates cuDNN's y (and so dq) in q's memory order. A model's q leaves its RoPE region
contiguous, (B, H, T, D), while the model reads y as ``y.transpose(1, 2).reshape(B, T, C)`` and its grad dy arrives
as that view's transpose, (B, T, H, D) in memory. So y is copied once in the forward and dy once in the backward.
"cudnn" therefore asks for q in (B, T, H, D) memory order (``prims.stride_order``, which Thunder's nvFuser
executor fuses into the region that computes q), so that y's reshape is a view and dy already has y's layout:

    q (B, H, T, D), strides (T*H*D, D, H*D, 1)  ->  cuDNN  ->  y, same strides  ->  transpose(1, 2): (B, T, H, D)
                                                                                    contiguous, reshape: a view
"cudnn-as-is" passes q as Thunder leaves it (the comparison). Where q is already a (B, T, H, D) view of the qkv
projection (a model without RoPE), nothing computes it: Thunder's torch executor runs the lone ``stride_order`` as a
copy of q, and "cudnn-as-is" is the better choice there (not measured).

    y, lse, seed, offset = segkit_cudnn_sdpa_fwd(q, k, v, is_causal, scale)     # lse: (B, H, T, 1) fp32
    dq, dk, dv = segkit_cudnn_sdpa_bwd(dy, q, k, v, y, lse, seed, offset, is_causal, scale)
"""

from __future__ import annotations

import torch
from thunder.core import devices, dtypes, prims
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grads
import thunder.torch as ltorch

from thunder_exec.base import segkit_ex
from thunder_exec.decide.options import attention_option

#: the widest head dim segkit routes to cuDNN (cuDNN's fused attention covers up to 128 on every supported GPU)
MAX_HEAD_DIM = 128

#: ``prims.stride_order`` of a (B, H, T, D) tensor laid out as (B, T, H, D): each dim's rank, innermost first
BTHD_ORDER = (3, 1, 2, 0)


def attention_refusal(query, key, value, attn_mask, dropout_p, grouped: bool = False) -> str | None:
    """Why segkit's cuDNN attention cannot take these arguments (None when it can); ``grouped``: k / v may have
    fewer heads than q, a divisor of q's (module docstring)."""
    tensors = (query, key, value)
    if any(t.device.devicetype != devices.DeviceType.CUDA for t in tensors):
        return "not on CUDA"
    if attn_mask is not None or dropout_p != 0.0:
        return "a mask or dropout"
    if any(t.dtype not in (dtypes.bfloat16, dtypes.float16) or t.dtype != query.dtype for t in tensors):
        return f"dtypes {[str(t.dtype) for t in tensors]} (want one 16-bit dtype)"
    if grouped:
        if (any(t.ndim != 4 for t in tensors) or tuple(key.shape) != tuple(value.shape)
                or (query.shape[0], query.shape[3]) != (key.shape[0], key.shape[3]) or query.shape[1] % key.shape[1]):
            return (f"shapes {[tuple(t.shape) for t in tensors]} (want (B, H, T, D) q and (B, H_kv, T_kv, D) k / v "
                    "with H_kv dividing H)")
    elif any(t.ndim != 4 for t in tensors) or len({(t.shape[0], t.shape[1], t.shape[3]) for t in tensors}) != 1:
        return f"shapes {[tuple(t.shape) for t in tensors]} (want (B, H, T, D) with one B, H and D)"
    if query.shape[3] % 8 or query.shape[3] > MAX_HEAD_DIM:
        return f"head dim {query.shape[3]} (want a multiple of 8 up to {MAX_HEAD_DIM})"
    return None


def _fwd_meta(q, k, v, is_causal, scale):
    B, H, T, _ = q.shape
    lse = TensorProxy(like=q, shape=(B, H, T, 1), dtype=dtypes.float32)
    scalar = TensorProxy(like=q, shape=(), dtype=dtypes.int64)
    return TensorProxy(like=q, shape=(B, H, T, v.shape[3])), lse, scalar, TensorProxy(like=scalar)


def _fwd_impl(q, k, v, is_causal, scale):
    y, lse, _, _, _, _, seed, offset, _ = torch.ops.aten._scaled_dot_product_cudnn_attention(
        q, k, v, None, True, 0.0, is_causal, False, scale=scale)
    return y, lse, seed, offset


def _bwd_meta(dy, q, k, v, y, lse, seed, offset, is_causal, scale):
    return TensorProxy(like=q), TensorProxy(like=k), TensorProxy(like=v)


def _bwd_impl(dy, q, k, v, y, lse, seed, offset, is_causal, scale):
    # cuDNN's backward reads dy in y's layout (torch's own autograd formula hands it so).
    if dy.stride() != y.stride():
        dy = torch.empty_like(y).copy_(dy)
    dq, dk, dv = torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        dy, q, k, v, y, lse, seed, offset, None, None, None, q.shape[2], k.shape[2], 0.0, is_causal, scale=scale)
    return dq, dk, dv


cudnn_sdpa_fwd = segkit_ex.register_operator("segkit_cudnn_sdpa_fwd", meta=_fwd_meta, fn=_fwd_impl)
cudnn_sdpa_bwd = segkit_ex.register_operator("segkit_cudnn_sdpa_bwd", meta=_bwd_meta, fn=_bwd_impl)


def _takes(query, key, value, attn_mask, dropout_p, grouped: bool = False) -> bool:
    """segkit_ex claims the call: the option does not turn it off, torch's cuDNN attention is on, and it fits."""
    return (attention_option() != "thunder" and torch.backends.cuda.cudnn_sdp_enabled()
            and attention_refusal(query, key, value, attn_mask, dropout_p, grouped) is None)


def _checker(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None) -> bool:
    return _takes(query, key, value, attn_mask, dropout_p)


def _query(query):
    """q as cuDNN should read it: in (B, T, H, D) memory order unless the option says as is (module docstring)."""
    return query if attention_option() == "cudnn-as-is" else prims.stride_order(query, BTHD_ORDER)


def _attend(query, key, value, is_causal, scale):
    return cudnn_sdpa_fwd(_query(query), key, value, is_causal, scale)[0]


def _execution(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
    return _attend(query, key, value, is_causal, scale)


def _attend_with_grad(query, key, value, is_causal, scale):
    # dq flows back through stride_order's grad (an identity) to the q the model computed
    q = _query(query)
    y, lse, seed, offset = cudnn_sdpa_fwd(q, key, value, is_causal, scale)
    dq, dk, dv = cudnn_sdpa_bwd(get_grad(y), q, key, value, y, lse, seed, offset, is_causal, scale)
    put_grads((query, key, value), (dq, dk, dv))
    return y


def _grad(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None):
    return _attend_with_grad(query, key, value, is_causal, scale)


segkit_ex.register_implementation(ltorch.scaled_dot_product_attention, checker=_checker,
                                  execution_transform=_execution, grad_transform=_grad)


# --------------------------------------------------------------------------- grouped k / v
def _grouped_decomposition(query, key, value, is_causal, scale):
    """SDPA with k / v shared by groups of consecutive q heads (torch's ``enable_gqa``): k / v repeated to q's
    heads, then Thunder's SDPA, which is what runs where segkit_ex does not claim the call."""
    repeats = query.shape[1] // key.shape[1]
    if repeats != 1:
        key, value = ltorch.repeat_interleave(key, repeats, 1), ltorch.repeat_interleave(value, repeats, 1)
    return ltorch.scaled_dot_product_attention(query, key, value, None, 0.0, is_causal, scale=scale)


grouped_sdpa = segkit_ex.register_operator("segkit_grouped_sdpa", like=_grouped_decomposition)


def _grouped_checker(query, key, value, is_causal, scale) -> bool:
    return _takes(query, key, value, None, 0.0, grouped=True)


segkit_ex.register_implementation(grouped_sdpa, checker=_grouped_checker, execution_transform=_attend,
                                  grad_transform=_attend_with_grad)
