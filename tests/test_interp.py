"""Reference interpreter: real numbers against torch, and inputs checked against their specs."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import segkit
from segkit import DataType, FusionDefinition
from segkit.compare import diff
from segkit.errors import InputMismatchError
from fusions import torch_models as tm
from tests.conftest import DATA


def test_nanogpt_layernorm_matches_torch(shared_example):
    repro = segkit.load_repro(shared_example)
    x, w, b = repro.make_inputs("cpu")
    (y,) = segkit.run_reference(repro.fd, [x, w, b])
    ref = F.layer_norm(x.float(), (x.shape[-1],), w.float(), b.float(), eps=1e-5)
    assert y.dtype == torch.bfloat16 and y.shape == x.shape
    assert (y.float() - ref).abs().max() / ref.abs().max() < 1e-2


def _fixture(name):
    return segkit.load_repro(DATA / "thunder" / name)


def test_thunder_layernorm_fixture_matches_torch():
    repro = _fixture("layernorm_functional_fwd_nvFusion0.py")
    inputs = repro.make_inputs()
    outs = segkit.run_reference(repro.fd, inputs)
    x = next(t for t in inputs if t.ndim == 2)
    w, b = (t for t in inputs if t.ndim == 1)
    y = next(o for o in outs if o.shape == x.shape)
    ref = F.layer_norm(x.double(), (256,), w.double(), b.double(), 1e-5)
    assert diff(0, ref, y).ok


@pytest.mark.parametrize("case, geometry", [
    ("rope_mha", (4, 4, 16, 16)), ("rope_gqa", (8, 2, 16, 16)), ("rope_partial", (4, 4, 20, 8)),
])
def test_thunder_rope_fixtures_match_litgpt(case, geometry):
    """Thunder's own qkv split + RoPE fusions give litgpt's q, k, v on the reference interpreter."""
    repro = _fixture(f"{case}_fwd_nvFusion0.py")
    qkv, cos, sin = repro.make_inputs()
    outs = segkit.run_reference(repro.fd, [qkv, cos, sin])
    expected = tm.qkv_split_rope(qkv.double(), cos.double(), sin.double(), *geometry)
    for e in expected:  # Thunder orders region outputs by name: match each by value
        assert any(o.shape == e.shape and diff(0, e, o).ok for o in outs)


def _two_input_fusion():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1, 4], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.BFloat16)
        fd.add_output(fd.ops.add(a, fd.ops.broadcast(fd.ops.cast(b, dtype=DataType.Float), is_broadcast_dim=[True, False])))
    return fd


@pytest.mark.parametrize("inputs, match", [
    (lambda: [torch.randn(3, 4)], r"takes 2 inputs"),
    (lambda: [torch.randn(3, 4, 1), torch.randn(4).bfloat16()], r"input 0 .*expected rank 2"),
    (lambda: [torch.randn(3, 4), torch.randn(4)], r"input 1 .*expected dtype torch.bfloat16"),
    (lambda: [torch.randn(3, 5), torch.randn(4).bfloat16()], r"input 0 .*dim 1 must be 4"),
    (lambda: [torch.randn(4, 3).t(), torch.randn(4).bfloat16()], r"input 0 .*allocation order"),
    (lambda: [torch.randn(3, 8)[:, ::2], torch.randn(4).bfloat16()], r"input 0 .*declared contiguous"),
    (lambda: ["x", torch.randn(4).bfloat16()], r"input 0 .*expected a tensor"),
])
def test_input_mismatch_names_the_input(inputs, match):
    with pytest.raises(InputMismatchError, match=match):
        segkit.run_reference(_two_input_fusion(), inputs())


def test_dynamic_sizes_accept_any_extent():
    fd = _two_input_fusion()
    b = torch.randn(4).bfloat16()
    for rows in (1, 7):
        a = torch.randn(rows, 4)
        torch.testing.assert_close(segkit.run_reference(fd, [a, b])[0], a + b.float())


def test_scalar_inputs_and_integer_division():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[3], contiguity=[True], dtype=DataType.Int)
        s = fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.div(t, s))
        fd.add_output(fd.ops.truediv(t, s))
    x = torch.tensor([7, -7, 9])
    q, r = segkit.run_reference(fd, [x, 2])
    assert q.tolist() == [3, -3, 4] and q.dtype == torch.int64  # C division truncates toward zero
    assert r.tolist() == [3.5, -3.5, 4.5]


def test_manual_padding_cat_uses_pad_regions():
    """cat(manual_padding=True) takes each piece from where its pad did not write (pad value 7 here)."""
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[2, 2], contiguity=[True, True], dtype=DataType.Float)
        pa = fd.ops.pad(a, pad_widths=[0, 2], value=7.0)
        pb = fd.ops.pad(b, pad_widths=[3, 0], value=7.0)
        fd.add_output(fd.ops.cat([pa, pb], dim=1, manual_padding=True))
    x, y = torch.randn(2, 3), torch.randn(2, 2)
    torch.testing.assert_close(segkit.run_reference(fd, [x, y])[0], torch.cat([x, y], 1))
