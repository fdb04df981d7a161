"""Run a fusions spec for the tensors a Thunder operator receives: built once per signature, cached.

On CUDA tensors with nvfuser_direct present the fusion runs on nvFuser (its
FusionDefinition is built once and kept); otherwise the reference interpreter
runs it, so the executor's routing can be tested on a CPU machine. With ``check``
(thunder_exec's compile option ``segkit_check``) each signature's result is validated once and refused
if wrong (segkit.verdicts): nvFuser's against the reference interpreter, the
reference interpreter's (CPU) against the spec's independent float64 reference. The
executor (thunder_exec) and the benchmarks run specs through it.

All runners live in one bounded LRU cache (``RUNNERS``, ``clear_caches()``).
"""

from __future__ import annotations

import functools
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

import fusions
from fusions import formulations
from segkit.bookend import POLICIES, bookended
from segkit.check import CheckReport
from segkit.compare import compare
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.layout import allocation_domain_kept, laid_out
from segkit.nvfuser.run import compiled, nvfuser_available
from segkit.verdicts import ResultVerdicts


@dataclass
class LRUCache:
    """A bounded least-recently-used map (functools.lru_cache keyed by a value the caller picks, so the hot path
    can key by plain shapes and dtypes without building a config)."""

    maxsize: int
    _items: OrderedDict = field(default_factory=OrderedDict)

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        found = self._items.get(key)
        if found is None:
            found = make()
            self.put(key, found)
        else:
            self._items.move_to_end(key)
        return found

    def put(self, key: Hashable, value: Any) -> None:
        """``value`` under ``key``, replacing what was there, as the most recently used."""
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)

    def values(self) -> list[Any]:
        """What the cache holds, least recently used first (e.g. which formulation each runner chose)."""
        return list(self._items.values())

    def clear(self) -> None:
        self._items.clear()


RUNNERS = LRUCache(maxsize=512)  # every SpecRunner (and so every recorded fusion) segkit_ex holds
_RESULT_VERDICTS = ResultVerdicts()


def clear_caches() -> None:
    """Forget every runner, its fusion and every check verdict (e.g. between models, or to free memory)."""
    RUNNERS.clear()
    _RESULT_VERDICTS.decided.clear()
    unit_weight.cache_clear()


