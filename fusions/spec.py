"""FusionSpec: a builder, its named configs, its inputs and its float64 reference."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from segkit.dtypes import DataType, from_torch


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

    def make_inputs(self, cfg, device="cpu", dtype: torch.dtype | None = None, seed: int = 0) -> dict[str, torch.Tensor]:
        """Inputs by name, in define_tensor order (``dtype`` overrides the config's)."""
        cfg = self.config(cfg, dtype)
        gen = torch.Generator(device=device).manual_seed(seed)
        return self.inputs(cfg, device, gen)

    def config(self, cfg, dtype: torch.dtype | None = None):
        """A config by name or object, with its dtype replaced when ``dtype`` is given."""
        if isinstance(cfg, str):
            try:
                cfg = self.configs[cfg]
            except KeyError:
                raise KeyError(f"{self.name} has no config {cfg!r}; known: {', '.join(self.configs)}") from None
        return replace(cfg, dtype=dtype) if dtype is not None else cfg

    def build(self, cfg, dtype: torch.dtype | None = None):
        """The recorded segkit FusionDefinition of this spec for ``cfg``."""
        from segkit import FusionDefinition

        cfg = self.config(cfg, dtype)
        with FusionDefinition() as fd:
            self.define(fd, cfg)
        fd.nv_tuning = self.tuning(cfg) if self.tuning else None
        return fd


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
