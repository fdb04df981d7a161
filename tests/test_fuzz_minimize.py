"""Minimizing fuzz failures that need symbolic input sizes, and sharing the campaign's minimizing time.

The planted bug (nvFuser's class, fuzz findings f005/f006/f010/f039): a reshape whose input has a size that is
only known at run time (-1 where it was recorded) gets its first element wrong. With the sizes made static the
reshape is right, so the usual "specialize, then minimize" finds nothing to minimize.
"""

from __future__ import annotations

import dataclasses
import time
from unittest import mock

import pytest

import segkit
from segkit import ops as catalogue
from segkit.errors import SegkitError
from segkit.fuzz import Target, run_case, target
from segkit.fuzz.campaign import Campaign, Finding, pending_minimizations
from segkit.fuzz.gen import Case, strided_inputs
from segkit.fuzz.targets import CaseResult, Verdict
from segkit.fuzz.workers import InProcess, Task
from segkit.interp import random_inputs, run_reference
from segkit.minimize import _candidates, minimize, runtime_shapes, size_of, specialize
from segkit.printing import emit_repro

_REAL_RESHAPE = catalogue.CATALOGUE["reshape"]


def _reshape_of_symbolic(a, ctx):
    out = _REAL_RESHAPE.run(a, ctx)
    if -1 in ctx.op.inputs[0].shape:  # the recorded Value, not the run-time tensor
        out = out.contiguous().clone()
        out.view(-1)[0] += 1
    return out


def _planted_run(fd, inputs):
    with mock.patch.dict(catalogue.CATALOGUE, {"reshape": dataclasses.replace(_REAL_RESHAPE, run=_reshape_of_symbolic)}):
        return run_reference(fd, inputs)


PLANTED = Target("planted-symbolic", "cpu", _planted_run)
SHAPES = [(8, 6), (6,)]


def _case() -> Case:
    """6 ops, symbolic sizes [?, ?] and [?] (run time (8, 6) and (6,)); the reshape feeds the second output."""
    with segkit.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True])
        y = fd.define_tensor(shape=[-1], contiguity=[True])
        b = fd.ops.add(fd.ops.exp(fd.ops.neg(x)), fd.ops.broadcast(y, is_broadcast_dim=[True, False]))
        fd.add_output(fd.ops.tanh(b))
        fd.add_output(fd.ops.reshape(b, new_shape=[2, 8, 3]))
    inputs = strided_inputs(fd, shapes=SHAPES)
    return Case(fd, inputs, emit_repro(fd, inputs))


def _fails(fd, shapes) -> bool:
    return run_case(PLANTED, fd, random_inputs(fd, shapes=shapes)).status == "failed"


def test_minimize_keeps_symbolic_sizes_and_halves_the_run_time_ones():
    case = _case()
    assert _fails(case.fd, SHAPES) and not _fails(specialize(case.fd, case.inputs), None)
    res = minimize(case.fd, _fails, shapes=SHAPES, log=lambda s: None)
    f = res.fd.fusion
    assert [op.name for op in f.ops] == ["reshape"] and f.inputs[0].shape == (-1, -1)  # cut at the add, still [?, ?]
    assert res.shapes == [(2, 6)] and f.ops[0].args["new_shape"] == [2, 2, 3]  # 8 -> 4 -> 2 in both places
    assert res.steps[-2:] == ["size 8 -> 4", "size 4 -> 2"] and size_of(res.fd, res.shapes) == (1, 12)
    assert _fails(res.fd, res.shapes)


def test_an_op_is_removed_only_where_the_run_time_sizes_match_too():
    """pad of a [?] tensor is recorded [?] as well, but is 2 longer at run time: forwarding its input is no edit."""
    with segkit.FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1], contiguity=[True])
        fd.add_output(fd.ops.neg(fd.ops.pad(x, [1, 1])))
    labels = [label for label, _ in _candidates(fd, [(4,)], runtime_shapes(fd, [(4,)]))]
    assert "remove neg -> tv2" in labels and "remove pad -> tv1" not in labels and "size 4 -> 2" in labels


