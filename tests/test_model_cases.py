"""The step table's cases (benchmarks/model_cases.py) on CPU: the small-model and whole-model cases name real litgpt
configs and variants; a case's batch reaches the step's input and its label; the "litgpt-gpt" kind (litgpt's GPT
whole, litgpt's pretraining loss on token ids) at tiny widths under eager and Thunder + segkit_ex on the reference
interpreter, in fp32, grads held to eager's."""

from __future__ import annotations

import pytest
import torch

from benchmarks.model_cases import CASES, Case, build, chunked_cross_entropy, import_litgpt, select
from benchmarks.model_step import VARIANTS, Options, case_variants, run_case

TINY_WIDTHS = dict(n_layer=2, n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96)
# T * batch = 256 rows of logits: two of litgpt's 128-row loss chunks
TINY_GPT = Case("tiny-gpt", "litgpt-gpt", "Llama-3.2-1B", 128, dict(TINY_WIDTHS, vocab_size=96, padded_vocab_size=96),
                batch=2)
NEW = {"llama3.2-1b-x2": "Llama-3.2-1B", "qwen3-0.6b-x2": "Qwen3-0.6B", "llama3.2-1b-gpt": "Llama-3.2-1B",
       "llama3.2-1b-gpt-chunked": "Llama-3.2-1B"}


def test_new_cases_name_real_litgpt_configs_and_known_variants():
    """Each new case resolves to litgpt's config of that name (without building the model): the block cases cut to
    2 layers at batch 4, the whole-model case at the config's own depth; every case's added variants exist and
    are ones the table leaves out by default."""
    _, config_mod = import_litgpt()
    cases = {c.name: c for c in CASES}
    for name, config in NEW.items():
        case = cases[name]
        cfg = config_mod.Config.from_name(case.config, block_size=case.T, **case.overrides)
        assert (case.config, cfg.name, case.T, case.batch) == (config, config, 2048, 4), case
        full = config_mod.Config.from_name(case.config).n_layer
        assert cfg.n_layer == (full if case.kind == "litgpt-gpt" else 2) and full > 2, (name, cfg.n_layer)
    known = {v.name: v for v in VARIANTS}
    for case in CASES:
        assert all(n in known and not known[n].default for n in case.variants), case


def test_cases_add_their_variants_unless_variants_are_named():
    names = [v.name for v in case_variants(next(c for c in CASES if c.name == "llama3.2-1b-x2"), [])]
    assert {"compile", "compile-graphs", "thunder-graphs", "segkit-graphs"} <= set(names)
    assert names == [v.name for v in VARIANTS if v.name in names]  # table order
    assert "compile-graphs" not in [v.name for v in case_variants(CASES[0], [])]  # llama3-8b-x1 adds none
    assert case_variants(CASES[-1], VARIANTS[:1]) == VARIANTS[:1]


def test_batch_reaches_x_and_the_label():
    one = Case("tiny", "litgpt", "Llama-3-8B", 32, TINY_WIDTHS)
    three = Case("tiny", "litgpt", "Llama-3-8B", 32, TINY_WIDTHS, batch=3)
    built = build(one, "cpu", torch.float32)
    assert built.inputs[0].shape == (1, 32, 64) and built.label == "Llama-3-8B x2 T=32"
    built = build(three, "cpu", torch.float32)
    assert built.inputs[0].shape == (3, 32, 64) and built.label == "Llama-3-8B x2 T=32 bs3"
    assert built.grad_inputs == (built.inputs[0],) and built.model(*built.inputs).shape == ()


@pytest.mark.parametrize("config", ["Llama-3-8B", "Llama-3.2-1B", "Qwen3-0.6B"])
def test_block_cases_rope_tables_are_the_ones_litgpts_gpt_builds(config):
    """A block case feeds its blocks the cos and sin litgpt's GPT builds for the config (Llama 3's base 500000,
    Llama 3.2's frequency adjustments), not build_rope_cache's defaults."""
    model_mod, config_mod = import_litgpt()
    built = build(Case("tiny", "litgpt", config, 32, TINY_WIDTHS), "cpu", torch.float32)
    cfg = config_mod.Config.from_name(config, block_size=32, **TINY_WIDTHS)
    gpt = model_mod.GPT(cfg)
    assert cfg.rope_base != 10000
    torch.testing.assert_close(built.inputs[1][0], gpt.cos, rtol=0, atol=0)
    torch.testing.assert_close(built.inputs[2][0], gpt.sin, rtol=0, atol=0)
    default_cos, _ = model_mod.build_rope_cache(32, cfg.rope_n_elem)
    assert not torch.equal(built.inputs[1][0], default_cos)  # what the cases fed before


