"""Pasted nvFuser repro scripts (tests/data/pasted_repros, see its README): each script either runs on the
reference interpreter or is refused with one line naming its real reason; never an unexpected error.

The manifest says what a correct tool does with each script (``expects``) and what segkit did when the
script was collected (``today``: "ok", or the category of cause that stops it). Scripts that do not behave
as expected yet are strict xfails named by that category: when a loader or legacy-spelling fix makes one
pass, set its ``today`` to "ok" and raise ``RUNS_FLOOR``.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import segkit
from segkit.errors import ReproError, SegkitError

DATA = Path(__file__).parent / "data" / "pasted_repros"
HELD_OUT = DATA / "held_out"

#: Fraction of the main set's runnable scripts (expects "runs", not heavy) that run: 47 of 47 (8 of 47 before issue 36).
RUNS_FLOOR = 1.0


@dataclass(frozen=True)
class Script:
    """One manifest entry."""

    name: str
    path: Path
    expects: str
    today: str
    finite: bool
    heavy: bool


@dataclass(frozen=True)
class Outcome:
    """What segkit did with a script: every fusion in it ran, or one was refused with ``message``."""

    ran: bool
    message: str = ""
    all_finite: bool = True


def _scripts(folder: Path) -> list[Script]:
    manifest = folder / "MANIFEST.json"
    if not manifest.exists():
        return []
    entries = json.loads(manifest.read_text())["scripts"]
    return [Script(name, folder / e["file"], e["expects"], e["today"], e["finite"], e.get("heavy", False))
            for name, e in sorted(entries.items())]


_SEVERAL = re.compile(r"builds \d+ fusions: (.*?); choose one")


def _repros(path: Path) -> list:
    """Every fusion the script builds, loaded. A loader that finds several fusions names them in its refusal
    (or in ``Repro.names``); each is then loaded with ``load_repro(path, fusion=NAME)``."""
    try:
        first = segkit.load_repro(path)
    except ReproError as e:
        several = _SEVERAL.search(str(e))
        if several is None:
            raise
        names = [re.sub(r" \(line \d+\)$", "", n) for n in several.group(1).split(", ")]
        return [segkit.load_repro(path, fusion=n) for n in names]
    others = [n for n in getattr(first, "names", ()) if n != getattr(first, "name", None)]
    return [first] + [segkit.load_repro(path, fusion=n) for n in others]


@functools.lru_cache(maxsize=128)
def _outcome(path: Path) -> Outcome:
    """Load every fusion of the script, rebuild its inputs on the CPU and run each on the reference.
    Only segkit's own errors are caught: anything else fails the calling test."""
    finite = True
    try:
        for repro in _repros(path):
            outputs = segkit.run_reference(repro.fd, repro.make_inputs("cpu"))
            finite = finite and all(bool(torch.isfinite(t).all()) for t in outputs
                                    if isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()))
    except SegkitError as e:
        return Outcome(False, str(e).replace(str(path), "<script>"))
    return Outcome(True, all_finite=finite)


def _params(folder: Path, expected: bool) -> list:
    """One param per script: scripts that run for tens of seconds are `models` (out of the default run); with
    ``expected``, those not behaving as expected yet are strict xfails named by their cause."""
    params = []
    for s in _scripts(folder):
        marks = [pytest.mark.models] if s.heavy else []
        if expected and s.today != "ok":
            marks.append(pytest.mark.xfail(strict=True, raises=AssertionError, reason=s.today))
        params.append(pytest.param(s, id=s.name, marks=marks))
    return params


def _check_one_line(s: Script) -> Outcome:
    outcome = _outcome(s.path)
    if not outcome.ran:
        assert "\n" not in outcome.message, f"{s.name}: refusal is not one line: {outcome.message!r}"
        assert "unexpected error" not in outcome.message, f"{s.name}: {outcome.message}"
    return outcome


def _check_expected(s: Script) -> None:
    outcome = _check_one_line(s)
    if s.expects == "runs":
        assert outcome.ran, f"{s.name}: refused although nvFuser accepts it: {outcome.message}"
        if s.finite:
            assert outcome.all_finite, f"{s.name}: non-finite outputs from finite math"
    else:
        reasons = s.expects.removeprefix("refuses: ").split(" | ")
        assert not outcome.ran, f"{s.name}: ran although it is invalid ({s.expects})"
        assert any(r.lower() in outcome.message.lower() for r in reasons), \
            f"{s.name}: refusal does not name {' or '.join(map(repr, reasons))}: {outcome.message}"


@pytest.mark.parametrize("script", _params(DATA, expected=False))
def test_never_an_unexpected_error(script):
    """Every script runs or gets one segkit line (a raw exception fails this test)."""
    _check_one_line(script)


@pytest.mark.parametrize("script", _params(DATA, expected=True))
def test_script_behaves_as_expected(script):
    _check_expected(script)


def test_fraction_of_accepted_scripts_that_run():
    runnable = [s for s in _scripts(DATA) if s.expects == "runs" and not s.heavy]
    ran = [s.name for s in runnable if _outcome(s.path).ran]
    fraction = len(ran) / len(runnable)
    print(f"pasted repros: {len(ran)}/{len(runnable)} runnable scripts run ({fraction:.0%})")
    assert len(runnable) >= 45
    assert fraction >= RUNS_FLOOR


@pytest.mark.parametrize("script", _params(HELD_OUT, expected=False))
def test_held_out_never_an_unexpected_error(script):
    _check_one_line(script)


@pytest.mark.parametrize("script", _params(HELD_OUT, expected=True))
def test_held_out_script_behaves_as_expected(script):
    _check_expected(script)
