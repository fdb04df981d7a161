"""What a verdict may call a mismatch: the reference's variance/mean are correctly rounded (so they do not
depend on torch's kernel of the day), and an output is judged at the precision it was computed in, not the
dtype it was cast to (fuzz campaign 2026-11-23, findings f008, f009, f043)."""

from __future__ import annotations

import torch

import segkit
from segkit import DataType, FusionDefinition
from segkit.check import check_outputs, output_tolerances


def test_variance_of_equal_numbers_is_exactly_zero():
    """127 copies of one float32 number (a stride-0 input, as Thunder passes an expanded tensor) have
    variance 0 and mean that number; torch's float32 CPU kernel says 1.3e-13, which a later division
    turns into 1e13 instead of Inf."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[127], contiguity=[None], dtype=DataType.Float)
        v = fd.ops.var(x, dims=[0], correction=0)
        v1, m1 = fd.ops.var_mean(x, dims=[0], correction=0)
        avg, var_sum, n = fd.ops.welford(x, dims=[0])
        fd.add_output(v), fd.add_output(v1), fd.add_output(m1), fd.add_output(avg), fd.add_output(var_sum)
    value = torch.tensor([1.5409961], dtype=torch.float32)
    outs = segkit.run_reference(fd, [value.as_strided((127,), (0,))])
    var, var1, mean1, avg, var_sum = (o.item() for o in outs)
    assert var == var1 == var_sum == 0.0
    assert mean1 == avg == value.item()


def test_variance_and_mean_are_correctly_rounded():
    """Every mean and variance is the float64 answer rounded once to float32, whatever the device."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[64, 999], contiguity=[True, True], dtype=DataType.Float)
        v, m = fd.ops.var_mean(x, dims=[1])
        avg, var_sum, n = fd.ops.welford(x, dims=[1])
        fd.add_output(v), fd.add_output(m), fd.add_output(avg), fd.add_output(var_sum)
    x = torch.randn(64, 999, generator=torch.Generator().manual_seed(0)) * 3 + 100
    var, mean, avg, var_sum = segkit.run_reference(fd, [x])
    v64, m64 = torch.var_mean(x.double(), 1)
    assert torch.equal(var, v64.float()) and torch.equal(mean, m64.float()) and torch.equal(avg, m64.float())
    assert torch.equal(var_sum, (v64 * 998).float())


def _linear_cast_to_double():
    with FusionDefinition() as fd:
        a = fd.define_tensor(shape=[17, 64], contiguity=[True, True], dtype=DataType.Float)
        w = fd.define_tensor(shape=[8, 64], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.cast(fd.ops.linear(a, w), dtype=DataType.Double))
    gen = torch.Generator().manual_seed(0)
    return fd, [torch.randn(17, 64, generator=gen), torch.randn(8, 64, generator=gen)]


def test_float32_result_cast_to_double_is_judged_at_float32():
    """A float32 linear summed in another order (cuBLAS vs the CPU) differs in float32's last bits; the
    cast to Double afterwards adds no precision, so that is no mismatch (f009, f043)."""
    fd, (a, w) = _linear_cast_to_double()
    other_order = (a.double() @ w.double().T).float().double()  # float32 result, differently rounded
    (ref,) = segkit.run_reference(fd, [a, w])
    assert not torch.equal(ref, other_order)
    assert output_tolerances(fd) == [1e-5]
    report = check_outputs(fd, [a, w], [other_order])
    assert report.ok, str(report)
    wrong = other_order.clone()
    wrong[3, 5] += 1e-3 * wrong.abs().max()
    assert not check_outputs(fd, [a, w], [wrong]).ok


def test_double_math_on_float_inputs_keeps_double_tolerance():
    """Casting a float32 *input* to Double rounds nothing (inputs are exact data), and views round nothing:
    Double math on them is still judged at Double's 1e-10."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
        y = fd.ops.reshape(fd.ops.permute(x, dims=[1, 0]), new_shape=[32])
        d = fd.ops.cast(y, dtype=DataType.Double)
        fd.add_output(fd.ops.mul(d, d))
    assert output_tolerances(fd) == [1e-10]
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(1))
    (ref,) = segkit.run_reference(fd, [x])
    assert not check_outputs(fd, [x], [ref * (1 + 1e-8)]).ok
    assert output_tolerances(fd, {torch.float64: 1e-6}) == [1e-6]


def test_standalone_script_expects_the_same_tolerance():
    """The upstream script of a finding allows what the campaign's verdict allowed (Float's 1e-5 here)."""
    from segkit.fuzz.triage import emit_standalone
    from segkit.printing import emit_repro
    from segkit.repro import load_repro

    fd, inputs = _linear_cast_to_double()
    text = emit_standalone(load_repro(emit_repro(fd, inputs)))
    assert "'tol': 1e-05" in text and "'tol': 1e-10" not in text
