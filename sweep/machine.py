"""The machine block: one dict naming the GPU, driver and library versions a result was measured with.

Every writer of results puts it in its file (pytest-benchmark's ``machine_info["machine"]``, a top-level
``"machine"`` in the sweep record, a GPU driver's ``results.json`` and each ``SEGKIT_BENCH_LOG``
JSON line), so a reader can compare runs without reading the folder name. It holds no hostname. Nothing here
initialises CUDA: the GPUs come from ``nvidia-smi`` (the visible ones where ``CUDA_VISIBLE_DEVICES`` lists
indices) and the versions from the installed distributions, so a sweep launcher can call it too; on a
machine without a GPU the GPU fields are None.
"""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import os
import platform
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KEY = "machine"  # where the block goes in every result file
COMMIT_ENV = "SEGKIT_COMMIT"  # the commit, where the tree was copied without its git directory (the GPU host)
# distribution name -> block key (the distributions whose version a result depends on)
DISTRIBUTIONS = {"torch": "torch", "lightning-thunder": "lightning-thunder", "liger-kernel": "liger-kernel",
                 "quack-kernels": "quack-kernels", "triton": "triton", "litgpt": "litgpt",
                 "transformers": "transformers"}
# the fields a summary prints, in this order
FIELDS = ("gpu", "gpu_count", "driver", "cuda", "torch", "nvfuser_direct", "lightning-thunder", "liger-kernel",
          "quack-kernels", "triton", "litgpt", "transformers", "python", "copy_gbs", "date", "commit")


def _run(cmd: list[str], cwd: Path = ROOT) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _nvfuser_direct() -> str | None:
    """The version of whichever distribution ships the ``nvfuser_direct`` module (its name carries the CUDA and
    torch versions, e.g. nvfuser-cu130-torch210)."""
    for dist in importlib.metadata.packages_distributions().get("nvfuser_direct", []):
        if version := _version(dist):
            return version
    return None


def _gpus(visible: str | None) -> tuple[str | None, int | None, str | None]:
    """(GPU name, how many, driver) of the GPUs ``visible`` lists (all where it is None or not indices);
    (None, None, None) without nvidia-smi."""
    cmd = ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]
    if visible and all(d.strip().isdigit() for d in visible.split(",")):
        cmd.insert(1, f"--id={visible}")
    lines = [line.split(",") for line in _run(cmd).splitlines() if line.strip()]
    if not lines:
        return None, None, None
    names = sorted({parts[0].strip() for parts in lines})
    return " + ".join(names), len(lines), lines[0][-1].strip()


def _cuda() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.version.cuda


def _commit(root: Path = ROOT) -> str | None:
    """``SEGKIT_COMMIT`` first: a copied tree may carry a stale git directory that names another commit. Else HEAD,
    marked ``+modified`` where tracked files differ from it (uncommitted edits, or such a copy), so a result never
    names a commit whose code it did not run."""
    if os.environ.get(COMMIT_ENV):
        return os.environ[COMMIT_ENV]
    head = _run(["git", "rev-parse", "--short=9", "HEAD"], root)
    if not head:
        return None
    modified = _run(["git", "status", "--porcelain", "--untracked-files=no"], root)
    return f"{head}+modified" if modified else head


@functools.lru_cache(maxsize=8)
def _static(visible: str | None) -> tuple[tuple[str, object], ...]:
    """Everything but the copy bandwidth (which a caller measures): fixed for the life of a process."""
    gpu, count, driver = _gpus(visible)
    block = {"gpu": gpu, "gpu_count": count, "driver": driver, "cuda": _cuda(), "nvfuser_direct": _nvfuser_direct(),
             **{key: _version(dist) for dist, key in DISTRIBUTIONS.items()}, "python": platform.python_version(),
             "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(), "commit": _commit()}
    return tuple(block.items())


def machine_block(copy_gbs: float | dict[str, float] | None = None, devices: list[str] | None = None) -> dict:
    """The machine block of this process (see the module docstring). ``copy_gbs``: the device-to-device copy
    bandwidth measured in this run (per device label for a sweep), None when it was not measured; ``devices``:
    the GPUs the run used (default: those ``CUDA_VISIBLE_DEVICES`` names, else all)."""
    block = dict(_static(",".join(devices) if devices else os.environ.get("CUDA_VISIBLE_DEVICES")))
    if isinstance(copy_gbs, dict):
        block["copy_gbs"] = {k: round(float(v), 1) for k, v in copy_gbs.items()} or None
    else:
        block["copy_gbs"] = None if copy_gbs is None else round(float(copy_gbs), 1)
    return {k: block[k] for k in FIELDS}


def clear_cache() -> None:
    """Forget the block (a test changing the environment, or a process that outlives a driver update)."""
    _static.cache_clear()


def block_of(doc: dict) -> dict | None:
    """The machine block a result document carries: top-level (sweep records, perf results, JSON lines) or in
    pytest-benchmark's ``machine_info``; None for a file written before blocks existed."""
    block = doc.get(KEY)
    if isinstance(block, dict):
        return block
    block = (doc.get("machine_info") or {}).get(KEY)
    return block if isinstance(block, dict) else None


def legacy_block(doc: dict) -> dict | None:
    """What a pytest-benchmark JSON written before blocks existed said of its machine (``machine_info`` had the
    GPU name, driver and versions at top level), as a block with the rest None; None where it named no GPU."""
    info = doc.get("machine_info") or {}
    if not info.get("gpu"):
        return None
    block = {k: info.get(k) for k in FIELDS}
    return {**block, **{k: None for k, v in block.items() if v == "not installed"}}
