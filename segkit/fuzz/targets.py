"""The backend under test and the differential run of one case against the reference interpreter.

A :class:`Target` is what a campaign fuzzes: nvFuser on a GPU (``"nvfuser"``),
the reference interpreter itself (``"reference"``: a campaign that must find
nothing, which measures the generator's false-positive rate), or, in tests, an
interpreter with a planted bug. :func:`run_case` runs a case's fusion on the
target as written and under the bookend realizations, and compares each run
with the reference interpreter's outputs through ``segkit.check``'s verdicts
(dtype-aware tolerances, Index outputs as int64, random outputs by moments),
so a fuzz finding is what ``segkit check`` would call a mismatch.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from segkit.bookend import bookend, run_plan
from segkit.check import judge
from segkit.compare import CheckReport
from segkit.errors import NvFuserUnavailableError, error_summary, nvfuser_assert
from segkit.interp import run_reference
from segkit.nvfuser.run import nvfuser_available, run_nvfuser
from segkit.repro import load_repro

#: Ways to run a fusion: as written, and each bookend policy x realization (label -> (policy, realization)).
REALIZATIONS: dict[str, tuple[str | None, str | None]] = {
    "plain": (None, None),
    "outputs/segment_set": ("outputs", "segment_set"),
    "outputs/host": ("outputs", "host"),
    "inputs+outputs/segment_set": ("inputs+outputs", "segment_set"),
    "inputs+outputs/host": ("inputs+outputs", "host"),
}


@dataclass(frozen=True)
class Target:
    """A backend under test: ``run(fd, inputs)`` returns the fusion's outputs computed by that backend."""

    name: str
    device: str
    run: Callable[[Any, list], list[torch.Tensor]]
    describe: Callable[[], dict[str, str]] = lambda: {}


def _nvfuser_run(fd: Any, inputs: list) -> list[torch.Tensor]:
    return run_nvfuser(fd, inputs, profile=False).outputs


def _nvfuser_describe() -> dict[str, str]:
    import nvfuser_direct

    return {"nvfuser_direct": str(nvfuser_direct.version()), "gpu": torch.cuda.get_device_name(),
            "torch": torch.__version__}


def _reference_describe() -> dict[str, str]:
    return {"reference": "segkit interpreter", "cpu": platform.processor() or platform.machine(),
            "torch": torch.__version__}


def target(name: str) -> Target:
    """A target by name: "nvfuser" (needs CUDA and nvfuser_direct) or "reference" (CPU)."""
    if name == "nvfuser":
        if not nvfuser_available():
            raise NvFuserUnavailableError("fuzz target 'nvfuser' needs a CUDA device and nvfuser_direct "
                                          "(use --target reference to check the generator on a CPU)")
        return Target("nvfuser", "cuda", _nvfuser_run, _nvfuser_describe)
    if name == "reference":
        return Target("reference", "cpu", lambda fd, xs: run_reference(fd, xs), _reference_describe)
    raise ValueError(f"unknown fuzz target {name!r}: use 'nvfuser' or 'reference'")


@dataclass
class Verdict:
    """One realization of one case on the target: "ok", "mismatch" or "error" (the target failed)."""

    realization: str
    status: str
    detail: str = ""
    rel_err: float = 0.0
    tol: float = 0.0
    output: int | None = None  # the worst output of a mismatch, and its worst element
    worst: tuple[int, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status in ("mismatch", "error", "crash", "timeout")


@dataclass
class CaseResult:
    """Every realization's verdict, or why the case could not be judged ("invalid": the reference failed)."""

    verdicts: list[Verdict] = field(default_factory=list)
    status: str = "ok"  # ok | failed | invalid | crash | timeout
    detail: str = ""
    seconds: float = 0.0

    @property
    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.failed]


def _verdict(label: str, report: CheckReport) -> Verdict:
    if report.error:
        return Verdict(label, "error", report.error)
    worst = report.worst
    if report.ok:
        return Verdict(label, "ok", rel_err=worst.rel_err if worst else 0.0)
    return Verdict(label, "mismatch", str(worst), worst.rel_err, worst.tol, worst.index, tuple(worst.worst))


def run_on(target: Target, fd: Any, inputs: list, realization: str) -> list[torch.Tensor]:
    """The fusion's outputs on ``target`` under one realization."""
    policy, how = REALIZATIONS[realization]
    if policy is None:
        return target.run(fd, inputs)
    return run_plan(bookend(fd, policy), inputs, backend=target.run, realization=how)


def realizations_for(fd: Any, wanted: Sequence[str]) -> list[str]:
    """``wanted`` without bookend realizations whose plan cuts nothing (they would rerun the plain fusion)."""
    out = []
    for r in wanted:
        policy, _ = REALIZATIONS[r]
        if policy is None or bookend(fd, policy).cuts:
            out.append(r)
    return out


def run_case(target: Target, fd: Any, inputs: Sequence[Any], realizations: Sequence[str] = ("plain",),
             tol: dict[torch.dtype, float] | None = None) -> CaseResult:
    """Run ``fd`` on the target under each realization and compare with the reference interpreter."""
    inputs = list(inputs)
    try:
        refs = run_reference(fd, inputs)
    except Exception as e:  # the generator made something the reference cannot run: not a target bug
        return CaseResult(status="invalid", detail=error_summary(e))
    result = CaseResult()
    for label in realizations_for(fd, realizations):
        try:
            outs = run_on(target, fd, inputs, label)
        except Exception as e:
            result.verdicts.append(Verdict(label, "error", error_summary(e)))
            continue
        if len(outs) != len(refs):
            result.verdicts.append(Verdict(label, "error", f"{len(outs)} outputs, the fusion defines {len(refs)}"))
            continue
        result.verdicts.append(_verdict(label, judge(fd, refs, outs, label, tol)))
    result.status = "failed" if result.failures else "ok"
    return result


def run_script(target: Target, script: str, realizations: Sequence[str], tol=None, seed: int = 0) -> CaseResult:
    """:func:`run_case` on a repro script's fusion and its inputs (rebuilt on the target's device)."""
    repro = load_repro(script)
    return run_case(target, repro.fd, repro.make_inputs(target.device, seed=seed), realizations, tol)


_VOLATILE = re.compile(r"\b(tv|T|c)\d+\b|0x[0-9a-f]+|\d+")


def error_key(detail: str) -> str:
    """An error message with names, addresses and numbers blanked: errors with one cause share it. An nvFuser
    internal assert counts by its source file, whether the detail is its raw first line or error_summary's."""
    m = nvfuser_assert(detail)
    if m:
        detail = f"{detail[:m.start()]}INTERNAL ASSERT at {m.group(1).rsplit('/', 1)[-1]}"
    return _VOLATILE.sub("#", " ".join(detail.split()))[:160]
