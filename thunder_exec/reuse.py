"""Reduction reuse for Thunder's stock nvFusion regions:
``thunder.jit(fn, transforms=[thunder_exec.ReuseNvFusions()])``.

Each region's definition is read back from nvFuser (``repro_script_for`` the very inputs, as the check hook
does) the first time an input signature is seen; when ``segkit.reuse_reductions`` rewrites it (a wider
max / min / sum fed from a narrower one), the rewritten fusion is validated once against Thunder's own answer
and then runs instead of Thunder's region for that signature (on nvFuser for CUDA inputs, else the reference
interpreter). A region with nothing to reuse, one segkit cannot record, or a rewrite that does not match keeps
Thunder's fusion (the last two with a ``ReuseSkippedWarning`` saying why).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from thunder.core.transform_common import Transform

from segkit.args import checked
from segkit.check import check_outputs
from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.nvfuser.run import compiled, nvfuser_available, signature
from segkit.repro import load_repro
from segkit.reuse import reuse_reductions
from thunder_exec.check_hook import wrap_nvfusion_regions
from thunder_exec.compat import install_nvfuser_direct_compat


class ReuseSkippedWarning(UserWarning):
    """A region kept Thunder's own fusion: segkit could not record it, or its rewrite did not match."""


@dataclass
class Rewrites:
    """Per-signature decisions: the rewritten recorded fusion to run, or None to keep Thunder's region."""

    decided: dict[Hashable, Any] = field(default_factory=dict)
    plans: dict[Hashable, str] = field(default_factory=dict)  # what each rewrite did (plan.describe())


def _execute(fd: Any, args: Sequence[Any]) -> list[torch.Tensor]:
    if nvfuser_available() and all(t.is_cuda for t in args if isinstance(t, torch.Tensor)):
        return list(compiled(fd).execute(list(args)))
    return run_reference(fd, args)


@dataclass
class ReusedRegion:
    """Stands in for one of Thunder's FusionDefinitionWrapper objects in the trace's call context."""

    wrapper: Any
    rewrites: Rewrites
    inner_outer: str | None = None

    def __call__(self, *args):
        key = (self.wrapper.name, signature(args))
        if key in self.rewrites.decided:
            fd = self.rewrites.decided[key]
            return self.wrapper(*args) if fd is None else _execute(fd, args)
        outputs = list(self.wrapper(*args))
        self.rewrites.decided[key] = self._decide(key, list(args), outputs)
        return outputs

    def _decide(self, key: Hashable, args: list, outputs: list[torch.Tensor]) -> Any:
        name = self.wrapper.name
        try:
            fd = load_repro(self.wrapper.last_used.repro_script_for(args)).fd
        except SegkitError as e:
            warnings.warn(ReuseSkippedWarning(f"{name}: kept Thunder's fusion, segkit cannot record it: {e}"),
                          stacklevel=3)
            return None
        plan = reuse_reductions(fd, inner_outer=self.inner_outer)
        if not (plan.reuses or plan.pairs):
            return None
        new = plan.apply()
        report = check_outputs(fd, args, _execute(new, args), label=f"{name} with reductions reused")
        if not report.ok:
            warnings.warn(ReuseSkippedWarning(f"{name}: kept Thunder's fusion, the rewrite does not match the "
                                              f"reference: {report.worst or report.error}"), stacklevel=3)
            return None
        self.rewrites.plans[key] = plan.describe()
        return new


class ReuseNvFusions(Transform):
    """Rewrite every nvFusion region of the forward and backward traces to reuse its reductions (per signature).
    Applies the nvfuser_direct compatibility fix (thunder_exec.compat), which Thunder's own fusions need."""

    @checked
    def __init__(self, inner_outer: Literal["outer", "inner"] | None = None) -> None:
        install_nvfuser_direct_compat()
        self.rewrites, self.inner_outer = Rewrites(), inner_outer  # inner_outer: see segkit.reuse_reductions

    def transform_trace_post_optimization(self, computation_trace, **kwargs):
        return wrap_nvfusion_regions(computation_trace, lambda wrapper: ReusedRegion(wrapper, self.rewrites, self.inner_outer),
                                     "segkit: nvFusion regions with reductions reused")
