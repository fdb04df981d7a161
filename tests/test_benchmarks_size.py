"""benchmarks/ stays a product's size: its tracked files under 1 MB (it had grown to 3.4 MB with gate records
carrying every GPU test's outcome and campaign variants). Runs, their logs, per-test outcome logs and campaign
tables belong to the lab; the results data is kept gzipped."""

from __future__ import annotations

import subprocess

from tests.conftest import ROOT

LIMIT = 1_000_000  # bytes of benchmarks/'s tracked files


def tracked_sizes(folder: str = "benchmarks") -> dict[str, int]:
    """Each tracked file under ``folder`` with its size on disk (``git ls-files``; without git, every file there
    but caches)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", folder], cwd=ROOT, capture_output=True, check=True,
                             timeout=60).stdout.decode()
        names = [n for n in out.split("\0") if n]
    except (OSError, subprocess.SubprocessError):
        names = []
    if not names:  # no git (an unpacked release): the files on disk
        names = [str(p.relative_to(ROOT)) for p in (ROOT / folder).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts]
    return {n: (ROOT / n).stat().st_size for n in names if (ROOT / n).is_file()}


def test_benchmarks_tracked_bytes_stay_under_one_megabyte():
    sizes = tracked_sizes()
    total = sum(sizes.values())
    largest = ", ".join(f"{n} {s // 1000} KB" for n, s in sorted(sizes.items(), key=lambda x: -x[1])[:5])
    assert "benchmarks/model_step.py" in sizes and total < LIMIT, (
        f"benchmarks/ tracks {total / 1e6:.2f} MB, over {LIMIT / 1e6:.0f} MB (largest: {largest}): move runs, logs "
        "and campaign tables to the lab, and keep gate records trimmed (benchmarks/gate_log.py)")
