"""The step table's Liger rival on CPU (benchmarks/liger_thunder.py, benchmarks/liger_patterns.py): its checkers
refuse what Liger's Triton kernels cannot take, so on CPU every op decomposes back into the model's own math (the
step is stock Thunder's, bit for bit); with the checkers told to take CPU tensors (``DEVICES``), the execution
traces call Liger's forward and backward operators where the models' RMSNorms, RoPEs and SwiGLUs are (running them
fails: Liger needs a GPU, and that failure is where the test stops). Its variant's row on a CPU host says why it was
skipped. Liger's results are the GPU suite's (tests/gpu/test_liger_thunder_gpu.py)."""

from __future__ import annotations

import importlib.util
import traceback

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder.torch as ltorch
from thunder.core import devices, dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceCtx, tracectx

from benchmarks import liger_patterns, liger_thunder as lt
from benchmarks.model_cases import build, chunked_cross_entropy, import_litgpt
from benchmarks.model_step import VARIANTS, Options, grad_error, run_case
from tests.test_model_step import TINY, TINY_HF

LIGER = next(v for v in VARIANTS if v.name == "thunder-liger")


def _jit(fn):
    return thunder.jit(fn, executors=[lt.executor(), *thunder.get_default_executors()],
                       transforms=[liger_patterns.LigerPatterns()])


def _grads(fn, built):
    built.model.zero_grad(set_to_none=True)
    for t in built.grad_inputs:
        t.grad = None
    fn(*built.inputs).backward()
    return [t.grad for t in built.grad_inputs] + [p.grad for p in built.model.parameters()]


def _expected(model) -> dict[str, tuple[int, int]]:
    """One claim forward and one backward per RMSNorm, attention (q and k in one RoPE) and gated MLP module, and
    per LM head under a cross entropy (``GPTLoss``)."""
    import transformers.models.llama.modeling_llama as hf

    model_mod, _ = import_litgpt()
    count = lambda *types: sum(isinstance(m, types) for m in model.modules())  # noqa: E731
    n = {"RMSNorm": count(model_mod.RMSNorm, hf.LlamaRMSNorm),
         "RoPE": count(model_mod.CausalSelfAttention, hf.LlamaAttention),
         "SwiGLU": count(model_mod.LLaMAMLP, hf.LlamaMLP), "FLCE": count(GPTLoss)}
    assert n["RMSNorm"] and n["RoPE"] and n["SwiGLU"], n
    return {op: (k, k) for op, k in n.items()}


def _placed(jf) -> dict[str, int]:
    """The composite symbols LigerPatterns put in the computation trace."""
    trace = next(t for t in thunder.last_traces(jf) if "LigerPatterns" in str(t.get_provenance()))
    names = [b.sym.name for b in trace.bound_symbols]
    return {op: names.count(sym.name) for op, sym in (("RMSNorm", lt.rms_norm), ("RoPE", lt.rope),
                                                      ("SwiGLU", lt.swiglu), ("FLCE", lt.flce))}


class GPTLoss(torch.nn.Module):
    """A tiny litgpt GPT and litgpt's pretraining loss (``chunked``) or one cross entropy over all rows."""

    def __init__(self, chunked: bool) -> None:
        super().__init__()
        model_mod, config_mod = import_litgpt()
        cfg = config_mod.Config.from_name("Llama-3-8B", block_size=32, n_layer=1, n_embd=64, n_head=4,
                                          n_query_groups=2, head_size=16, intermediate_size=96, vocab_size=96,
                                          padded_vocab_size=96)
        self.gpt, self.chunked = model_mod.GPT(cfg), chunked

    def forward(self, idx, targets):
        logits = self.gpt(idx)
        if self.chunked:
            return chunked_cross_entropy(logits, targets, chunk_size=8)
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def gpt(chunked: bool, dtype, device: str = "cpu"):
    """A tiny litgpt GPT + loss and its inputs, from seed 0."""
    from benchmarks.model_cases import Built

    torch.manual_seed(0)
    with torch.device(device):
        model = GPTLoss(chunked).to(dtype)
        idx, targets = torch.randint(0, 96, (2, 32)), torch.randint(0, 96, (2, 32))
    targets[:, :3] = -100  # ignored rows, as a fine-tuning mask leaves them
    return Built(model, (idx, targets), (), "tiny GPT + loss")


@pytest.mark.parametrize("case", [TINY, pytest.param(TINY_HF, marks=pytest.mark.models)],  # HF: ~25 s more
                         ids=lambda c: c.name)
