"""The bookend pass on nvFuser: Python's "outputs" policy segments like nvFuser's own pass, and
every realization of every policy computes the right values."""

from __future__ import annotations

import pytest

import fusions  # noqa: F401 (registers the experiment's named workloads)
import segkit
from segkit.bookend import bookend, run_plan
from segkit.compare import compare
from segkit.experiment import run_experiment, workloads
from tests import bookend_cases as C

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", list(C.OUTPUT_CASES))
def test_outputs_policy_matches_nvfusers_own_pass(name, record):
    fd, _ = C.OUTPUT_CASES[name]()
    inputs = C.inputs(fd, "cuda")
    refs = segkit.run_reference(fd, inputs)
    own = segkit.run_nvfuser(fd, inputs)
    ours = segkit.run_nvfuser(bookend(fd, "outputs").apply("segment_set"), inputs)
    record({"test": "bookend_case", "case": name, "nvfuser": own.groups, "segkit_outputs": ours.groups})
    assert all(d.ok for d in compare(refs, own.outputs)) and all(d.ok for d in compare(refs, ours.outputs))
    assert sorted(ours.groups) == sorted(own.groups)


@pytest.mark.parametrize("policy", ["outputs", "inputs+outputs"])
@pytest.mark.parametrize("realization", ["segment_set", "host"])
def test_realizations_on_nvfuser_are_correct(policy, realization):
    for fd, _ in (case() for case in C.OUTPUT_CASES.values()):
        inputs = C.inputs(fd, "cuda")
        got = run_plan(bookend(fd, policy), inputs, backend="nvfuser", realization=realization)
        assert all(d.ok for d in compare(segkit.run_reference(fd, inputs), got))


def test_experiment_variants_are_all_correct_on_tiny_workloads():
    for label, (fd, inputs) in workloads(tiny=True, device="cuda").items():
        for m in run_experiment(fd, inputs, reps=3):
            assert m.ok, (label, m.variant, m.max_rel_err)
