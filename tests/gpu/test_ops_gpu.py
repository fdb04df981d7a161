"""Op-level differential test, opinfo style: every catalogue op, in each dtype it is sampled in, over the
samples of tests/op_samples.py (shapes, permuted strides, size-1 dims, odd sizes), run on real nvFuser
(segkit.run_nvfuser) and on the reference interpreter on CPU; they must agree, dtype included (random
outputs by shape, dtype, range and moments). One fusion per op holds all its samples; when it fails, each
sample is run on its own to name the one that differs.

Op x dtype combinations nvFuser cannot compile are refused by segkit while recording (op_samples.UNCOMPILABLE,
checked on CPU by tests/test_nvfuser_dtype_rules.py), so they are not sampled here. Samples that hit a known
nvFuser bug (``Sample.nvfuser_bug_at``) are kept out of the differential test and checked to still fail, for
that reason, as strict xfails: when nvFuser fixes one, its test fails and the mark must go.

The tally "ops x dtypes x samples checked" is printed at the end and, with SEGKIT_OPS_SUMMARY=path,
written there as JSON with every failure's full error text.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import pytest
import torch

import segkit
from tests.op_samples import SAMPLES, build_fusion, error_text

pytestmark = pytest.mark.gpu

TALLY: Counter = Counter()
FAILED: dict[str, list[str]] = {}
KNOWN_BUGS: dict[str, str] = {}
#: Wall-clock budget for the module's op tests from the first of them (nvFuser compiles every fusion); ops past
#: it are skipped, counted. From the first, not from import: a shard collects every file, then runs others first.
BUDGET_S = float(os.environ.get("SEGKIT_OPS_BUDGET_S", "300"))
_STARTED: list[float] = []


class KnownNvFuserBug(Exception):
    """nvFuser failed a sample exactly where its known bug says it does."""


def _run(samples, tol) -> str | None:
    """None when nvFuser agrees with the reference on these samples, else what went wrong (full text)."""
    fd, inputs = build_fusion(samples)
    cuda = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        outs = segkit.run_nvfuser(fd, cuda, profile=False).outputs
    except Exception as e:  # nvFuser refused or failed: a finding about this sample
        return f"nvFuser error: {error_text(e)}"
    report = segkit.check_outputs(fd, inputs, [o.cpu() for o in outs], tol=tol)
    return None if report.ok else str(report)


def _units(spec):
    return [(dt, i, s) for dt in spec.dtypes for i, s in enumerate(spec.make(dt))]


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_op_agrees_with_reference_on_nvfuser(op):
    _STARTED[:] = _STARTED or [time.monotonic()]
    if time.monotonic() - _STARTED[0] > BUDGET_S:
        TALLY["skipped_ops_over_budget"] += 1
        pytest.skip(f"over the module's {BUDGET_S:.0f} s budget (SEGKIT_OPS_BUDGET_S)")
    spec = SAMPLES[op]
    units = [(dt, i, s) for dt, i, s in _units(spec) if not s.nvfuser_bug_at]
    problems = []
    if _run([s for _, _, s in units], spec.tol) is not None:
        for dt, i, s in units:
            why = _run([s], spec.tol)
            if why is not None:
                problems.append(f"{op} {dt.name} sample {i} ({s.name or 'layout ' + str(i)}): {why}")
    TALLY["ops"] += 1
    TALLY["dtypes"] += len(spec.dtypes)
    TALLY["samples"] += len(units)
    TALLY["failed_samples"] += len(problems)
    if problems:
        FAILED[op] = problems
    assert not problems, "\n".join(p[:2000] for p in problems)


def _known_bugs():
    return [pytest.param(op, dt, i, id=f"{op}-{dt.name}-{i}",
                         marks=pytest.mark.xfail(strict=True, raises=KnownNvFuserBug,
                                                 reason=f"{s.nvfuser_bug_at}: {s.nvfuser_bug}"))
            for op, spec in sorted(SAMPLES.items()) for dt, i, s in _units(spec) if s.nvfuser_bug_at]


@pytest.mark.parametrize("op, dt, i", _known_bugs())
def test_known_nvfuser_bug_still_fails_there(op, dt, i):
    spec = SAMPLES[op]
    sample = spec.make(dt)[i]
    why = _run([sample], spec.tol)
    key = f"{op} {dt.name} sample {i}"
    KNOWN_BUGS[key] = why or "nvFuser now agrees with the reference: the known-bug mark can go"
    TALLY["known_bug_samples"] += 1
    if why is not None and sample.nvfuser_bug_at in why:
        raise KnownNvFuserBug(f"{sample.nvfuser_bug_at}: {sample.nvfuser_bug}")
    assert why is None, f"{key} fails, but not at {sample.nvfuser_bug_at}:\n{why}"


@pytest.fixture(scope="module", autouse=True)
def _summary():
    yield
    line = (f"op differential: {TALLY['ops']} ops, {TALLY['dtypes']} op x dtype pairs, {TALLY['samples']} "
            f"op x dtype x sample checks, {TALLY['failed_samples']} failed, "
            f"{TALLY['skipped_ops_over_budget']} ops skipped over the time budget; "
            f"{TALLY['known_bug_samples']} samples on known nvFuser bugs (strict xfail)")
    print("\n" + line)
    path = os.environ.get("SEGKIT_OPS_SUMMARY")
    if path:
        with open(path, "w") as f:
            json.dump({"summary": line, **TALLY, "failed": FAILED, "known_nvfuser_bugs": KNOWN_BUGS,
                       "device": torch.cuda.get_device_name() if torch.cuda.is_available() else None}, f, indent=1)
