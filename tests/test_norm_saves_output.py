"""segkit_ex's ``segkit_norm_saves="output"`` on real models (tiny litgpt and Hugging Face builds, fp32, CPU: the
fusions on segkit's reference interpreter): the norm backward reads the forward's output y, so the norms' inputs are
no longer saved for the backward (counted by the step table's own measure), and the grads do not change."""

from __future__ import annotations

import pytest
import torch

import thunder
import thunder_exec
from benchmarks.model_measure import saved_for_backward
from tests.model_zoo import BATCH, T, VOCAB, _Loss, build, loss_fn

WIDTH = 64  # tests/model_zoo.py's tiny builds


def _step(name: str, device: str = "cpu", dtype: torch.dtype = torch.float32, **options):
    """(bytes saved for the backward, grads, backward symbols) of one training step of ``name`` (2 layers) under
    thunder.jit with segkit_ex and ``options``, and eager's grads."""
    model = build(name, n_layer=2).to(device, dtype)
    idx = torch.randint(0, VOCAB, (BATCH, T), generator=torch.Generator().manual_seed(0)).to(device)
    loss_fn(model, idx).backward()
    eager = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    jm = thunder.jit(_Loss(model), executors=thunder_exec.executors(), **options)  # the model and its loss
    saved = saved_for_backward(lambda: jm(idx), [*model.parameters(), *model.buffers(), idx])
    names = [b.sym.name for b in thunder.last_backward_traces(jm)[-1].bound_symbols]
    return saved, [p.grad.clone() for p in model.parameters()], names, eager


def _worst(got, want) -> float:
    return max(((g - w).abs().max() / w.abs().max().clamp(min=1e-12)).item() for g, w in zip(got, want))


@pytest.fixture(scope="module")
def llama():
    return {saves: _step("Llama-3.2-1B", segkit_norm_saves=saves) for saves in ("input", "output")}


def test_the_rmsnorm_backward_reads_the_output_and_the_norms_inputs_are_not_saved(llama):
    """litgpt's Llama: 2 blocks x 2 RMSNorms + the final one, each input a (BATCH, T, 64) fp32 tensor that nothing
    but the norm's backward keeps (the attention and MLP projections save the norm's output)."""
    (saved_x, _, names_x, _), (saved_y, _, names_y, _) = llama["input"], llama["output"]
    assert names_y.count("segkit_rms_norm_bwd_from_output") == 5 and "segkit_rms_norm_bwd" not in names_y
    assert names_x.count("segkit_rms_norm_bwd") == 5 and "segkit_rms_norm_bwd_from_output" not in names_x
    assert saved_x - saved_y == 5 * BATCH * T * WIDTH * 4


def test_the_grads_do_not_change(llama):
    (_, grads_x, _, eager), (_, grads_y, _, _) = llama["input"], llama["output"]
    assert _worst(grads_y, grads_x) < 1e-5 and _worst(grads_y, eager) < 1e-5


def test_layer_norm_reads_its_output_too():
    """pythia (GPT-NeoX blocks, LayerNorm with bias): the same, with the bias taken out of y."""
    saved_x, grads_x, _, eager = _step("pythia-14m")
    saved_y, grads_y, names, _ = _step("pythia-14m", segkit_norm_saves="output")
    assert "segkit_layer_norm_bwd_from_output" in names and "segkit_layer_norm_bwd" not in names
    assert saved_y < saved_x
    assert _worst(grads_y, grads_x) < 1e-5 and _worst(grads_y, eager) < 1e-5


@pytest.mark.models  # another two compiles of a Hugging Face model: ~20 s here
def test_hugging_faces_rounded_rmsnorm_keeps_reading_its_input():
    """Hugging Face's Llama rounds the normed value before the weight (round_normed), which the backward from the
    output does not model: it keeps the standard backward, and its grads."""
    _, grads, names, eager = _step("hf-llama", segkit_norm_saves="output")
    assert "segkit_rms_norm_bwd" in names and "segkit_rms_norm_bwd_from_output" not in names
    assert _worst(grads, eager) < 1e-5


def test_a_bad_value_names_the_option():
    model = build("Llama-3.2-1B")
    jm = thunder.jit(model, executors=thunder_exec.executors(), segkit_norm_saves="x")
    with pytest.raises(ValueError, match=r"segkit_norm_saves must be one of input, output, got 'x'"):
        jm(torch.randint(0, VOCAB, (BATCH, T)))
