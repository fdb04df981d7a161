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
    """Every test waits for room on its GPU for what it needs (tests/gpu/memory_budget.py: the shards of one GPU
    share its memory, each counted with what it holds between tests); its measured need is logged
    (``$SEGKIT_GPU_MEMORY_LOG``), with what its process still holds after it and, past LEAK_GIB, the tensors that
    hold it, and its cached memory is freed after it, so one shard does not hold what another needs."""
    if not torch.cuda.is_available():
        yield
        return
    nodeid = request.node.nodeid
    need = memory_budget.need_gib(nodeid)
    # a fresh-process test reserves in its child, which runs it; the parent only waits for the child
    in_parent = bool(request.node.get_closest_marker("fresh_process")) and os.environ.get(_FRESH) != nodeid
    path, budget = _budget()
    held = torch.cuda.memory_reserved() / 2**30  # what the process still holds from earlier tests
    torch.cuda.reset_peak_memory_stats()
    parent = os.getppid() if os.environ.get(_FRESH) == nodeid else None
    with (memory_budget.reserved(need, held, budget, path, nodeid, parent=parent) if not in_parent
          else contextlib.nullcontext(None)) as res:
        yield
        peak = torch.cuda.max_memory_reserved() / 2**30
        _free()
        left = torch.cuda.memory_reserved() / 2**30
        if res is not None:
            memory_budget.release_held(path, left)
    if not in_parent:
        entry = {"test": nodeid, "pid": os.getpid(), "gpu": torch.cuda.get_device_name(), "declared_gib": need,
                 "held_at_start_gib": round(held, 3), "peak_reserved_gib": round(peak, 3),
                 "need_gib": round(max(peak - held, 0.0), 3), "left_after_gib": round(left, 3),
                 "waited_s": round(res.waited_s, 2) if res else 0.0}
        if getattr(request.node, "_segkit_oom_rerun", None) is not None:
            entry["oom_rerun_alone"] = request.node._segkit_oom_rerun
        if left - held > LEAK_GIB:
            entry["holders"] = _cuda_tensor_holders()
        memory_budget.log_peak(entry)


def _free() -> None:
    """Give back what a finished (or failed) test held: pytest keeps a failed test's exception for post-mortem
    (sys.last_traceback) until the next test's call, and with its frames the GPU tensors in them; then collect and
    return the cached blocks to the GPU."""
    for name in ("last_type", "last_value", "last_traceback", "last_exc"):
        if hasattr(sys, name):
            delattr(sys, name)
    gc.collect()
    torch.cuda.empty_cache()


#: GiB a test may leave held in its process (after its cleanup) before the memory log names what holds it
LEAK_GIB = 1.0


def _budget() -> tuple[Path, float]:
    """This GPU's entries file and the GiB its tests' entries may fill together."""
    props = torch.cuda.get_device_properties(0)
    path = memory_budget.reservations_file(str(getattr(props, "uuid", props.name)))
    return path, memory_budget.SHARE * props.total_memory / 2**30


def _cuda_tensor_holders(top: int = 3) -> list[dict]:
    """The largest live CUDA tensors and what refers to them (type names, two levels): where a test's memory
    outlives it."""
    tensors = {}
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.is_cuda:
                tensors.setdefault(obj.untyped_storage().data_ptr(), obj)
        except Exception:  # an object that cannot say (a half-built tensor subclass)
            continue
    found = []
    for t in sorted(tensors.values(), key=lambda t: -t.untyped_storage().nbytes())[:top]:
        refs = [r for r in gc.get_referrers(t) if r is not tensors]
        found.append({"shape": list(t.shape), "dtype": str(t.dtype).removeprefix("torch."),
                      "gib": round(t.untyped_storage().nbytes() / 2**30, 3),
                      "referrers": [[type(r).__name__] + sorted({type(rr).__name__ for rr in gc.get_referrers(r)
                                                                 if rr is not refs})[:4] for r in refs[:4]]})
    del tensors
    return found


@pytest.fixture(scope="module", autouse=True)
def _module_caches(request):
    """A test module's own caches of inputs (``functools.lru_cache`` of a case's tensors) end with the module:
    held for the rest of the shard they were up to 11 GiB that the other shards could not use."""
    yield
    for value in vars(request.module).values():
        if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
            value.cache_clear()
    if "benchmarks.workloads" in sys.modules:
        sys.modules["benchmarks.workloads"].case_data.cache_clear()


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
            item.runtest = _rerun_alone_on_out_of_memory(item, item.runtest)
            continue
        if item.get_closest_marker("fresh_process"):
            item.runtest = lambda item=item: _run_in_fresh_process(item)  # its child re-runs it alone if need be
        else:
            item.runtest = _rerun_alone_on_out_of_memory(item, _rerun_fresh_on_cupti_conflict(item, item.runtest))


def _rerun_alone_on_out_of_memory(item, runtest):
    """Run the test; if the GPU ran out of memory (a need declared too small in tests/gpu/memory_budget.py, and
    other shards at their peaks), free what it held and run it once more while no other shard runs a test. The
    memory log records the re-run (``oom_rerun_alone``): the claim a test makes is judged, not the shards' luck."""

    def run() -> None:
        try:
            runtest()
            return
        except (pytest.skip.Exception, pytest.xfail.Exception):
            raise
        except (Exception, pytest.fail.Exception) as e:
            # a child's failure was its own: it re-ran the test alone already
            if (getattr(e, "from_child", False) or not torch.cuda.is_available()
                    or not memory_budget.is_out_of_memory(e)):
                raise
        _free()
        path, _ = _budget()
        parent = os.getppid() if os.environ.get(_FRESH) == item.nodeid else None
        with memory_budget.alone(path, item.nodeid, parent=parent) as waited:
            item._segkit_oom_rerun = round(waited, 2)
            runtest()

    return run


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
        try:
            pytest.fail(f"{item.nodeid} failed in its own process:\n{proc.stdout[-4000:]}{proc.stderr[-2000:]}",
                        pytrace=False)
        except pytest.fail.Exception as e:
            e.from_child = True
            raise
