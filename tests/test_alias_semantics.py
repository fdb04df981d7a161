"""nvFuser's semantics on the reference interpreter where a CPU torch call would differ: outputs written into
inputs (``add_output(out, alias_input=inp)``), integer division by zero, and how inputs are passed.

The in-place cases are nvFuser's own tests (NVIDIA/Fuser tests/python/direct/test_python_frontend.py
``test_alias_output_to_input``, ``test_returning_aliased_outputs``; tests/python/direct/test_repro.py
``test_issue2664_repro1`` to ``repro4``, from https://github.com/NVIDIA/Fuser/issues/2664), with small sizes.
"""

from __future__ import annotations

import pytest
import torch

from segkit import DataType, FusionDefinition, InputMismatchError, SegkitError, run_reference
from segkit.check import check_outputs, written_inputs
from segkit.interp import as_fusion, copy_inputs


def _fd(define):
    with FusionDefinition() as fd:
        define(fd)
    return fd


def test_alias_output_to_input_writes_the_input_and_hides_the_output():
    x = torch.ones(4, 4)

    def define(fd):
        t0 = fd.from_pytorch(x)
        t1 = fd.ops.add(t0, fd.define_scalar(1.0))
        t2 = fd.ops.add(t1, fd.define_scalar(2.0))
        fd.add_output(t1, alias_input=t0)
        fd.add_output(t2)

    out = _fd(define).execute([x])
    assert len(out) == 1
    torch.testing.assert_close(out[0], torch.full((4, 4), 4.0))
    torch.testing.assert_close(x, torch.full((4, 4), 2.0))


def test_alias_output_to_input_as_the_2023_legacy_test_wrote_it():
    # NVIDIA/Fuser python_tests/test_python_frontend.py at its first commit (2023-03): the aliased output is not
    # returned then either
    x = torch.ones(4, 4)

    def define(fd):
        t0 = fd.from_pytorch(x)
        t2 = fd.ops.add(t0, fd.define_constant(2.0))
        fd.add_output(fd.ops.add(t0, fd.define_constant(1.0)))
        fd.add_output(t2, alias_input=t0)
        fd.add_output(fd.ops.add(t2, fd.define_constant(3.0)))

    out = _fd(define).execute([x])
    assert [o[0, 0].item() for o in out] == [2.0, 6.0]
    torch.testing.assert_close(x, torch.full((4, 4), 3.0))


def test_returning_aliased_outputs_returns_the_written_input():
    x = torch.randn(1, 2, 3, 4)
    before = x.clone()

    def define(fd):
        t0 = fd.define_tensor(shape=[-1] * 4, contiguity=[True] * 4, dtype=DataType.Float, stride_order=[3, 2, 1, 0])
        t4 = fd.ops.where(fd.ops.gt(t0, 0.0), t0, 0.0)
        fd.add_output(t4)
        fd.add_output(t4, t0)  # alias_input given positionally, as nvFuser's test writes it
        fd.add_output(t4)
        fd.add_output(t0)

    out = _fd(define).execute([x])
    assert len(out) == 3 and all(o.data_ptr() == x.data_ptr() for o in out)
    torch.testing.assert_close(x, before.relu())


def test_issue2664_repro1_reads_the_input_before_it_is_written():
    def define(fd):
        t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        t2 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        t4 = fd.ops.add(t2, fd.define_scalar(1.0, dtype=DataType.Double))
        t7 = fd.ops.broadcast_in_dim(t4, shape=[fd.define_scalar(16, dtype=DataType.Int)], broadcast_dims=[])
        fd.add_output(t4, t2)
        fd.add_output(fd.ops.mul(t1, t7))

    a, s = torch.randn(16), torch.randn(())
    want = [s + 1.0, (s + 1.0) * a]
    out = _fd(define).execute([a, s])
    torch.testing.assert_close(s, want[0])
    torch.testing.assert_close(out[0], want[1])


def test_issue2664_repro3_two_writes_both_read_the_original_inputs():
    def define(fd):
        t1 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        t2 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        t3 = fd.define_tensor(shape=[], contiguity=[], dtype=DataType.Float)
        t4 = fd.ops.broadcast_in_dim(t2, shape=t1.shape(), broadcast_dims=[])
        t6 = fd.ops.sum(fd.ops.add(t1, t4), dims=[0], keepdim=False)
        t7 = fd.ops.add(t3, fd.define_scalar(1.0))
        fd.add_output(t6, t3)
        fd.add_output(t7, t2)

    a, s2, s3 = torch.randn(8), torch.randn(()), torch.randn(())
    want2, want3 = s3 + 1.0, (a + s2).sum()
    assert _fd(define).execute([a, s2, s3]) == []
    torch.testing.assert_close(s2, want2)
    torch.testing.assert_close(s3, want3)