def test_on_cpu_every_op_is_placed_then_refused_and_the_step_is_stock_thunders(case):
    """bf16 on CPU: the pattern places one Liger symbol per norm, attention and MLP of the model; the checkers
    refuse them all (no Liger operator in the execution traces), and the decomposition is the model's own math:
    the grads are stock Thunder's, bit for bit."""
    built = build(case, "cpu", torch.bfloat16)
    want = _grads(thunder.jit(built.model), built)
    jf = _jit(built.model)
    got = _grads(jf, built)
    assert _placed(jf) == {op: n for op, (n, _) in _expected(built.model).items()}
    assert lt.claims(jf) == {"RMSNorm": (0, 0), "RoPE": (0, 0), "SwiGLU": (0, 0), "FLCE": (0, 0)}
    assert grad_error(got, want) == 0.0
    assert grad_error(got, _grads(built.model, built)) < 5e-2  # bf16 Thunder against bf16 eager


def _proxy(shape, dtype=dtypes.bfloat16, device="cuda:0", requires_grad=False):
    return TensorProxy(shape=shape, device=devices.Device(device), dtype=dtype, requires_grad=requires_grad)


def _check(sym, *args) -> bool:
    return lt.liger_ex.implmap[sym.id].checker(*args)


def test_checkers_take_only_what_ligers_kernels_take():
    """CUDA tensors of fp16 / bf16 / fp32, one dtype per op, rows up to 64 Ki elements (one Triton block), RoPE
    tables (1 or B, T, d) with an even d, int64 targets, a mean or a sum, and results in the dtype the model's math
    gives."""
    with tracectx(TraceCtx()):
        x, w = _proxy((2, 8, 64)), _proxy((64,))
        for dt in (dtypes.float16, dtypes.bfloat16, dtypes.float32):
            assert _check(lt.rms_norm, _proxy((2, 8, 64), dt), _proxy((64,), dt), 1e-6, "llama")
        assert _check(lt.rms_norm, x, w, 1e-6, "gemma")
        assert not _check(lt.rms_norm, _proxy((2, 8, 64), device="cpu"), _proxy((64,), device="cpu"), 1e-6, "gemma")
        assert not _check(lt.rms_norm, _proxy((2, 8, 64), dtypes.float64), _proxy((64,), dtypes.float64), 1e-6,
                          "gemma")
        assert not _check(lt.rms_norm, x, _proxy((32,)), 1e-6, "gemma")  # weight of another width
        assert not _check(lt.rms_norm, _proxy((2, 65537)), _proxy((65537,)), 1e-6, "gemma")
        w32 = _proxy((64,), dtypes.float32)
        assert _check(lt.rms_norm, x, w32, 1e-6, "gemma")  # litgpt's: weighed in fp32, cast back to x's dtype
        assert not _check(lt.rms_norm, x, w32, 1e-6, "llama")  # Hugging Face's: fp32 weight * bf16 x is fp32

        q, k, cos = _proxy((2, 4, 8, 16)), _proxy((2, 2, 8, 16)), _proxy((1, 8, 16), dtypes.float32)
        assert _check(lt.rope, q, k, cos, cos, True, False)  # litgpt's: fp32 tables, cast back
        assert not _check(lt.rope, q, k, cos, cos, False, False)  # Hugging Face's would return fp32
        assert _check(lt.rope, q, k, _proxy((2, 8, 16)), _proxy((2, 8, 16)), False, False)
        assert not _check(lt.rope, q, k, _proxy((3, 8, 16)), _proxy((3, 8, 16)), False, False)  # batch 3 vs 2
        assert not _check(lt.rope, _proxy((2, 4, 8, 15)), _proxy((2, 2, 8, 15)), _proxy((1, 8, 15)),
                          _proxy((1, 8, 15)), False, False)  # odd head size
        grad_cos = _proxy((1, 8, 16), requires_grad=True)
        assert not _check(lt.rope, q, k, grad_cos, grad_cos, False, False)  # Liger gives tables no grad
        qc, kc, cc = (_proxy(t.shape, t.dtype, "cpu") for t in (q, k, cos))
        assert not _check(lt.rope, qc, kc, cc, cc, True, False)

        a = _proxy((2, 8, 96))
        assert _check(lt.swiglu, a, _proxy((2, 8, 96)), True)
        assert not _check(lt.swiglu, a, _proxy((2, 8, 96), dtypes.float32), True)
        assert not _check(lt.swiglu, a, _proxy((2, 8, 48)), True)
        assert not _check(lt.swiglu, _proxy((2, 8, 96), device="cpu"), _proxy((2, 8, 96), device="cpu"), True)
        assert not _check(lt.swiglu, _proxy((2, 8, 96), dtypes.float64), _proxy((2, 8, 96), dtypes.float64), True)

        x, w, t = _proxy((2, 8, 64)), _proxy((96, 64)), _proxy((2, 8), dtypes.int64)
        assert _check(lt.flce, x, w, t, -100, "mean", None) and _check(lt.flce, x, w, t, -100, "sum", 128)
        assert not _check(lt.flce, x, w, t, -100, "none", None)  # per-row losses: not bound
        assert not _check(lt.flce, x, w, t, -100, "mean", 128)  # the chunked form is a sum
        assert not _check(lt.flce, x, w, _proxy((2, 8), dtypes.int32), -100, "mean", None)
        assert not _check(lt.flce, x, _proxy((96, 64), dtypes.float32), t, -100, "mean", None)
        assert not _check(lt.flce, x, w, _proxy((2, 7), dtypes.int64), -100, "mean", None)  # a target per row
        assert not _check(lt.flce, *(_proxy(a.shape, a.dtype, "cpu") for a in (x, w, t)), -100, "mean", None)

        fx = (_proxy((2, 8, 64)), (64,), _proxy((64,)), None)  # F.rms_norm: the weight required
        assert _check(ltorch.rms_norm, *fx) and not _check(ltorch.rms_norm, fx[0], (64,), None, None)


