"""Compare outputs with dtype-aware tolerances (what 'matches the reference' means here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

#: Relative tolerance by the checked output's dtype: max|a - b| / max|ref| must stay below it.
TOLERANCE = {
    torch.float64: 1e-10,
    torch.float32: 1e-5,
    torch.float16: 1e-2,
    torch.bfloat16: 1e-2,
}


@dataclass
class OutputDiff:
    index: int
    dtype: torch.dtype
    rel_err: float
    max_abs: float
    worst: tuple[int, ...]
    tol: float
    shape_ok: bool = True

    @property
    def ok(self) -> bool:
        return self.shape_ok and self.rel_err <= self.tol

    def __str__(self) -> str:
        if not self.shape_ok:
            return f"output {self.index}: shape/dtype mismatch"
        verdict = "ok" if self.ok else "MISMATCH"
        return (f"output {self.index} ({str(self.dtype).removeprefix('torch.')}): rel err {self.rel_err:.2e} "
                f"(tol {self.tol:.0e}), max abs {self.max_abs:.3g} at {list(self.worst)}: {verdict}")


def tolerance(dtype: torch.dtype) -> float:
    return TOLERANCE.get(dtype, 0.0)


def diff(index: int, ref: torch.Tensor, got: torch.Tensor, tol: float | None = None) -> OutputDiff:
    """How far ``got`` is from ``ref``, relative to the reference's largest magnitude."""
    tol = tolerance(got.dtype) if tol is None else tol
    if tuple(ref.shape) != tuple(got.shape):
        return OutputDiff(index, ref.dtype, float("inf"), float("inf"), (), tol, shape_ok=False)
    r = ref.detach().to("cpu", torch.float64)
    g = got.detach().to("cpu", torch.float64)
    if r.numel() == 0:
        return OutputDiff(index, ref.dtype, 0.0, 0.0, (), tol)
    err = (r - g).abs()
    nan_mismatch = torch.isnan(r) != torch.isnan(g)
    err = torch.where(torch.isnan(r) & torch.isnan(g), torch.zeros_like(err), err)
    err = torch.where(nan_mismatch, torch.full_like(err, float("inf")), err)
    flat = int(torch.argmax(err.nan_to_num(nan=float("inf"))).item())
    worst = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), r.shape)) if r.ndim else ()
    max_abs = float(err.max())
    scale = float(r.abs().nan_to_num(nan=0.0).max())
    rel = max_abs / scale if scale > 0 else max_abs
    return OutputDiff(index, ref.dtype, rel, max_abs, worst, tol)


def compare(refs: Sequence[torch.Tensor], gots: Sequence[torch.Tensor],
            tol: dict[torch.dtype, float] | None = None) -> list[OutputDiff]:
    """One diff per output; ``tol`` overrides the tolerance of the dtypes it names."""
    if len(refs) != len(gots):
        raise ValueError(f"{len(refs)} reference outputs but {len(gots)} outputs to check")
    tols = tol or {}
    return [diff(i, r, g, tols.get(g.dtype)) for i, (r, g) in enumerate(zip(refs, gots))]


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
