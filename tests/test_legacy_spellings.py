"""Every spelling of nvFuser's legacy Python frontend (the ``nvfuser`` package) that segkit's recording frontend
accepts beyond nvfuser_direct's, each with the nvFuser source that accepted it, recorded and run on the reference
against torch's answer (real numbers).

Sources: NVIDIA/Fuser ``csrc/python_frontend/python_bindings.cpp`` (2023-03 to 2025-04, then
``python/python_frontend/python_bindings.cpp`` until the legacy bindings were removed in PR #5917, 2026-02);
the commit that renamed or removed a spelling is named in each case.
"""

from __future__ import annotations

import pytest
import torch

from segkit import DataType, FusionDefinition, FusionDefinitionError, SegkitError

X = torch.arange(12, dtype=torch.float32).reshape(3, 4) / 7 - 0.5


def _run(build, inputs):
    with FusionDefinition() as fd:
        outs = build(fd)
        for out in outs if isinstance(outs, (list, tuple)) else [outs]:
            fd.add_output(out)
    return fd.execute(inputs)


def _t(fd, rank=2):
    return fd.define_tensor(shape=[-1] * rank, contiguity=[True] * rank, dtype=DataType.Float)


def _full(fd):
    _t(fd)
    return fd.ops.full(size=[2, 3], arg=fd.define_scalar(1.5), dtype=DataType.Float)


def _gather(fd):
    return fd.ops.gather(arg1=_t(fd), index=fd.define_tensor([3, 1], [True, None], DataType.Int), dim=1)


def _uniform(fd):
    _t(fd)
    return fd.ops.uniform(0.0, 1.0, [2, 3], DataType.Double)


def _tensor_sizes(fd):
    x = _t(fd)
    rows, cols = fd.ops.tensor_sizes(x)
    return fd.ops.reshape(x, new_shape=[cols, rows])


def _at(fd):
    x = _t(fd)
    sizes = fd.ops.shape(x)
    return fd.ops.broadcast_in_dim(fd.ops.sum(x, dims=[1]), shape=[fd.ops.at(sizes, 0), fd.ops.at(sizes, 1)],
                                   broadcast_dims=[0])


def _with_alpha(name, alpha):
    def build(fd):
        x = _t(fd)
        return getattr(fd.ops, name)(x, fd.ops.exp(x), alpha)
    return build


INDEX = torch.tensor([[3], [0], [2]])


