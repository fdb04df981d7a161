"""Two profiles of one step, section by section: each step cut at its compute kernels (GEMMs, attention) into the
stretches of memory-bound kernels between them, and the two steps' sections paired by the compute kernels that
open them.

Thunder, segkit_ex and Inductor fuse the same ops into kernels that no name pairs up (``--by launch`` pairs
names), but a model's GEMMs and attention run in the same places of every variant's step: the section after the
qkv projection holds the q / k norms and the RoPE, the one after the MLP's up projection the activation, the last
one of the step the weight-gradient sums. So the memory-bound time that differs between two variants is found at
its place in the model, whatever each variant made of it. Sections pair by difflib's alignment of their openers'
short names; where the two steps order their compute kernels differently over a stretch, the sections of that
stretch are listed alone.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from segkit.args import checked
from segkit.trace.breakdown import MEMORY_BOUND, kind
from segkit.trace.idle import STEP_RANGE
from segkit.trace.launches import step_kernels
from segkit.trace.model import Kernel, Trace

START = "start"  # the opener kind of a step's first section


@dataclass(frozen=True)
class Section:
    """The memory-bound ``kernels`` (launch order) after the compute kernel ``opener`` (None: the step's start)."""

    opener: Kernel | None
    kernels: tuple[Kernel, ...]

    @property
    def opened_by(self) -> str:
        return START if self.opener is None else kind(self.opener.name)

    @property
    def us(self) -> float:
        return sum(k.duration_ns for k in self.kernels) / 1e3

    def longest(self) -> str:
        """The short name and time of its longest kernel ("-" for an empty section)."""
        if not self.kernels:
            return "-"
        k = max(self.kernels, key=lambda k: k.duration_ns)
        return f"{k.key} {k.duration_ns / 1e3:.1f}"


def cut(kernels: list[Kernel]) -> list[Section]:
    """``kernels`` (one step, launch order) as sections: one before the first compute kernel, one after each."""
    sections, opener, run = [], None, []
    for k in kernels:
        if kind(k.name) in MEMORY_BOUND:
            run.append(k)
        else:
            sections.append(Section(opener, tuple(run)))
            opener, run = k, []
    return [*sections, Section(opener, tuple(run))]


def pair(a: list[Section], b: list[Section]) -> list[tuple[Section | None, Section | None]]:
    """Every section of ``a`` and of ``b`` once, in step order: paired where their openers align by short name (in
    the step table's profiles the same GEMM shapes got the same cuBLAS kernel in every variant); a stretch whose
    openers differ pairs in order where its openers are of one kind each side, the rest alone."""
    matcher = difflib.SequenceMatcher(None, [_opener_key(s) for s in a], [_opener_key(s) for s in b],
                                      autojunk=False)
    pairs: list[tuple[Section | None, Section | None]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        xs, ys = a[i1:i2], b[j1:j2]
        if tag == "equal" or (tag == "replace" and len(xs) == len(ys)
                              and [x.opened_by for x in xs] == [y.opened_by for y in ys]):
            pairs += list(zip(xs, ys))
        else:
            pairs += [(x, None) for x in xs] + [(None, y) for y in ys]
    return pairs


def _opener_key(s: Section) -> str:
    return START if s.opener is None else s.opener.key


def _row(n: int, x: Section | None, y: Section | None) -> dict:
    ua, ub = (None if s is None else round(s.us, 1) for s in (x, y))
    return {"#": n, "after": (x or y).opened_by + ("" if (x or y).opener is None else f" {(x or y).opener.key}"),
            "A kernels": None if x is None else len(x.kernels), "A us": ua,
            "B kernels": None if y is None else len(y.kernels), "B us": ub,
            "delta us": round((ub or 0.0) - (ua or 0.0), 1), "A longest": x.longest() if x else "-",
            "B longest": y.longest() if y else "-", "paired": x is not None and y is not None}


@checked
def section_tables(a: Trace, b: Trace, step: str = STEP_RANGE, top: int = 10,
                   whole: bool = False) -> dict[str, list[dict]]:
    """``sections``: one row per section of the two first steps, in step order (``after``: the compute kernel
    that opens it, A's where both have it); ``largest deltas``: the ``top`` rows whose memory-bound time differs
    most; ``total``: each side's memory-bound time and kernels, and how much of it sits in paired sections."""
    pairs = pair(cut(step_kernels(a, step, whole)), cut(step_kernels(b, step, whole)))
    rows = [_row(n, x, y) for n, (x, y) in enumerate(pairs, 1)]
    total = []
    for side, i in (("A", 0), ("B", 1)):
        mine = [p[i] for p in pairs if p[i] is not None]
        total.append({"profile": side, "sections": len(mine), "memory-bound kernels": sum(len(s.kernels) for s in mine),
                      "memory-bound us": round(sum(s.us for s in mine), 1),
                      "in paired sections us": round(sum(p[i].us for p in pairs if None not in p), 1)})
    return {"sections": rows, "largest deltas": sorted(rows, key=lambda r: -abs(r["delta us"]))[:top],
            "total": total}
