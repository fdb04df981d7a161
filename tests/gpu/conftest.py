"""GPU test helpers: a place to record what nvFuser did (segments, kernels) for the closing notes."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.gpu import memory_budget

@pytest.fixture
def record():
    """Record a dict of what nvFuser did: one JSON line appended to $SEGKIT_RECORD, if set."""

    def write(entry: dict) -> None:
        path = os.environ.get("SEGKIT_RECORD")
        if path:
            with Path(path).open("a") as f:
                f.write(json.dumps(entry) + "\n")

    return write


@pytest.fixture(autouse=True)
def _gpu_memory(request):
    """A test that declares a large memory need waits for room on its GPU (tests/gpu/memory_budget.py: the shards
    of one GPU share its memory); every test's peak is logged (``$SEGKIT_GPU_MEMORY_LOG``) and its cached memory
    freed after it, so one shard does not hold what another needs."""
    if not torch.cuda.is_available():
        yield
        return
    nodeid = request.node.nodeid
    gib = memory_budget.need_gib(nodeid)
    # a fresh-process test reserves in its child, which runs it; the parent only waits for the child
    in_parent = request.node.get_closest_marker("fresh_process") and os.environ.get(_FRESH) != nodeid
    props = torch.cuda.get_device_properties(0)
    budget = memory_budget.SHARE * props.total_memory / 2**30
    path = memory_budget.reservations_file(str(getattr(props, "uuid", props.name)))
    held = torch.cuda.memory_reserved() / 2**30  # what the process still holds from earlier tests
    torch.cuda.reset_peak_memory_stats()
    parent = os.getppid() if os.environ.get(_FRESH) == nodeid else None
    with (memory_budget.reserved(gib, budget, path, nodeid, parent=parent) if gib and not in_parent
          else contextlib.nullcontext(0.0)) as waited:
        yield
        peak = torch.cuda.max_memory_reserved() / 2**30
        # pytest keeps a failed test's exception for post-mortem (sys.last_traceback) until the next test's call:
        # its frames, and the GPU tensors in them, would still be held while the next test sets up
        for name in ("last_type", "last_value", "last_traceback", "last_exc"):
            if hasattr(sys, name):
                delattr(sys, name)
        gc.collect()
        torch.cuda.empty_cache()
    if not in_parent:
        memory_budget.log_peak({"test": nodeid, "pid": os.getpid(), "gpu": props.name, "declared_gib": gib,
                                "held_at_start_gib": round(held, 3), "peak_reserved_gib": round(peak, 3),
                                "left_after_gib": round(torch.cuda.memory_reserved() / 2**30, 3),
                                "waited_s": round(waited, 2)})


@pytest.fixture(autouse=True)
def _fresh_segkit_decisions():
    """Each GPU test starts with none of segkit_ex's decisions from earlier tests of its process (claim verdicts,
    fused-mode choices and once-said fallbacks, rewritten ThunderFX graphs): a test's outcome must not depend on
    which tests its shard ran first. Compiled fusions are kept (keyed by spec, config and policy)."""
    if "thunder_exec" in sys.modules:  # a test that never loaded Thunder has nothing to forget (and stays fast)
        sys.modules["thunder_exec"].clear_caches(keep_compiled=True)
    yield


_FRESH = "SEGKIT_FRESH_PROCESS"


#: a formulation the tuning table chose, dropped on the GPU host, fails the test that met it (it is a warning for
#: users: their step goes on with the spec's own fusion; here a hand schedule that stopped building must show)
_FALLBACK_FAILS = pytest.mark.filterwarnings("error::fusions.runner.FormulationFallbackWarning")


def pytest_collection_modifyitems(config, items):
    """Tests marked fresh_process run in a child pytest: CUPTI takes one client per process, and the
    torch.profiler these tests read cannot start once nvFuser's profiler has run (or the reverse). Every test
    fails on a FormulationFallbackWarning."""
    for item in items:
        item.add_marker(_FALLBACK_FAILS)
        if os.environ.get(_FRESH) == item.nodeid:
            continue
        if item.get_closest_marker("fresh_process"):
            item.runtest = lambda item=item: _run_in_fresh_process(item)
        else:
            item.runtest = _rerun_fresh_on_cupti_conflict(item, item.runtest)


#: what segkit.nvfuser.timing.claim_cupti raises when the other profiler holds CUPTI in this process
_CUPTI_TAKEN = "took CUPTI earlier in this process"


def _rerun_fresh_on_cupti_conflict(item, runtest):
    """Run the test here; if it needs the profiler that another test of this process already gave CUPTI to (a
    shard mixes files, so which profiler came first depends on the shard), run it again in its own process."""

    def run() -> None:
        try:
            runtest()
        except RuntimeError as e:
            if _CUPTI_TAKEN not in str(e):
                raise
            _run_in_fresh_process(item)

    return run


def _run_in_fresh_process(item) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider", item.nodeid],
                          cwd=item.config.rootpath, env={**os.environ, _FRESH: item.nodeid}, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"{item.nodeid} failed in its own process:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}", pytrace=False)
