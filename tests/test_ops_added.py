"""The ops added for nvfuser_direct's whole surface: recorded through segkit.FusionDefinition, run on the
reference interpreter, and checked against torch computations written here (not the catalogue's own
references); bad arguments give FusionDefinitionError naming the op, the argument and the user's line."""

from __future__ import annotations

import math

import pytest
import torch

import segkit
from segkit import DataType, FusionDefinition, FusionDefinitionError
from segkit.check import check_outputs, random_outputs
from segkit.compare import compare_random


def _fusion(build, inputs):
    fd = FusionDefinition()
    vals = [fd.from_pytorch(x) if isinstance(x, torch.Tensor) else
            fd.define_scalar(dtype=DataType.Int if isinstance(x, int) else DataType.Double) for x in inputs]
    outs = build(fd, *vals)
    for o in outs if isinstance(outs, tuple) else (outs,):
        fd.add_output(o)
    return fd


def run(build, *inputs):
    outs = segkit.run_reference(_fusion(build, inputs), list(inputs))
    return outs[0] if len(outs) == 1 else outs


def close(a, b, **kw):
    torch.testing.assert_close(a, b, equal_nan=True, **kw)


g = torch.Generator().manual_seed(0)
X = torch.randn(4, 6, generator=g)
Y = torch.randn(4, 6, generator=g)
I = torch.randint(-50, 50, (4, 6), generator=g)
J = torch.randint(1, 30, (4, 6), generator=g)


# --------------------------------------------------------------------------- pointwise
def test_pointwise_additions_match_torch():
    close(run(lambda fd, x: fd.ops.erfcinv(x), X.sigmoid()), torch.special.erfinv(1 - X.sigmoid().double()).float())
    close(run(lambda fd, x: fd.ops.gcd(x, 6), I), torch.gcd(I, torch.tensor(6)))
    close(run(lambda fd, x, y: fd.ops.gcd(x, y), I, J), torch.gcd(I, J))
    close(run(lambda fd, x: fd.ops.threshold(x, 0.25, -3.0), X), torch.nn.functional.threshold(X, 0.25, -3.0))
    close(run(lambda fd, a, b, c: fd.ops.addcmul(a, b, c, 0.5), X, Y, X), torch.addcmul(X, Y, X, value=0.5))
    assert run(lambda fd, x: fd.ops.addcmul(x, x, x, 0.5), I).dtype == torch.int64  # alpha cast to Int: 0
    close(run(lambda fd, x: fd.ops.addcmul(x, x, x, 0.5), I), I)


def test_logical_right_shift_is_unsigned():
    x = torch.tensor([-8, -1, 7, 1 << 40], dtype=torch.int64)
    got = run(lambda fd, a: fd.ops.logical_right_shift(a, 3), x)
    assert got.tolist() == [(v % (1 << 64)) >> 3 for v in x.tolist()]  # the bits as unsigned, shifted
    x32 = torch.tensor([-8, 16], dtype=torch.int32)
    assert run(lambda fd, a: fd.ops.logical_right_shift(a, 2), x32).tolist() == [((1 << 32) - 8) >> 2, 4]


def test_complex_real_imag_isreal():
    z = run(lambda fd, a, b: fd.ops.complex(a, b), X, Y)
    assert z.dtype == torch.complex64
    close(z, X + 1j * Y)
    zz = torch.complex(X, Y)
    zz[0, 0] = complex(1.0, 0.0)
    close(run(lambda fd, z: fd.ops.real(z), zz), zz.real)
    close(run(lambda fd, z: fd.ops.imag(z), zz), zz.imag)
    assert run(lambda fd, z: fd.ops.isreal(z), zz).sum().item() == 1
    assert run(lambda fd, x: fd.ops.isreal(x), X).all()
    close(run(lambda fd, x: fd.ops.real(x), X), X)


# --------------------------------------------------------------------------- reductions' overloads
@pytest.mark.parametrize("call, want", [
    (lambda fd, x: fd.ops.sum(x, dim=1), lambda x: x.sum(1)),
    (lambda fd, x: fd.ops.sum(x, 1, True), lambda x: x.sum(1, keepdim=True)),
    (lambda fd, x: fd.ops.sum(x), lambda x: x.sum()),
    (lambda fd, x: fd.ops.sum(x, DataType.Double), lambda x: x.double().sum()),
    (lambda fd, x: fd.ops.sum(x, dims=[0, 1], dtype=DataType.Null), lambda x: x.sum()),
    (lambda fd, x: fd.ops.sum(x, dims=[]), lambda x: x),
    (lambda fd, x: fd.ops.prod(x, dim=0, dtype=DataType.Double), lambda x: x.double().prod(0)),
    (lambda fd, x: fd.ops.max(x, dim=-1, dtype=DataType.Null), lambda x: x.amax(-1)),
    (lambda fd, x: fd.ops.min(x, dims=[0], keepdim=True), lambda x: x.amin(0, keepdim=True)),
    (lambda fd, x: fd.ops.max(x), lambda x: x.max()),
])
def test_reduction_overloads(call, want):
    close(run(call, X), want(X))


