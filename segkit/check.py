"""Differential testing: run a fusion on nvFuser and on the reference interpreter, compare every output.

The verdict rules (tolerance per output, Index outputs as int64, random outputs by moments) live here, so
`segkit check`, the check hook and the fuzzer judge alike; the report type is segkit.compare.CheckReport.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, get_args

import torch

from segkit.args import FusionLike, NonNegative, checked
from segkit import ops as catalogue
from segkit.bookend import Policy, Realization, bookend, run_plan
from segkit.compare import CheckReport, OutputDiff, compare_random, diff, nonfinite_notes, tolerance
from segkit.dtypes import DataType
from segkit.errors import error_summary
from segkit.interp import as_fusion, copy_inputs, flat_inputs, run_reference
from segkit.ir import Fusion
from segkit.nvfuser.run import run_nvfuser

#: Relative tolerance by dtype (``tol=``): each finite and >= 0.
Tolerances = dict[torch.dtype, NonNegative]


@checked
def check(fd: FusionLike, inputs: Sequence[Any], *, policy: Policy | None = None, realization: Realization = "segment_set",
          tol: Tolerances | None = None, profile: bool = False) -> CheckReport:
    """Run ``fd`` (or its bookend ``policy`` realization) on nvFuser and compare with the reference.

    With ``profile`` (plain fusion only) the report keeps nvFuser's run: ``details["run"]`` (segments, kernels).
    """
    fusion = as_fusion(fd)  # resolved once: the helpers below take the Fusion
    return _on_nvfuser(fd, fusion, inputs, _Reference.of(fusion, inputs), policy, realization, tol, profile)


@checked
def check_policy(fd: FusionLike, inputs: Sequence[Any], policy: Policy | None = None, *,
                 tol: Tolerances | None = None) -> list[CheckReport]:
    """The fusion on nvFuser and, with ``policy``, both realizations of that bookend policy (segment_set, host),
    each compared with one reference run (what ``segkit check --policy`` prints): the verdicts ``check`` gives for
    each, without running the reference once per report."""
    fusion = as_fusion(fd)
    reference = _Reference.of(fusion, inputs)
    variants = [(None, "segment_set")] + [(policy, r) for r in get_args(Realization) if policy is not None]
    return [_on_nvfuser(fd, fusion, inputs, reference, p, r, tol, False) for p, r in variants]


@dataclass(frozen=True)
class _Reference:
    """The reference interpreter's outputs for one fusion and inputs, and the inputs it ran on: a copy when the
    fusion writes into its inputs (``add_output(out, alias_input=inp)``), then holding what the reference wrote."""

    outputs: list[torch.Tensor]
    inputs: Sequence[Any]
    writes: bool

    @classmethod
    def of(cls, fusion: Fusion, inputs: Sequence[Any]) -> _Reference:
        writes = bool(fusion.aliases)
        ref_inputs = copy_inputs(inputs) if writes else inputs
        return cls(run_reference(fusion, ref_inputs), ref_inputs, writes)


def _on_nvfuser(fd: Any, fusion: Fusion, inputs: Sequence[Any], reference: _Reference, policy: Policy | None,
                realization: Realization, tol: Tolerances | None, profile: bool) -> CheckReport:
    """``fd`` (or its bookend realization) on nvFuser against ``reference``. A fusion that writes into its inputs
    gets its own copy of them, so neither side reads what the other wrote and the caller's tensors stay as they
    were; the written inputs are compared too."""
    label = "nvFuser" if policy is None else f"nvFuser, bookend {policy} / {realization}"
    nv_inputs = copy_inputs(inputs) if reference.writes else inputs
    refs = reference.outputs
    try:
        details = {}
        if policy is None:
            run = run_nvfuser(fd, nv_inputs, profile=profile)
            outs, details = run.outputs, ({"run": run} if profile else {})
        else:
            outs = run_plan(bookend(fd, policy), nv_inputs, backend="nvfuser", realization=realization)
    except Exception as e:  # nvFuser's own errors (compile, scheduling) are a finding, not a crash
        return CheckReport([], label, error_summary(e), notes=nonfinite_notes(refs))
    report = _judge(fusion, refs, outs, label, tol)
    if reference.writes and report.error is None:
        report.diffs += written_inputs(fusion, reference.inputs, nv_inputs, label, tol)
    report.details.update(details)
    return report


def written_inputs(fusion: Fusion, ref_inputs: Sequence[Any], inputs: Sequence[Any], label: str,
                   tol: Tolerances | None = None) -> list[OutputDiff]:
    """Verdicts on the inputs a fusion writes into (``add_output(out, alias_input=inp)``): ``inputs`` after a
    backend's run against ``ref_inputs`` after the reference's, each at the tolerance of the output written."""
    ref_flat, got_flat = flat_inputs(fusion, ref_inputs), flat_inputs(fusion, inputs)
    tols = value_tolerances(fusion, [out for out, _ in fusion.aliases], tol)
    position = {id(v): i for i, v in enumerate(fusion.inputs)}
    diffs = []
    for (_, inp), t in zip(fusion.aliases, tols):
        i = position[id(inp)]
        diffs.append(replace(diff(i, ref_flat[i], got_flat[i], t, label.split(',')[0]), what="input"))
    return diffs


@checked
def check_outputs(fd: FusionLike, inputs: Sequence[Any], outputs: Sequence[torch.Tensor], *, label: str = "nvFuser",
                  tol: Tolerances | None = None) -> CheckReport:
    """Compare outputs some backend already computed for ``fd`` on ``inputs`` with the reference interpreter's.
    The reference runs on a copy of ``inputs`` when the fusion writes into its inputs, so it never writes into
    the caller's tensors (give the inputs as they were before the backend ran)."""
    fusion = as_fusion(fd)
    if fusion.aliases:
        inputs = copy_inputs(inputs)
    return _judge(fusion, run_reference(fusion, inputs), outputs, label, tol)


