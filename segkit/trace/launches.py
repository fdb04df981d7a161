"""Two profiles of one step, launch by launch: the kernels of each step aligned in launch order, so that a kernel
that got slower is seen at its place in the step (the q/k norm of layer 2, not the median of every norm kernel).

Kernels are matched by their short name (``Kernel.key``: nvFuser's fusion ids stripped, so Thunder's and segkit_ex's
regions of the same ops pair up). ``align`` cuts the steps at anchors and aligns the stretches between them: the
common start and end, then the names launched as many times in both stretches, and the fewest times of those (unique
names where there are; a model's layers: each GEMM, attention kernel, ...), pair their k-th launch in A with their
k-th in B; the longest run of those pairs in order in both is kept (patience alignment), and each stretch between two
anchors is cut again: near linear in the steps' length. A small stretch (``DIFFLIB_CELLS``; a whole step of a few
hundred launches) is aligned by difflib's longest matching blocks, as the whole step was before (quadratic in its
length); a large one without anchors pairs in order. Where the names differ over a stretch (another scheduler, a
region cut in two) the launches of the stretch pair in order and the rest are added or gone. The step is the first
range named ``step`` (the step table's profiles), else the whole trace with ``whole``.
"""

from __future__ import annotations

import bisect
import difflib
import itertools
from collections import Counter
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
    return sorted(got[0].kernels, key=lambda k: (k.launched_ns, k.start_ns))


#: A stretch of at most this many (A launches x B launches) goes to difflib, quadratic in it (a real model step
#: of a few hundred launches is aligned as a whole, as it was before anchors).
DIFFLIB_CELLS = 250_000

def align(a: list[Kernel], b: list[Kernel]) -> list[Launch]:
    """Every launch of ``a`` and of ``b`` exactly once, in launch order, matched by short name (the module's
    docstring: anchors, then difflib on small stretches)."""
    pairs = _align_keys([k.key for k in a], [k.key for k in b])
    return [Launch(n, None if i is None else a[i], None if j is None else b[j],
                   kind((a[i] if i is not None else b[j]).name)) for n, (i, j) in enumerate(pairs, 1)]


def _align_keys(ka: list[str], kb: list[str]) -> list[tuple[int | None, int | None]]:
    """(index in ``ka`` or None, index in ``kb`` or None) in order: each index of both exactly once."""
    out: list[tuple[int | None, int | None]] = []
    todo = [(0, len(ka), 0, len(kb))]  # stretches still to align, the next on top
    while todo:
        i1, i2, j1, j2 = todo.pop()
        if (i2 - i1) * (j2 - j1) <= DIFFLIB_CELLS:
            out += _difflib(ka, kb, i1, i2, j1, j2)
            continue
        while i1 < i2 and j1 < j2 and ka[i1] == kb[j1]:  # the common start
            out.append((i1, j1))
            i1, j1 = i1 + 1, j1 + 1
        tail = 0
        while i1 < i2 - tail and j1 < j2 - tail and ka[i2 - 1 - tail] == kb[j2 - 1 - tail]:
            tail += 1
        if tail:  # the common end, after the rest of the stretch
            todo.append((i2 - tail, i2, j2 - tail, j2))
            i2, j2 = i2 - tail, j2 - tail
        anchors = _anchors(ka, kb, i1, i2, j1, j2)
        if anchors:
            bounds = [(i1 - 1, j1 - 1), *anchors, (i2, j2)]
            for (pi, pj), (ni, nj) in reversed(list(itertools.pairwise(bounds))):
                if (ni, nj) != (i2, j2):
                    todo.append((ni, ni + 1, nj, nj + 1))  # the anchor itself: a common start of one
                todo.append((pi + 1, ni, pj + 1, nj))
            continue
        out += itertools.zip_longest(range(i1, i2), range(j1, j2))  # too large for difflib: in order
    return out


def _anchors(ka, kb, i1: int, i2: int, j1: int, j2: int) -> list[tuple[int, int]]:
    """Pairs (i, j) increasing in both: the longest chain of the k-th launch in A and in B of each name launched
    as many times in both stretches, the fewest times of those (a longest increasing subsequence, n log n); the
    stretches between them are cut again, by the names rarest there."""
    ca, cb = Counter(ka[i1:i2]), Counter(kb[j1:j2])
    same = {k: n for k, n in ca.items() if cb.get(k) == n}
    if not same:
        return []
    fewest = min(same.values())  # the rarest such names first (unique ones where there are): a name launched twice
    same = {k for k, n in same.items() if n == fewest}  # per layer would pair across the layer's other kernels
    where_b: dict[str, list[int]] = {}
    for j in range(j1, j2):
        if kb[j] in same:
            where_b.setdefault(kb[j], []).append(j)
    seen: Counter = Counter()
    cands = []
    for i in range(i1, i2):
        if ka[i] in same:
            cands.append((i, where_b[ka[i]][seen[ka[i]]]))
            seen[ka[i]] += 1
    tails: list[int] = []  # tails[n]: the least j ending a chain of n + 1
    tail_at: list[int] = []  # index in cands of that chain's end
    back = [-1] * len(cands)
    for c, (_, j) in enumerate(cands):
        n = bisect.bisect_left(tails, j)
        back[c] = tail_at[n - 1] if n else -1
        if n == len(tails):
            tails.append(j)
            tail_at.append(c)
        else:
            tails[n], tail_at[n] = j, c
    chain, c = [], tail_at[-1]
    while c >= 0:
        chain.append(cands[c])
        c = back[c]
    return chain[::-1]


def _difflib(ka, kb, i1: int, i2: int, j1: int, j2: int) -> list[tuple[int | None, int | None]]:
    """A small stretch by difflib's longest matching blocks: each of its opcodes pairs in order."""
    matcher = difflib.SequenceMatcher(None, ka[i1:i2], kb[j1:j2], autojunk=False)
    out: list[tuple[int | None, int | None]] = []
    for _, x1, x2, y1, y2 in matcher.get_opcodes():  # equal / replace / delete / insert
        out += itertools.zip_longest(range(i1 + x1, i1 + x2), range(j1 + y1, j1 + y2))
    return out


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
