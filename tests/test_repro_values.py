"""Property: emit_repro -> load_repro keeps every value: nan/inf/complex constants, complex and NaN scalar
inputs, bool and int scalars, aliased outputs, an empty fusion. Same script, same fusion, same outputs."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit import DataType, FusionDefinition
from segkit.printing import fusion_lines

SPECIAL = [float("nan"), float("inf"), -float("inf"), -0.0, 1e-300, 2.5]
REALS = st.sampled_from(SPECIAL) | st.floats(allow_nan=True, allow_infinity=True, width=64)
COMPLEX = st.builds(complex, REALS, REALS)
SCALAR_INPUTS = {  # dtype -> values a script may pass for it
    DataType.Double: REALS,
    DataType.ComplexDouble: COMPLEX,
    DataType.Int: st.integers(-(2**62), 2**62),
    DataType.Bool: st.booleans(),
}


@st.composite
def fusions(draw):
    """A fusion over one tensor and some scalar inputs, with constants of every kind, and its inputs."""
    complex_tensor = draw(st.booleans())
    fd = FusionDefinition()
    x = fd.define_tensor(shape=[-1, 3], contiguity=[True, True],
                         dtype=DataType.ComplexFloat if complex_tensor else DataType.Float)
    xt = torch.randn(2, 3, dtype=torch.complex64 if complex_tensor else torch.float32)
    inputs = [xt]
    acc = x
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["literal", "named", "input"]))
        if kind == "input":
            dtype = draw(st.sampled_from(sorted(SCALAR_INPUTS, key=lambda d: d.name)))
            operand = fd.define_scalar(dtype=dtype)
            inputs.append(draw(SCALAR_INPUTS[dtype]))
        else:
            value = draw(COMPLEX if complex_tensor and draw(st.booleans()) else REALS)
            operand = value if kind == "literal" else fd.define_scalar(value)
        acc = getattr(fd.ops, draw(st.sampled_from(["add", "mul", "sub"])))(acc, operand)
    if acc is not x or draw(st.booleans()):
        fd.add_output(acc)
    if draw(st.booleans()):
        fd.add_output(fd.ops.mul(x, 2.0), alias_input=x)
    return fd, inputs


def _same(a, b):
    if isinstance(a, torch.Tensor):
        torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
    else:  # repr tells nan, inf, -0.0 and complex parts apart exactly
        assert type(a) is type(b) and repr(a) == repr(b)


@settings(max_examples=60, deadline=None)
@given(fusions())
def test_round_trip_keeps_every_value(case):
    fd, inputs = case
    script = segkit.emit_repro(fd, inputs)
    loaded = segkit.load_repro(script)
    assert fusion_lines(loaded.fd.fusion) == fusion_lines(fd.fusion)
    assert segkit.emit_repro(loaded.fd, inputs) == script
    rebuilt = loaded.make_inputs()
    for a, b in zip(inputs[1:], rebuilt[1:]):  # scalar inputs come back exactly (nan and complex included)
        _same(a, b)
    for a, b in zip(segkit.run_reference(fd, [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]),
                    segkit.run_reference(loaded.fd, [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])):
        _same(a, b)


def test_empty_fusion_round_trips():
    fd = FusionDefinition()
    loaded = segkit.load_repro(segkit.emit_repro(fd, []))
    assert loaded.fd.fusion.ops == [] and loaded.fd.fusion.outputs == []
    assert segkit.run_reference(loaded.fd, []) == segkit.run_reference(fd, []) == []
