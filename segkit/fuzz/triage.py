"""Triage of fuzz findings: re-check every stored finding on a target, and write a finding as a
standalone nvfuser_direct script (no segkit needed) for an upstream issue."""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Iterator
from typing import Any
from pathlib import Path

import torch

from segkit.bookend import bookend, bookended
from segkit.check import output_tolerances
from segkit.errors import ReproError
from segkit.fuzz.findings import Finding, load_findings
from segkit.fuzz.targets import REALIZATIONS, Target, error_key
from segkit.fuzz.workers import Task, executor
from segkit.interp import as_fusion, run_reference
from segkit.printing import fusion_lines
from segkit.repro import Repro


@dataclass
class Replay:
    finding: Finding
    status: str  # what the target does now: ok | mismatch | error | crash | timeout | invalid
    detail: str
    reproduces: bool


def replay(directory: str | Path, target: Target | str, workers: int = 1, timeout: float = 120.0) -> list[Replay]:
    """Re-run every finding in ``directory`` under its realization; ``reproduces`` when it fails the same way."""
    return list(replay_each(directory, target, workers, timeout))


def replay_each(directory: str | Path, target: Target | str, workers: int = 1, timeout: float = 120.0
                ) -> Iterator[Replay]:
    """:func:`replay`, one finding at a time (so a caller can show each as it comes)."""
    directory = Path(directory)
    findings = load_findings(directory)
    ex = executor(target, workers, timeout)
    try:
        for f in findings:
            reals = tuple(REALIZATIONS) if f.realization == "any" else (f.realization,)
            res = ex.run_one(Task((directory / f.file).read_text(), reals))
            if res.status in ("crash", "timeout", "invalid"):
                yield Replay(f, res.status, res.detail, res.status == f.kind)
                continue
            same = [v for v in res.verdicts if v.status == f.kind
                    and (f.kind != "error" or error_key(v.detail) == error_key(f.detail))]
            now = same[0] if same else (res.failures[0] if res.failures else None)
            yield Replay(f, now.status if now else "ok", now.detail if now else "", bool(same))
    finally:
        ex.close()


def replay_table(rows: list[Replay]) -> str:
    from tabulate import tabulate

    table = [[r.finding.id, r.finding.kind, r.finding.realization, r.finding.signature,
              "reproduces" if r.reproduces else f"no longer ({r.status})", r.detail[:70]] for r in rows]
    return tabulate(table, headers=["id", "kind", "realization", "signature", "now", "detail"])


# --------------------------------------------------------------------------- standalone scripts
_MAKE = '''
_gen = torch.Generator().manual_seed(0)


def strided(storage, shape, strides, dtype):
    """Inputs drawn exactly as segkit's repro loader draws them (CPU generator, seed 0, in order)."""
    if dtype.is_floating_point:
        base = torch.randn(storage, generator=_gen, dtype=torch.float32).to(dtype)
    elif dtype == torch.bool:
        base = torch.randint(0, 2, (storage,), generator=_gen).bool()
    else:
        base = torch.randint(-8, 9, (storage,), generator=_gen).to(dtype)
    return base.to(DEVICE).as_strided(shape, strides)

'''

_CHECK = '''
def _close(got, want, tol, scale):
    if math.isnan(want):
        return math.isnan(got)
    return got == want or abs(got - want) <= tol * scale


bad = 0
for i, (out, want) in enumerate(zip(outputs, EXPECTED)):
    x = out.detach().to("cpu", torch.float64)
    if tuple(x.shape) != want["shape"]:
        print(f"MISMATCH output {i}: shape {tuple(x.shape)}, expected {want['shape']}")
        bad += 1
        continue
    scale = max(want["max_abs"], 1e-30)
    for index, value in want["points"].items():
        got = x[index].item()
        if not _close(got, value, want["tol"], scale):
            print(f"MISMATCH output {i} at {list(index)}: nvFuser {got!r}, expected {value!r}")
            bad += 1
    w = torch.linspace(-1, 1, x.numel(), dtype=torch.float64).reshape(x.shape)
    for name, got in (("sum", x.sum()), ("abs sum", x.abs().sum()), ("weighted sum", (x * w).sum())):
        if not _close(got.item(), want[name], want["tol"], max(want["abs sum"], 1e-30)):
            print(f"MISMATCH output {i} {name}: nvFuser {got.item()!r}, expected {want[name]!r}")
            bad += 1
print("nvFuser matches the expected values" if not bad else f"{bad} checks differ from the expected values")
sys.exit(1 if bad else 0)
'''


def _expected(ref: torch.Tensor, worst: tuple[int, ...] | None, tol: float) -> dict:
    """What a correct output holds: a few values (the campaign's worst element first) and three sums."""
    x = ref.detach().to("cpu", torch.float64)
    n = x.numel()
    flat = sorted({int(i) for i in torch.linspace(0, max(n - 1, 0), min(n, 6)).tolist()}) if n else []
    points = [tuple(worst)] if worst and len(worst) == x.ndim else []
    points += [tuple(int(i) for i in torch.unravel_index(torch.tensor(k), x.shape)) for k in flat]
    w = torch.linspace(-1, 1, n, dtype=torch.float64).reshape(x.shape)
    finite = x.nan_to_num(nan=0.0)
    return {"shape": tuple(x.shape), "tol": tol or 1e-12,
            "max_abs": float(finite.abs().max()) if n else 0.0,
            "points": {p: x[p].item() for p in dict.fromkeys(points)},
            "sum": x.sum().item(), "abs sum": x.abs().sum().item(), "weighted sum": (x * w).sum().item()}


