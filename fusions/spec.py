"""FusionSpec: a builder, its named configs, its inputs and its float64 reference."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import torch

from segkit.args import Device, checked, given
from segkit.dtypes import DataType, from_torch
from segkit.errors import ArgumentError, UnknownNameError
from segkit.tuning import REUSE, TableEntry, TuningTable, gpu_model

#: ``segkit tune``'s winners per GPU model, committed (``segkit tune --merge`` adds a run's results).
TABLE_PATH = Path(__file__).with_name("tunings.json")


@functools.lru_cache(maxsize=1)
def tuning_table() -> TuningTable:
    """The tuning table the builders read, once (``tuning_table.cache_clear()`` after editing it): the committed
    one, or the file named by $SEGKIT_TUNING_TABLE (e.g. a fresh ``segkit tune --out`` before it is merged)."""
    named = os.environ.get("SEGKIT_TUNING_TABLE")
    return TuningTable.load(named or TABLE_PATH, must_exist=bool(named))  # a table named must be there


@dataclass(frozen=True)
class FusionSpec:
    """One workload. ``define(fd, cfg)`` only calls the FusionDefinition API, so it builds
    a real nvFuser fusion or segkit's recorded IR alike."""

    name: str
    configs: dict[str, Any]
    define: Callable[[Any, Any], None]
    inputs: Callable[[Any, str, torch.Generator], dict[str, torch.Tensor]]  # (cfg, device, generator on device)
    reference: Callable[[dict, Any], tuple]
    outputs: tuple[str, ...]
    doc: str = ""
    tuning: Callable[[Any], Any] | None = None  # cfg -> segkit.tuning.NvTuning | None, for nvFuser
    formulations: dict[str, Callable[[Any, Any], None]] = field(default_factory=dict)  # other defines, same math
    # (cfg, sm_count, quick) -> segkit.tuning.search.SpecCandidates: what ``segkit tune`` tries beside the generic
    # candidates
    candidates: Callable[[Any, int, bool], Any] | None = None
    bytes_floor: Callable[[Any], int] | None = None  # cfg -> the bytes a kernel must move at least (benchmarks' floor)

    @checked
    def make_inputs(self, cfg, device: Device = "cpu", dtype: torch.dtype | None = None,
                    seed: int = 0) -> dict[str, torch.Tensor]:
        """Inputs by name, in define_tensor order (``dtype`` overrides the config's)."""
        cfg = self.config(cfg, dtype)
        gen = torch.Generator(device=device).manual_seed(seed)
        return self.inputs(cfg, device, gen)

    @checked
    def config(self, cfg, dtype: torch.dtype | None = None):
        """A config by name or object, with its dtype replaced when ``dtype`` is given; anything else is an
        ArgumentError naming ``cfg``."""
        kinds = tuple({type(c) for c in self.configs.values()})
        if not isinstance(cfg, (str, *kinds)):
            some = ", ".join(list(self.configs)[:4]) + (", ..." if len(self.configs) > 4 else "")
            raise ArgumentError(f"{self.name}: cfg must be a config name ({some}; .configs has them all) "
                                f"or a {' / '.join(k.__name__ for k in kinds)} object, got {given(cfg)}")
        if isinstance(cfg, str):
            try:
                cfg = self.configs[cfg]
            except KeyError:
                raise UnknownNameError(f"{self.name} has no config {cfg!r}; known: {', '.join(self.configs)}") from None
        return replace(cfg, dtype=dtype) if dtype is not None else cfg

    @checked
    def build(self, cfg, dtype: torch.dtype | None = None, gpu: str | None = None,
              table: TuningTable | None = None, formulation: str | None = None):
        """The recorded segkit FusionDefinition of this spec for ``cfg``, with its nvFuser tuning (``tuned``): the
        ``formulation`` given, else the one the tuning table chose for this GPU, else ``define``."""
        from segkit import FusionDefinition

        cfg = self.config(cfg, dtype)
        if formulation is None:
            entry = self.table_entry(cfg, gpu, table)
            formulation = entry.formulation if entry is not None and self._builds(entry.formulation) else None
        if formulation is not None and not self._builds(formulation):
            raise UnknownNameError(f"{self.name} has no formulation {formulation!r}; known: "
                           f"{', '.join([*self.formulations, REUSE])}")
        with FusionDefinition() as fd:
            (self.formulations[formulation] if formulation in self.formulations else self.define)(fd, cfg)
        if formulation == REUSE:  # the builder's fusion with its wider reductions reading the narrower ones
            from segkit.reuse import reuse_reductions

            fd = reuse_reductions(fd).apply()
        fd.nv_tuning = self.tuned(cfg, gpu, table)
        return fd

    def _builds(self, formulation: str) -> bool:
        """Whether ``build`` makes ``formulation``: one of the spec's own defines, or REUSE (a pass on ``define``'s)."""
        return formulation in self.formulations or formulation == REUSE

    def table_entry(self, cfg, gpu: str | None = None, table: TuningTable | None = None) -> TableEntry | None:
        """The tuning table's entry for ``cfg`` on ``gpu`` (default: this machine's GPU; None without one),
        matched by the config's sizes and dtype, so segkit_ex's run-time configs find it too."""
        table = table if table is not None else tuning_table()
        return table.lookup(gpu or gpu_model(), self.name, signature(self.config(cfg)))

    def entry(self, cfg, gpu: str, **fields) -> TableEntry:
        """A tuning table entry for ``cfg`` on ``gpu`` (``fields``: formulation, chunk, tuning, ...)."""
        cfg = self.config(cfg)
        return TableEntry(gpu, self.name, cfg.name, signature(cfg), **fields)

    def tuned(self, cfg, gpu: str | None = None, table: TuningTable | None = None):
        """The fused builder's nvFuser tuning: the table's winner on this GPU model when it has one (None where
        nvFuser's defaults won), else the builder's own rule."""
        entry = self.table_entry(cfg, gpu, table)
        if entry is not None and (entry.formulation == "fused" or self._builds(entry.formulation)):
            return entry.tuning
        return self.tuning(self.config(cfg)) if self.tuning else None


def signature(cfg) -> str:
    """What a tuning is matched by: a config's sizes and dtype, not its name (segkit_ex names its run-time
    configs "thunder"); a norm by rows x hidden, however its rows are shaped."""
    dtype = str(cfg.dtype).removeprefix("torch.")
    if hasattr(cfg, "rows") and hasattr(cfg, "hidden"):
        return f"{cfg.rows}x{cfg.hidden} {dtype}"
    keyed = [f for f in fields(cfg) if f.name not in ("name", "dtype")
             and not (f.metadata.get("signature") == "when_not_default" and getattr(cfg, f.name) == f.default)]
    sizes = " ".join(f"{f.name}={getattr(cfg, f.name)}" for f in keyed)
    return f"{sizes} {dtype}"


def nv_dtype(dtype: torch.dtype) -> DataType:
    return from_torch(dtype)


def dt(fd, name: str):
    """The DataType member ``name`` of the frontend ``fd`` belongs to (segkit's or nvfuser_direct's)."""
    module = type(fd).__module__.split(".")[0]
    if module == "segkit":
        return DataType[name]
    import nvfuser_direct

    return getattr(nvfuser_direct.DataType, name)


def randn(shape, gen: torch.Generator, dtype: torch.dtype, scale: float = 1.0, shift: float = 0.0) -> torch.Tensor:
    """Normal samples made on the generator's device (large GPU inputs never go through the CPU)."""
    return (torch.randn(shape, generator=gen, dtype=torch.float32, device=gen.device) * scale + shift).to(dtype)