#: (spelling, where nvFuser accepted it, fusion builder, torch's answer on X)
CASES = [
    # reductions: axis= (one dim) and axes= (a list) until PR #1741 "Rename axes= to dims= in frontend" (2024-02-08)
    ("sum(x, axes=[1])", "PR #1741", lambda fd: fd.ops.sum(_t(fd), axes=[1]), lambda x: x.sum(1)),
    ("sum(x, axes=[0], keepdim=True)", "PR #1741", lambda fd: fd.ops.sum(_t(fd), axes=[0], keepdim=True),
     lambda x: x.sum(0, keepdim=True)),
    ("sum(x, axes=[1], keepdim=False, dtype=Double)", "PR #1741",
     lambda fd: fd.ops.sum(_t(fd), axes=[1], keepdim=False, dtype=DataType.Double), lambda x: x.double().sum(1)),
    ("max(x, axis=0)", "PR #1741", lambda fd: fd.ops.max(_t(fd), axis=0), lambda x: x.amax(0)),
    ("min(x, axes=[0, 1])", "PR #1741", lambda fd: fd.ops.min(_t(fd), axes=[0, 1]), lambda x: x.amin((0, 1))),
    ("prod(x, axis=1, keepdim=True)", "PR #1741", lambda fd: fd.ops.prod(_t(fd), axis=1, keepdim=True),
     lambda x: x.prod(1, keepdim=True)),
    ("var(x, axes=[1], correction=0)", "PR #1741", lambda fd: fd.ops.var(_t(fd), axes=[1], correction=0),
     lambda x: x.double().var(1, correction=0).float()),
    ("var_mean(x, axes=[0], correction=1)", "PR #1741",
     lambda fd: fd.ops.var_mean(_t(fd), axes=[0], correction=1),
     lambda x: tuple(t.float() for t in torch.var_mean(x.double(), 0, correction=1))),
    # broadcast_in_dim(output_shape=) until PR #721 (2023-08-16, nvFuser 0.0.18)
    ("broadcast_in_dim(x, output_shape=, broadcast_dims=)", "PR #721",
     lambda fd: fd.ops.broadcast_in_dim(fd.ops.sum(_t(fd), dims=[1]), output_shape=[3, 4], broadcast_dims=[0]),
     lambda x: x.sum(1, keepdim=True).expand(3, 4)),
    # reshape(arg, original_shape, new_shape) until PR #1043 (2023-10-12); squeeze(arg, original_shape, dims) until
    # PR #1325 (2024-01-09)
    ("reshape(x, [3, 4], [4, 3])", "PR #1043",
     lambda fd: fd.ops.reshape(fd.define_tensor([3, 4], [True, True]), [3, 4], [4, 3]), lambda x: x.reshape(4, 3)),
    ("reshape(x, original_shape=, new_shape=)", "PR #1043",
     lambda fd: fd.ops.reshape(_t(fd), original_shape=[3, 4], new_shape=[2, 6]), lambda x: x.reshape(2, 6)),
    ("squeeze(x, original_shape, dims)", "PR #1325",
     lambda fd: fd.ops.squeeze(fd.ops.sum(_t(fd), dims=[1], keepdim=True), [3, 1], [1]), lambda x: x.sum(1)),
    # full(size=, arg=, dtype=) until PR #593 "Fix ops.full printing" (2023-08-08)
    ("full(size=, arg=, dtype=)", "PR #593",
     _full, lambda x: torch.full((2, 3), 1.5)),
    # gather / take_along_axis: the operand was arg1= in every legacy version (2023-03 to 2026-02)
    ("gather(arg1=, index=, dim=)", "python_bindings.cpp, all versions",
     _gather, lambda x: torch.gather(x, 1, INDEX)),
    # define_tensor: symbolic_sizes= until PR #701 (2023-08-09), contiguous= until PR #191 (2023-04-20), and the
    # (sizes, strides, dtype) overload given positionally (every version)
    ("define_tensor(symbolic_sizes=, contiguous=)", "PRs #701, #191",
     lambda fd: fd.ops.neg(fd.define_tensor(symbolic_sizes=[-1, -1], contiguous=[True, True])), lambda x: -x),
    ("define_tensor([3, 4], [4, 1], DataType.Float)", "python_bindings.cpp, all versions",
     lambda fd: fd.ops.neg(fd.define_tensor([3, 4], [4, 1], DataType.Float)), lambda x: -x),
    # define_constant(val=) until PR #208 (2023-05-30), define_constant(value) after it
    ("define_constant(val=2.0)", "PR #208",
     lambda fd: fd.ops.mul(_t(fd), fd.define_constant(val=2.0)), lambda x: x * 2),
    # uniform / normal with dtype as the 4th positional argument until PR #1283 (2023-11-15): shapes only
    ("uniform(lo, hi, shape, DataType.Double)", "PR #1283",
     _uniform, None),
    # legacy ops nvfuser_direct lacks: tensor_sizes (2023-03 on), at (PR #354, 2023-08), add_alpha / sub_alpha
    ("tensor_sizes(x) into reshape", "python_bindings.cpp, all versions",
     _tensor_sizes, lambda x: x.reshape(4, 3)),
    ("at(shape(x), 1) into broadcast_in_dim", "PR #354",
     _at, lambda x: x.sum(1, keepdim=True).expand(3, 4)),
    ("add_alpha(x, x, 0.5)", "python_bindings.cpp, all versions (arith.cpp add_alpha)",
     _with_alpha("add_alpha", 0.5), lambda x: x + x.exp() * 0.5),
    ("sub_alpha(x, x, 3)", "python_bindings.cpp, all versions (arith.cpp sub_alpha)",
     _with_alpha("sub_alpha", 3), lambda x: x - x.exp() * 3),
]


@pytest.mark.parametrize("spelling, source, build, expected", CASES, ids=[c[0] for c in CASES])
def test_legacy_spelling_records_and_computes_torchs_answer(spelling, source, build, expected):
    got = _run(build, [X, INDEX] if build is _gather else [X])
    if expected is None:  # random: shape and dtype only
        assert got[0].shape == (2, 3) and got[0].dtype == torch.float64 and bool(((got[0] >= 0) & (got[0] < 1)).all())
        return
    want = expected(X)
    want = list(want) if isinstance(want, tuple) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-6, atol=1e-6)


