"""Benchmarks run on a GPU host only; elsewhere every benchmark is skipped with the reason."""

from __future__ import annotations

import pytest
import torch


def _gpu_ready() -> str | None:
    from segkit.nvfuser.run import nvfuser_available

    if not torch.cuda.is_available():
        return "benchmarks need a CUDA GPU (run them on the GPU host: see benchmarks/README.md)"
    if not nvfuser_available():
        return "benchmarks need nvfuser_direct (source .gpu/activate.sh on the GPU host)"
    return None


def pytest_collection_modifyitems(config, items):
    """Skip every benchmark without a GPU; on one, a benchmark whose tuned formulation was dropped (the spec's own
    fusion timed in its place) fails rather than records the wrong kernel."""
    reason = _gpu_ready()
    for item in items:
        item.add_marker(pytest.mark.skip(reason=reason) if reason else
                        pytest.mark.filterwarnings("error::fusions.runner.FormulationFallbackWarning"))


_COPY_GBS: list[float] = []


@pytest.fixture(scope="session")
def copy_gbs() -> float:
    """Device-to-device copy bandwidth measured once at the start of this session (the 100% line)."""
    from benchmarks.harness import copy_bandwidth_gbs

    if not _COPY_GBS:
        _COPY_GBS.append(copy_bandwidth_gbs())
    return _COPY_GBS[0]


def pytest_benchmark_update_machine_info(config, machine_info):
    """The machine block (sweep/machine.py) in place of pytest-benchmark's hostname; copy_gbs stays at top
    level too (the sweep plugin stamps it on every record)."""
    from sweep.machine import KEY, machine_block

    copy_gbs = _COPY_GBS[0] if _COPY_GBS else None
    machine_info.pop("node", None)
    machine_info[KEY] = machine_block(copy_gbs)
    machine_info["copy_gbs"] = copy_gbs


def pytest_terminal_summary(terminalreporter):
    if _COPY_GBS:
        terminalreporter.write_line(f"device-to-device copy bandwidth this session: {_COPY_GBS[0]:.0f} GB/s")
