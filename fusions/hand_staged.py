"""A formulation of two recorded fusions whose first is scheduled by hand on nvFuser (``manual_execute``) and
whose second runs on nvFuser's own schedule; both run on the reference interpreter too. The base of the rows
formulations (norm backward, fp8 amax) and the fp8 amax tiles, and of their schedules' table form."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import fields
from typing import Any

import torch

from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.nvfuser.runnable import RunsOnBoth


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
    _by_layout: dict[Hashable, tuple[Any, Any]]  # declared by a subclass whose stage1_inputs returns layouts

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

    def stage1_inputs(self, inputs: Sequence[torch.Tensor]) -> tuple[list[torch.Tensor], Hashable | None]:
        """Stage 1's arguments and the layout its fusions are recorded for (None: ``recorded()``'s own); a subclass
        that reads some inputs in place in other layouts returns a key ``recorded(key)`` takes."""
        return self.stage1_args(inputs), None

    def _recorded_for(self, layout: Hashable | None) -> tuple[Any, Any]:
        return self.recorded() if layout is None else self.recorded(layout)

    def _compiled(self, layout: Hashable | None) -> tuple[Any, Any]:
        """Stage 1 translated and scheduled by hand, and stage 2 compiled, once per layout (``_stages`` for the
        default one; at most ``MAX_LAYOUTS`` others, all dropped when one more comes)."""
        found = self._stages if layout is None else self._by_layout.get(layout)
        if found is not None:
            return found
        from segkit.nvfuser.run import compiled, to_nvfuser

        s1, s2 = self._recorded_for(layout)
        nvfd = to_nvfuser(s1)
        self.schedule_first(nvfd)
        stages = (nvfd, compiled(s2))
        if layout is None:
            self._stages = stages
        else:
            if len(self._by_layout) >= MAX_LAYOUTS:
                self._by_layout.clear()
            self._by_layout[layout] = stages
        return stages

    def on_reference(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The formulation's outputs on the reference interpreter."""
        args, layout = self.stage1_inputs(inputs)
        s1, s2 = self._recorded_for(layout)
        first = run_reference(s1, args)
        return self.assemble(inputs, first, run_reference(s2, [t.contiguous() for t in self.stage2_args(first)]))

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """The formulation's outputs on nvFuser."""
        args, layout = self.stage1_inputs(inputs)
        nvfd, second = self._compiled(layout)
        first = nvfd.manual_execute(args)
        return self.assemble(inputs, first, second.execute(self.stage2_args(first)))


MAX_LAYOUTS = 8  # stage-1 layouts one formulation keeps compiled besides its own (a model has one or two per signature)