def test_the_variant_on_a_cpu_host_is_a_skipped_row_with_its_reason():
    (row,) = run_case(TINY, [LIGER], "cpu", Options(iters=1, warmup=0), dtype=torch.float32)
    assert LIGER.default is False  # in the table only when --variants names it
    assert row.ms is None and row.grad_err is None
    assert row.note == ("skipped: variant thunder-liger: Liger-Kernel's Triton kernels need a CUDA device, not "
                        "'cpu'")
    missing = importlib.util.find_spec("liger_kernel") is None
    assert lt.unavailable("cuda") == ("liger_kernel is not installed" if missing else None)


def _run_until_liger(jf, *args):
    """Call ``jf``: compiling succeeds, and the first Liger operator to run fails (no GPU here)."""
    with pytest.raises(Exception) as caught:
        jf(*args)
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert any(f.filename.endswith("liger_thunder.py") and f.name.endswith("_impl") for f in frames), caught.value


def _writable(jf, sym) -> list[bool]:
    traces = (thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1])
    return [b.args[-1] for t in traces for b in t.bound_symbols if b.sym is sym]


@pytest.mark.parametrize("case, dtype", [(TINY, torch.float32), (TINY_HF, torch.bfloat16)],
                         ids=["litgpt-fp32", "hf-bf16"])
def test_with_cpu_taken_the_execution_traces_run_ligers_operators_where_the_model_has_the_ops(case, dtype,
                                                                                                monkeypatch):
    """The checkers told to take CPU tensors: Liger's forward and backward operators in the execution traces, one
    per RMSNorm, attention and MLP module of the model. Liger may overwrite SwiGLU's a and b in its backward (the
    MLP's two projections, read by nothing else), and Hugging Face's q and k (its projections' views); litgpt's q
    is also read by ``q[..., rope_n_elem:]`` (empty for full RoPE), so Liger gets a copy wherever it would rotate
    q in place."""
    monkeypatch.setattr(lt, "DEVICES", ("cuda", "cpu"))
    built = build(case, "cpu", dtype)
    jf = _jit(built.model)
    _run_until_liger(jf, *built.inputs)
    assert lt.claims(jf) == _expected(built.model)
    assert _writable(jf, lt.swiglu_bwd) == [True] * _expected(built.model)["SwiGLU"][0]
    assert _writable(jf, lt.rope_fwd) == [case is TINY_HF] * _expected(built.model)["RoPE"][0]


@pytest.mark.parametrize("chunked", [True, False], ids=["chunked", "one-cross-entropy"])
def test_the_lm_head_and_its_cross_entropy_are_one_fused_linear_cross_entropy(chunked, monkeypatch):
    """A litgpt GPT under litgpt's chunked cross entropy (the sum of the chunks' losses) or one cross entropy: the
    LM head and the loss become Liger's fused linear cross entropy, with everything else; refused on CPU, the step
    is stock Thunder's bit for bit (bf16); with CPU taken, Liger's operators run there."""
    built = gpt(chunked, torch.bfloat16)
    want = _grads(thunder.jit(built.model), built)
    jf = _jit(built.model)
    got = _grads(jf, built)
    assert _placed(jf) == {op: n for op, (n, _) in _expected(built.model).items()}
    assert grad_error(got, want) == 0.0
    if chunked:  # the other form's claims are the same symbols: one compile less
        monkeypatch.setattr(lt, "DEVICES", ("cuda", "cpu"))
        jf = _jit(built.model)
        _run_until_liger(jf, *built.inputs)
        assert lt.claims(jf) == _expected(built.model)