@functools.lru_cache(maxsize=64)
def unit_weight(n: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The weight of ones a norm without a weight runs with, made once per size (the fusions only read it), so a
    weightless LayerNorm call launches no fill kernel."""
    return torch.ones(n, dtype=dtype, device=device)


def only_outputs(fd: Any, outputs: tuple[int, ...]):
    """The recorded fusion ``fd`` with only the outputs at ``outputs`` and the ops they need (inference wants
    y, not the statistics a backward would read); the fusion's nvFuser tuning travels with it (keep_outputs)."""
    return FusionDefinition.from_fusion(fd.fusion.keep_outputs(outputs))


def fusion_for(spec_name: str, cfg: Any, policy: str, outputs: tuple[int, ...] | None = None):
    """The recorded fusion of ``spec_name`` for ``cfg`` (only ``outputs`` when given), with the bookend
    ``policy`` applied (runners cache it)."""
    if policy not in POLICIES:
        raise ValueError(f"segkit_bookend must be one of {POLICIES}, got {policy!r}")
    fd = fusions.get(spec_name).build(cfg)
    if outputs is not None:
        fd = only_outputs(fd, outputs)
    # The rewrite carries the builder's nvFuser tuning (Fusion.tuning); no cut: the builder's own fusion.
    return bookended(fd, policy)


class FormulationFallbackWarning(UserWarning):
    """The formulation the tuning table chose failed (e.g. it does not build with this nvFuser or on this GPU);
    the spec's own fusion runs instead."""


@dataclass
class StagedHealth:
    """Why a runner's chosen formulation was dropped (None: it was not), so a formulation that cannot run here
    costs one warning, not the user's step."""

    dropped: str | None = None


@dataclass(frozen=True)
class SpecRunner:
    """One spec, config and policy with its fusion resolved once, so a call costs what nvFuser's execute costs
    plus a contiguity check (the executor calls this for every Thunder operator call)."""

    spec_name: str
    cfg: Any
    policy: str
    check: bool
    fd: Any
    outputs: tuple[int, ...] | None = None
    staged: Any = None  # a multi-fusion formulation the tuning table chose for this GPU (e.g. two-stage norm bwd)
    layouts: tuple[tuple[int, ...] | None, ...] = ()  # each fusion input's stride_order (None: contiguous)
    health: StagedHealth = field(default_factory=StagedHealth, compare=False, repr=False)

    def __call__(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Outputs of the fusion on ``tensors``, each laid out as the fusion defines it (contiguous, or the
        permuted layout a config asks for: those are read in place)."""
        args = [t if t.is_contiguous() and o is None else laid_out(t, o)
                for t, o in zip(tensors, self.layouts or (None,) * len(tensors))]
        if not (nvfuser_available() and all(t.is_cuda for t in args)):
            if not self.check:
                return run_reference(self.fd, args)
            return _RESULT_VERDICTS.outputs(
                self._key, f"segkit's {self.spec_name} ({self.policy}) on the reference interpreter",
                lambda: self.fd, args, lambda: run_reference(self.fd, args), self._against_spec)
        if not self.check:
            return self._execute(args)
        return _RESULT_VERDICTS.outputs(self._key, f"segkit's {self.spec_name} ({self.policy}) on nvFuser",
                                        lambda: self.fd, args, lambda: self._execute(args))

    def _execute(self, args: list[torch.Tensor]) -> list[torch.Tensor]:
        """On nvFuser: the chosen formulation where there is one that runs here, else the spec's fusion."""
        out = self._staged(args) if self.staged is not None else None
        return out if out is not None else compiled(self.fd).execute(args)

    def _staged(self, args: Sequence[torch.Tensor]) -> list[torch.Tensor] | None:
        """The chosen formulation's outputs; None once it was dropped. A failure (a schedule that does not build
        with this nvFuser or on this GPU, a layout it was never compiled for) drops it for good with a
        FormulationFallbackWarning naming it, the config and the error, and the caller runs the spec's own fusion
        on the same tensors: an error of the call itself is raised there. Out of memory propagates."""
        if self.health.dropped is not None:
            return None
        try:
            return self.staged.execute(args)
        except torch.OutOfMemoryError:
            raise
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            self.health.dropped = f"{type(e).__name__}: {first}"
            what = getattr(self.staged, "describe", lambda: type(self.staged).__name__)()
            warnings.warn(f"segkit's {self.spec_name} at {self.cfg.name} {getattr(self.cfg, 'shape', '')}: the "
                          f"tuning table's {what} failed ({self.health.dropped}); the spec's own fusion runs "
                          f"instead", FormulationFallbackWarning, stacklevel=3)
            return None

    def in_place(self, tensors: Sequence[torch.Tensor]) -> list[torch.Tensor] | None:
        """The chosen formulation's outputs on ``tensors`` as they come (x's own shape, rows in any memory order),
        where it reads them in place (the norm backward's rows schedule: ``strided_views``) on nvFuser, unchecked;
        None elsewhere (or once it was dropped): the caller views them at the config's shape and calls the
        runner."""
        if (self.staged is None or self.check or not hasattr(self.staged, "strided_views")
                or not tensors[0].is_cuda or not nvfuser_available()):
            return None
        return self._staged(tensors)

    @property
    def _key(self) -> tuple:
        """What a check verdict is kept under (built only when checking: not on the per-call path)."""
        return (self.spec_name, self.cfg, self.policy, self.outputs)

    def _against_spec(self, args: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], label: str) -> CheckReport:
        """The interpreter's outputs against the spec's own float64 reference (independent math)."""
        spec = fusions.get(self.spec_name)
        named = dict(zip(spec.make_inputs(self.cfg), args))
        refs = list(spec.reference(named, self.cfg))
        refs = [refs[i] for i in self.outputs] if self.outputs is not None else refs
        return CheckReport(compare(refs, outputs), label)


def _make_runner(spec_name: str, cfg: Any, policy: str, check: bool, outputs: tuple[int, ...] | None) -> SpecRunner:
    fd = fusion_for(spec_name, cfg, policy, outputs)
    layouts = tuple(tuple(v.stride_order) if v.shape and allocation_domain_kept(v.stride_order) else None
                    for v in fd.fusion.inputs)  # None: contiguous (row-major, or no order given)
    if not any(layouts):
        layouts = ()  # every input contiguous: the fast path
    return SpecRunner(spec_name, cfg, policy, check, fd, outputs, staged_for(spec_name, cfg, outputs=outputs), layouts)


def runner(spec_name: str, cfg: Any, policy: str, check: bool = False,
           outputs: tuple[int, ...] | None = None) -> SpecRunner:
    """The cached SpecRunner of ``spec_name`` for ``cfg`` under bookend ``policy`` (only ``outputs`` when given)."""
    return RUNNERS.get((spec_name, cfg, policy, check, outputs),
                       lambda: _make_runner(spec_name, cfg, policy, check, outputs))


def staged_for(spec_name: str, cfg: Any, gpu: str | None = None, table: Any = None,
               outputs: tuple[int, ...] | None = None):
    """The two-stage or rows formulation when the tuning table chose it for this spec and config on this GPU,
    else None. With ``outputs`` (inference: y alone) only a formulation that computes a subset of its outputs
    (``with_outputs``, the forward rows schedule) serves; the others leave it to the builder's fusion."""
    entry = fusions.get(spec_name).table_entry(cfg, gpu, table)
    if entry is None or entry.formulation not in formulations.names():
        return None
    staged = formulations.realize(spec_name, cfg, entry)
    if outputs is None:
        return staged
    subset = getattr(staged, "with_outputs", None)
    return subset(outputs) if subset is not None else None


def run_spec(spec_name: str, cfg: Any, tensors: Sequence[torch.Tensor], policy: str,
             check: bool = False) -> list[torch.Tensor]:
    """Outputs of the spec's fusion on ``tensors`` (see SpecRunner)."""
    return runner(spec_name, cfg, policy, check)(tensors)
