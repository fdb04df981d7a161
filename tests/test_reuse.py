"""segkit.reuse_reductions on CPU: for random sets of max / min / sum reductions of one tensor (each written with
its own abs(cast(x)) prologue or sharing one, any keepdim), the rewritten fusion computes the original's outputs
on the reference interpreter, reads its input once (one prologue), and keeps one full-size reduction per
inclusion-minimal dim set; half-precision sums are left alone; Thunder's own captured fp8 region is rewritten."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import fusions
import segkit
from segkit import DataType, FusionDefinition
from segkit.reuse import full_size_reductions, reuse_reductions
from tests.conftest import DATA


def _reductions(data, ndim: int) -> list[tuple[str, list[int] | None, bool, bool]]:
    """(kind, dims or None for all, keepdim, own prologue) of 1-6 reductions."""
    dims = st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True).map(sorted)
    kinds = st.sampled_from(["max", "min", "sum"])
    one = st.tuples(kinds, st.one_of(dims, st.none()), st.booleans(), st.booleans())
    reds = data.draw(st.lists(one, min_size=1, max_size=6))
    if ndim > 1 and data.draw(st.booleans()):  # a rowwise + columnwise pair (what inner_outer pairs)
        k, kind = data.draw(st.integers(1, ndim - 1)), data.draw(kinds)
        reds += [(kind, list(range(k, ndim)), data.draw(st.booleans()), False), (kind, list(range(k)), False, False)]
    return reds


def _expected_full_reductions(reds) -> int:
    """Reductions whose dim set has no proper subset among reductions of the same kind: they still read x."""
    sets = [(kind, frozenset(range(99)) if dims is None else frozenset(dims)) for kind, dims, _, _ in reds]
    return sum(1 for k, d in sets if not any(k2 == k and d2 < d for k2, d2 in sets))


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_rewritten_fusion_matches_and_reads_the_input_once(data):
    shape = data.draw(st.lists(st.integers(2, 5), min_size=1, max_size=4))
    reds = _reductions(data, len(shape))
    reds = [(k, None if d is None or len(d) == len(shape) else d, kd, own) for k, d, kd, own in reds]
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=DataType.BFloat16)
        shared = fd.ops.abs(fd.ops.cast(x, dtype=DataType.Float))
        for kind, dims, keepdim, own in reds:
            a = fd.ops.abs(fd.ops.cast(x, dtype=DataType.Float)) if own else shared
            reduce = getattr(fd.ops, kind)
            fd.add_output(reduce(a) if dims is None else reduce(a, dims=dims, keepdim=keepdim))  # None: every dim
    side = data.draw(st.sampled_from([None, "outer", "inner"]))
    plan = reuse_reductions(fd, inner_outer=side)
    new = plan.apply()
    inputs = segkit.random_inputs(fd, seed=data.draw(st.integers(0, 9)))
    if data.draw(st.booleans()):  # a NaN: max / min propagate it, through reuse and inner-outer pairs alike
        inputs[0].view(-1)[data.draw(st.integers(0, inputs[0].numel() - 1))] = float("nan")
    want, got = segkit.run_reference(fd, inputs), segkit.run_reference(new, inputs)
    for (kind, *_), w, g in zip(reds, want, got):
        assert g.shape == w.shape and g.dtype == w.dtype, plan.describe()
        exact = kind != "sum"  # sums are reassociated in float32
        torch.testing.assert_close(g, w, rtol=0 if exact else 1e-5, atol=0 if exact else 1e-4, equal_nan=True,
                                   msg=lambda m: f"{m}\n{plan.describe()}")
    x_new = new.fusion.inputs[0]
    assert len(new.fusion.uses(x_new)) == 1, f"x read by several prologues after the pass\n{new}"
    extra = len(plan.pairs) if side == "inner" else 0  # "inner" takes each paired row reduction twice
    assert full_size_reductions(new) == {x_new.name: _expected_full_reductions(reds) + extra}, f"{plan.describe()}\n{new}"


def test_chain_of_dims_leaves_one_pass_over_x():
    """Rowwise, the seed's [0, 1] and tensorwise on 3-D x: one reduction reads x, each wider one the next."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[12, 34, 56], contiguity=[True] * 3, dtype=DataType.BFloat16)
        a = fd.ops.abs(fd.ops.cast(x, dtype=DataType.Float))
        fd.add_output(fd.ops.max(a, dims=[0, 1, 2]))
        fd.add_output(fd.ops.max(a, dims=[0, 1], keepdim=True))
        fd.add_output(fd.ops.max(a, dims=[1]))
    plan = reuse_reductions(fd)
    assert [(r.wide.name, r.narrow.name) for r in plan.reuses] == [("tv3", "tv4"), ("tv4", "tv5")]
    assert "tv0: 3 -> 1" in plan.describe()
    inputs = segkit.random_inputs(fd)
    assert all(torch.equal(w, g) for w, g in zip(segkit.run_reference(fd, inputs), segkit.run_reference(plan.apply(), inputs)))