def random_outputs(fd: Any) -> list[bool]:
    """Per fusion output: does it depend on nvFuser's random stream (an op the catalogue marks ``random``)?"""
    return _random_outputs(as_fusion(fd))


def _random_outputs(fusion: Fusion) -> list[bool]:
    tainted: set[int] = set()
    for op in fusion.ops:
        flags = catalogue.get(op.name).random_outputs(op.args, len(op.outputs))
        inherited = any(id(v) in tainted for v in op.inputs)
        tainted.update(id(o) for o, f in zip(op.outputs, flags) if f or inherited)
    return [id(v) in tainted for v in fusion.outputs]


def _index_as_int64(fusion: Fusion, outputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """nvFuser's Index dtype (welford's count) is Int32 or Int64 by the kernel's index mode, a run-time choice,
    not a dtype disagreement: such outputs are compared as int64, like the reference's."""
    return [o.to(torch.int64) if v.dtype is DataType.Index and getattr(o, "dtype", None) == torch.int32 else o
            for v, o in zip(fusion.outputs, outputs)]


def output_tolerances(fd: Any, tol: Tolerances | None = None) -> list[float]:
    """Per fusion output, the relative tolerance its check allows: that of the least precise floating dtype
    the output's value was computed in, not only of its own dtype. A Float result cast to Double still
    carries Float rounding (a float32 matmul is accumulated in another order by cuBLAS than by the CPU
    reference), so judging it at Double's tolerance reports rounding as a mismatch. Rounding happens where
    a non-view op writes a floating dtype; fusion inputs are exact data and view ops (``meta``) round
    nothing, so a Float input cast to Double and computed in Double keeps Double's tight tolerance.
    Non-view ops that only move values (pad, cat, where, gather, ...) count as rounding too, as the catalogue
    does not mark them: that errs loose only where such an op's narrower output is later cast wider.
    ``tol`` (dtype -> tolerance) overrides the rule for the output dtypes it names."""
    fusion = as_fusion(fd)
    return value_tolerances(fusion, fusion.outputs, tol)


def value_tolerances(fusion: Any, values: Sequence[Any], tol: Tolerances | None = None) -> list[float]:
    """The tolerance of each of ``values`` (tensors of ``fusion``) by :func:`output_tolerances`' rule."""
    loosest: dict[int, float] = {}  # id(value) -> loosest tolerance of the roundings it went through
    for op in fusion.ops:
        upstream = max((loosest.get(id(v), 0.0) for v in op.inputs), default=0.0)
        meta = catalogue.get(op.name).meta
        for out in op.outputs:
            loosest[id(out)] = max(upstream, 0.0 if meta else _tolerance_of(out.dtype))
    tols = []
    for v in values:
        explicit = tol.get(_torch_dtype(v.dtype)) if tol else None
        tols.append(explicit if explicit is not None else max(_tolerance_of(v.dtype), loosest.get(id(v), 0.0)))
    return tols


def _torch_dtype(dtype: DataType) -> torch.dtype | None:
    try:
        return dtype.torch
    except ValueError:  # an nvFuser dtype torch has no name for
        return None


def _tolerance_of(dtype: DataType) -> float:
    t = _torch_dtype(dtype)
    return tolerance(t) if t is not None else 0.0


def judge(fd: Any, refs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], label: str,
          tol: Tolerances | None = None) -> CheckReport:
    """The per-output verdicts of ``outputs`` against the reference interpreter's ``refs``: one rule set for
    `segkit check`, the check hook and the fuzzer. (``segkit tune`` compares with a spec's own float64 reference
    instead, whose outputs are not the interpreter's.)"""
    fusion = as_fusion(fd) if len(outputs) == len(refs) else None  # a count mismatch is a verdict of its own
    return _judge(fusion, refs, outputs, label, tol)


def _judge(fusion: Fusion | None, refs: Sequence[torch.Tensor], outputs: Sequence[torch.Tensor], label: str,
           tol: Tolerances | None = None) -> CheckReport:
    """``judge`` on the fusion already resolved (None only where the output counts differ)."""
    if len(outputs) != len(refs):
        return CheckReport([], label, f"{len(outputs)} outputs, the fusion defines {len(refs)}")
    outputs = _index_as_int64(fusion, outputs)
    who = label.split(',')[0]
    tols = value_tolerances(fusion, fusion.outputs, tol)
    diffs = [diff(i, r, g, t, who) for i, (r, g, t) in enumerate(zip(refs, outputs, tols))]
    for i, is_random in enumerate(_random_outputs(fusion)):
        if is_random:
            diffs[i] = compare_random(i, refs[i], outputs[i])
    return CheckReport(diffs, label, notes=nonfinite_notes(refs))
