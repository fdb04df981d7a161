"""thunder_exec on CPU: thunder.jit routes norms and qkv split + RoPE to segkit's symbols (run by the
reference interpreter here), forward and backward, and matches eager PyTorch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder_exec
from fusions import torch_models as tm
from fusions._rope import cos_sin
from thunder_exec.compat import install_nvfuser_direct_compat


def _symbols(trace) -> set[str]:
    return {b.sym.name for b in trace.bound_symbols}


def _run(module_or_fn, inputs, params=(), executors=None, **options):
    """Outputs and grads (inputs then params) from thunder.jit and from eager, same upstream grads."""
    jf = thunder.jit(module_or_fn, executors=executors or thunder_exec.executors(), **options)
    leaves = [*inputs, *params]
    results = []
    for f in (jf, module_or_fn):
        for t in leaves:
            t.grad = None
        out = f(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        gen = torch.Generator().manual_seed(1)
        torch.autograd.backward(outs, [torch.randn(o.shape, generator=gen, dtype=o.dtype).to(o.device) for o in outs])
        results.append(([o.detach() for o in outs], [t.grad.clone() for t in leaves]))
    return jf, results[0], results[1]


def _close(got, want, dtype):
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for g, w in zip(got, want):
        assert (g.float() - w.float()).abs().max() <= tol * max(w.float().abs().max(), 1.0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_norm_modules_route_forward_and_backward(module, dtype):
    torch.manual_seed(0)
    mod = (torch.nn.LayerNorm(64) if module == "LayerNorm" else torch.nn.RMSNorm(64)).to(dtype)
    with torch.no_grad():
        mod.weight.uniform_(0.5, 1.5)
    x = torch.randn(2, 8, 64, dtype=dtype, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(mod, [x], list(mod.parameters()))
    name = "layer_norm" if module == "LayerNorm" else "rms_norm"
    assert f"segkit_{name}_fwd" in _symbols(thunder.last_traces(jm)[-1])
    assert f"segkit_{name}_bwd" in _symbols(thunder.last_backward_traces(jm)[-1])
    _close(outs, want_outs, dtype)
    _close(grads, want_grads, dtype)


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_norms_of_any_rank_reuse_no_wrong_runner(module):
    """4-D input (flattened to rows x hidden and back) then 2-D and 3-D inputs through one jitted module:
    segkit's runners are cached per shape, so each call must still match eager, forward and backward."""
    torch.manual_seed(0)
    mod = torch.nn.LayerNorm(64) if module == "LayerNorm" else torch.nn.RMSNorm(64)
    for shape in [(2, 3, 4, 64), (5, 64), (2, 3, 4, 64), (3, 7, 64)]:
        x = torch.randn(shape, requires_grad=True)
        jm, (outs, grads), (want_outs, want_grads) = _run(mod, [x], list(mod.parameters()))
        assert outs[0].shape == shape and grads[0].shape == shape
        _close(outs, want_outs, torch.float32)
        _close(grads, want_grads, torch.float32)


def test_functional_rms_norm_default_eps_matches_thunder():
    x = torch.randn(16, 32, requires_grad=True)
    w = torch.rand(32, requires_grad=True)
    jf, (outs, grads), (want_outs, want_grads) = _run(lambda x, w: F.rms_norm(x, (32,), w), [x, w])
    assert "segkit_rms_norm_fwd" in _symbols(thunder.last_traces(jf)[-1])
    _close(outs, want_outs, torch.float32)
    _close(grads, want_grads, torch.float32)


class _Lit(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(48) + 0.5)
        self.fn = fn

    def forward(self, x):
        return self.fn(x, self.weight, 1e-6)


def _my_rms(x, weight, eps):
    """A user's own hand-written RMSNorm, routed without editing the model."""
    dtype = x.dtype
    x = x.float()
    return (x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * weight.float()).to(dtype)


