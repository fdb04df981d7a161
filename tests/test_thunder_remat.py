"""Thunder 0.2.6's rematerialization with a split inside a torch.compile fusion (the fix: thunder_exec.compat). litgpt's
chunked cross entropy under Thunder's ``torchcompile_xentropy`` (its checkers told to take CPU tensors) and a later
fusion pass: on the GPU that pass is nvFuser's; here a second torch.compile executor stands in (each runs Thunder's
``rematerialize`` over every fusion of the trace, then rebuilds them all). Stock Thunder fails to compile it ("name
... already used", the GPU suite's error); with the fix it compiles, every fusion makes none of its own inputs, and
the loss and grads are eager's."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder.core.rematerialization as remat
import thunder.torch as ltorch
from thunder.executors import torch_compile as tc
from thunder.extend import ImplInfo

from benchmarks.model_cases import chunked_cross_entropy
from thunder_exec import compat


class LaterPass(tc.TorchCompileExecutor):
    """torch.compile's fusion pass, its fusions numbered from 1000: the trace's call context names each fusion, and
    torchcompile_xentropy's count from 0."""

    def fuse(self, region, fusion_counter: int):
        return super().fuse(region, 1000 + fusion_counter % 1000)


def fusion_passes(monkeypatch) -> list:
    """torchcompile_xentropy taking CPU tensors, then the later pass: the GPU's default executors' fusion passes."""
    xentropy = tc.torch_compile_xentropy_ex
    monkeypatch.setattr(xentropy, "_implmap", {op: ImplInfo(checker=lambda *a, **k: True) for op in xentropy._implmap})
    later = LaterPass("later_fusion_pass")
    later._implmap = dict(tc.torch_compile_ex._implmap)
    return [xentropy, later]


def chunked_loss(x, w, targets):
    """An LM head and litgpt's chunked cross entropy, two chunks of 16 rows."""
    return chunked_cross_entropy(F.linear(x, w), targets, chunk_size=16)


def inputs():
    torch.manual_seed(0)
    x, w = torch.randn(4, 8, 16, requires_grad=True), torch.randn(24, 16, requires_grad=True)
    targets = torch.randint(0, 24, (4, 8))
    targets[:, :2] = -100
    return x, w, targets


def fusions_making_their_inputs(jf) -> list[str]:
    """The fusions of ``jf``'s last execution traces whose bound symbols make one of the fusion's inputs."""
    traces = (thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1])
    return [b.sym.name for t in traces for b in t.bound_symbols if b.sym.is_fusion
            and {o.name for s in b.subsymbols for o in s.flat_proxy_outs} & {a.name for a in b.flat_proxy_args}]


def test_stock_thunder_defines_a_fusion_input_again(monkeypatch):
    """Thunder's own ``apply_rematerialization_for_consumer``: the later pass copies the split of the targets into the
    backward's cross-entropy fusion, which still takes the split's other chunk."""
    stock = getattr(remat.apply_rematerialization_for_consumer, "thunder_original",
                    remat.apply_rematerialization_for_consumer)
    monkeypatch.setattr(remat, "apply_rematerialization_for_consumer", stock)
    with pytest.raises(RuntimeError, match=r"Trying to add the name t\d+ to a trace, but that name is already used"):
        thunder.jit(chunked_loss, executors=fusion_passes(monkeypatch))(*inputs())


def test_with_the_fix_the_fusion_computes_what_it_recomputes_and_the_grads_are_eagers(monkeypatch):
    assert compat.install_rematerialization_fix() and compat.install_rematerialization_fix()  # once, then a no-op
    assert remat.apply_rematerialization_for_consumer.thunder_original.__module__ == remat.__name__
    x, w, targets = inputs()
    jf = thunder.jit(chunked_loss, executors=fusion_passes(monkeypatch))
    loss = jf(x, w, targets)
    got = torch.autograd.grad(loss, (x, w))
    want_loss = chunked_loss(x, w, targets)
    torch.testing.assert_close(loss, want_loss)
    for g, e in zip(got, torch.autograd.grad(want_loss, (x, w))):
        torch.testing.assert_close(g, e)
    assert fusions_making_their_inputs(jf) == []
    backward = thunder.last_backward_traces(jf)[-1].bound_symbols
    assert any({ltorch.split.id, "nll_loss_backward"} <= {s.sym.id for s in b.subsymbols}
               for b in backward if b.sym.is_fusion)  # the split recomputed where the loss's grad is