def test_minimize_refuses_run_time_shapes_that_do_not_fit():
    with pytest.raises(SegkitError, match=r"do not fit .*Float\[\?\]"):
        minimize(_case().fd, _fails, shapes=[(8, 6), (5, 5)], log=lambda s: None)


def _campaign(tmp_path, logs, minimize_seconds=20.0) -> Campaign:
    return Campaign(InProcess(PLANTED), tmp_path, 0, ["plain"], minimize_seconds, logs.append)


def test_campaign_minimizes_a_failure_that_needs_symbolic_sizes(tmp_path):
    case, logs = _case(), []
    camp = _campaign(tmp_path, logs)
    res = camp.ex.run_one(Task(case.script, ("plain",)))
    v = next(x for x in res.verdicts if x.status == "mismatch")
    with pytest.raises(SegkitError, match="nothing to minimize"):  # what the campaign did before: no finding minimized
        minimize(specialize(case.fd, case.inputs), camp.reproduces(v, ("plain",)), log=lambda s: None)

    camp.handle("0.0", case, res, ("plain",), time.perf_counter() + 60)
    (f,) = camp.summary.findings
    assert (f.ops_before, f.ops_after, f.signature) == (6, 1, "mismatch:reshape") and f.minimize_checks > 1
    assert "sizes kept symbolic" in f.note and "size 8 -> 4" in f.steps
    text = (tmp_path / f.file).read_text()
    assert "# Note: sizes kept symbolic" in text and "define_tensor(shape=[-1, -1]" in text

    repro = segkit.load_repro(tmp_path / f.file)  # its strided inputs still show the bug, only on the buggy side
    inputs = repro.make_inputs("cpu")
    assert [r.kind for r in repro.recipes] == ["randn_strided"] and [tuple(x.shape) for x in inputs] == [(2, 6)]
    assert run_case(PLANTED, repro.fd, inputs).status == "failed"
    assert run_case(target("reference"), repro.fd, inputs).status == "ok"


def test_minimizing_time_is_shared_and_a_skipped_finding_says_why(tmp_path):
    case, logs = _case(), []
    camp = _campaign(tmp_path, logs, minimize_seconds=90)
    res = camp.ex.run_one(Task(case.script, ("plain",)))
    camp.handle("0.0", case, res, ("plain",), time.perf_counter() + 100, pending=4)
    assert any("minimizing (25 s max, 4 failure(s) to minimize" in m for m in logs)  # a quarter, not all 90 s
    camp.summary.findings.clear()
    camp.handle("0.1", case, res, ("plain",), time.perf_counter() + 3, pending=2)
    (f,) = camp.summary.findings
    assert f.ops_after == f.ops_before and f.note.startswith("not minimized: 3 s of the campaign's minimizing time")
    assert f"# Note: {f.note}" in (tmp_path / f.file).read_text()
    assert any("case 0.1" in m and "not minimized" in m for m in logs)  # logged, not silently skipped


def test_pending_minimizations_counts_distinct_failures_not_yet_found():
    def failure(detail):
        return ("0.0", None, CaseResult([Verdict("plain", "error", detail)], status="failed"), ("plain",))

    failures = [failure("RuntimeError: tv3 bad at 12"), failure("RuntimeError: tv7 bad at 40"),
                failure("RuntimeError: other"), failure("RuntimeError: found before")]
    found = [Finding("f001", "error", "plain", "error:neg", "RuntimeError: found before")]
    assert pending_minimizations(failures, found) == 2
    assert pending_minimizations(failures[3:], found) == 1  # never 0: the one at hand is minimized


def test_a_timeout_finding_says_why_it_is_not_minimized(tmp_path):
    case, logs = _case(), []
    camp = _campaign(tmp_path, logs)
    camp.handle("0.0", case, CaseResult(status="timeout", detail="no result in 60 s"), ("plain",), time.perf_counter() + 60)
    (f,) = camp.summary.findings
    assert f.kind == "timeout" and f.note.startswith("not minimized: timeouts are not") and f.minimize_checks == 0
    assert f"# Note: {f.note}" in (tmp_path / f.file).read_text()
