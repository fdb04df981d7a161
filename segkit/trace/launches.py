"""Two profiles of one step, launch by launch: the kernels of each step aligned in launch order, so that a kernel
that got slower is seen at its place in the step (the q/k norm of layer 2, not the median of every norm kernel).

Kernels are matched by their short name (``Kernel.key``: nvFuser's fusion ids stripped, so Thunder's and segkit_ex's
regions of the same ops pair up) with difflib's longest-matching-blocks alignment; where the names differ over a
stretch (another scheduler, a region cut in two) the launches of the stretch pair in order and the rest are added
or gone. The step is the first range named ``step`` (the step table's profiles), else the whole trace.
"""

from __future__ import annotations

import difflib
import itertools
from dataclasses import dataclass

from segkit.args import checked
from segkit.trace.breakdown import KINDS, MEMORY_BOUND, kind, steps
from segkit.trace.idle import STEP_RANGE
from segkit.trace.model import Kernel, Trace


@dataclass(frozen=True)
class Launch:
    """One pair of aligned launches; ``a`` or ``b`` is None where only one step has the kernel."""

    index: int
    a: Kernel | None
    b: Kernel | None
    kind: str  # segkit.trace.breakdown.kind of the kernel's name

    def row(self) -> dict:
        ua, ub = (None if k is None else round(k.duration_ns / 1e3, 2) for k in (self.a, self.b))
        flag = "added" if self.a is None else "gone" if self.b is None else (
            "renamed" if self.a.key != self.b.key else "")
        return {"#": self.index, "kind": self.kind, "kernel A": self.a.key if self.a else "-",
                "kernel B": self.b.key if self.b else "-", "A us": ua, "B us": ub,
                "delta us": round((ub or 0.0) - (ua or 0.0), 2), "B/A": round(ub / ua, 3) if ua and ub else None,
                "changed": flag}


def step_kernels(trace: Trace, step: str = STEP_RANGE, whole: bool = False) -> list[Kernel]:
    """The first step's kernels in launch order (segkit.trace.breakdown.steps: a step holds the kernels launched
    from any thread while its range was open; a profile without step ranges is refused unless ``whole``)."""
    got = steps(trace, step, whole)
    if not got:
        return []
    return sorted(got[0].kernels, key=lambda k: (k.start_ns if k.launch_ns is None else k.launch_ns, k.start_ns))


def align(a: list[Kernel], b: list[Kernel]) -> list[Launch]:
    """Every launch of ``a`` and of ``b`` exactly once, in launch order, matched by short name."""
    matcher = difflib.SequenceMatcher(None, [k.key for k in a], [k.key for k in b], autojunk=False)
    pairs: list[tuple[Kernel | None, Kernel | None]] = []
    for _, i1, i2, j1, j2 in matcher.get_opcodes():  # equal / replace / delete / insert: each pairs in order
        pairs += list(itertools.zip_longest(a[i1:i2], b[j1:j2]))
    return [Launch(n, x, y, kind((x or y).name)) for n, (x, y) in enumerate(pairs, 1)]


def kind_totals(launches: list[Launch]) -> list[dict]:
    """Per kind (and memory-bound, both memory-bound kinds): launches and us in A and in B, and the delta, B - A."""
    rows = []
    for what, kinds in [*((k, (k,)) for k in KINDS), ("memory-bound", MEMORY_BOUND)]:
        mine = [x for x in launches if x.kind in kinds]
        ua = sum(x.a.duration_ns for x in mine if x.a) / 1e3
        ub = sum(x.b.duration_ns for x in mine if x.b) / 1e3
        rows.append({"kind": what, "A kernels": sum(x.a is not None for x in mine),
                     "B kernels": sum(x.b is not None for x in mine), "A us": round(ua, 1), "B us": round(ub, 1),
                     "delta us": round(ub - ua, 1)})
    return rows


@checked
def launch_tables(a: Trace, b: Trace, step: str = STEP_RANGE, whole: bool = False) -> dict[str, list[dict]]:
    """``launches``: one row per aligned pair of the two steps' launches; ``by kind``: their totals per kind. Both
    profiles' steps are their step ranges (one profile's step against the other's whole process would double
    every kind), or with ``whole`` each profile without them is one step."""
    launches = align(step_kernels(a, step, whole), step_kernels(b, step, whole))
    return {"launches": [x.row() for x in launches], "by kind": kind_totals(launches)}