def test_add_output_with_a_positional_stride_order_is_a_layout_not_an_alias():
    # the legacy binding's add_output(output, stride_order) overload (python_bindings.cpp, 2023-03 to 2026-02)
    with FusionDefinition() as fd:
        x = _t(fd, 3)
        fd.add_output(fd.ops.relu(x), (0, 2, 1))
    assert not fd.fusion.aliases
    x = torch.randn(2, 3, 4)
    (out,) = fd.execute([x])
    torch.testing.assert_close(out, x.relu())
    assert out.stride() == (1, 8, 2)


def test_legacy_sum_axes_with_keepdim_is_no_longer_refused():
    # the "keepdim needs dim= or dims=" on sum(x, axes=..., keepdim=...)
    (out,) = _run(lambda fd: fd.ops.sum(_t(fd), axes=[1], keepdim=True), [X])
    assert out.shape == (3, 1)


@pytest.mark.parametrize("build, match", [
    (lambda fd: fd.ops.sum(_t(fd), axes=[1], dims=[0]), "axes= .*older name of dims=.* give one"),
    (lambda fd: fd.define_tensor(shape=[-1], symbolic_sizes=[-1]), "symbolic_sizes= .*older name of shape="),
    (lambda fd: fd.ops.reshape(_t(fd), original_shape=[12], new_shape=[12]), r"original_shape \[12\].*does not match"),
    (lambda fd: fd.ops.reshape(fd.define_tensor([3, 4], [True, True]), [3, 5], [15]), "does not match"),
    (lambda fd: fd.ops.at(fd.ops.shape(_t(fd)), 2), "index 2 is out of range for a vector of size 2"),
    (lambda fd: fd.define_constant(), "define_constant needs a value"),
    (lambda fd: fd.add_output(_t(fd), (1, 0), stride_order=[1, 0]), "stride order positionally and stride_order="),
])
def test_conflicting_or_wrong_legacy_spellings_say_what_is_wrong_at_the_users_line(build, match):
    with pytest.raises(FusionDefinitionError, match=match) as err:
        with FusionDefinition() as fd:
            build(fd)
    assert "test_legacy_spellings.py" in str(err.value)


def test_the_2022_frontend_spellings_ndims_add_input_and_Ops():
    # torch._C._nvfuser as first added to PyTorch: https://github.com/pytorch/pytorch/pull/76353 (its example):
    # define_tensor(ndims), fd.add_input(...) in its call order, fd.Ops.<op>
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(3)
        s0 = fd.define_scalar()
        t1 = fd.define_tensor(1, DataType.Float)
        fd.add_input(t0)
        fd.add_input(t1)
        fd.add_input(s0)
        t2 = fd.Ops.add(t0, t1)
        t5 = fd.Ops.relu(fd.Ops.mul(fd.Ops.mul(t2, fd.define_constant(3.0)), s0))
        fd.add_output(fd.Ops.sum(t5, [-1], False))
    assert fd.fusion.inputs == [t0, t1, s0]
    a, b = torch.randn(2, 4, 8), torch.randn(8)
    (out,) = fd.execute([a, b, 2.0])
    torch.testing.assert_close(out, ((a + b) * 3.0 * 2.0).relu().sum(-1))


def test_add_input_of_a_value_twice_is_refused():
    with pytest.raises(FusionDefinitionError, match="add_input.*once"):
        with FusionDefinition() as fd:
            t0 = fd.define_tensor(ndims=2)
            fd.add_input(t0)
            fd.add_input(t0)


def test_a_symbolic_dim_of_size_1_is_not_silently_broadcast():
    # https://github.com/csarofeen/pytorch/issues/2359: nvFuser refuses this ("Attempting to bind T0.size[1] to 2
    # but it's already set to 1"): nv_a's dims are symbolic, not broadcasts, so its size-1 dim cannot expand
    with FusionDefinition() as fd:
        nv_a = fd.define_tensor(ndims=2, dtype=DataType.Float)
        nv_b = fd.define_tensor(ndims=2, dtype=DataType.Float)
        fd.add_output(fd.ops.add(nv_b, fd.ops.broadcast_in_dim(nv_a, (2, 2), (0, 1))))
    with pytest.raises(SegkitError, match=r"broadcast_in_dim: dim 1 of tv0 .*not a broadcast dim.* size 1 at run time"):
        fd.execute([torch.ones(2, 1), torch.ones(2, 2)])
    a, b = torch.randn(2, 2), torch.randn(2, 2)
    torch.testing.assert_close(fd.execute([a, b])[0], a + b)
