"""A repro script that gives no inputs (``print(fd)`` of nvFuser's FusionDefinition, a Thunder region dump) loads
with random inputs at its tensors' declared sizes, dtypes and layouts, and runs on the reference interpreter: the
stock-Thunder region of litgpt's grouped-query RoPE computes litgpt's math there."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import segkit
from fusions import torch_models as tm
from segkit.layout import compute_tensor_descriptor

GQA = Path(__file__).parent / "data" / "thunder" / "rope_llama3_8b_fwd_nvFusion0.py"


def test_thunders_gqa_rope_region_printed_without_inputs_loads_and_computes_litgpts_rope():
    """The region as ``print(fd)`` gives it (the recorded script's fusion function, no inputs, no imports): the
    Llama-3-8B-width stock Thunder region whose k nvFuser computes wrong (tests/gpu/test_check_gpu.py)."""
    text = GQA.read_text()
    printed = text[text.index("def nvfuser_fusion"):text.index("with FusionDefinition()")]
    repro = segkit.load_repro(printed)
    assert any("gives no inputs" in n for n in repro.notes), repro.notes
    qkv, cos, sin = repro.make_inputs()
    B, T, G, Q, hs = 2, 256, 8, 4, 128  # the region's reshape: (B, T, G, Q + 2, hs)
    assert (qkv.shape, cos.shape, qkv.dtype) == ((B, T, G * (Q + 2) * hs), (T, hs), torch.bfloat16)
    v, q, k = segkit.run_reference(repro.fd, [qkv, cos, sin])
    want_q, want_k, want_v = tm.qkv_split_rope(qkv.double(), cos.double(), sin.double(), G * Q, G, hs, hs)
    assert torch.equal(v.double(), want_v)  # a copy of the expanded v
    for got, want in ((q, want_q), (k, want_k)):  # fp32 math rounded once to bf16
        assert got.shape == want.shape and got.dtype == torch.bfloat16
        assert (got.double() - want).abs().max() <= 2 ** -7 * want.abs().max()
    k5 = k.view(B, G, Q, T, hs)  # every head of a group reads its group's k: the heads of one group agree
    assert torch.equal(k5, k5[:, :, :1].expand_as(k5))


@pytest.mark.parametrize("shape, contiguity, stride_order", [
    ([3, 4, 5], [True, True, True], None),
    ([3, 4, 5], [True, False, True], None),
    ([3, 4, 5], [True, True, True], [0, 2, 1]),
    ([3, 4, 5], [False, True, False], [1, 0, 2]),
])
def test_declared_layouts_are_the_inputs_layouts(shape, contiguity, stride_order):
    so = "" if stride_order is None else f", stride_order={stride_order}"
    script = (f"def f(fd):\n    t0 = fd.define_tensor(shape={shape}, contiguity={contiguity}, dtype=DataType.Float{so})\n"
              "    fd.add_output(fd.ops.neg(t0))\n")
    (x,) = segkit.load_repro(script).make_inputs()
    got_contiguity, got_order = compute_tensor_descriptor(x.shape, x.stride())
    assert list(x.shape) == shape and got_contiguity == contiguity
    assert got_order == (stride_order or list(reversed(range(len(shape)))))
    (y,) = segkit.run_reference(segkit.load_repro(script).fd, [x])
    assert torch.equal(y, -x)


def test_a_declaration_without_sizes_still_says_where_segkit_looks():
    script = "def f(fd):\n    t0 = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)\n" \
             "    fd.add_output(fd.ops.neg(t0))\n"
    with pytest.raises(segkit.ReproError, match=r"no -1"):
        segkit.load_repro(script).make_inputs()