def test_issue2664_repro4_writes_an_input_with_a_broadcast_dim():
    def define(fd):
        t0 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, stride_order=[1, 0])
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float, stride_order=[1, 0])
        fd.add_output(fd.ops.add(t1, t0))
        fd.add_output(fd.ops.neg(t0), t0)

    a, b = torch.randn(6, 1), torch.randn(6, 5)
    want = [a + b, -a]
    out = _fd(define).execute([a, b])
    torch.testing.assert_close(out[0], want[0])
    torch.testing.assert_close(a, want[1])


def _increment(fd):
    t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
    fd.add_output(fd.ops.add(t0, 1.0), alias_input=t0)
    fd.add_output(fd.ops.mul(t0, 2.0))


def test_each_side_gets_its_own_copy_and_the_written_inputs_are_compared():
    fd = _fd(_increment)
    x = torch.arange(4.0)
    ref_inputs, other = copy_inputs([x]), copy_inputs([x])
    assert ref_inputs[0].data_ptr() != x.data_ptr() != other[0].data_ptr()
    run_reference(fd, ref_inputs)
    torch.testing.assert_close(x, torch.arange(4.0))  # the caller's tensor is untouched
    run_reference(fd, other)
    (same,) = written_inputs(as_fusion(fd), ref_inputs, other, "nvFuser")
    assert same.ok and same.what == "input" and "input 0" in str(same)
    other[0][2] += 0.5  # a backend that wrote a wrong value into the input
    (wrong,) = written_inputs(as_fusion(fd), ref_inputs, other, "nvFuser")
    assert not wrong.ok and wrong.worst == (2,) and str(wrong).startswith("input 0")


def test_check_outputs_never_writes_into_the_callers_inputs():
    fd = _fd(_increment)
    x = torch.arange(4.0)
    report = check_outputs(fd, [x], [torch.arange(4.0) * 2])
    assert report.ok
    torch.testing.assert_close(x, torch.arange(4.0))


def test_copy_keeps_an_expanded_inputs_strides():
    x = torch.randn(3, 1).expand(3, 4)
    (y,) = copy_inputs([x])
    assert y.stride() == x.stride() and y.data_ptr() != x.data_ptr() and torch.equal(x, y)


@pytest.mark.parametrize("op", ["div", "mod", "fmod", "remainder"])
@pytest.mark.parametrize("dtype, by_zero", [
    # what a CUDA kernel's C `/` and `%` give for a zero divisor (see segkit.ops.pointwise._by_zero_on_cuda)
    (DataType.Int, [2**32 - 1, -1, 2**32 - 1]),
    (DataType.Int32, [-1, -1, -1]),
])
def test_integer_division_by_zero_gives_the_kernels_value_instead_of_raising(op, dtype, by_zero):
    def define(fd):
        a = fd.define_tensor(shape=[-1], dtype=dtype)
        b = fd.define_tensor(shape=[-1], dtype=dtype)
        fd.add_output(getattr(fd.ops, op)(a, b))

    a = torch.tensor([7, -7, 0, 7, -7, 0], dtype=dtype.torch)
    b = torch.tensor([0, 0, 0, 2, 2, 3], dtype=dtype.torch)
    (out,) = _fd(define).execute([a, b])
    exact = {"div": torch.div(a[3:], b[3:], rounding_mode="trunc"), "mod": torch.fmod(a[3:], b[3:]),
             "fmod": torch.fmod(a[3:], b[3:]), "remainder": torch.remainder(a[3:], b[3:])}[op]
    assert out.tolist() == by_zero + exact.tolist()


def test_scalar_integer_division_by_zero_is_refused_as_nvfuser_refuses_it():
    def define(fd):
        n, d = fd.define_scalar(dtype=DataType.Int), fd.define_scalar(dtype=DataType.Int)
        fd.add_output(fd.ops.mul(fd.define_tensor(shape=[-1]), fd.ops.div(n, d)))

    with pytest.raises(SegkitError, match="Integer division by zero detected"):
        _fd(define).execute([3, 0, torch.ones(2)])


def test_a_lone_tensor_for_the_inputs_list_says_how_to_pass_it():
    def define(fd):
        fd.add_output(fd.ops.neg(fd.define_tensor(shape=[-1])))

    fd = _fd(define)
    for call in (lambda x: run_reference(fd, x), fd.execute):
        with pytest.raises(InputMismatchError, match=r"inputs must be a list .*1: tv0: Float\[\?\].*got a float32 "
                                                     r"tensor of shape \[3\]; pass \[x\]"):
            call(torch.ones(3))
