"""fusions/: each builder on the reference interpreter matches its float64 reference, and each
reference matches torch autograd / torch.nn.functional (an independent check of the math)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import fusions
import segkit
from fusions import torch_models as tm
from fusions.configs import AmaxConfig, NormConfig, RopeConfig
from segkit_cli.main import main as cli_main
from segkit.compare import diff

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
TINY = [(name, cfg) for name in fusions.names() for cfg in fusions.get(name).configs if cfg.endswith("_tiny")]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name, cfg", TINY)
def test_builder_on_interpreter_matches_reference(name, cfg, dtype):
    spec = fusions.get(name)
    inputs = spec.make_inputs(cfg, dtype=dtype)
    outs = segkit.run_reference(spec.build(cfg, dtype), list(inputs.values()))
    refs = spec.reference(inputs, spec.config(cfg, dtype))
    assert len(outs) == len(refs) == len(spec.outputs)
    for i, (ref, out) in enumerate(zip(refs, outs)):
        d = diff(i, ref, out)
        assert d.ok, f"{spec.outputs[i]}: {d}"


def _f64(inputs):
    return {k: v.detach().double().requires_grad_(True) for k, v in inputs.items()}


def _independent(name: str, inp: dict, cfg) -> tuple:
    """The same math through torch's own ops and autograd, in float64."""
    x = inp.get("x")
    if name == "layernorm_fwd":
        mean, var = x.mean(-1), x.var(-1, unbiased=False)
        return F.layer_norm(x, (cfg.hidden,), inp["weight"], inp.get("bias"), cfg.eps), mean, (var + cfg.eps).rsqrt()
    if name == "rmsnorm_fwd":
        return F.rms_norm(x, (cfg.hidden,), inp["weight"], cfg.eps), (x.pow(2).mean(-1) + cfg.eps).rsqrt()
    if name in ("layernorm_bwd", "rmsnorm_bwd"):
        w = inp["weight"]
        b = torch.zeros_like(w, requires_grad=True)
        y = (F.layer_norm(x, (cfg.hidden,), w, b, cfg.eps) if name == "layernorm_bwd"
             else F.rms_norm(x, (cfg.hidden,), w, cfg.eps))
        grads = torch.autograd.grad(y, [x, w, b] if name == "layernorm_bwd" else [x, w], inp["dy"], allow_unused=True)
        return tuple(grads)
    if name == "qkv_split_rope_fwd":
        return tm.qkv_split_rope(inp["qkv"], inp["cos"], inp["sin"], cfg.n_head, cfg.n_query_groups,
                                 cfg.head_size, cfg.rope_n_elem)
    if name == "qkv_split_rope_bwd":
        qkv = torch.zeros(cfg.batch, cfg.T, cfg.qkv_width, dtype=torch.float64, requires_grad=True)
        outs = tm.qkv_split_rope(qkv, inp["cos"], inp["sin"], cfg.n_head, cfg.n_query_groups, cfg.head_size,
                                 cfg.rope_n_elem)
        return torch.autograd.grad(outs, [qkv], [inp["dq"], inp["dk"], inp["dv"]])
    if name == "fp8_amax":
        return tm.fp8_amax(x)
    if name in ("qk_norm_rope_fwd", "qk_norm_rope_bwd"):  # Hugging Face's forms, on the (B, T, H * D) projections
        from fusions._qk_norm_rope import form

        q, k = (inp[p].detach().requires_grad_(True) for p in ("q", "k"))
        outs = tm.qk_norm_rope(q.flatten(2), k.flatten(2), inp["w_q"], inp["w_k"], inp["cos"], inp["sin"],
                               cfg.head_dim, cfg.eps, form(cfg))
        if name == "qk_norm_rope_fwd":
            rows = (lambda t: t) if cfg.norm == "head" else (lambda t: t.flatten(2))
            return (*outs, *((rows(t).pow(2).mean(-1) + cfg.eps).rsqrt() for t in (q, k)))
        return torch.autograd.grad(outs, [q, k, inp["w_q"], inp["w_k"]], [inp["dq_out"], inp["dk_out"]])
    if name in ("rope_fwd", "rope_bwd"):  # litgpt's own apply_rope (tables (1 or B, T, n))
        from litgpt.model import apply_rope

        cos, sin = (t if t.ndim == 3 else t[None] for t in (inp["cos"], inp["sin"]))
        if name == "rope_fwd":
            return (apply_rope(x, cos, sin),)
        x = torch.zeros(cfg.shape, dtype=torch.float64, requires_grad=True)
        return torch.autograd.grad(apply_rope(x, cos, sin), [x], inp["dy"])
    if name in ("add_rmsnorm_fwd", "add_layernorm_fwd"):
        y, h = (tm.add_rms_norm(x, inp["residual"], inp["weight"], cfg.eps) if name == "add_rmsnorm_fwd" else
                tm.add_layer_norm(x, inp["residual"], inp["weight"], inp.get("bias"), cfg.eps))
        if name == "add_rmsnorm_fwd":
            return y, h, (h.pow(2).mean(-1) + cfg.eps).rsqrt()
        return y, h, h.mean(-1), (h.var(-1, unbiased=False) + cfg.eps).rsqrt()
    if name in ("add_rmsnorm_bwd", "add_layernorm_bwd"):  # h = x + residual for any split of h: dx = dresidual
        return _add_norm_grads(name, inp, cfg)[:-1]
    if name in FROM_OUTPUT:  # the grads of the norm at the x the output came from (test_reference_matches_...)
        return _independent(FROM_OUTPUT[name], inp, cfg)
    raise AssertionError(name)


