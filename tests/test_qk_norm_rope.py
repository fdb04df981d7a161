"""QK-norm + RoPE (fusions/qk_norm_rope_fwd.py, qk_norm_rope_bwd.py) on the reference interpreter against float64
torch autograd of the eager function, the eager function against transformers' own modules, the bytes floors, and
the benchmark's CPU-checkable parts (its eager path through the harness's validation)."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import fusions
import segkit
from fusions import torch_models as tm
from fusions._qk_norm_rope import form
from fusions.configs import QKNormRopeConfig
from segkit.compare import diff

FWD, BWD = fusions.get("qk_norm_rope_fwd"), fusions.get("qk_norm_rope_bwd")
TINY = [c for c in FWD.configs if c.endswith("_tiny")]


def _eager64(inp: dict, cfg):
    """float64 leaves q, k (B, T, H, D) and weights, and the eager function's (q_out, k_out) of them."""
    leaves = {n: inp[n].detach().double().requires_grad_(True) for n in ("q", "k", "w_q", "w_k")}
    cos, sin = inp["cos"].double(), inp["sin"].double()
    outs = tm.qk_norm_rope(leaves["q"].flatten(2), leaves["k"].flatten(2), leaves["w_q"], leaves["w_k"], cos, sin,
                           cfg.head_dim, cfg.eps, form(cfg))
    return leaves, outs


def _check(names, expected, got):
    for name, e, g in zip(names, expected, got, strict=True):
        d = diff(0, e.detach(), g)
        assert d.ok, f"{name}: {d}"


