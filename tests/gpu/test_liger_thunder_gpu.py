"""The step table's Liger rival on the GPU host (benchmarks/liger_thunder.py): Thunder with Liger-Kernel's operators
runs a small litgpt Llama and a small Hugging Face Llama in fp32 and bf16, with Liger's RMSNorm, RoPE and SwiGLU
forward and backward in the execution traces (one per norm, attention and MLP of the model), and grads as close to
eager as stock Thunder's (checked again on changed inputs: Liger overwrites operands it was given); and a tiny
litgpt GPT under litgpt's chunked cross entropy, its LM head and loss one fused linear cross entropy."""

from __future__ import annotations

import pytest
import torch

from benchmarks import liger_thunder
from benchmarks.model_cases import Case
from benchmarks.model_step import VARIANTS, Options, _grads, grad_error, make, run_case
from tests.test_liger_thunder import gpt

pytestmark = pytest.mark.gpu
BF16 = 2e-2  # the bf16 bar's floor: a grad error bf16's rounding (2^-8 a step) reaches by itself a few ops deep

SMALL = Case("small-llama", "litgpt", "Llama-3-8B", 256,
             dict(n_layer=2, n_embd=256, n_head=4, n_query_groups=2, head_size=64, intermediate_size=512))
SMALL_HF = Case("small-hf-llama", "hf-llama", "small", 256,
                dict(num_hidden_layers=2, hidden_size=256, intermediate_size=512, num_attention_heads=4,
                     num_key_value_heads=2, vocab_size=512))


@pytest.mark.fresh_process  # run_case counts kernels with torch.profiler: CUPTI to itself (tests/README.md)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("case", [SMALL, SMALL_HF], ids=lambda c: c.name)
def test_thunder_liger_runs_ligers_operators_with_grads_as_close_as_stock_thunders(case, dtype, record):
    pytest.importorskip("liger_kernel")
    variants = [v for name in ("thunder", "thunder-liger") for v in VARIANTS if v.name == name]
    stock, liger = run_case(case, variants, "cuda", Options(iters=2, warmup=1), dtype=dtype)
    record({"test": "liger_step", "dtype": str(dtype), "rows": [stock.__dict__, liger.__dict__]})
    n = case.overrides.get("n_layer", case.overrides.get("num_hidden_layers"))
    norms = 2 * n + 1  # two per block and the final one
    assert liger.note == f"Liger RMSNorm {norms}/{norms}, RoPE {n}/{n}, SwiGLU {n}/{n}, FLCE 0/0", liger
    assert liger.ms > 0 and stock.ms > 0, (stock, liger)
    if dtype == torch.float32:
        assert liger.grad_err < 1e-3, liger
    else:  # bf16: rounding differs kernel by kernel; Liger's may not drift much further from eager than Thunder's
        assert liger.grad_err <= max(2 * stock.grad_err, BF16), (stock, liger)


def _variant(name):
    return next(v for v in VARIANTS if v.name == name)


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "one-cross-entropy"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_thunder_liger_fuses_the_lm_head_and_its_cross_entropy(dtype, chunked, record):
    pytest.importorskip("liger_kernel")
    built = gpt(chunked, dtype, "cuda")
    want = _grads(built.model, built)
    stock = _grads(make(_variant("thunder"), built.model, "cuda"), built)
    fn = make(_variant("thunder-liger"), built.model, "cuda")
    got = _grads(fn, built)
    errors = grad_error(got, want), grad_error(stock, want)
    record({"test": "liger_flce", "dtype": str(dtype), "chunked": chunked, "grad_err": errors})
    assert liger_thunder.claims(fn) == {"RMSNorm": (3, 3), "RoPE": (1, 1), "SwiGLU": (1, 1), "FLCE": (1, 1)}
    if dtype == torch.float32:
        assert errors[0] < 1e-3, errors
    else:
        assert errors[0] <= max(2 * errors[1], BF16), errors
