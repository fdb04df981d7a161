"""The nvFuser semantics segkit's recorder claims, checked against real nvFuser: output dtypes of scalar
promotion, left broadcasting of lower ranks, aliased outputs writing into inputs, output layouts, symbolic
shapes, and a definition nvFuser must refuse."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition
from segkit.compare import compare

pytestmark = pytest.mark.gpu


def _both(build, inputs):
    """Record with segkit, replay on nvFuser; outputs of both (on copies of the inputs) and the inputs after."""
    fd = FusionDefinition()
    build(fd)
    ref_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    nv_in = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
    ref = segkit.run_reference(fd, ref_in)
    nv = segkit.to_nvfuser(fd).execute(nv_in)
    return ref, list(nv), ref_in, nv_in


def test_scalar_promotion_dtypes_match_nvfuser():
    def build(fd):
        i = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Int32)
        z = fd.define_tensor(shape=[], dtype=DataType.Float)
        fd.add_output(fd.ops.where(fd.ops.gt(i, 0), 3.0, 5.0))  # Double
        fd.add_output(fd.ops.add(i, 1.5))                         # Double
        fd.add_output(fd.ops.add(z, 1.0))                         # Float (0-d tensor outranks the scalar)
        fd.add_output(fd.ops.add(i, z))                           # Float
        fd.add_output(fd.ops.mul(i, 2))                           # Int32
    ref, nv, _, _ = _both(build, [torch.tensor([1, -2, 3], dtype=torch.int32, device="cuda"),
                                  torch.tensor(0.5, device="cuda")])
    assert [t.dtype for t in nv] == [t.dtype for t in ref]
    assert all(d.ok for d in compare(ref, nv))


def test_lower_rank_operand_broadcasts_on_the_left_like_nvfuser():
    def build(fd):
        x = fd.define_tensor(shape=[-1, -1, 4], contiguity=[True] * 3, dtype=DataType.Float)
        row = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.sub(x, row))
    ref, nv, _, _ = _both(build, [torch.randn(2, 3, 4, device="cuda"), torch.randn(4, device="cuda")])
    assert all(d.ok for d in compare(ref, nv))


def test_aliased_output_writes_into_the_input_on_both():
    def build(fd):
        x = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.mul(x, 2.0))
        fd.add_output(fd.ops.add(x, 1.0), alias_input=x)
    ref, nv, ref_in, nv_in = _both(build, [torch.randn(8, device="cuda")])
    assert len(nv) == len(ref) == 1
    assert all(d.ok for d in compare(ref + ref_in, nv + nv_in))


def test_output_stride_order_matches_nvfuser_layout():
    def build(fd):
        x = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(fd.ops.relu(x), stride_order=[0, 2, 1])
    ref, nv, _, _ = _both(build, [torch.randn(2, 3, 4, device="cuda")])
    assert nv[0].stride() == ref[0].stride()
    assert all(d.ok for d in compare(ref, nv))


def test_symbolic_shape_reshape_matches_nvfuser():
    def build(fd):
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        rows, cols = x.shape()
        fd.add_output(fd.ops.reshape(x, new_shape=[cols, rows]))
    ref, nv, _, _ = _both(build, [torch.randn(3, 4, device="cuda")])
    assert all(d.ok for d in compare(ref, nv))


def test_nvfuser_refuses_what_segkit_refuses():
    import nvfuser_direct

    with pytest.raises(segkit.FusionDefinitionError, match="start_indices must be greater"):
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            fd.ops.slice(x, start_indices=[-1, 0], end_indices=[2, 3])
    with pytest.raises(Exception, match="start_indices must be greater"):
        with nvfuser_direct.FusionDefinition() as nfd:
            x = nfd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=nvfuser_direct.DataType.Float)
            nfd.ops.slice(x, start_indices=[-1, 0], end_indices=[2, 3])
