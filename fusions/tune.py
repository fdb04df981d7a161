"""``segkit tune`` for a fusions spec: the generic search of segkit.tuning.search with the spec's own candidates
(its ``FusionSpec.candidates``), its formulations realized (fusions.formulations, its named defines), and its
float64 reference as the judge."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import torch

import fusions
from fusions import formulations as multi_fusion  # (``space`` takes a list named formulations)
from fusions.spec import signature
from segkit.bookend import POLICIES, bookend
from segkit.errors import SegkitError, UsageError
from segkit.tuning import NvTuning, TuningTable
from segkit.tuning.search import (Candidate, Realize, SpecCandidates, TuneResult, measure, rewrites, search, shard,
                                  single)
from segkit.tuning.search import realize as realize_candidate
from segkit.tuning.search import space as generic_space


def space(spec_name: str, cfg: Any, rule: NvTuning | None, sm_count: int = 132, quick: bool = True,
          cut_policies: Sequence[str] = ("none",), formulations: Sequence[str] = ()) -> list[Candidate]:
    """The candidates for ``spec_name`` at ``cfg``: segkit.tuning.search.space with the spec's own (grids of nvFuser
    overrides, its formulations and their schedules) for a GPU of ``sm_count`` SMs."""
    spec = fusions.get(spec_name)
    own = spec.candidates(cfg, sm_count, quick) if spec.candidates else SpecCandidates()
    return generic_space(rule, own, cut_policies, formulations)


def realizer(spec_name: str, cfg: Any) -> Realize:
    """segkit.tuning.search's hook for the formulations of ``spec_name`` the core does not know: the named defines
    of the spec, and the multi-fusion formulations of fusions.formulations."""
    def realize(cand: Candidate):
        if cand.formulation in multi_fusion.names():
            return multi_fusion.realize(spec_name, cfg, cand)
        spec = fusions.get(spec_name)
        if cand.formulation not in spec.formulations:
            raise SegkitError(f"unknown formulation {cand.formulation!r} of {spec_name}")
        return single(spec.build(cfg, formulation=cand.formulation), cand)

    return realize


def realize(fd: Any, cand: Candidate, spec_name: str, cfg: Any):
    """The candidate of ``spec_name`` at ``cfg`` as something with ``run(inputs, backend)`` (``fd``: the builder's
    fusion)."""
    return realize_candidate(fd, cand, realizer(spec_name, cfg))


def tune_spec(spec_name: str, config: str, dtype: torch.dtype | None = None, reference: bool = False,
              quick: bool = True, log: Callable[[str], None] = print, budget_s: float | None = None,
              shard_of: tuple[int, int] = (0, 1), amaxes: tuple[str, ...] | None = None) -> TuneResult:
    """Search one fusions spec and config: on nvFuser with timing, or (``reference``) on the interpreter at
    the config's tiny twin, validation only. ``amaxes`` (fp8_amax only) replaces the config's amaxes."""
    spec = fusions.get(spec_name)
    cfg = spec.config(config, dtype)
    run_cfg = spec.config(config + "_tiny", dtype) if reference and not config.endswith("_tiny") else cfg
    if amaxes is not None:
        if spec_name != "fp8_amax":
            raise UsageError(f"--amaxes picks fp8_amax's outputs; {spec_name} has none")
        try:
            cfg, run_cfg = replace(cfg, amaxes=amaxes), replace(run_cfg, amaxes=amaxes)
        except ValueError as e:
            raise UsageError(f"--amaxes: {e}") from None
    device, backend = ("cpu", "reference") if reference else ("cuda", "nvfuser")
    sms = torch.cuda.get_device_properties(0).multi_processor_count if not reference else 132
    # the builder as written, not what the table chose on this GPU: the baselines and every rewrite start from it
    fd = spec.build(run_cfg, table=TuningTable([]))
    inputs = spec.make_inputs(run_cfg, device=device)
    refs = spec.reference(inputs, run_cfg)
    cuts = [p for p in POLICIES if p == "none" or bookend(fd, p).cuts]
    rule = spec.tuning(cfg) if spec.tuning else None
    cands = shard(space(spec_name, run_cfg, rule, sms, quick, cuts, [*spec.formulations, *rewrites(fd)]),
                  *shard_of)
    log(f"segkit tune {spec_name}:{run_cfg.name} {str(cfg.dtype).removeprefix('torch.')}: {len(cands)} candidates "
        f"on {backend}")
    trials = search(fd, list(inputs.values()), refs, cands, backend, realizer(spec_name, run_cfg),
                    None if reference else measure, log, budget_s)
    return TuneResult(spec_name, cfg.name, signature(cfg), trials)
