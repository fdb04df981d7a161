"""segkit_ex's cuDNN attention claim (thunder_exec.attention) on the CPU: what it refuses and why, and that a CPU
program keeps Thunder's own attention (cuDNN exists only on CUDA). The GPU side (numbers against eager, the
symbols in the trace) is tests/gpu/test_attention_gpu.py."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import thunder
from thunder.core import devices, dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx

import thunder_exec
from thunder_exec.attention import attention_refusal
from tests.test_thunder_exec import _symbols


def _proxies(shapes, dtype=dtypes.bfloat16, device="cuda:0"):
    with tracectx(TraceCtx()):
        return [TensorProxy(shape=s, dtype=dtype, device=devices.Device(device)) for s in shapes]


def test_takes_causal_16bit_attention_on_cuda():
    q, k, v = _proxies([(1, 32, 4096, 128)] * 3)
    assert attention_refusal(q, k, v, None, 0.0) is None


@pytest.mark.parametrize("case, why", [
    ("cpu", "not on CUDA"), ("mask", "mask"), ("dropout", "dropout"), ("fp32", "16-bit"),
    ("gqa", "one B, H and D"), ("head_dim_256", "head dim 256"), ("head_dim_12", "head dim 12")])
def test_refuses_what_cudnn_attention_does_not_take(case, why):
    shapes = {"gqa": [(1, 32, 64, 128), (1, 8, 64, 128), (1, 8, 64, 128)],
              "head_dim_256": [(1, 4, 64, 256)] * 3, "head_dim_12": [(1, 4, 64, 12)] * 3}.get(case, [(1, 4, 64, 64)] * 3)
    q, k, v = _proxies(shapes, dtypes.float32 if case == "fp32" else dtypes.bfloat16,
                       "cpu" if case == "cpu" else "cuda:0")
    mask = _proxies([(64, 64)])[0] if case == "mask" else None
    assert why in attention_refusal(q, k, v, mask, 0.1 if case == "dropout" else 0.0)


def test_grouped_k_v_are_taken_where_their_heads_divide_qs():
    q, k, v = _proxies([(1, 32, 4096, 128), (1, 8, 4096, 128), (1, 8, 4096, 128)])
    assert attention_refusal(q, k, v, None, 0.0, grouped=True) is None
    q, k, v = _proxies([(1, 32, 64, 128), (1, 12, 64, 128), (1, 12, 64, 128)])
    assert "H_kv dividing H" in attention_refusal(q, k, v, None, 0.0, grouped=True)
    q, k, v = _proxies([(1, 32, 64, 128), (1, 8, 64, 128), (1, 4, 64, 128)])
    assert "H_kv dividing H" in attention_refusal(q, k, v, None, 0.0, grouped=True)


def test_cpu_program_keeps_thunders_attention():
    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    q, k, v = (torch.randn(1, 2, 16, 8) for _ in range(3))
    jf = thunder.jit(attend, executors=thunder_exec.executors())
    torch.testing.assert_close(jf(q, k, v), attend(q, k, v))
    assert not any("segkit_cudnn_sdpa" in s for s in _symbols(thunder.last_traces(jf)[-1]))


def test_bad_option_value_is_named():
    def attend(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    q = torch.randn(1, 2, 16, 8)
    with pytest.raises(ValueError, match="segkit_attention must be"):
        thunder.jit(attend, executors=thunder_exec.executors(), segkit_attention="flash")(q, q, q)
