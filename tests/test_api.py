"""The nvFuser API as people write it: value methods, vectors, output aliases and layouts, legacy spellings,
nvFuser's broadcasting and promotion rules, and the rejections nvFuser makes, each at the user's line."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition
from segkit.errors import FusionDefinitionError, InputMismatchError


def _t(fd, shape, dtype=DataType.Float, **kw):
    return fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dtype, **kw)


def test_value_methods_record_nvfusers_spellings():
    with FusionDefinition() as fd:
        x = _t(fd, [-1, 6])
        assert x.is_tensor() and x.ndim == 2 and x.dtype() is DataType.Float
        rows, cols = x.shape()
        assert cols.value == 6 and rows.value is None  # a static size folds, a dynamic one stays symbolic
        y = fd.ops.reshape(x, new_shape=[rows, 2, fd.ops.div(x.size(1), 2)])
        s = fd.define_scalar(2.0)
        assert not s.is_tensor()
        fd.add_output(y)
    out = fd.execute([torch.arange(12.0).reshape(2, 6)])[0]
    torch.testing.assert_close(out, torch.arange(12.0).reshape(2, 2, 3))


def test_define_vector_of_symbolic_sizes_is_a_run_time_shape():
    with FusionDefinition() as fd:
        x = _t(fd, [-1])
        shape = fd.define_vector(2)
        fd.add_output(fd.ops.reshape(x, new_shape=shape))
    assert [v.dtype for v in fd.fusion.inputs[1:]] == [DataType.Int, DataType.Int]
    out = fd.execute([torch.arange(6.0), 3, 2])[0]
    torch.testing.assert_close(out, torch.arange(6.0).reshape(3, 2))


def test_legacy_operators_and_subclass_definition():
    class Fused(FusionDefinition):
        def definition(self):
            x = _t(self, [-1, 3])
            self.add_output(abs(-x) * 2 + 1 - x / 2)

    fd = Fused()
    x = torch.randn(4, 3)
    torch.testing.assert_close(fd.execute([x])[0], x.abs() * 2 + 1 - x / 2)
    assert [op.name for op in fd.fusion.ops] == ["neg", "abs", "mul", "add", "div", "sub"]


def test_zero_dim_and_lower_rank_tensors_broadcast_on_the_left():
    with FusionDefinition() as fd:
        x = _t(fd, [-1, -1, 4])
        s = _t(fd, [], DataType.Double)
        row = _t(fd, [4])
        out = fd.ops.add(fd.ops.mul(x, s), row)
        fd.add_output(out)
    assert out.shape == (-1, -1, 4) and out.dtype is DataType.Float  # a 0-d Double tensor does not widen Float
    x_, s_, row_ = torch.randn(2, 3, 4), torch.tensor(1.5, dtype=torch.float64), torch.randn(4)
    torch.testing.assert_close(fd.execute([x_, s_, row_])[0], (x_ * 1.5 + row_).float())


def test_python_scalars_promote_as_in_nvfuser():
    with FusionDefinition() as fd:
        i = _t(fd, [3], DataType.Int)
        w = fd.ops.where(fd.ops.gt(i, 0), 3.0, 5.0)
        a = fd.ops.add(i, 0.5)
        h = fd.ops.mul(_t(fd, [3], DataType.BFloat16), 2.0)
        fd.add_output(w), fd.add_output(a), fd.add_output(h)
    # a BFloat16 mul computes in Float and returns Float (nvFuser's cast_half_to_float; seen on an H100)
    assert (w.dtype, a.dtype, h.dtype) == (DataType.Double, DataType.Double, DataType.Float)
    outs = fd.execute([torch.tensor([1, -1, 2]), torch.ones(3, dtype=torch.bfloat16)])
    torch.testing.assert_close(outs[0], torch.tensor([3.0, 5.0, 3.0], dtype=torch.float64))
    torch.testing.assert_close(outs[1], torch.tensor([1.5, -0.5, 2.5], dtype=torch.float64))


def test_empty_tensor_with_any_strides_runs():
    x = torch.empty(0, 5).t()  # size 0, transposed strides
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.sum(fd.ops.exp(t), dims=[1]))
    assert fd.execute([x])[0].shape == (5,)


def test_aliased_output_writes_into_its_input_and_is_not_returned():
    with FusionDefinition() as fd:
        x = _t(fd, [-1])
        y = fd.ops.add(x, 1.0)
        fd.add_output(fd.ops.mul(x, 2.0))
        fd.add_output(y, alias_input=x)
    buf = torch.tensor([1.0, 2.0])
    (out,) = fd.execute([buf])
    torch.testing.assert_close(out, torch.tensor([2.0, 4.0]))
    torch.testing.assert_close(buf, torch.tensor([2.0, 3.0]))
    assert "alias_input=tv0" in segkit.emit_repro(fd, [buf])


def test_output_stride_order_gives_that_layout():
    with FusionDefinition() as fd:
        x = _t(fd, [2, 3, 4])
        fd.add_output(fd.ops.relu(x), stride_order=[0, 2, 1])  # dim 0 innermost, dim 1 outermost
    out = fd.execute([torch.randn(2, 3, 4)])[0]
    assert out.stride() == (1, 8, 2)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda fd, x: fd.ops.slice(x, start_indices=[-1, 0], end_indices=[2, 3]), "start_indices must be greater"),
        (lambda fd, x: fd.ops.slice(x, start_indices=[2, 0], end_indices=[1, 3]), "end_indices must be greater"),
        (lambda fd, x: fd.ops.slice(x, [0, 0], [2, 3], strides=[1, 2]), "strides must be of const size 1"),
        (lambda fd, x: fd.ops.squeeze(x, dims=[1]), "size is 3, not 1"),
        (lambda fd, x: fd.define_tensor(shape=[2, 2], is_cpu=True), "only as 0-dim scalars"),
        (lambda fd, x: fd.define_scalar(1 + 2j, dtype=DataType.Double), "complex value needs a complex dtype"),
        (lambda fd, x: fd.add_output(x, alias_input=fd.ops.neg(x)), "alias source can only be a fusion input"),
        (lambda fd, x: fd.ops.permute(x, dims="ab"), "permute"),
        (lambda fd, x: fd.ops.pad(x, [1, 1], value=1 + 1j), "pad value must have the same dtype"),
        (lambda fd, x: fd.ops.iota(4, start=0, step=1, dtype=DataType.Float), "start dtype does not match"),
        (lambda fd, x: fd.ops.iota(4.0), "length must be integer"),
    ],
)
def test_what_nvfuser_rejects_is_rejected_at_the_users_line(build, match):
    with FusionDefinition() as fd:
        x = _t(fd, [2, 3])
        with pytest.raises(FusionDefinitionError, match=match) as e:
            build(fd, x)
    assert "test_api.py" in str(e.value) or "define_" in str(e.value)


def test_scalar_inputs_refuse_values_nvfuser_refuses():
    with FusionDefinition() as fd:
        x = _t(fd, [2])
        s = fd.define_scalar(dtype=DataType.Double)
        fd.add_output(fd.ops.mul(x, s))
    with pytest.raises(InputMismatchError, match="not compatible"):
        fd.execute([torch.ones(2), 2 + 1j])
    with pytest.raises(InputMismatchError, match="expected a scalar but got float32 tensor of rank 1"):
        fd.execute([torch.ones(2), torch.ones(2)])


def test_executing_an_empty_fusion_is_refused_as_nvfuser_refuses_it():
    with pytest.raises(NotImplementedError, match="Fusion does not exist"):
        FusionDefinition().execute([])
    with FusionDefinition() as fd:
        fd.define_tensor(shape=[2])
    with pytest.raises(FusionDefinitionError, match="Fusion is empty"):
        fd.execute([torch.ones(2)])


def test_select_index_replays_as_a_defined_scalar(tmp_path):
    """nvfuser_direct's select takes its index as a Val (found by segkit fuzz on an H100: a plain int was
    refused by the binding), so a number there is printed as define_scalar and still selects on reload."""
    x = torch.randn(2, 3, 4)
    with FusionDefinition() as fd:
        t = fd.from_pytorch(x)
        fd.add_output(fd.ops.select(t, index=1, dim=2))
    script = segkit.emit_repro(fd, [x])
    assert "define_scalar(1, dtype=DataType.Int)" in script and "fd.ops.select(tv0, c0, dim=2)" in script
    path = tmp_path / "select.py"
    path.write_text(script)
    torch.testing.assert_close(segkit.run_reference(segkit.load_repro(path).fd, [x])[0], x[:, :, 1])
