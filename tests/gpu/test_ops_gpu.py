"""Op-level differential test, opinfo style: every catalogue op, in each dtype it is sampled in, over the
samples of tests/op_samples.py (shapes, permuted strides, size-1 dims, odd sizes), run on real nvFuser
(segkit.run_nvfuser) and on the reference interpreter on CPU; they must agree (random outputs by shape,
dtype, range and moments). One fusion per op holds all its samples; when it fails, each sample is run on
its own to name the one that differs.

The tally "ops x dtypes x samples checked" is printed at the end and, with SEGKIT_OPS_SUMMARY=path,
written there as JSON.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter

import pytest
import torch

import segkit
from tests.op_samples import SAMPLES, build_fusion

pytestmark = pytest.mark.gpu

TALLY: Counter = Counter()
FAILED: dict[str, list[str]] = {}
#: Wall-clock budget for the whole module (nvFuser compiles every fusion); ops past it are skipped, counted.
BUDGET_S = float(os.environ.get("SEGKIT_OPS_BUDGET_S", "300"))
_START = time.monotonic()


def _run(samples, tol) -> str | None:
    """None when nvFuser agrees with the reference on these samples, else what went wrong."""
    fd, inputs = build_fusion(samples)
    cuda = [x.cuda() if isinstance(x, torch.Tensor) else x for x in inputs]
    try:
        outs = segkit.run_nvfuser(fd, cuda, profile=False).outputs
    except Exception as e:  # nvFuser refused or failed: a finding about this sample
        return f"nvFuser error: {type(e).__name__}: {str(e).strip().splitlines()[0][:240]}"
    report = segkit.check_outputs(fd, inputs, [o.cpu() for o in outs], tol=tol)
    return None if report.ok else str(report)


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_op_agrees_with_reference_on_nvfuser(op):
    if time.monotonic() - _START > BUDGET_S:
        TALLY["skipped_ops_over_budget"] += 1
        pytest.skip(f"over the module's {BUDGET_S:.0f} s budget (SEGKIT_OPS_BUDGET_S)")
    spec = SAMPLES[op]
    units = [(dt, i, s) for dt in spec.dtypes for i, s in enumerate(spec.make(dt))]
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
    assert not problems, "\n".join(problems)


@pytest.fixture(scope="module", autouse=True)
def _summary():
    yield
    line = (f"op differential: {TALLY['ops']} ops, {TALLY['dtypes']} op x dtype pairs, {TALLY['samples']} "
            f"op x dtype x sample checks, {TALLY['failed_samples']} failed, "
            f"{TALLY['skipped_ops_over_budget']} ops skipped over the time budget")
    print("\n" + line)
    path = os.environ.get("SEGKIT_OPS_SUMMARY")
    if path:
        with open(path, "w") as f:
            json.dump({"summary": line, **TALLY, "failed": FAILED,
                       "device": torch.cuda.get_device_name() if torch.cuda.is_available() else None}, f, indent=1)
