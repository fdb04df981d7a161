"""The bookend pass: alias analysis and cuts for the issue's cases, realizations checked against the interpreter."""

from __future__ import annotations

import torch
import pytest

import fusions
import segkit
from segkit.bookend import HostPlan, bookend, run_plan
from segkit.nvfuser.runnable import Runnable
from tests import bookend_cases as C


def _inputs(fd):
    return C.inputs(fd)


def _cuts(plan):
    return {t.name: sorted(o.name for o in outs) for t, outs in plan.segment_sets.items()}


def _check_realizations(plan, inputs):
    """Both realizations compute exactly what the original fusion computes."""
    want = segkit.run_reference(plan.fd, inputs)
    for realization in ("segment_set", "host"):
        got = run_plan(plan, inputs, realization=realization)
        assert len(got) == len(want)
        for w, g in zip(want, got):
            torch.testing.assert_close(g, w, rtol=0, atol=0)


def test_case1_output_aliases_input_no_segment_set():
    fd, v = C.case1()
    assert segkit.find_aliases(fd) == {v["out"]: v["in"]}
    assert bookend(fd).segment_sets == {}


def test_case2_cut_at_t_redirects_only_the_broadcast():
    fd, v = C.case2()
    plan = bookend(fd)
    assert _cuts(plan) == {v["t"].name: [v["b"].name]}
    _check_realizations(plan, _inputs(fd))


def test_case3_cut_at_t_redirects_the_set():
    fd, v = C.case3()
    assert _cuts(bookend(fd)) == {v["t"].name: [v["s"].name]}


def test_case4_slice_used_by_compute_is_not_cut():
    fd, v = C.case4()
    assert v["s"] in segkit.find_aliases(fd)
    assert bookend(fd).segment_sets == {}


def test_case5_one_segment_set_at_the_computed_tensor():
    fd, v = C.case5()
    plan = bookend(fd)
    assert _cuts(plan) == {v["a"].name: [v["r"].name]}
    assert segkit.find_aliases(fd)[v["p"]] is v["a"]
    _check_realizations(plan, _inputs(fd))


def test_case6_meta_feeding_compute_is_depended():
    fd, _ = C.case6()
    assert bookend(fd).segment_sets == {}


def test_case7_two_cuts():
    fd, v = C.case7()
    plan = bookend(fd)
    assert _cuts(plan) == {v["t0"].name: [v["o0"].name], v["t1"].name: [v["o1"].name]}
    _check_realizations(plan, _inputs(fd))


def test_case8_cut_at_input_redirecting_the_permute():
    fd, v = C.case8()
    assert _cuts(bookend(fd)) == {v["in"].name: [v["o0"].name]}


def test_case9_one_shared_segment_set():
    fd, v = C.case9()
    plan = bookend(fd)
    assert _cuts(plan) == {v["t"].name: sorted(o.name for o in v["outs"])}
    new = plan.apply("segment_set")
    assert [op.name for op in new.fusion.ops].count("segment_set") == 1


def test_case10_chunks_alias_the_input():
    fd, v = C.case10()
    aliases = segkit.find_aliases(fd)
    assert all(aliases[o] is v["in"] for o in v["outs"])
    chunk = v["outs"][0].definition.inputs[0].definition.inputs[0]  # the first slice's output
    layout = segkit.preferred_layouts(fd)[chunk]
    assert layout.order == (0, 1, 2) and layout.contiguity == (True, False, True)
    assert bookend(fd).segment_sets == {}


def test_case11_merge_of_non_contiguous_dims_is_not_an_alias():
    fd, v = C.case11()
    assert v["out"] not in segkit.find_aliases(fd)


def test_case12_merging_an_expanded_dim_is_not_an_alias():
    fd, v = C.case12()
    aliases = segkit.find_aliases(fd)
    assert v["bad"] not in aliases and aliases[v["good"]] is v["in"]


def test_case13_fork_from_input_is_not_cut():
    fd, _ = C.case13()
    assert bookend(fd, policy="inputs+outputs").segment_sets == {}


def _rope_fd():
    spec = fusions.get("qkv_split_rope_fwd")
    return spec, spec.build("phi-2_bs2_tiny")


def test_case14_rope_meta_chain_cut_from_compute():
    spec, fd = _rope_fd()
    plan = bookend(fd, policy="inputs+outputs")
    qkv = fd.fusion.inputs[0]
    assert plan.segment_sets, "inputs+outputs must cut the qkv meta chain"
    for t, _ in plan.segment_sets.items():
        assert segkit.find_aliases(fd).get(t) is qkv  # every cut tensor is a view of qkv
    assert {op.name for op in plan.prologue} == {"reshape", "permute", "slice", "squeeze"}
    inputs = list(spec.make_inputs("phi-2_bs2_tiny").values())
    _check_realizations(plan, inputs)
    assert bookend(fd, policy="outputs").segment_sets != plan.segment_sets


def test_op_filter_only_bookends_listed_ops():
    spec, fd = _rope_fd()
    plan = bookend(fd, policy="inputs+outputs", ops={"slice", "squeeze"})
    assert {op.name for op in plan.prologue + plan.epilogue} <= {"slice", "squeeze"}
    _check_realizations(plan, list(spec.make_inputs("phi-2_bs2_tiny").values()))
    with pytest.raises(ValueError, match="not meta ops"):
        bookend(fd, ops={"add"})
    with pytest.raises(ValueError, match="policy must be one of"):
        bookend(fd, policy="everything")


def test_host_plan_outputs_are_views_of_inputs():
    fd, v = C.case10()
    plan = bookend(fd, policy="inputs+outputs")
    host = plan.apply("host")
    assert isinstance(host, HostPlan) and not host.core_outputs
    assert isinstance(host, Runnable)
    x = _inputs(fd)[0]
    for out in host.run([x]) + host.execute([x]):  # no core fusion: nothing reaches nvFuser
        assert out.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_plan_describe_lists_aliases_and_cuts():
    fd, v = C.case2()
    text = bookend(fd).describe()
    assert f"alias {v['b'].name} -> " in text and f"segment_set after {v['t'].name}" in text
