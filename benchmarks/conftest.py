"""Benchmarks run on a GPU host only; elsewhere every benchmark is skipped with the reason."""

from __future__ import annotations

import importlib.metadata

import pytest
import torch


def _gpu_ready() -> str | None:
    from segkit.nvf import nvfuser_available

    if not torch.cuda.is_available():
        return "benchmarks need a CUDA GPU (run them on the GPU host: see benchmarks/README.md)"
    if not nvfuser_available():
        return "benchmarks need nvfuser_direct (source .gpu/activate.sh on the GPU host)"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_ready()
    if reason:
        for item in items:
            item.add_marker(pytest.mark.skip(reason=reason))


_COPY_GBS: list[float] = []


@pytest.fixture(scope="session")
def copy_gbs() -> float:
    """Device-to-device copy bandwidth measured once at the start of this session (the 100% line)."""
    from benchmarks.harness import copy_bandwidth_gbs

    if not _COPY_GBS:
        _COPY_GBS.append(copy_bandwidth_gbs())
    return _COPY_GBS[0]


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _driver() -> str:
    import subprocess

    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return out.splitlines()[0] if out else "unknown"


def pytest_benchmark_update_machine_info(config, machine_info):
    if torch.cuda.is_available():
        import nvfuser_direct

        machine_info["gpu"] = torch.cuda.get_device_name()
        machine_info["driver"] = _driver()
        machine_info["nvfuser_direct"] = nvfuser_direct.version()
    machine_info["torch"] = torch.__version__
    machine_info["lightning-thunder"] = _version("lightning-thunder")
    machine_info["liger-kernel"] = _version("liger-kernel")
    machine_info["quack-kernels"] = _version("quack-kernels")
    machine_info["copy_gbs"] = _COPY_GBS[0] if _COPY_GBS else None


def pytest_terminal_summary(terminalreporter):
    if _COPY_GBS:
        terminalreporter.write_line(f"device-to-device copy bandwidth this session: {_COPY_GBS[0]:.0f} GB/s")
