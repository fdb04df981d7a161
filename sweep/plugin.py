"""pytest plugin loaded into each shard of a sweep (``-p sweep.plugin``).

It keeps only the cases the launcher gave this shard, times each case as a whole (set-up, which holds the
nvFuser compile, plus call and teardown: what the next sweep balances by), and stamps every
pytest-benchmark record with the device it ran on and that device's measured copy bandwidth, so the merged
JSON says per case where its number came from.

It also keeps the shard inside the sweep's time limit and leaves a trace if it is killed anyway: a case that
would start after ``SEGKIT_SWEEP_DEADLINE`` is skipped with a reason naming the limit (so pytest ends
normally and pytest-benchmark writes its JSON), and the shard's report (durations, outcomes, cases not run,
when the shard reached each stage, the case now running) is rewritten atomically as every case starts and ends.
A benchmark case whose harness calls ``timing_starts()`` also reports how long it took to get there
(``prepare_s``: building and compiling the executor and the correctness check, its first call), which the sweep
sums per shard as compile time. Without ``SEGKIT_SWEEP_SHARD`` in the environment it does nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections import defaultdict
from pathlib import Path

import pytest

from segkit.files import write_atomic

SHARD_ENV = "SEGKIT_SWEEP_SHARD"  # file: one node id a line, the cases this shard runs
DEVICE_ENV = "SEGKIT_SWEEP_DEVICE"  # the device label of this shard (what CUDA_VISIBLE_DEVICES holds)
REPORT_ENV = "SEGKIT_SWEEP_REPORT"  # file this shard keeps its report in (see _write_report)
DEADLINE_ENV = "SEGKIT_SWEEP_DEADLINE"  # epoch seconds: no case starts after it
LIMIT_ENV = "SEGKIT_SWEEP_LIMIT"  # the launcher's --time-limit in seconds (named in the skip reason)

_durations: dict[str, float] = defaultdict(float)
_outcomes: dict[str, str] = {}
_not_run: dict[str, str] = {}  # node id -> why this shard did not run it
_prepare: dict[str, float] = {}  # node id -> seconds from its start to its first timed round (see timing_starts)
_current: dict[str, object] = {"nodeid": None, "setup_s": 0.0, "call_started": None}  # the case in its call
_running: dict[str, str | None] = {"nodeid": None}  # the case started and not yet torn down (a crash names it)
_stamps: dict[str, float | None] = {"configured": None, "collected": None, "first_case": None, "last_case_end": None}


def _active() -> bool:
    return bool(os.environ.get(SHARD_ENV))


def _write_report() -> None:
    """Replace the report in one step (write a sibling, then rename): a shard killed at any moment leaves
    either the previous report or this one, never half a file."""
    out = os.environ.get(REPORT_ENV)
    if not out:
        return
    ran = [k for k in _outcomes if k not in _not_run]  # a case stopped mid-way has no outcome: not run
    doc = {"durations": {k: round(_durations[k], 6) for k in ran}, "outcomes": {k: _outcomes[k] for k in ran},
           "prepare_s": {k: round(_prepare[k], 6) for k in ran if k in _prepare}, "not_run": _not_run,
           "stamps": _stamps, "running": _running["nodeid"], "pid": os.getpid()}
    write_atomic(out, json.dumps(doc, indent=1))


def pytest_configure(config: pytest.Config) -> None:
    if _active():
        _stamps["configured"] = time.time()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _active():
        return
    wanted = set(Path(os.environ[SHARD_ENV]).read_text().split("\n")) - {""}
    keep = [i for i in items if i.nodeid in wanted]
    for case in sorted(wanted - {i.nodeid for i in items}):  # renamed or removed since the launcher collected it
        _not_run[case] = "not collected in this shard (renamed or removed since the sweep collected it?)"
    dropped = [i for i in items if i.nodeid not in wanted]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


def pytest_collection_finish(session: pytest.Session) -> None:
    if _active():
        _stamps["collected"] = time.time()
        _write_report()


def pytest_runtest_logstart(nodeid: str, location) -> None:
    if not _active():
        return
    if _stamps["first_case"] is None:
        _stamps["first_case"] = time.time()
    _running["nodeid"] = nodeid
    _write_report()  # a process that dies in this case leaves its name (sweep.respawn)


def timing_starts() -> None:
    """Called by the benchmark harness just before the timed rounds: the case's set-up (fixtures) and its call so
    far (building and compiling the executor, the correctness check) are its preparation, counted from the same
    phases pytest times, so it never exceeds the case's duration. A no-op outside a sweep."""
    if _active() and _current["call_started"] is not None:
        _prepare[_current["nodeid"]] = _current["setup_s"] + time.time() - _current["call_started"]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> None:
    if _active():
        _current["call_started"] = time.time()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a case that would start after the sweep's deadline (before its fixtures are set up)."""
    deadline = os.environ.get(DEADLINE_ENV)
    if not (_active() and deadline) or time.time() < float(deadline):
        return
    reason = f"sweep time limit ({os.environ.get(LIMIT_ENV, '?')} s) reached before this case started"
    _not_run[item.nodeid] = reason
    pytest.skip(reason)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not _active():
        return
    _durations[report.nodeid] += report.duration
    if report.when == "setup":
        _current.update(nodeid=report.nodeid, setup_s=report.duration, call_started=None)
    # The call's outcome, unless set-up or teardown failed or skipped the case.
    if report.when == "call" or report.outcome != "passed":
        _outcomes.setdefault(report.nodeid, _outcome(report))
    if report.when == "teardown":
        _stamps["last_case_end"] = time.time()
        _running["nodeid"] = None
        _write_report()


def _outcome(report: pytest.TestReport) -> str:
    """pytest's words: an expected failure is "xfailed" (pytest reports it as skipped), an unexpected pass of a
    non-strict xfail "xpassed", a failed set-up or teardown "error"."""
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    return "error" if report.failed and report.when != "call" else report.outcome


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
    if _active():
        _write_report()
