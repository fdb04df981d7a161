"""A formulation of two recorded fusions whose first is scheduled by hand on nvFuser (``manual_execute``) and
whose second runs on nvFuser's own schedule; both run on the reference interpreter too. The base of the rows
formulations (norm backward, fp8 amax) and the fp8 amax tiles, and of their schedules' table form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import torch

from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.runnable import RunsOnBoth


class HandSchedule:
    """A hand-written schedule's parameters (a frozen dataclass whose first field is ``chunk``), and their form in
    the tuning table and a ``segkit tune`` candidate: every parameter but the chunk (the entry's own), by name."""

    def to_dict(self) -> dict:
        return {f.name: v for f in fields(self) if f.name != "chunk" and (v := getattr(self, f.name)) is not None}

    @classmethod
    def from_dict(cls, chunk: int, params: dict | None):
        known = [f.name for f in fields(cls) if f.name != "chunk"]
        if params is None:
            raise SegkitError(f"{cls.__name__} needs a schedule ({', '.join(known)}), got none")
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise SegkitError(f"{cls.__name__}: unknown parameters {unknown}; known: {known}")
        try:
            return cls(chunk, **params)
        except TypeError as e:  # a parameter without a default is missing
            raise SegkitError(f"{cls.__name__} from {params}: {e}") from None


class HandStaged(RunsOnBoth):
    """Two recorded fusions, the first hand-scheduled on nvFuser (``manual_execute``) by ``schedule_first``, the
    second on nvFuser's own schedule. A subclass says how stage 1 is scheduled (``schedule_first``), what it takes
    (``stage1_args``), what of its outputs stage 2 takes (``stage2_args``), and how the outputs of both make the
    formulation's (``assemble``)."""

    schedule: Any  # what the subclass's schedule_first takes (a RowsSchedule, a TileSchedule)
    _stages: tuple[Any, Any] | None

    def recorded(self) -> tuple[Any, Any]:
        raise NotImplementedError

    def stage1_args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        raise NotImplementedError

    def stage2_args(self, first: list[torch.Tensor]) -> list[torch.Tensor]:
        raise NotImplementedError

    def assemble(self, inputs: Sequence[torch.Tensor], first: list, second: list) -> list[torch.Tensor]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.schedule.describe()

    def schedule_first(self, nvfd: Any) -> None:
        """Schedule the translated stage 1 by hand."""
        raise NotImplementedError

    def on_reference(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The formulation's outputs on the reference interpreter."""
        s1, s2 = self.recorded()
        first = run_reference(s1, self.stage1_args(inputs))
        return self.assemble(inputs, first, run_reference(s2, [t.contiguous() for t in self.stage2_args(first)]))

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        if self._stages is None:
            from segkit.nvf import compiled, to_nvfuser

            s1, s2 = self.recorded()
            nvfd = to_nvfuser(s1)
            self.schedule_first(nvfd)
            self._stages = (nvfd, compiled(s2))
        nvfd, second = self._stages
        first = nvfd.manual_execute(self.stage1_args(inputs))
        return self.assemble(inputs, first, second.execute(self.stage2_args(first)))