#: the backward from the output -> the standard backward whose grads it gives (and whose inputs it draws)
FROM_OUTPUT = {"rmsnorm_bwd_from_output": "rmsnorm_bwd", "layernorm_bwd_from_output": "layernorm_bwd"}


def _add_norm_grads(name: str, inp: dict, cfg) -> tuple:
    """torch autograd of the eager residual add + norm (fusions.torch_models) at x = h - residual, for a residual
    of its own: (dx, dw[, db], dresidual)."""
    h = inp["h"].detach()
    residual = torch.linspace(-1.0, 1.0, h.numel(), dtype=h.dtype).reshape(h.shape).requires_grad_(True)
    x = (h - residual.detach()).requires_grad_(True)
    w = inp["weight"]
    if name == "add_rmsnorm_bwd":
        leaves = [x, w, residual]
        y, h_out = tm.add_rms_norm(x, residual, w, cfg.eps)
    else:
        b = torch.zeros_like(w, requires_grad=True)
        leaves = [x, w, b, residual]
        y, h_out = tm.add_layer_norm(x, residual, w, b, cfg.eps)
    return torch.autograd.grad((y, h_out), leaves, (inp["dy"], inp["dh"]))


@pytest.mark.parametrize("name, cfg", TINY)
def test_reference_matches_torch_autograd(name, cfg):
    spec = fusions.get(name)
    inputs = spec.make_inputs(cfg, dtype=torch.float32)
    c = spec.config(cfg)
    if name in ("add_rmsnorm_fwd", "add_layernorm_fwd"):  # h rounded to float64: the math alone
        inputs = {k: v.double() for k, v in inputs.items()}
    if name in FROM_OUTPUT:  # the x the output came from (the same draws), and the exact output of it
        inputs["x"] = fusions.get(FROM_OUTPUT[name]).make_inputs(c, dtype=torch.float32)["x"]
    x = inputs.get("x", inputs.get("h", torch.zeros(1))).double()
    # the builders take fp32 statistics; give the reference exact ones, as autograd uses
    if "mean" in inputs:
        inputs["mean"] = x.mean(-1)
    if "rstd" in inputs:
        var = x.var(-1, unbiased=False) if "mean" in inputs or "bias" in inputs else x.pow(2).mean(-1)
        inputs["rstd"] = (var + c.eps).rsqrt()
    if name in FROM_OUTPUT:
        xc = x - x.mean(-1, keepdim=True) if "bias" in inputs else x
        inputs["y"] = xc * inputs["rstd"].unsqueeze(-1) * inputs["weight"].double() + inputs.get("bias", 0.0)
    for part in ("q", "k"):  # qk_norm_rope_bwd: q's and k's own exact statistics
        if f"rstd_{part}" in inputs:
            from fusions._qk_norm_rope import exact_rstd

            inputs[f"rstd_{part}"] = exact_rstd(inputs[part], c)
    refs = spec.reference(inputs, c)
    expected = _independent(name, _f64(inputs), c)
    assert len(refs) == len(expected)
    for i, (r, e) in enumerate(zip(refs, expected)):
        torch.testing.assert_close(r, e.detach().to(r.dtype), rtol=1e-9, atol=1e-9, msg=f"{spec.outputs[i]}")