def test_inner_outer_pairs_rows_with_columns_of_max_and_min():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[6, 4, 10], contiguity=[True] * 3, dtype=DataType.Float)
        fd.add_output(fd.ops.max(x, dims=[0, 1]))
        fd.add_output(fd.ops.max(x, dims=[2], keepdim=True))
        fd.add_output(fd.ops.min(x, dims=[1, 2]))
        fd.add_output(fd.ops.min(x, dims=[0]))
        fd.add_output(fd.ops.sum(x, dims=[2]))
        fd.add_output(fd.ops.sum(x, dims=[0, 1]))
    assert reuse_reductions(fd).pairs == []
    inputs = segkit.random_inputs(fd)
    inputs[0][1, 2, 3] = float("nan")
    for side in ("outer", "inner"):
        plan = reuse_reductions(fd, inner_outer=side)
        assert [(p.kind, p.inner.name, p.outer.name) for p in plan.pairs] == [("max", "tv2", "tv1"),
                                                                             ("min", "tv3", "tv4")]
        new = plan.apply()
        for w, g in zip(segkit.run_reference(fd, inputs), segkit.run_reference(new, inputs)):
            torch.testing.assert_close(g, w, rtol=0, atol=0, equal_nan=True)
        readers = {op.outputs[0].name for op in new.fusion.ops if op.name in ("max", "min")
                   and op.args["arg"].definition is not None and op.args["arg"].definition.name == "where"}
        assert readers == ({"tv1", "tv4"} if side == "outer" else {"tv2", "tv3"}), side
        assert sum(op.name in ("max", "min") for op in new.fusion.ops) == 4 + (side == "inner") * 2


def test_inner_outer_must_name_a_side():
    with pytest.raises(ValueError, match="inner_outer must be one of"):
        reuse_reductions(fusions.get("fp8_amax").build("4096x4096_tiny"), inner_outer=True)


def test_half_precision_input_summed_in_float_is_reused():
    """A BFloat16 sum itself cannot be recorded (nvFuser cannot compile it: segkit refuses it), so a
    half-precision input is summed with dtype=Float, and that sum reassociates."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.BFloat16)
        with pytest.raises(segkit.FusionDefinitionError, match="nvFuser cannot compile sum on BFloat16"):
            fd.ops.sum(x, dims=[1])
        fd.add_output(fd.ops.sum(x, dims=[1], dtype=DataType.Float))
        fd.add_output(fd.ops.sum(x, dims=[0, 1], dtype=DataType.Float))
    plan = reuse_reductions(fd)
    assert len(plan.reuses) == 1 and plan.skipped == []


def test_different_kinds_and_dtypes_are_not_mixed():
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.max(x, dims=[1]))
        fd.add_output(fd.ops.min(x, dims=[0, 1]))
        fd.add_output(fd.ops.sum(fd.ops.neg(x), dims=[0, 1]))
        fd.add_output(fd.ops.max(fd.ops.neg(x), dims=[0, 1]))
    plan = reuse_reductions(fd)
    assert plan.reuses == [] and plan.skipped == []
    assert [(m.duplicate.name, m.kept.name) for m in plan.merges] == [("tv5", "tv3")]  # the two neg(x)


def test_fp8_builder_variants_compute_the_reference():
    spec = fusions.get("fp8_amax")
    from dataclasses import replace

    for name in ("4096x4096_tiny", "seed_12x34x56"):
        for variant in ("direct", "inner_outer", "inner_outer_rows", "two_stage"):
            cfg = replace(spec.config(name), variant=variant)
            inp = spec.make_inputs(cfg)
            got = segkit.run_reference(spec.build(cfg), list(inp.values()))
            for want, g in zip(spec.reference(inp, cfg), got):
                assert torch.equal(g, want.float()), (name, variant)


def test_thunder_captured_fp8_region_is_rewritten():
    """Thunder's own nvFusion region for fp8 amax (captured on the GPU host by scripts/capture_thunder_repros.py)."""
    repro = segkit.load_repro(DATA / "thunder" / "fp8_amax_fwd_nvFusion0.py")
    plan = reuse_reductions(repro.fd)
    assert [(r.kind, r.dims, r.narrow_dims) for r in plan.reuses] == [("max", (0, 1), (1,))]
    x = repro.make_inputs("cpu")
    want = torch.ops.aten.abs(x[0].float())
    got = segkit.run_reference(plan.apply(), x)
    assert torch.equal(got[0], want.amax(1)) and torch.equal(got[1], want.amax(0)) and torch.equal(got[2], want.amax())


@pytest.mark.parametrize("bad", [["not", "a", "fusion"], None])
def test_bad_input_names_what_it_got(bad):
    with pytest.raises(TypeError, match="segkit FusionDefinition"):
        reuse_reductions(bad)


def _cli(*argv) -> int:
    from segkit_cli.main import main

    return main(list(argv))


def test_cli_prints_the_plan_and_checks_it(capsys):
    assert _cli("reuse", str(DATA / "thunder" / "fp8_amax_fwd_nvFusion0.py")) == 0
    out = capsys.readouterr().out
    assert "tv5 = max over dims [0, 1] now reads tv3" in out and "tv5: Float[] = max(tv3, dims=[0])" in out
    assert "reference check of the rewritten fusion (cpu): ok" in out


def test_cli_on_a_spec_and_on_a_missing_script(capsys):
    assert _cli("reuse", "fp8_amax:seed_12x34x56") == 0
    assert "now reads tv4 (max over dims [0, 1])" in capsys.readouterr().out
    assert _cli("reuse", "no_such_script.py") == 2
    assert "no such file: no_such_script.py" in capsys.readouterr().err


def test_fp8_bytes_floor():
    """The floor reads x once and writes the fp32 amaxes asked for."""
    from dataclasses import replace

    from benchmarks.workloads import amax_bytes

    seed = fusions.get("fp8_amax").config("seed_12x34x56")
    assert amax_bytes(seed) == 2 * 12 * 34 * 56 + 4 * (12 * 34 + 56 + 1)
    assert amax_bytes(replace(seed, amaxes=("row", "all"))) == 2 * 12 * 34 * 56 + 4 * (12 * 34 + 1)



def test_random_ops_are_never_merged():
    """Two rand_like(x) are two draws: only deterministic prologues are merged."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.max(fd.ops.rand_like(x), dims=[1]))
        fd.add_output(fd.ops.max(fd.ops.rand_like(x), dims=[0, 1]))
    plan = reuse_reductions(fd)
    assert plan.merges == [] and plan.reuses == []
