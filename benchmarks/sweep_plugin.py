"""pytest plugin loaded into each shard of a sweep (``-p benchmarks.sweep_plugin``).

It keeps only the cases the launcher gave this shard, times each case as a whole (set-up, which holds the
nvFuser compile, plus call and teardown: what the next sweep balances by), and stamps every
pytest-benchmark record with the device it ran on and that device's measured copy bandwidth, so the merged
JSON says per case where its number came from. Without ``SEGKIT_SWEEP_SHARD`` in the environment it does
nothing.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

SHARD_ENV = "SEGKIT_SWEEP_SHARD"  # file: one node id a line, the cases this shard runs
DEVICE_ENV = "SEGKIT_SWEEP_DEVICE"  # the device label of this shard (what CUDA_VISIBLE_DEVICES holds)
REPORT_ENV = "SEGKIT_SWEEP_REPORT"  # file this shard writes {"durations": {id: s}, "outcomes": {id: outcome}} into

_durations: dict[str, float] = defaultdict(float)
_outcomes: dict[str, str] = {}


def _active() -> bool:
    return bool(os.environ.get(SHARD_ENV))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _active():
        return
    wanted = set(Path(os.environ[SHARD_ENV]).read_text().split("\n")) - {""}
    keep = [i for i in items if i.nodeid in wanted]
    dropped = [i for i in items if i.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _active():
        return
    _durations[report.nodeid] += report.duration
    # The call's outcome, unless set-up or teardown failed or skipped the case.
    if report.when == "call" or report.outcome != "passed":
        _outcomes.setdefault(report.nodeid, "error" if report.failed and report.when != "call" else report.outcome)


def _gpu_name() -> str | None:
    """The GPU's name where this shard's suite has CUDA (torch is not imported for a suite that never did)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


@pytest.hookimpl(optionalhook=True)
def pytest_benchmark_update_json(config, benchmarks, output_json) -> None:
    if not _active():
        return
    device, gpu = os.environ.get(DEVICE_ENV, ""), _gpu_name()
    copy_gbs = (output_json.get("machine_info") or {}).get("copy_gbs")
    for bench in output_json.get("benchmarks", []):
        info = bench.setdefault("extra_info", {})
        info["sweep_device"] = device
        info["sweep_gpu"] = gpu
        info["sweep_copy_gbs"] = copy_gbs
        info["sweep_duration_s"] = round(_durations.get(bench["fullname"], 0.0), 6)
    output_json.setdefault("machine_info", {})["sweep_device"] = device


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get(REPORT_ENV)
    if _active() and out:
        Path(out).write_text(json.dumps({"durations": {k: round(v, 6) for k, v in _durations.items()},
                                         "outcomes": _outcomes}, indent=1))