def test_operands_read_elsewhere_or_passed_in_are_not_liger_to_overwrite(monkeypatch):
    """SwiGLU's a read again after the MLP, and RoPE on the function's own inputs: Liger gets copies."""
    monkeypatch.setattr(lt, "DEVICES", ("cuda", "cpu"))
    import transformers.models.llama.modeling_llama as hf

    def mlp(x, w1, w2):
        a, b = x @ w1, x @ w2
        return (F.silu(a) * b).sum() + a.sum()

    x, w1, w2 = (torch.randn(s, requires_grad=True) for s in ((4, 8), (8, 16), (8, 16)))
    jf = _jit(mlp)
    _run_until_liger(jf, x, w1, w2)
    assert lt.claims(jf)["SwiGLU"] == (1, 1) and _writable(jf, lt.swiglu_bwd) == [False]

    q, k = torch.randn(1, 4, 8, 16, requires_grad=True), torch.randn(1, 2, 8, 16, requires_grad=True)
    cos, sin = torch.randn(1, 8, 16), torch.randn(1, 8, 16)
    jf = _jit(lambda q, k, cos, sin: sum(t.sum() for t in hf.apply_rotary_pos_emb(q, k, cos, sin)))
    _run_until_liger(jf, q, k, cos, sin)
    assert lt.claims(jf)["RoPE"] == (1, 1) and _writable(jf, lt.rope_fwd) == [False]


def test_f_rms_norm_is_bound_as_the_tutorial_binds_it(monkeypatch):
    """``F.rms_norm`` (``ltorch.rms_norm``) is the executor's without a pattern; on CPU it is refused and equals
    eager."""
    x, w = torch.randn(2, 8, 64, requires_grad=True), torch.randn(64, requires_grad=True)
    fn = lambda x, w: F.rms_norm(x, (64,), w, 1e-5).sin().sum()  # noqa: E731
    jf = _jit(fn)
    jf(x, w).backward()
    got = [x.grad, w.grad]
    x.grad = w.grad = None
    fn(x, w).backward()
    assert grad_error(got, [x.grad, w.grad]) < 1e-5 and lt.claims(jf)["RMSNorm"] == (0, 0)
    monkeypatch.setattr(lt, "DEVICES", ("cuda", "cpu"))
    jf = _jit(fn)
    _run_until_liger(jf, x, w)
    assert lt.claims(jf)["RMSNorm"] == (1, 1)


def test_the_patterns_wait_for_the_liger_executor():
    """LigerPatterns among the transforms of a jit without the liger executor changes nothing."""
    fn = lambda a, b: (F.silu(a) * b).sum()  # noqa: E731
    jf = thunder.jit(fn, transforms=[liger_patterns.LigerPatterns()])
    jf(torch.randn(4, 8), torch.randn(4, 8))
    assert not any("LigerPatterns" in str(t.get_provenance()) for t in thunder.last_traces(jf))
    assert all(not b.sym.name.startswith("liger") for t in thunder.last_traces(jf) for b in t.bound_symbols)


def test_through_thunders_torch_compile_fusion_passes_the_chunked_loss_is_one_flce(monkeypatch):
    """The GPU's fusion passes on CPU (tests/test_thunder_remat.py: torchcompile_xentropy, then a later pass that
    rematerializes across fusions), CPU taken: the LM head and litgpt's chunked loss are Liger's one FLCE, compiling
    reaches Liger's kernel, and no fusion makes one of its own inputs."""
    from tests.test_thunder_remat import chunked_loss, fusion_passes, fusions_making_their_inputs, inputs

    monkeypatch.setattr(lt, "DEVICES", ("cuda", "cpu"))
    jf = thunder.jit(chunked_loss, executors=[lt.executor(), *fusion_passes(monkeypatch)],
                     transforms=[liger_patterns.LigerPatterns()])
    _run_until_liger(jf, *inputs())
    assert lt.claims(jf) == {"RMSNorm": (0, 0), "RoPE": (0, 0), "SwiGLU": (0, 0), "FLCE": (1, 1)}
    assert fusions_making_their_inputs(jf) == []
