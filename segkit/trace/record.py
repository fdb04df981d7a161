"""Recording: mark regions, capture with torch.profiler, run a command under nsys (or torch.profiler)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import nvtx
import torch

from segkit.args import Name, checked
from segkit.errors import UsageError
from segkit.nvfuser.timing import cuda_profiler
from segkit.trace.model import USER_DOMAIN, Trace, TraceError


@contextlib.contextmanager
@checked
def range(name: Name):  # noqa: A001  (the harness's verb: segkit.trace.range)
    """Mark a region for both recorders: an NVTX push/pop in the ``segkit`` domain (nsys) and a
    record_function (torch.profiler)."""
    with nvtx.annotate(name, domain=USER_DOMAIN), torch.profiler.record_function(name):
        yield


class Capture:
    """Filled when the ``capture()`` block ends: ``.trace`` is the recorded Trace."""

    trace: Trace | None = None


@contextlib.contextmanager
@checked
def capture(path: str | Path | None = None):
    """Record the block with torch.profiler into the Trace model (chrome trace kept at ``path`` if given)."""
    from segkit.trace.chrome import load_chrome

    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    holder = Capture()
    with cuda_profiler(activities) as prof:
        yield holder
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    out = Path(path) if path else Path(tempfile.mkdtemp()) / "trace.json"
    prof.export_chrome_trace(str(out))
    holder.trace = load_chrome(out)
    if torch.cuda.is_available() and not holder.trace.kernels:
        warnings.warn("torch.profiler recorded no CUDA kernel: if kernels ran in this block, CUPTI was unavailable "
                      "(one CUPTI client per process: nvFuser's profiler, used by segkit.run_nvfuser(profile=True), "
                      "is one); record in a fresh process or with nsys (segkit profile --nsys)", stacklevel=3)


def profile_command(cmd: list[str], out_dir: Path, backend: str) -> Path:
    """Run ``cmd`` under nsys (``backend="nsys"``) or torch.profiler; return the report path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if backend == "nsys":
        nsys = shutil.which("nsys")
        if nsys is None:
            raise TraceError("nsys is not on PATH; use --torch to record with torch.profiler")
        report = out_dir / "report.nsys-rep"
        proc = subprocess.run([nsys, "profile", "--trace=cuda,nvtx", "--force-overwrite=true",
                               "-o", str(report.with_suffix("")), *cmd])
        if proc.returncode != 0 or not report.exists():
            raise TraceError(f"nsys profile failed (exit {proc.returncode}) for: {' '.join(cmd)}")
        from segkit.trace.nsys import export_sqlite

        return export_sqlite(report)
    if not cmd or not Path(cmd[0]).name.startswith("python"):
        raise TraceError(f"--torch records Python scripts only (python SCRIPT ...), got: {' '.join(cmd)}")
    program = cmd[1:]
    if not program or (program[0] in ("-c", "-m") and len(program) < 2):
        raise UsageError(f"--torch: give the program to run: python SCRIPT, python -c CODE or python -m MODULE; got: "
                         f"{' '.join(cmd)}")
    if program[0].startswith("-") and program[0] not in ("-c", "-m"):
        raise UsageError(f"--torch runs python SCRIPT, -c CODE or -m MODULE: python's option {program[0]} is not "
                         "taken here")
    if program[0] not in ("-c", "-m") and not Path(program[0]).is_file():
        raise UsageError(f"--torch: no such script: {program[0]}")
    report = out_dir / "trace.json"
    proc = subprocess.run([cmd[0], "-m", "segkit.trace.torch_run", str(report), *cmd[1:]],
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    if proc.returncode != 0 or not report.exists():
        raise TraceError(f"torch.profiler run failed (exit {proc.returncode}) for: {' '.join(cmd)}")
    return report