@pytest.mark.parametrize("formulation", [None, "sliced_inputs"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("cfg_name", TINY)
def test_forward_then_backward_on_interpreter_match_float64_autograd(cfg_name, dtype, formulation):
    """The forward's q_out, k_out against the eager function in float64; then the backward, fed the forward's own
    rstd outputs, against torch.autograd's grads of the same float64 function (w.r.t. q, k and both weights)."""
    cfg = FWD.config(cfg_name, dtype)
    fwd_in = FWD.make_inputs(cfg)
    q_out, k_out, rstd_q, rstd_k = segkit.run_reference(FWD.build(cfg, formulation=formulation), list(fwd_in.values()))
    leaves, (eq, ek) = _eager64(fwd_in, cfg)
    _check(("q_out", "k_out"), (eq, ek), (q_out, k_out))
    assert rstd_q.dtype == rstd_k.dtype == torch.float32

    gen = torch.Generator().manual_seed(1)
    dq_out, dk_out = (torch.randn(t.shape, generator=gen).to(dtype) for t in (q_out, k_out))
    bwd_in = {"dq_out": dq_out, "dk_out": dk_out, "q": fwd_in["q"], "k": fwd_in["k"], "rstd_q": rstd_q,
              "rstd_k": rstd_k, "w_q": fwd_in["w_q"], "w_k": fwd_in["w_k"], "cos": fwd_in["cos"], "sin": fwd_in["sin"]}
    assert list(bwd_in) == list(BWD.make_inputs(cfg)), "the backward's inputs, in its define order"
    got = segkit.run_reference(BWD.build(cfg, formulation=formulation), list(bwd_in.values()))
    want = torch.autograd.grad((eq, ek), [leaves[n] for n in ("q", "k", "w_q", "w_k")],
                               [dq_out.double(), dk_out.double()])
    _check(BWD.outputs, want, got)


@pytest.mark.parametrize("spec", [FWD, BWD], ids=lambda s: s.name)
@pytest.mark.parametrize("cfg_name", ["Qwen3-0.6B_tiny", "OLMo2-7B_tiny"])
def test_sliced_inputs_slices_fusion_inputs_only(spec, cfg_name):
    """The per-half formulation slices only fusion inputs (or OLMo2's weight reshaped to (heads, head_dim)), never a
    computed tensor, and ends each of q and k (or dq and dk) in one cat; the default slices RoPE's computed input."""
    def sliced_values(fusion):
        made = {o: op for op in fusion.ops for o in op.outputs}
        out = []
        for op in (op for op in fusion.ops if op.name == "slice"):
            v = op.inputs[0]
            while v in made and made[v].name == "reshape":
                v = made[v].inputs[0]
            out.append(v)
        return out

    fusion = spec.build(cfg_name, formulation="sliced_inputs").fusion
    sliced = sliced_values(fusion)
    assert sliced and all(any(v is i for i in fusion.inputs) for v in sliced)
    assert sum(op.name == "cat" for op in fusion.ops) == (2 if spec is FWD else 4)  # the backward: dw's cats too
    default = spec.build(cfg_name).fusion
    assert not all(any(v is i for i in default.inputs) for v in sliced_values(default))


def test_a_wrong_weight_offset_is_caught():
    """The comparison above can fail: Gemma3's weight applied without its 1 + w is far from the eager function."""
    cfg = FWD.config("Gemma3-1B_tiny", torch.float32)
    inp = FWD.make_inputs(cfg)
    q_out = segkit.run_reference(FWD.build(dataclasses.replace(cfg, weight_offset=0.0)), list(inp.values()))[0]
    assert not diff(0, _eager64(inp, cfg)[1][0].detach(), q_out).ok


def _hf_attention_qk(model: str, q: torch.Tensor, k: torch.Tensor, w_q, w_k, cos, sin, cfg):
    """q and k from the projections as transformers' attention modules compute them, with their own norm modules
    and apply_rotary_pos_emb."""
    from transformers.models.qwen3.modeling_qwen3 import apply_rotary_pos_emb

    mods = {"qwen3": "transformers.models.qwen3.modeling_qwen3.Qwen3RMSNorm",
            "gemma3": "transformers.models.gemma3.modeling_gemma3.Gemma3RMSNorm",
            "olmo2": "transformers.models.olmo2.modeling_olmo2.Olmo2RMSNorm"}
    import importlib

    path, cls = mods[model].rsplit(".", 1)
    norm_cls = getattr(importlib.import_module(path), cls)

    def norm(w):
        n = norm_cls(w.numel(), eps=cfg.eps).to(w.dtype)
        n.weight.data.copy_(w)
        return n

    hidden_shape = (cfg.batch, cfg.T, -1, cfg.head_dim)
    with torch.no_grad():
        if model == "qwen3":
            qs, ks = (norm(w)(x.view(hidden_shape)).transpose(1, 2) for x, w in ((q, w_q), (k, w_k)))
        elif model == "gemma3":
            qs, ks = (norm(w)(x.view(hidden_shape).transpose(1, 2)) for x, w in ((q, w_q), (k, w_k)))
        else:
            qs, ks = (norm(w)(x).view(hidden_shape).transpose(1, 2) for x, w in ((q, w_q), (k, w_k)))
        if cos.ndim == 2:  # Hugging Face's rotary embedding returns (B, T, D)
            cos, sin = (t.expand(cfg.batch, *t.shape) for t in (cos, sin))
        return apply_rotary_pos_emb(qs, ks, cos, sin)


@pytest.mark.parametrize("cfg_name", ["Qwen3-0.6B_tiny", "Gemma3-1B_tiny", "OLMo2-7B_tiny"])
def test_eager_function_is_the_models_own_code(cfg_name):
    """fusions.torch_models.qk_norm_rope gives transformers' bits in bf16: Qwen3RMSNorm per head then the
    transpose, Gemma3RMSNorm (1 + w) after it, Olmo2RMSNorm over the whole projection before the split."""
    cfg = FWD.config(cfg_name)
    inp = FWD.make_inputs(cfg)
    q, k = inp["q"].flatten(2), inp["k"].flatten(2)
    ours = tm.qk_norm_rope(q, k, inp["w_q"], inp["w_k"], inp["cos"], inp["sin"], cfg.head_dim, cfg.eps, form(cfg))
    theirs = _hf_attention_qk(form(cfg), q, k, inp["w_q"], inp["w_k"], inp["cos"], inp["sin"], cfg)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype == torch.bfloat16 and torch.equal(a, b)


@pytest.mark.parametrize("spec", [FWD, BWD], ids=lambda s: s.name)
@pytest.mark.parametrize("cfg_name", TINY)
def test_bytes_floor_is_each_input_read_and_each_output_written_once(spec, cfg_name):
    cfg = spec.config(cfg_name)
    inp = spec.make_inputs(cfg)
    outs = segkit.run_reference(spec.build(cfg), list(inp.values()))
    assert spec.bytes_floor(cfg) == sum(t.nbytes for t in inp.values()) + sum(t.nbytes for t in outs)


def test_bytes_floor_at_qwen3_06b():
    """B 4, T 2048, 16 q heads and 8 kv heads of 128, bf16, tables (4, 2048, 128) bf16, weights of 128."""
    cfg = FWD.config("Qwen3-0.6B")
    qk = 4 * 2048 * (16 + 8) * 128 * 2  # q and k together (or dq and dk): bwd reads the grads and q, k, writes dq, dk
    tables, weights, rstd = 2 * 4 * 2048 * 128 * 2, 2 * 128 * 2, 4 * 2048 * (16 + 8) * 4
    assert FWD.bytes_floor(cfg) == 2 * qk + weights + tables + rstd
    assert BWD.bytes_floor(cfg) == 3 * qk + rstd + 2 * weights + tables


def test_configs_at_the_models_shapes():
    """Qwen3-0.6B's and Qwen3-8B's attention geometry as litgpt lists it."""
    litgpt_config = pytest.importorskip("litgpt.config")
    for name, cfg_name in (("Qwen3-0.6B", "Qwen3-0.6B"), ("Qwen3-8B", "Qwen3-8B"), ("OLMo-2-1124-7B", "OLMo2-7B"),
                           ("Gemma-3-1b-it", "Gemma3-1B")):
        lit = litgpt_config.Config.from_name(name)
        cfg = FWD.config(cfg_name)
        assert (cfg.n_head, cfg.n_kv_heads, cfg.head_dim, cfg.eps) == (
            lit.n_head, lit.n_query_groups, lit.head_size, lit.norm_eps), name
        assert lit.norm_qk and cfg.norm == ("width" if lit.norm_qk_type == "olmo2" else "head")


@pytest.mark.parametrize("mode", ["forward", "backward"])
@pytest.mark.parametrize("cfg_name", ["Qwen3-0.6B_tiny", "OLMo2-7B_tiny"])
def test_benchmark_eager_path_passes_its_validation_and_a_wrong_one_fails(cfg_name, mode):
    """benchmarks/test_qk_norm_rope.py's eager executor, on CPU, through the harness's float64 check; with q's and
    k's weights swapped it is refused."""
    from benchmarks import executors, harness

    spec = BWD if mode == "backward" else FWD
    cfg = spec.config(cfg_name, torch.float32)
    inp = spec.make_inputs(cfg)
    refs = spec.reference(inp, cfg)
    assert harness.check_outputs(executors.qk_norm_rope(cfg, "eager", inp, mode), refs, spec.outputs) < 1e-5
    if cfg.norm == "head":
        swapped = {**inp, "w_q": inp["w_k"], "w_k": inp["w_q"]}
    else:
        swapped = {**inp, "w_q": inp["w_q"].flip(0)}
    with pytest.raises(pytest.fail.Exception, match="wrong result"):
        harness.check_outputs(executors.qk_norm_rope(cfg, "eager", swapped, mode), refs, spec.outputs)


@pytest.mark.parametrize("make, match", [
    (lambda: QKNormRopeConfig("bad", 1, 8, 4, 2, 15), "head_dim 15 even"),
    (lambda: QKNormRopeConfig("bad", 1, 8, 4, 2, 16, norm="rows"), "norm must be one of"),
    (lambda: QKNormRopeConfig("bad", 2, 8, 4, 2, 16, cos_batch=3), "cos batch 3"),
    (lambda: form(QKNormRopeConfig("bad", 1, 8, 4, 2, 16, norm="width", weight_offset=1.0)), "OLMo2 has none"),
    (lambda: form(QKNormRopeConfig("bad", 1, 8, 4, 2, 16, weight_offset=0.5)), "weight_offset 0.5"),
])
def test_bad_configs_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()