def emit_standalone(repro: Repro, finding: Finding | None = None, device: str = "cuda:0") -> str:
    """A script that needs only torch and nvfuser_direct: the fusion as nvFuser ran it under the finding's
    realization, the inputs segkit checked it on (same values), and the expected outputs' values and sums
    from segkit's reference interpreter; it prints what differs and exits 1 when nvFuser's outputs do not
    match. Under a ``<policy>/segment_set`` realization the fusion is the bookended one (its segment_set ops
    written out); under ``<policy>/host`` it is the core fusion, run on the host views of the inputs
    (``as_strided`` of the same storage), with the core's expected outputs."""
    realization = finding.realization if finding and finding.realization in REALIZATIONS else "plain"
    policy, how = REALIZATIONS[realization]
    inputs = repro.make_inputs("cpu", seed=0)
    fd, refs, views = repro.fd, None, []
    if how == "segment_set":
        fd = bookended(repro.fd, policy)
    elif how == "host":
        fd, args, views = _host_core(repro, policy, inputs)
        refs = run_reference(fd, args)
    refs = run_reference(repro.fd, inputs) if refs is None else refs
    worst = tuple(finding.worst) if finding and finding.output is not None and how != "host" else ()
    tols = output_tolerances(fd)
    expected = [_expected(r, worst if finding and i == finding.output else None, t)
                for i, (r, t) in enumerate(zip(refs, tols))]
    args = []
    for rec in repro.recipes:
        if rec.kind == "scalar":
            args.append(repr(rec.value))
        elif rec.kind == "randn_strided":
            args.append(f"strided({rec.storage}, {rec.shape}, {rec.strides}, {rec.dtype})")
        elif rec.kind == "make_tensor":  # drawn like a strided input of its own size with contiguous strides
            contiguous = torch.empty(rec.shape, device="meta").stride()
            args.append(f"strided({math.prod(rec.shape)}, {tuple(rec.shape)}, {contiguous}, {rec.dtype})")
        elif rec.kind == "factory":
            value = "" if rec.factory in ("zeros", "ones") else f", {_literal(rec.value)}"
            args.append(f"torch.{rec.factory}({tuple(rec.shape)}{value}, dtype={rec.dtype}, device=DEVICE)")
        else:
            raise ReproError(f"{repro.path}: input kind {rec.kind!r} cannot be written standalone")
    header = [line for line in repro.source.splitlines() if line.startswith("#")]
    if how is not None:
        header.append(f"# The fusion below is what nvFuser ran under {realization}: "
                      + ("segkit.bookend's segment_set ops written out." if how == "segment_set" else
                         "the core fusion, its inputs the host views of the script's inputs."))
    body = "\n".join("    " + line for line in fusion_lines(as_fusion(fd)))
    run = ["inputs = [" + ", ".join(args) + "]"]
    if how == "host":
        run += ["# the host-side views (bookended meta ops) the core fusion reads",
                "inputs = [" + ", ".join(views) + "]"]
    return "\n".join([
        *header,
        "# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected",
        "# values, which segkit's reference interpreter computed for these exact inputs.",
        "import math",
        "import sys",
        "",
        "import torch",
        "from nvfuser_direct import FusionDefinition, DataType",
        "",
        f"DEVICE = {device!r}",
        "",
        "",
        "def nvfuser_fusion_id0(fd : FusionDefinition) -> None :",
        body,
        "",
        "",
        "with FusionDefinition() as fd:",
        "    nvfuser_fusion_id0(fd)",
        _MAKE,
        *run,
        "outputs = fd.execute(inputs)",
        "",
        f"EXPECTED = {_literal(expected)}",
        _CHECK,
    ])


def _host_core(repro: Repro, policy: str, inputs: list) -> tuple[Any, list, list[str]]:
    """The core fusion of ``policy``'s host plan, its arguments (the prologue's views of ``inputs``), and
    each argument written as a view of the script's inputs (``inputs[j].as_strided(...)``)."""
    plan = bookend(repro.fd, policy).apply("host")
    host = plan.after_prologue(inputs)
    args = [host.value_of(v) for v in plan.core_inputs]
    views = []
    for a in args:
        if not isinstance(a, torch.Tensor):
            views.append(repr(a))
            continue
        base = next((j for j, x in enumerate(inputs) if isinstance(x, torch.Tensor)
                     and x.untyped_storage().data_ptr() == a.untyped_storage().data_ptr()), None)
        if base is None:
            raise ReproError(f"{repro.path}: a host view under {policy}/host is not a view of an input "
                             "(the prologue copied): it cannot be written standalone")
        views.append(f"inputs[{base}].as_strided({tuple(a.shape)}, {tuple(a.stride())}, {a.storage_offset()})")
    return plan.core_fusion(args), args, views


def _literal(x) -> str:
    """repr with non-finite floats written as float('nan') / float('inf') so the script parses."""
    if isinstance(x, float) and not math.isfinite(x):
        return f"float({str(x)!r})"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in x.items()) + "}"
    if isinstance(x, (list, tuple)):
        inner = ", ".join(_literal(i) for i in x)
        return f"({inner},)" if isinstance(x, tuple) and len(x) == 1 else (f"({inner})" if isinstance(x, tuple) else f"[{inner}]")
    return repr(x)