def test_reduction_overload_errors_name_the_argument():
    fd = FusionDefinition()
    x = fd.define_tensor([-1, -1])
    with pytest.raises(FusionDefinitionError, match=r"fd\.ops\.max.*test_ops_added\.py.*DataType\.Null"):
        fd.ops.max(x, dim=0, dtype=DataType.Float)
    with pytest.raises(FusionDefinitionError, match=r"fd\.ops\.sum.*keepdim needs dim"):
        fd.ops.sum(x, keepdim=True)
    with pytest.raises(FusionDefinitionError, match=r"fd\.ops\.sum.*dim= or dims=, not both"):
        fd.ops.sum(x, dim=0, dims=[1])


# --------------------------------------------------------------------------- indexing, scans, sort
def test_indexing_ops_match_torch():
    idx = torch.tensor([3, 0, 0, 2])
    close(run(lambda fd, x, i: fd.ops.index_select(x, i, dim=0), X, idx), X[idx])
    close(run(lambda fd, x, i: fd.ops.index_select(x, i, 1), X, idx.int()), X[:, idx])
    gi = torch.randint(0, 6, (3, 2), generator=g)
    close(run(lambda fd, x, i: fd.ops.gather(x, i, 1), X, gi), torch.stack([X[r, gi[r]] for r in range(3)]))
    ti = torch.randint(0, 4, (2, 6), generator=g)
    close(run(lambda fd, x, i: fd.ops.take_along_axis(x, i, 0), X, ti),
          torch.stack([X[ti[r], torch.arange(6)] for r in range(2)]))
    perm = torch.stack([torch.randperm(4, generator=g)[:2] for _ in range(6)], 1)
    src = torch.randn(2, 6, generator=g)
    want = X.clone()
    for r in range(2):
        for c in range(6):
            want[perm[r, c], c] = src[r, c]
    close(run(lambda fd, x, i, s: fd.ops.scatter(x, i, s, 0), X, perm, src), want)
    want2 = X.clone()
    for r in range(2):
        for c in range(6):
            want2[perm[r, c], c] = 7.0
    close(run(lambda fd, x, i, s: fd.ops.scatter(x, i, s, dim=0), X, perm, 7.0), want2)


def test_embedding_fwd():
    w = torch.randn(10, 3, generator=g)
    ids = torch.tensor([[1, 9], [0, 1]])
    close(run(lambda fd, i, w: fd.ops.embedding_fwd(i, w), ids, w), w[ids])
    got = run(lambda fd, i, w, m: fd.ops.embedding_fwd(i, w, max_norm=m), ids, w * 10, 1.0)
    rows = (w * 10)[ids]
    close(got, rows / rows.norm(dim=-1, keepdim=True).clamp(min=1.0) * (1 + 0 * rows), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op, want", [
    ("cumsum", lambda x, d: torch.stack([x.narrow(d, 0, k + 1).sum(d) for k in range(x.shape[d])], d)),
    ("cumprod", lambda x, d: torch.stack([x.narrow(d, 0, k + 1).prod(d) for k in range(x.shape[d])], d)),
    ("cummax", lambda x, d: torch.stack([x.narrow(d, 0, k + 1).amax(d) for k in range(x.shape[d])], d)),
    ("cummin", lambda x, d: torch.stack([x.narrow(d, 0, k + 1).amin(d) for k in range(x.shape[d])], d)),
])
def test_scans(op, want):
    close(run(lambda fd, x: getattr(fd.ops, op)(x, 1), X), want(X, 1), rtol=1e-5, atol=1e-5)
    close(run(lambda fd, x: getattr(fd.ops, op)(x, dim=0), I), want(I, 0))


