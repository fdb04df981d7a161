"""The segkit.check hook for Thunder: validate each new fusion signature once against segkit's reference
interpreter and refuse a wrong answer (warn, then return the reference's) instead of passing it on.

Two switches, both off by default:

* compile option ``segkit_check=True``: segkit_ex's own fusions (fusions.runner);
* ``thunder.jit(..., transforms=[thunder_exec.CheckNvFusions()])``: the nvFusion regions of Thunder's
  stock nvFuser executor. Their definitions are read back from nvFuser (``repro_script_for`` the very
  inputs) into segkit's recorder; a region segkit cannot record (an op it lacks, in-place outputs) is
  run unchecked, with a warning saying why.

A refused signature stays refused: later calls skip nvFuser and run the reference (correct, slower).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from thunder.core.trace import TraceProvenance, from_trace
from thunder.core.transform_common import Transform

from segkit.args import checked
from segkit.nvfuser.run import signature
from segkit.repro import load_repro
from segkit.verdicts import ResultVerdicts
from thunder_exec.compat import install_nvfuser_direct_compat


@dataclass
class CheckedRegion:
    """Stands in for one of Thunder's FusionDefinitionWrapper objects in the trace's call context."""

    wrapper: Any
    verdicts: ResultVerdicts

    def __call__(self, *args):
        name, inputs = self.wrapper.name, list(args)
        return self.verdicts.outputs(
            (name, signature(args)), f"Thunder's {name} on nvFuser",
            lambda: load_repro(self.wrapper.last_used.repro_script_for(inputs)).fd,
            inputs, lambda: self.wrapper(*args))


def wrap_nvfusion_regions(computation_trace, wrap: Callable[[Any], Any], provenance: str):
    """A copy of the trace in which each of Thunder's nvFusion regions calls ``wrap(its wrapper)`` instead."""
    new = from_trace(computation_trace)
    new.bound_symbols = [wrap_nvfusion_region(b, wrap) for b in computation_trace.bound_symbols]
    new.set_provenance(TraceProvenance(provenance))
    return new


def wrap_nvfusion_region(bsym, wrap: Callable[[Any], Any]):
    """``bsym`` calling ``wrap(Thunder's wrapper)`` if it is an nvFusion region, else ``bsym`` itself."""
    name = bsym.sym.name
    if not (bsym.sym.is_fusion and name.startswith("nvFusion")):
        return bsym
    wrapped = bsym.from_bsym()
    # set after from_bsym: the fusion symbol's bind postprocess re-installs Thunder's own wrapper
    wrapped._call_ctx = {**(bsym._call_ctx or {}), name: wrap(bsym._call_ctx[name])}
    return wrapped


class CheckNvFusions(Transform):
    """Validate every nvFusion region of the forward and backward traces once per input signature. Applies the
    nvfuser_direct compatibility fix (thunder_exec.compat), which Thunder's own fusions need."""

    @checked
    def __init__(self) -> None:
        install_nvfuser_direct_compat()
        self.verdicts = ResultVerdicts()

    def transform_trace_post_optimization(self, computation_trace, **kwargs):
        return wrap_nvfusion_regions(computation_trace, self._region,
                                     "segkit: nvFusion regions validated against the reference")

    def _region(self, wrapper) -> CheckedRegion:
        return CheckedRegion(wrapper, self.verdicts)

    def _checked(self, bsym):
        return wrap_nvfusion_region(bsym, self._region)
