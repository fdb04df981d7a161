"""Thunder's CUDA graphs with segkit_ex on the GPU host: litgpt blocks (Qwen3's widths cut down, grouped k / v) under
``CUDAGraphTransform``. segkit's cuDNN attention saves views for the backward (y as (B, T, C), k / v of the qkv
projection), which Thunder detaches anew at every step; with thunder_exec's fix (thunder_exec.compat) no step copies
a tensor onto its own memory, and the grads are eager's to bf16 rounding."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import thunder
import thunder_exec
from benchmarks.model_cases import Case, build

pytestmark = pytest.mark.gpu


class SelfCopies(TorchDispatchMode):
    """The ``aten.copy_`` calls under it whose source is the destination's memory, with their shapes."""

    def __init__(self):
        super().__init__()
        self.shapes: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default and args[0].data_ptr() == args[1].data_ptr():
            self.shapes.append(tuple(args[0].shape))
        return func(*args, **(kwargs or {}))


def _grads(model, inputs, grad_inputs) -> list[torch.Tensor]:
    return [t.grad.float() for t in (*model.parameters(), *grad_inputs)]


def test_segkit_graphs_copy_no_saved_view_onto_itself_and_match_eager():
    pytest.importorskip("litgpt")
    from thunder.transforms.cudagraph import CUDAGraphTransform

    case = Case("qwen3-tiny-x2", "litgpt", "Qwen3-0.6B", 256, dict(n_layer=2, n_embd=512, n_head=8, n_query_groups=2,
                                                                    head_size=64, intermediate_size=1024), batch=2)
    built = build(case, "cuda")
    built.model(*built.inputs).backward()
    eager = _grads(built.model, built.inputs, built.grad_inputs)
    jm = thunder.jit(built.model, executors=thunder_exec.executors(), transforms=[CUDAGraphTransform()])
    for step in range(4):
        for t in (*built.model.parameters(), *built.grad_inputs):
            t.grad = None
        with SelfCopies() as copies:
            jm(*built.inputs).backward()
        assert not copies.shapes, f"step {step}: copied onto their own memory: {copies.shapes}"
    assert "segkit_cudnn_sdpa_bwd" in str(thunder.last_backward_traces(jm)[-1])
    for got, want in zip(_grads(built.model, built.inputs, built.grad_inputs), eager):
        scale = want.abs().max().item()
        torch.testing.assert_close(got, want, rtol=2 ** -6, atol=scale * 2 ** -6)