def test_sort_topk_triu():
    x = torch.stack([torch.randperm(9, generator=g) for _ in range(3)]).float()
    order = run(lambda fd, a: fd.ops.argsort(a, 1), x)
    assert order.dtype == torch.int64 and torch.equal(x.gather(1, order), x.sort(1).values)
    desc = run(lambda fd, a: fd.ops.argsort(a, dim=0, descending=True), x)
    assert torch.equal(x.gather(0, desc), x.sort(0, descending=True).values)
    vals, idx = run(lambda fd, a: fd.ops.topk(a, fd.define_scalar(2, dtype=DataType.Int), sorted=True), x)
    assert vals.tolist() == [sorted(r, reverse=True)[:2] for r in x.tolist()]
    assert torch.equal(x.gather(1, idx), vals)
    small, _ = run(lambda fd, a: fd.ops.topk(a, fd.define_scalar(3, dtype=DataType.Int), 0, False, True), x)
    assert small.tolist() == [list(c) for c in zip(*[sorted(col)[:3] for col in x.t().tolist()])]
    close(run(lambda fd, a: fd.ops.triu(a, -1), X), torch.tensor(
        [[v if c >= r - 1 else 0.0 for c, v in enumerate(row)] for r, row in enumerate(X.tolist())]))


# --------------------------------------------------------------------------- matmul family
def test_matmul_and_linear():
    a, b = torch.randn(2, 4, 5, generator=g), torch.randn(5, 3, generator=g)
    close(run(lambda fd, x, y: fd.ops.matmul(x, y), a, b), torch.einsum("bik,kj->bij", a, b))
    v = torch.randn(5, generator=g)
    close(run(lambda fd, x, y: fd.ops.matmul(x, y), a, v), torch.einsum("bik,k->bi", a, v))
    w, bias = torch.randn(3, 5, generator=g), torch.randn(3, generator=g)
    close(run(lambda fd, x, w, b: fd.ops.linear(x, w, bias=b), a, w, bias), torch.einsum("bik,nk->bin", a, w) + bias)
    close(run(lambda fd, x, w: fd.ops.linear(x, w), v, w[None]), (w @ v)[None])


def test_grouped_mm_follows_nvfusers_three_layouts():
    offs = torch.tensor([2, 5], dtype=torch.int32)
    m1, m2 = torch.randn(3, 5, generator=g), torch.randn(5, 4, generator=g)
    got = run(lambda fd, a, b, o: fd.ops.grouped_mm(a, b, o), m1, m2, offs)
    close(got, torch.stack([m1[:, :2] @ m2[:2], m1[:, 2:] @ m2[2:]]))
    g1, n2 = torch.randn(2, 3, 5, generator=g), torch.randn(5, 5, generator=g)
    got = run(lambda fd, a, b, o: fd.ops.grouped_mm(a, b, o), g1, n2, offs)
    close(got, torch.cat([g1[0] @ n2[:, :2], g1[1] @ n2[:, 2:]], 1))
    m, g2 = torch.randn(5, 5, generator=g), torch.randn(2, 5, 4, generator=g)
    got = run(lambda fd, a, b, o: fd.ops.grouped_mm(a, b, o), m, g2, offs)
    close(got, torch.cat([m[:2] @ g2[0], m[2:] @ g2[1]], 0))


def _attention(q, k, v, causal=False, scale=None):
    s = q @ k.transpose(-1, -2) * (scale or 1 / math.sqrt(q.shape[-1]))
    if causal:
        s = s + torch.full(s.shape[-2:], float("-inf")).triu(1)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def test_sdpfa_fwd_and_bwd_follow_nvfusers_outputs():
    q, k, v, go = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(4))
    out, lse, seed, offset = run(lambda fd, q, k, v: fd.ops.sdpfa_fwd(q, k, v, is_causal=True, scale=0.4), q, k, v)
    want_out, want_lse = _attention(q, k, v, True, 0.4)
    close(out, want_out, rtol=1e-5, atol=1e-5)
    close(lse, want_lse, rtol=1e-5, atol=1e-5)
    assert lse.dtype == torch.float32 and seed.shape == (2,) and seed.dtype == torch.uint64 and offset.shape == ()

    def both(fd, q, k, v, go):
        o, l, s, off = fd.ops.sdpfa_fwd(q, k, v)
        return fd.ops.sdpfa_bwd(go, q, k, v, o, l, None, False, s, off, None)
    grads = run(both, q, k, v, go)
    qs, ks, vs = (t.clone().requires_grad_() for t in (q, k, v))
    _attention(qs, ks, vs)[0].backward(go)
    for got, t in zip(grads, (qs, ks, vs)):
        close(got, t.grad, rtol=1e-4, atol=1e-5)
    bf = [t.bfloat16() for t in (q, k, v)]
    assert run(lambda fd, q, k, v: fd.ops.sdpfa_fwd(q, k, v), *bf)[0].dtype == torch.bfloat16