def test_every_workload_has_real_and_tiny_configs():
    for name in fusions.names():
        configs = fusions.get(name).configs
        real = [c for c in configs if not c.endswith("_tiny")]
        assert real and all(f"{c}_tiny" in configs for c in real)
    norm = fusions.get("rmsnorm_bwd").configs
    assert norm["mixorder_576000x384"].shape == (576000, 384) and norm["nanogpt"].shape == (16, 128, 1600)
    assert {f"sweep_{r}x{h}" for r in (4096, 16384, 65536) for h in (256, 1024, 4096, 8192, 16384)} <= set(norm)
    rope = fusions.get("qkv_split_rope_fwd").configs["Llama-3-70B_bs2"]
    assert (rope.n_head, rope.n_query_groups, rope.head_size, rope.T) == (64, 8, 128, 8192)


@pytest.mark.parametrize("make, match", [
    (lambda: RopeConfig("bad", 1, 4096, 32, 7, 128, 128, 16), "n_query_groups 7 must divide n_head 32"),
    (lambda: RopeConfig("bad", 1, 4096, 32, 8, 128, 160, 16), "rope_n_elem 160"),
    (lambda: RopeConfig("bad", 1, 4000, 32, 8, 128, 128, 16), r"n_head 32 x head_size 128 != n_embd 4000"),
    (lambda: RopeConfig("bad", 1, 4096, 32, 8, 128, 127, 16), "must be even"),
    (lambda: NormConfig("bad", (4, 5, 6, 7)), "2-D or 3-D"),
    (lambda: NormConfig("bad", (4, 0)), "positive"),
    (lambda: AmaxConfig("bad", 0, 4), "positive"),
])
def test_bad_configs_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("name", fusions.names())
def test_segkit_repro_runs_an_emitted_spec(name, tmp_path, capsys):
    spec = fusions.get(name)
    cfg = next(c for c in spec.configs if c.endswith("_tiny"))
    path = tmp_path / f"{name}.py"
    path.write_text(segkit.emit_repro(spec.build(cfg), list(spec.make_inputs(cfg).values())))
    assert cli_main(["repro", str(path)]) == 0
    out = capsys.readouterr().out
    assert "reference interpreter (cpu)" in out and "outputs:" in out


FORMULATIONS = [(name, cfg, form) for name, cfg in TINY for form in fusions.get(name).formulations]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name, cfg, formulation", FORMULATIONS)
def test_every_formulation_on_interpreter_matches_reference(name, cfg, formulation, dtype):
    spec = fusions.get(name)
    inputs = spec.make_inputs(cfg, dtype=dtype)
    outs = segkit.run_reference(spec.build(cfg, dtype, formulation=formulation), list(inputs.values()))
    for i, (ref, out) in enumerate(zip(spec.reference(inputs, spec.config(cfg, dtype)), outs)):
        d = diff(i, ref, out)
        assert d.ok, f"{formulation} {spec.outputs[i]}: {d}"


@pytest.mark.parametrize("cfg", ["Llama-2-13b-hf_bs2_tiny", "phi-2_bs1_tiny"])
def test_rope_backward_sliced_inputs_slices_fusion_inputs_only(cfg):
    """What gets nvFuser's resize scheduler the whole multi-head fusion: no slice of a computed tensor (a product
    with the broadcast cos/sin tables refuses it) and one cat, no rotation cat per gradient."""
    fusion = fusions.get("qkv_split_rope_bwd").build(cfg, formulation="sliced_inputs").fusion
    sliced = [op.inputs[0] for op in fusion.ops if op.name == "slice"]
    assert sliced and all(any(v is i for i in fusion.inputs) for v in sliced)
    assert sum(op.name == "cat" for op in fusion.ops) == 1


@pytest.mark.parametrize("cfg, cuts", [("Llama-3-70B_bs2_tiny", 1), ("Llama-2-13b-hf_bs2_tiny", 0), ("phi-2_bs1_tiny", 0)])
def test_rope_forward_cuts_grouped_k_between_rope_and_repeat(cfg, cuts):
    """Grouped-query k is roped once and repeated by a kernel of its own (one segment_set, taking the RoPE's result,
    feeding the repeat's broadcast); multi-head configs have no repeat and no cut; "k_fused" keeps the one fusion."""
    spec = fusions.get("qkv_split_rope_fwd")
    fusion = spec.build(cfg).fusion
    cut = [op for op in fusion.ops if op.name == "segment_set"]
    assert len(cut) == cuts
    if cuts:
        producer = {o: op for op in fusion.ops for o in op.outputs}[cut[0].inputs[0]]
        assert producer.name == "cast"  # the RoPE's cast back to bf16
        assert [op.name for op in fusion.ops if cut[0].outputs[0] in op.inputs] == ["broadcast"]
    assert not any(op.name == "segment_set" for op in spec.build(cfg, formulation="k_fused").fusion.ops)