@pytest.mark.parametrize("fn", [thunder_exec.rms_norm, _my_rms])
def test_hand_written_rms_norm_is_routed(fn):
    if fn is _my_rms:
        thunder_exec.route(_my_rms, "rms_norm")
    mod = _Lit(fn)
    x = torch.randn(4, 6, 48, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(mod, [x], [mod.weight])
    assert "segkit_rms_norm_fwd" in _symbols(thunder.last_traces(jm)[-1])
    assert "segkit_rms_norm_bwd" in _symbols(thunder.last_backward_traces(jm)[-1])
    _close(outs, want_outs, torch.float32)
    _close(grads, want_grads, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("geometry", [(4, 4, 16, 16), (8, 2, 16, 16), (4, 4, 20, 8)], ids=["mha", "gqa", "partial"])
def test_qkv_split_rope_block_is_routed(geometry, dtype):
    n_head, groups, hs, rn = geometry
    block = tm.QKVSplitRope(n_head, groups, hs, rn)
    cos, sin = cos_sin(12, rn, dtype)
    qkv = torch.randn(2, 12, (n_head + 2 * groups) * hs, dtype=dtype, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(lambda q: block(q, cos, sin), [qkv])
    assert "segkit_qkv_split_rope_fwd" in _symbols(thunder.last_traces(jm)[-1])
    assert "segkit_qkv_split_rope_bwd" in _symbols(thunder.last_backward_traces(jm)[-1])
    _close(outs, want_outs, dtype)
    _close(grads, want_grads, dtype)


def test_layer_norm_over_two_dims_falls_back_to_thunder():
    ln = torch.nn.LayerNorm((8, 16))
    x = torch.randn(3, 8, 16, requires_grad=True)
    jm, (outs, grads), (want_outs, want_grads) = _run(ln, [x], list(ln.parameters()))
    assert not any(s.startswith("segkit") for s in _symbols(thunder.last_traces(jm)[-1]))
    _close(outs, want_outs, torch.float32)
    _close(grads, want_grads, torch.float32)


def test_bookend_compile_option():
    ln = torch.nn.LayerNorm(32)
    x = torch.randn(4, 32, requires_grad=True)
    _, (outs, _), (want, _) = _run(ln, [x], list(ln.parameters()), segkit_bookend="inputs+outputs")
    _close(outs, want, torch.float32)
    with pytest.raises(ValueError, match="segkit_bookend must be one of"):
        thunder.jit(ln, executors=thunder_exec.executors(), segkit_bookend="sideways")(x)


def test_segkit_comes_first_and_compat_is_a_no_op_without_cuda():
    assert thunder_exec.executors()[0] is thunder_exec.segkit_ex
    if not torch.cuda.is_available():
        assert install_nvfuser_direct_compat() is False
    with pytest.raises(ValueError, match="to must be one of"):
        thunder_exec.route(_my_rms, "softmax")


@pytest.mark.parametrize("module", ["LayerNorm", "RMSNorm"])
def test_inference_runs_the_y_only_fusion(module):
    """Without autograd segkit_ex runs the forward fusion with y as its only output (no statistics written)."""
    torch.manual_seed(0)
    mod = torch.nn.LayerNorm(64) if module == "LayerNorm" else torch.nn.RMSNorm(64)
    with torch.no_grad():
        mod.weight.uniform_(0.5, 1.5)
    x = torch.randn(3, 5, 64)
    jm = thunder.jit(mod, executors=thunder_exec.executors())
    with torch.no_grad():
        got, want = jm(x), mod(x)
    name = "layer_norm" if module == "LayerNorm" else "rms_norm"
    symbols = _symbols(thunder.last_traces(jm)[-1])
    assert f"segkit_{name}" in symbols and f"segkit_{name}_fwd" not in symbols
    _close([got], [want], torch.float32)


def test_y_only_fusion_keeps_only_y():
    from fusions.configs import NormConfig
    from fusions.runner import runner

    cfg = NormConfig("t", (4, 32), torch.float32, 1e-5, True)
    full, y_only = runner("layernorm_fwd", cfg, "none"), runner("layernorm_fwd", cfg, "none", outputs=(0,))
    assert len(full.fd.fusion.outputs) == 3 and len(y_only.fd.fusion.outputs) == 1
    inputs = [torch.randn(4, 32), torch.rand(32), torch.randn(32)]
    torch.testing.assert_close(y_only(inputs)[0], full(inputs)[0])


def test_a_hugging_face_family_imported_after_thunder_exec_imports_and_is_recognized():
    """`import thunder_exec; thunder_exec.install()` then `from transformers import Qwen2ForCausalLM` (a fresh
    process, the order a user writes): Qwen2's import runs transformers' modeling_layers, which imports other
    families lazily; the import hook must not import Llama's module in the middle of that (it failed the user's
    import with a circular ImportError), and Qwen2's RMSNorm and RoPE are still recognized once its import is
    done."""
    import subprocess
    import sys

    code = ("import thunder_exec\nthunder_exec.install()\nfrom transformers import Qwen2ForCausalLM\n"
            "from thunder_exec.recognize import RECOGNIZED\nprint(sorted(r.label for r in RECOGNIZED.values()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    labels = done.stdout.strip().splitlines()[-1]
    assert "modeling_qwen2.Qwen2RMSNorm" in labels and "modeling_qwen2.apply_rotary_pos_emb" in labels