# --------------------------------------------------------------------------- random ops
def test_random_ops_are_marked_and_compared_by_statistics():
    def build(fd, x, lo, seed, off):
        return (fd.ops.uniform(lo, 3.0, [50, 40], rng_seed=seed, rng_offset=off, dtype=DataType.Float),
                fd.ops.normal(1.0, 2.0, [50, 40]), fd.ops.rand_like(x), fd.ops.add(fd.ops.randn_like(x), x), x)
    x = torch.randn(30, 30, generator=g)
    fd = _fusion(build, [x, -1.0, 5, 0])
    assert random_outputs(fd) == [True, True, True, True, False]
    first = segkit.run_reference(fd, [x, -1.0, 5, 0])
    again = segkit.run_reference(fd, [x, -1.0, 5, 0])
    assert torch.equal(first[0], again[0])  # a seeded draw repeats
    u = first[0]
    assert u.min() >= -1.0 and u.max() < 3.0 and abs(u.mean().item() - 1.0) < 0.15
    assert abs(first[1].mean().item() - 1.0) < 0.2 and abs(first[1].std().item() - 2.0) < 0.2
    other = segkit.run_reference(fd, [x, -1.0, 6, 0])
    report = check_outputs(fd, [x, -1.0, 5, 0], other)
    assert report.ok and "random" in str(report) and "moments" in str(report)
    assert not compare_random(0, first[1], first[1] * 5 + 3).ok  # another distribution is caught
    assert not compare_random(0, first[0], first[0][:10]).ok
    bad = [t.clone() for t in other]
    bad[4] = bad[4] + 1  # a deterministic output still compares element by element
    assert not check_outputs(fd, [x, -1.0, 5, 0], bad).ok


def test_sdpfa_philox_outputs_are_random_and_dropout_makes_attention_random():
    def build(fd, q, k, v):
        return fd.ops.sdpfa_fwd(q, k, v, dropout_p=0.1)[:3] + fd.ops.sdpfa_fwd(q, k, v)[:2]
    q = torch.randn(1, 1, 4, 8, generator=g)
    assert random_outputs(_fusion(build, [q, q, q])) == [True, True, True, False, False]


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize("build, pattern", [
    (lambda fd, x, i: fd.ops.index_select(x, i, dim=2), r"fd\.ops\.index_select.*dim 2 is out of range"),
    (lambda fd, x, i: fd.ops.index_select(x, x, dim=0), r"fd\.ops\.index_select.*index must be an Int"),
    (lambda fd, x, i: fd.ops.gather(x, i, 0), r"fd\.ops\.gather.*different ranks"),
    (lambda fd, x, i: fd.ops.topk(x, 2), r"fd\.ops\.topk.*k must be an Int scalar"),
    (lambda fd, x, i: fd.ops.triu(i), r"fd\.ops\.triu.*2 or more dims"),
    (lambda fd, x, i: fd.ops.matmul(x, i), r"fd\.ops\.matmul.*one dtype"),
    (lambda fd, x, i: fd.ops.linear(x, fd.ops.permute(x, [1, 0])), r"fd\.ops\.linear.*contraction sizes differ"),
    (lambda fd, x, i: fd.ops.gcd(x, x), r"fd\.ops\.gcd.*lhs must have an integral dtype"),
    (lambda fd, x, i: fd.ops.imag(x), r"fd\.ops\.imag.*non-complex"),
    (lambda fd, x, i: fd.ops.complex(x, 1.0), r"fd\.ops\.complex.*imag must be a tensor or a scalar"),
    (lambda fd, x, i: fd.ops.uniform(0.0, 1.0, [2], dtype=DataType.Int), r"fd\.ops\.uniform.*floating point"),
    (lambda fd, x, i: fd.ops.uniform(0.0, 1.0, [2], 3), r"fd\.ops\.uniform.*keyword-only"),
    (lambda fd, x, i: fd.ops.rand_like(i), r"fd\.ops\.rand_like.*floating point"),
    (lambda fd, x, i: fd.ops.grouped_mm(x, x, i), r"fd\.ops\.grouped_mm.*offsets must be a 1-d Int32"),
    (lambda fd, x, i: fd.ops.sdpfa_fwd(x, x, x), r"fd\.ops\.sdpfa_fwd.*rank >= 4"),
    (lambda fd, x, i: fd.ops.cumsum(x, 3), r"fd\.ops\.cumsum.*dim 3 is out of range"),
    (lambda fd, x, i: fd.ops.embedding_fwd(i, x, padding_idx=1), r"fd\.ops\.embedding_fwd.*padding_idx must be a scalar"),
])
def test_bad_arguments_name_op_argument_and_line(build, pattern):
    fd = FusionDefinition()
    x = fd.define_tensor([3, 4], dtype=DataType.Float)
    i = fd.define_tensor([5], dtype=DataType.Int)
    with pytest.raises(FusionDefinitionError, match=pattern) as e:
        build(fd, x, i)
    assert "test_ops_added.py" in str(e.value)
