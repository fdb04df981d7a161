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
    err = torch.where(r == g, torch.zeros_like(r), (r - g).abs())  # equal infinities are no error
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
