"""Recording frontend: shapes and dtypes inferred as recorded, bad definitions rejected at their line."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition
from segkit.errors import FusionDefinitionError, UnsupportedOpError
from segkit.layout import compute_tensor_descriptor


def test_legacy_spelling_records_shapes(shared_example):
    fusion = segkit.load_repro(shared_example).fd.fusion
    names = [op.name for op in fusion.ops]
    assert "var_mean" in names and "broadcast_in_dim" in names
    out = fusion.outputs[0]
    assert out.dtype is DataType.BFloat16 and out.shape == (16, 128, 1600)
    var, mean = fusion.ops[names.index("var_mean")].outputs
    assert var.shape == (-1, -1) and mean.dtype is DataType.Float


def test_unknown_op_names_op_and_call_site():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float)
        with pytest.raises(UnsupportedOpError) as e:
            fd.ops.frobnicate(t)
    msg = str(e.value)
    assert "frobnicate" in msg and "test_frontend.py" in msg and "fd.ops.frobnicate(t)" in msg
    assert not hasattr(fd.ops, "amax")  # nvFuser has no amax: hasattr stays usable


def test_amax_hint_points_to_max():
    fd = FusionDefinition()
    with pytest.raises(UnsupportedOpError, match="fd.ops.max"):
        fd.ops.amax


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda fd, a, b: fd.ops.add(a, b), r"add .*sizes of dim 1 do not match"),
        (lambda fd, a, b: fd.ops.add(a, fd.ops.sum(b, dims=[1])), r"sizes of dim 1 do not match"),
        (lambda fd, a, b: fd.ops.reshape(a, new_shape=[5, 5]), r"cannot reshape"),
        (lambda fd, a, b: fd.ops.permute(a, dims=[0, 0]), r"repeat a dim"),
        (lambda fd, a, b: fd.ops.squeeze(a, dims=[0]), r"size is 2, not 1"),
        (lambda fd, a, b: fd.ops.slice(a, start_indices=[0], end_indices=[1]), r"does not match slice dimensions"),
        (lambda fd, a, b: fd.ops.expand(a, shape=[4, 3]), r"cannot expand dim 0"),
        (lambda fd, a, b: fd.ops.sum(a, dims=[2]), r"out of range"),
        (lambda fd, a, b: fd.ops.cast(a), r"missing required argument 'dtype'"),
        (lambda fd, a, b: fd.ops.sum(a, dimz=[0]), r"unexpected keyword argument 'dimz'"),
    ],
)
def test_bad_definitions_name_the_op_and_line(build, match):
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[2, 3], contiguity=[True, True], dtype=DataType.Float)
        b = fd.define_tensor(shape=[2, 4], contiguity=[True, True], dtype=DataType.Float)
        with pytest.raises(FusionDefinitionError, match=match) as e:
            build(fd, a, b)
    assert "test_frontend.py" in str(e.value)


def test_value_from_another_fusion_is_rejected():
    with FusionDefinition() as other:
        t = other.define_tensor(shape=[2], contiguity=[True])
    with FusionDefinition() as fd:
        with pytest.raises(FusionDefinitionError, match="another FusionDefinition"):
            fd.ops.neg(t)


def test_scalar_arithmetic_folds_for_shapes():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.BFloat16)
        n = fd.ops.add(0, 6)
        d = fd.ops.cast(1600, dtype=DataType.Double)
        s = fd.ops.size(t, dim=1)
        half = fd.ops.div(s, 2)
        p = fd.ops.pad(t, pad_widths=[n, 0])
        sl = fd.ops.slice(t, start_indices=[0, 0], end_indices=[4, half])
    assert (n.value, n.dtype) == (6, DataType.Int)
    assert (d.value, d.dtype) == (1600.0, DataType.Double)
    assert s.value == 8 and half.value == 4
    assert p.shape == (4, 14) and sl.shape == (4, 4)


def test_dtype_promotion_follows_nvfuser():
    with FusionDefinition() as fd:
        b = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.BFloat16)
        i = fd.define_tensor(shape=[4], contiguity=[True], dtype=DataType.Int32)
        assert fd.ops.mul(b, 2.5).dtype is DataType.Float  # BFloat16 math is done in Float (computeTypes)
        assert fd.ops.mul(i, 2.5).dtype is DataType.Double  # a Double scalar is not demoted, unlike torch
        assert fd.ops.where(fd.ops.gt(b, 0.0), b, 0).dtype is DataType.BFloat16  # where does not promote
        assert fd.ops.gt(b, 0.0).dtype is DataType.Bool
        assert fd.ops.add(i, 1).dtype is DataType.Int32
        assert fd.ops.sum(i, dims=[0]).dtype is DataType.Int
        assert fd.ops.sum(b, dims=[0], dtype=DataType.Float).dtype is DataType.Float


def test_mean_is_sum_times_reciprocal():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[3, 5], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.mean(t, dims=[1]))
    assert [op.name for op in fd.fusion.ops] == ["sum", "mul"]
    x = torch.randn(3, 5)
    torch.testing.assert_close(fd.execute([x])[0], x.mean(1))


def test_define_tensor_contiguity_and_expanded_dims():
    with FusionDefinition() as fd:
        t = fd.define_tensor(shape=[2, -1, 1], contiguity=[True, None, None], dtype=DataType.Float, stride_order=[2, 1, 0])
    assert t.broadcast == (False, True, True) and t.expanded == (False, True, False)
    with FusionDefinition() as fd:
        with pytest.raises(FusionDefinitionError, match="stride_order"):
            fd.define_tensor(shape=[2, 3], contiguity=[True, True], stride_order=[0, 0])


@pytest.mark.parametrize(
    "sizes, strides, contiguity, stride_order",
    [
        # examples from nvFuser's and Thunder's documentation of compute_tensor_descriptor
        ([2, 2, 2, 2], [8, 4, 0, 2], [True, True, None, False], [3, 2, 1, 0]),
        ([2, 3, 4], [12, 1, 3], [True, True, True], [2, 0, 1]),
        ([1, 2, 3], [6, 3, 1], [None, True, True], [2, 1, 0]),
    ],
)
def test_tensor_descriptor_matches_nvfuser_docs(sizes, strides, contiguity, stride_order):
    assert compute_tensor_descriptor(sizes, strides) == (contiguity, stride_order)


def test_from_pytorch_uses_the_tensor_layout():
    x = torch.randn(4, 6).t()
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.neg(t))
    assert t.stride_order == (0, 1)
    torch.testing.assert_close(fd.execute([x])[0], -x)


def test_dynamic_reshape_sizes_are_not_inference_requests():
    """Sizes given by scalar inputs are dynamic; only a literal -1 is inferred."""
    import torch

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[6, 4], contiguity=[True, True], dtype=DataType.Float)
        a, b = fd.define_scalar(dtype=DataType.Int), fd.define_scalar(dtype=DataType.Int)
        y = fd.ops.reshape(x, new_shape=[a, b])
        z = fd.ops.reshape(x, new_shape=[-1, 8])
        fd.add_output(y)
        fd.add_output(z)
        with pytest.raises(FusionDefinitionError, match="more than one -1"):
            fd.ops.reshape(x, new_shape=[-1, -1])
    assert y.shape == (-1, -1) and z.shape == (3, 8)
    out = segkit.run_reference(fd, [torch.randn(6, 4), 2, 12])
    assert out[0].shape == (2, 12) and out[1].shape == (3, 8)