@pytest.mark.parametrize("chunk_size", [128, 0])
def test_chunked_cross_entropy_is_litgpts(chunk_size):
    """Ours (litgpt/utils.py imports lightning, which the GPU host lacks) gives litgpt's loss and grad, over
    several chunks and an uneven last one or in one piece (chunk_size 0), with ignored targets."""
    lightning_utils = pytest.importorskip("litgpt.utils", reason="litgpt.utils needs lightning")
    torch.manual_seed(0)
    logits = torch.randn(3, 100, 17, requires_grad=True)
    targets = torch.randint(0, 17, (3, 100))
    targets[0, :7] = -100
    want = lightning_utils.chunked_cross_entropy(logits, targets, chunk_size=chunk_size)
    (want_grad,) = torch.autograd.grad(want, logits)
    got = chunked_cross_entropy(logits, targets, chunk_size)
    assert got.item() == pytest.approx(want.item(), rel=1e-6)
    assert torch.allclose(torch.autograd.grad(got, logits)[0], want_grad, rtol=1e-5, atol=1e-8)
    plain = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
    assert got.item() == pytest.approx(plain.item(), rel=1e-5)


def test_whole_model_cases_take_litgpts_compiled_step_loss_and_pretrains_chunks():
    """The whole-model row jits litgpt's recipe for a compiled step (one cross-entropy, chunk_size 0); its chunked
    twin keeps litgpt pretrain's 128-row chunks. Under thunder.jit the first traces one cross-entropy, the second one
    per chunk (256 rows of logits at the tiny shape: two), with the same loss."""
    import dataclasses

    import thunder

    cases = {c.name: c for c in CASES}
    assert (cases["llama3.2-1b-gpt"].chunk_size, cases["llama3.2-1b-gpt-chunked"].chunk_size) == (0, 128)
    assert "llama3.2-1b-gpt" in [c.name for c in select([])]  # the table's row
    assert "llama3.2-1b-gpt-chunked" not in [c.name for c in select([])]  # only where named
    assert [c.name for c in select(["llama3.2-1b-gpt-chunked"])] == ["llama3.2-1b-gpt-chunked"]
    losses = {}
    for chunk_size, traced in ((0, 1), (128, 2)):
        built = build(dataclasses.replace(TINY_GPT, chunk_size=chunk_size), "cpu", torch.float32)
        jm = thunder.jit(built.model)
        losses[chunk_size] = jm(*built.inputs).item()
        names = [b.sym.name for b in thunder.last_traces(jm)[0].bound_symbols]
        assert names.count("cross_entropy") == traced, (chunk_size, names)
        assert built.label.startswith("Llama-3.2-1B GPT x2 + loss" + ("" if chunk_size == 0 else " in 128-row chunks"))
    assert losses[0] == pytest.approx(losses[128], rel=1e-5)


def test_gpt_case_is_the_whole_model_on_token_ids():
    """idx and targets (B, T) int64, the targets the next tokens; no input takes a grad; the loss is the
    cross-entropy of litgpt's GPT logits; the rope tables stay fp32 in a bf16 model."""
    built = build(TINY_GPT, "cpu", torch.float32)
    idx, targets = built.inputs
    assert idx.shape == targets.shape == (2, 128) and idx.dtype == targets.dtype == torch.int64
    assert torch.equal(targets[:, :-1], idx[:, 1:]) and built.grad_inputs == ()
    assert built.label == "Llama-3.2-1B GPT x2 + loss in 128-row chunks T=128 bs2"
    logits = built.model.gpt(idx)
    assert logits.shape == (2, 128, 96)
    want = torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten())
    assert built.model(*built.inputs).item() == pytest.approx(want.item(), rel=1e-5)
    gpt = build(TINY_GPT, "cpu", torch.bfloat16).model.gpt
    assert gpt.cos.dtype == gpt.sin.dtype == torch.float32 and gpt.lm_head.weight.dtype == torch.bfloat16
    assert gpt.cos.shape == (128, 16)


def test_gpt_case_under_segkit_claims_every_norm_and_rope():
    """Eager and Thunder + segkit_ex (opaque) on the tiny GPT: grads of every parameter (the embedding's too) at
    fp32 distance from eager's; segkit_ex claims every RMSNorm of the model (two per block and the final one) and
    the RoPE of q and k in every attention, forward and backward."""
    model_mod, _ = import_litgpt()
    gpt = build(TINY_GPT, "cpu", torch.float32).model.gpt
    norms = sum(isinstance(m, type(gpt.transformer.ln_f)) for m in gpt.modules())
    ropes = 2 * sum(isinstance(m, model_mod.CausalSelfAttention) for m in gpt.modules())
    rows = run_case(TINY_GPT, [v for v in VARIANTS if v.name in ("eager", "segkit-opaque")], "cpu",
                    Options(iters=1, warmup=0), dtype=torch.float32)
    eager, segkit = rows
    assert eager.grad_err == 0.0 and eager.label == "Llama-3.2-1B GPT x2 + loss in 128-row chunks T=128 bs2", eager
    assert segkit.ms > 0 and segkit.grad_err < 1e-4 and segkit.note == "", segkit
    assert segkit.peak_gib is None  # a GPU column
    assert segkit.claims == {"norm_fw": norms, "norm_bw": norms, "rope_fw": ropes, "rope_bw": ropes}
    assert segkit.regions == (0, 0)  # no nvFuser on CPU
