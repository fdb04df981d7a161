"""segkit's dtype rules are nvFuser's, not torch's: the expected dtypes below are read off nvFuser 0.2.36's
sources (csrc/type_promotion.cpp computeTypes, csrc/type.h promoteType, csrc/ops/arith.cpp's per-op configs),
not computed by segkit; the reference computes in the dtype nvFuser computes in; what nvFuser accepts but
cannot compile is refused while recording; a dtype disagreement between backends is reported as such."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition, FusionDefinitionError
from segkit.check import check_outputs
from segkit.compare import diff

from tests.op_samples import UNCOMPILABLE

F32, F64, F16, BF16 = DataType.Float, DataType.Double, DataType.Half, DataType.BFloat16
I64, I32, B, C64 = DataType.Int, DataType.Int32, DataType.Bool, DataType.ComplexFloat


def _out_dtype(op: str, *args, **kwargs) -> DataType:
    """The dtype segkit records for ``op`` on rank-2 tensors of the given DataTypes and Python numbers."""
    fd = FusionDefinition()
    vals = [fd.define_tensor([2, 3], dtype=a) if isinstance(a, DataType) else a for a in args]
    return getattr(fd.ops, op)(*vals, **kwargs).dtype


@pytest.mark.parametrize("op, args, want", [
    # default_op_config: common dtype, then Half/BFloat16 computed (and returned) in Float
    ("add", (BF16, BF16), F32), ("sub", (F16, BF16), F32), ("mul", (BF16, 2.5), F32), ("div", (BF16, BF16), F32),
    ("pow", (BF16, 2), F32), ("maximum", (BF16, BF16), F32), ("remainder", (F16, F16), F32), ("neg", (BF16,), F32),
    ("add", (I32, I64), I64), ("add", (I32, 1), I32), ("add", (B, 1), I64), ("add", (B, B), B),
    ("add", (F32, F64), F64), ("add", (F32, 2.5), F32), ("div", (I64, I64), I64),
    ("mul", (I64, 2.5), F64), ("pow", (I32, 0.5), F64),  # a Double scalar is not demoted to Float (torch: Float)
    ("mul", (F32, 1j), C64),
    # float_op_config: integral and Bool inputs become Float too
    ("sin", (I64,), F32), ("exp", (B,), F32), ("sqrt", (BF16,), F32), ("tanh", (F64,), F64),
    ("truediv", (I64, I64), F32), ("atan2", (I32, BF16), F32), ("erfcinv", (F16,), F32),
    # comparisons and signbit: computed in the common dtype, Bool out
    ("eq", (BF16, BF16), B), ("lt", (I64, 2.5), B), ("signbit", (BF16,), B),
    # no promotion: the input's dtype
    ("abs", (BF16,), BF16), ("abs", (C64,), F32), ("ceil", (F32,), F32), ("relu", (I64,), I64),
    ("sign", (BF16,), BF16), ("isfinite", (BF16,), B), ("isnan", (F32,), B), ("clamp", (I64, -0.5, 4.5), I64),
    ("threshold", (F32, 0.5, 1), F32),
    # where promotes its two values without the 16-bit -> Float step
    ("where", (B, BF16, BF16), BF16), ("where", (B, BF16, 0), BF16), ("where", (B, I32, 1.5), F64),
    ("where", (B, 3.0, 5.0), F64),
    ("lerp", (BF16, BF16, 0.5), F32), ("addcmul", (BF16, BF16, BF16, 0.5), F32),
    ("bitwise_and", (B, I64), I64), ("bitwise_or", (I32, 3), I32), ("logical_and", (I64, F32), B),
])
def test_dtype_follows_nvfuser_promotion(op, args, want):
    assert _out_dtype(op, *args) is want


def test_reductions_and_scalar_arithmetic():
    assert _out_dtype("sum", BF16, dims=[0], dtype=F32) is F32
    assert _out_dtype("sum", I32, dims=[0]) is I64
    assert _out_dtype("max", BF16, dims=[0]) is BF16
    fd = FusionDefinition()
    n, x = fd.define_scalar(dtype=I64), fd.define_scalar(dtype=F64)
    assert fd.ops.add(n, x).dtype is F64 and fd.ops.mul(n, 2).dtype is I64


def _run(build, *inputs):
    fd = FusionDefinition()
    vals = [fd.from_pytorch(t) for t in inputs]
    fd.add_output(build(fd, *vals))
    return segkit.run_reference(fd, list(inputs))[0]


def test_reference_computes_in_the_promoted_dtype():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(4, 5, generator=g).bfloat16(), torch.randn(4, 5, generator=g).bfloat16()
    got = _run(lambda fd, x, y: fd.ops.add(x, y), a, b)
    assert got.dtype == torch.float32 and torch.equal(got, a.float() + b.float())  # not rounded to bfloat16
    got = _run(lambda fd, x: fd.ops.sin(x), a)
    assert got.dtype == torch.float32 and torch.equal(got, torch.sin(a.float()))
    i = torch.randint(-9, 9, (4, 5), generator=g)
    got = _run(lambda fd, x: fd.ops.mul(x, 0.1), i)
    assert got.dtype == torch.float64 and torch.equal(got, i.double() * 0.1)
    got = _run(lambda fd, x: fd.ops.clamp(x, -2.5, 3.7), i)  # bounds cast to Int first: [-2, 3]
    assert got.dtype == torch.int64 and torch.equal(got, i.clamp(-2, 3))


@pytest.mark.parametrize("op", sorted(UNCOMPILABLE))
def test_what_nvfuser_cannot_compile_is_refused_at_the_call(op):
    spec = UNCOMPILABLE[op]
    for dt in spec.dtypes:
        for sample in spec.make(dt):
            fd = FusionDefinition()
            vals = [fd.define_tensor(list(x.shape), dtype=dt) if isinstance(x, torch.Tensor) else
                    fd.define_scalar(dtype=I64 if isinstance(x, int) else F64) for x in sample.inputs]
            with pytest.raises(FusionDefinitionError, match=rf"fd\.ops\.{op} at .*op_samples\.py:\d+: .*"
                                                             rf"nvFuser cannot compile {op} on \w+: "):
                sample.build(fd, vals)


def test_refusal_says_how_to_get_a_compilable_fusion():
    fd = FusionDefinition()
    x = fd.define_tensor([2, 3], dtype=BF16)
    with pytest.raises(FusionDefinitionError, match=r"runtime/helpers\.cu.*cast x to Float first"):
        fd.ops.floor(x)
    with pytest.raises(FusionDefinitionError, match=r"pass dtype=DataType\.Float"):
        fd.ops.sum(x, dims=[1])
    with pytest.raises(FusionDefinitionError, match=r"mod on Float: .*% operator.*use fmod or remainder"):
        fd.ops.mod(x, x)
    with pytest.raises(FusionDefinitionError, match=r"nextafter.*single or double precision.*BFloat16"):
        fd.ops.nextafter(x, x)
    with pytest.raises(FusionDefinitionError, match=r"where.*condition should be of DataType Bool"):
        fd.ops.where(x, x, x)
    assert fd.ops.floor(fd.ops.cast(x, DataType.Float)).dtype is F32  # the suggested fix records


def test_a_dtype_disagreement_is_its_own_verdict():
    ref = torch.ones(3, dtype=torch.bfloat16)
    d = diff(0, ref, ref.float(), label="nvFuser")
    assert not d.ok and str(d) == "output 0: dtype differs: nvFuser Float vs reference BFloat16: MISMATCH"
    fd = FusionDefinition()
    x = fd.define_tensor([3], dtype=BF16)
    fd.add_output(fd.ops.abs(x))
    report = check_outputs(fd, [ref], [ref.float()])
    assert not report.ok and "dtype differs: nvFuser Float vs reference BFloat16" in str(report)
    assert "tol" not in str(report)
    assert check_outputs(fd, [ref], [ref.clone()]).ok


def test_zero_dim_tensors_and_scalars_rank_below_tensors():
    from segkit.ir import Value
    from segkit.ops.promotion import common_dtype

    t32, zero64, zerof = Value("a", I32, (2,)), Value("b", I64, ()), Value("c", F64, ())
    assert common_dtype([t32, zero64]) is I32  # a 0-dim tensor of the same category does not widen
    assert common_dtype([t32, zerof]) is F64  # of a higher category it does, and a Double stays Double
    assert common_dtype([Value("d", BF16, (2,)), Value("s", F16)], half_to_float=False) is BF16
    assert common_dtype([Value("d", I64, (2,)), Value("s", BF16)], half_to_float=False) is F32  # 16-bit scalar
