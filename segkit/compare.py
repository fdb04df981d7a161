"""Compare outputs with dtype-aware tolerances (what 'matches the reference' means here).

Non-finite values: a NaN must be NaN on both sides and an Inf the same Inf on both sides (there they
are equal); anywhere else a NaN or Inf on one side only is a mismatch, reported with its first position.
The relative error is taken over the positions finite on both sides. Each diff counts the NaN / +Inf /
-Inf of both sides, so a verdict never hides them. A ``CheckReport`` holds one diff per output of a run.

Two tensors on one GPU are compared there, the CPU's otherwise, ``CHUNK`` elements at a time in float64: the
benchmarks check GB-sized outputs before they time them, and copying those to the host in float64 made the
check most of a benchmark case's time (and the host's memory bandwidth the resource that shards of a sweep
fought over). Every step is exact in float64 (subtract, abs, max, first index of the max), so where the
comparison runs does not change its verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from segkit.dtypes import from_torch

CHUNK = 1 << 26  # elements compared at a time: each float64 temporary is then 512 MiB at most

#: Relative tolerance by the checked output's dtype: max|a - b| / max|ref| must stay below it.
TOLERANCE = {
    torch.float64: 1e-10,
    torch.float32: 1e-5,
    torch.float16: 1e-2,
    torch.bfloat16: 1e-2,
}


@dataclass(frozen=True)
class NonFinite:
    """How many NaN, +Inf and -Inf one side of a comparison holds."""

    nan: int = 0
    posinf: int = 0
    neginf: int = 0

    @classmethod
    def of(cls, t: torch.Tensor) -> "NonFinite":
        return cls(int(torch.isnan(t).sum()), int(torch.isposinf(t).sum()), int(torch.isneginf(t).sum()))

    def __add__(self, other: "NonFinite") -> "NonFinite":
        return NonFinite(self.nan + other.nan, self.posinf + other.posinf, self.neginf + other.neginf)

    @property
    def total(self) -> int:
        return self.nan + self.posinf + self.neginf

    def __str__(self) -> str:
        parts = [f"{n} {what}" for n, what in ((self.nan, "nan"), (self.posinf, "+inf"), (self.neginf, "-inf")) if n]
        return ", ".join(parts) or "none"


@dataclass
class OutputDiff:
    index: int
    dtype: torch.dtype
    rel_err: float
    max_abs: float
    worst: tuple[int, ...]
    tol: float
    shape_ok: bool = True
    ref_nonfinite: NonFinite = NonFinite()
    got_nonfinite: NonFinite = NonFinite()
    nonfinite_mismatches: int = 0  # positions where NaN/Inf differ; ``worst`` is the first of them
    ref_at_worst: float | None = None
    got_at_worst: float | None = None
    shapes: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    #: The checked output's dtype when it is not the reference's (then the values are not compared).
    got_dtype: torch.dtype | None = None
    label: str = ""  # who computed the checked output, for the dtype verdict
    what: str = "output"  # "input" for an input the fusion writes into (add_output(out, alias_input=inp))

    @property
    def ok(self) -> bool:
        return (self.shape_ok and self.got_dtype is None and self.nonfinite_mismatches == 0
                and self.rel_err <= self.tol)

    def __str__(self) -> str:
        if not self.shape_ok:
            return (f"{self.what} {self.index}: shape mismatch, reference {list(self.shapes[0])}, "
                    f"output {list(self.shapes[1])}: MISMATCH")
        if self.got_dtype is not None:
            return (f"{self.what} {self.index}: dtype differs: {self.label} {_dtype_name(self.got_dtype)} vs reference "
                    f"{_dtype_name(self.dtype)}: MISMATCH")
        verdict = "ok" if self.ok else "MISMATCH"
        head = f"{self.what} {self.index} ({str(self.dtype).removeprefix('torch.')}): "
        if self.nonfinite_mismatches:
            return (head + f"NaN/Inf differ at {self.nonfinite_mismatches} position(s), first {list(self.worst)}: "
                    f"reference {self.ref_at_worst}, output {self.got_at_worst}; {self._nonfinite()}: {verdict}")
        text = (head + f"rel err {self.rel_err:.2e} (tol {self.tol:.0e}), max abs {self.max_abs:.3g} "
                f"at {list(self.worst)}")
        if self.ref_nonfinite.total or self.got_nonfinite.total:
            text += f"; {self._nonfinite()} (same places)"
        return f"{text}: {verdict}"

    def _nonfinite(self) -> str:
        return f"non-finite: reference {self.ref_nonfinite}, output {self.got_nonfinite}"


def _dtype_name(dtype: torch.dtype) -> str:
    """nvFuser's name of a dtype (Float, BFloat16), torch's where nvFuser has none."""
    try:
        return from_torch(dtype).name
    except ValueError:
        return str(dtype).removeprefix("torch.")


def tolerance(dtype: torch.dtype) -> float:
    return TOLERANCE.get(dtype, 0.0)


def _index(flat: int, shape: torch.Size) -> tuple[int, ...]:
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape)) if len(shape) else ()


def _float64_reference(ref: torch.dtype, got: torch.dtype) -> bool:
    """A float64 reference for a narrower floating output: how segkit's references are computed (beside the
    checked dtype, in float64), and the one dtype difference a comparison accepts."""
    return ref == torch.float64 and got.is_floating_point and got.itemsize < 8


def diff(index: int, ref: torch.Tensor, got: torch.Tensor, tol: float | None = None,
         label: str | None = None) -> OutputDiff:
    """How far ``got`` is from ``ref``, relative to the reference's largest finite magnitude. A shape or dtype
    that differs is a failed comparison of its own, named (``label``: who computed ``got``), never a tolerance
    mismatch; the one exception is a float64 reference for a narrower floating output."""
    if not isinstance(ref, torch.Tensor) or not isinstance(got, torch.Tensor):
        bad, x = ("reference", ref) if not isinstance(ref, torch.Tensor) else ("output", got)
        raise TypeError(f"output {index}: the {bad} is a {type(x).__name__}, not a tensor")
    tol = tolerance(got.dtype) if tol is None else tol
    shapes = (tuple(ref.shape), tuple(got.shape))
    if shapes[0] != shapes[1]:
        return OutputDiff(index, ref.dtype, float("inf"), float("inf"), (), tol, shape_ok=False, shapes=shapes)
    if ref.dtype != got.dtype and not _float64_reference(ref.dtype, got.dtype):
        return OutputDiff(index, ref.dtype, float("inf"), float("inf"), (), tol, got_dtype=got.dtype,
                          label=label or "output")
    device = ref.device if ref.device == got.device else torch.device("cpu")
    r, g = ref.detach().to(device).reshape(-1), got.detach().to(device).reshape(-1)
    scan = _Scan()
    for start in range(0, r.numel(), CHUNK):
        scan.add(start, r[start:start + CHUNK].to(torch.float64), g[start:start + CHUNK].to(torch.float64))
    counts = dict(ref_nonfinite=scan.ref_nonfinite, got_nonfinite=scan.got_nonfinite, shapes=shapes)
    if r.numel() == 0:
        return OutputDiff(index, ref.dtype, 0.0, 0.0, (), tol, **counts)
    if scan.differ:
        first = scan.first_differ
        return OutputDiff(index, ref.dtype, float("inf"), float("inf"), _index(first, ref.shape), tol,
                          nonfinite_mismatches=scan.differ, ref_at_worst=float(r[first]),
                          got_at_worst=float(g[first]), **counts)
    rel = scan.max_abs / scan.scale if scan.scale > 0 else scan.max_abs
    return OutputDiff(index, ref.dtype, rel, scan.max_abs, _index(scan.at, ref.shape), tol,
                      ref_at_worst=float(r[scan.at]), got_at_worst=float(g[scan.at]), **counts)


@dataclass
class _Scan:
    """What ``diff`` keeps of the chunks seen so far (positions are flat indices into the whole tensor)."""

    ref_nonfinite: NonFinite = NonFinite()
    got_nonfinite: NonFinite = NonFinite()
    differ: int = 0  # positions where NaN / Inf differ
    first_differ: int = -1
    max_abs: float = -1.0  # largest |ref - got| over the positions finite on both sides (0 where none is)
    at: int = 0  # its first position
    scale: float = 0.0  # largest finite |ref| there

    def add(self, start: int, r: torch.Tensor, g: torch.Tensor) -> None:
        self.ref_nonfinite += NonFinite.of(r)
        self.got_nonfinite += NonFinite.of(g)
        finite = torch.isfinite(r) & torch.isfinite(g)
        differ = ~((torch.isnan(r) & torch.isnan(g)) | (torch.isinf(r) & (r == g)) | finite)
        n = int(differ.sum())
        if n and not self.differ:
            self.first_differ = start + int(torch.nonzero(differ)[0])
        self.differ += n
        err = torch.where(finite, (r - g).abs(), torch.zeros_like(r))
        i = int(torch.argmax(err))
        if float(err[i]) > self.max_abs:  # strictly: a tie keeps the earlier chunk's, the first position
            self.max_abs, self.at = float(err[i]), start + i
        self.scale = max(self.scale, float(torch.where(finite, r.abs(), torch.zeros_like(r)).max()))


def compare(refs: Sequence[torch.Tensor], gots: Sequence[torch.Tensor],
            tol: dict[torch.dtype, float] | None = None, label: str | None = None) -> list[OutputDiff]:
    """One diff per output; ``tol`` overrides the tolerance of the dtypes it names; ``label`` as in diff."""
    if isinstance(refs, torch.Tensor) or isinstance(gots, torch.Tensor):
        raise TypeError("compare takes lists of tensors (one per output); wrap a single tensor in a list")
    if len(refs) != len(gots):
        raise ValueError(f"{len(refs)} reference outputs but {len(gots)} outputs to check")
    tols = tol or {}
    return [diff(i, r, g, tols.get(getattr(g, "dtype", None)), label) for i, (r, g) in enumerate(zip(refs, gots))]


@dataclass
class RandomDiff:
    """Verdict on an output drawn from nvFuser's random stream, which the reference cannot reproduce:
    compared by shape, dtype, range and moments, never element by element."""

    index: int
    dtype: torch.dtype
    problems: list[str]
    tol: float = 1.0

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def rel_err(self) -> float:  # so a report can rank it beside OutputDiffs
        return 0.0 if self.ok else float("inf")

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "MISMATCH: " + "; ".join(self.problems)
        return (f"output {self.index} ({str(self.dtype).removeprefix('torch.')}): random (nvFuser's Philox stream "
                f"is not reproduced), compared by shape, dtype, range and moments: {verdict}")


def compare_random(index: int, ref: torch.Tensor, got: torch.Tensor) -> RandomDiff:
    """Do two draws look like the same distribution? Same shape and dtype, both finite, each inside the
    other's range widened by three standard deviations, means within six standard errors, standard
    deviations within a factor of two (moments only from 16 elements on). Non-float outputs (RNG states)
    are compared by shape and dtype alone."""
    problems = []
    if tuple(ref.shape) != tuple(got.shape) or ref.dtype != got.dtype:
        return RandomDiff(index, ref.dtype, [f"shape/dtype {list(got.shape)} {got.dtype}, expected "
                                             f"{list(ref.shape)} {ref.dtype}"])
    if not ref.dtype.is_floating_point or ref.numel() == 0:
        return RandomDiff(index, ref.dtype, [])
    r, g = ref.detach().to("cpu", torch.float64).flatten(), got.detach().to("cpu", torch.float64).flatten()
    if not bool(torch.isfinite(g).all()) and bool(torch.isfinite(r).all()):
        return RandomDiff(index, ref.dtype, ["non-finite values where the reference has none"])
    r, g = r[torch.isfinite(r)], g[torch.isfinite(g)]
    if r.numel() == 0 or g.numel() == 0:
        return RandomDiff(index, ref.dtype, [])
    spread = max(float(r.std()) if r.numel() > 1 else 0.0, float(g.std()) if g.numel() > 1 else 0.0, 1e-12)
    lo, hi = float(r.min()) - 3 * spread, float(r.max()) + 3 * spread
    if float(g.min()) < lo or float(g.max()) > hi:
        problems.append(f"range [{float(g.min()):.4g}, {float(g.max()):.4g}] outside [{lo:.4g}, {hi:.4g}]")
    if r.numel() >= 16 and g.numel() >= 16:
        if abs(float(r.mean()) - float(g.mean())) > 6 * spread / r.numel() ** 0.5:
            problems.append(f"mean {float(g.mean()):.4g} vs reference {float(r.mean()):.4g}")
        sr, sg = float(r.std()), float(g.std())
        if max(sr, sg) > 1e-12 and not 0.5 <= (sg + 1e-12) / (sr + 1e-12) <= 2.0:
            problems.append(f"std {sg:.4g} vs reference {sr:.4g}")
    return RandomDiff(index, ref.dtype, problems)


@dataclass
class CheckReport:
    """Per-output verdicts of nvFuser (or a bookend realization on it) against the reference interpreter."""

    diffs: list[OutputDiff | RandomDiff]
    label: str = "nvFuser"
    error: str | None = None  # nvFuser failed to compile or run
    details: dict = field(default_factory=dict)
    #: What the verdicts do not say, flagged (e.g. an output with no finite value on the reference: it "matches"
    #: while checking no number); they do not change ``ok``.
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None and all(d.ok for d in self.diffs)

    @property
    def worst(self) -> OutputDiff | None:
        return max(self.diffs, key=lambda d: d.rel_err / max(d.tol, 1e-30), default=None)

    def __str__(self) -> str:
        if self.error:
            return f"{self.label}: ERROR {self.error}"
        lines = [f"{self.label} vs reference interpreter: {'ok' if self.ok else 'MISMATCH'}"]
        lines += [f"  {d}" for d in self.diffs]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Plain data for JSON: the verdict, each output's line, the error and the notes."""
        return {"label": self.label, "ok": self.ok, "error": self.error, "outputs": [str(d) for d in self.diffs],
                "notes": list(self.notes)}


def nonfinite_notes(outputs: Sequence[torch.Tensor], who: str = "the reference") -> list[str]:
    """A note per floating output of ``outputs`` with no finite value (all NaN / Inf): a comparison of such an
    output passes on NaN and Inf agreeing, so the run looks fine while no number was checked."""
    notes = []
    for i, t in enumerate(outputs):
        if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel()):
            continue
        wide = t if t.element_size() > 1 else t.float()  # torch has no isfinite / isnan for some float8 types
        if not bool(torch.isfinite(wide).any()):
            notes.append(f"output {i}: every value is non-finite on {who} ({NonFinite.of(wide)}): nothing numeric is "
                         "checked (an overflow or a log/sqrt of negatives in the fusion?)")
    if notes and len(notes) == len(outputs):
        notes.append("no output has a finite value: the run computed nothing checkable")
    return notes
