"""Step evidence for segkit_fuse="auto" (fusions/cut_evidence.py) from a step table run that profiled two variants
differing in one spec's mode: the memory-bound kernel time of each profiled step (every kernel but the GEMMs and
attention, which both variants run alike and whose time follows the SM clock of the moment), one record per
signature of the spec's calls in the fused variant (its ``cuts``), keyed by the run's GPU. Every other kernel
counts, whoever runs it: a cut can hand work to another executor (a layout copy in torch, say).

    python -m benchmarks.cut_evidence RUN_DIR --spec rope_bwd --fused segkit-rope-bwd-fused \\
        --opaque segkit-rope-bwd-opaque [--write | --out FILE]

RUN_DIR holds the run's ``model_step.json`` and ``profiles/`` (scripts/gpu/models.sh with MODELS_PROFILE=1).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sweep.machine import KEY
from fusions.cut_evidence import EVIDENCE_PATH, CutEvidence, EvidenceTable
from segkit.trace import load


COMPUTE_BOUND = ("nvjet", "gemm", "cutlass", "cudnn", "flash", "sdpa")  # kernel names of matmuls and attention


def memory_bound_us(profile: Path) -> float:
    """The summed time of a profiled step's kernels, leaving out matmuls and attention (``COMPUTE_BOUND``)."""
    return sum(k.duration_ns for k in load(profile).kernels
               if not any(m in k.name.lower() for m in COMPUTE_BOUND)) / 1e3


def _row(rows: list[dict], case: str, variant: str) -> dict | None:
    return next((r for r in rows if r["case"] == case and r["variant"] == variant), None)


def evidence(run: Path, spec: str, fused: str, opaque: str) -> list[CutEvidence]:
    """The records of every case in ``run`` with both variants profiled; a variant that did not fuse the spec, or
    a missing profile, is a SystemExit naming it."""
    doc = json.loads((run / "model_step.json").read_text())
    machine = doc[KEY]
    gpu = machine["gpu"]
    measured = (f"{machine.get('date')}, torch {machine.get('torch')}, nvfuser_direct {machine.get('nvfuser_direct')}, "
                f"commit {machine.get('commit')}")
    out = []
    for case in dict.fromkeys(r["case"] for r in doc["rows"]):
        f_row, o_row = _row(doc["rows"], case, fused), _row(doc["rows"], case, opaque)
        if f_row is None or o_row is None:
            continue
        sigs = sorted({c["signature"] for c in f_row.get("cuts", []) if c["spec"] == spec and c["chosen"] == "fused"})
        if not sigs:
            raise SystemExit(f"cut_evidence: {case}: variant {fused} fused no {spec} call (its cuts: "
                             f"{[(c['spec'], c['chosen']) for c in f_row.get('cuts', [])]})")
        cut = {c["signature"] for c in o_row.get("cuts", []) if c["spec"] == spec and c["chosen"] == "opaque"}
        if cut != set(sigs):
            raise SystemExit(f"cut_evidence: {case}: variant {opaque} cut {sorted(cut)} of {spec}, not {sigs}")
        us = {}
        for v in (fused, opaque):
            path = run / "profiles" / f"{case}-{v}.json.gz"
            if not path.exists():
                raise SystemExit(f"cut_evidence: no profile {path} (run with MODELS_PROFILE=1)")
            us[v] = memory_bound_us(path)
        source = f"{run.name}: profiles {case}-{fused} vs {case}-{opaque}"
        out += [CutEvidence(gpu, spec, s, round(us[fused], 2), round(us[opaque], 2), case, source, measured)
                for s in sigs]
    if not out:
        raise SystemExit(f"cut_evidence: no case of {run} has both {fused} and {opaque}")
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("--spec", required=True)
    parser.add_argument("--fused", required=True, help="the variant with the spec fused")
    parser.add_argument("--opaque", required=True, help="the variant with the spec opaque, all else the same")
    parser.add_argument("--write", action="store_true", help=f"merge into {EVIDENCE_PATH.name}")
    parser.add_argument("--out", type=Path, help="merge into this file instead")
    args = parser.parse_args(argv)
    records = evidence(args.run, args.spec, args.fused, args.opaque)
    for r in records:
        print(f"{r.gpu} {r.spec} {r.signature}: gain {r.gain_us:.1f} us ({r.describe()})")
    target = args.out or (EVIDENCE_PATH if args.write else None)
    if target is not None:
        table = EvidenceTable.load(target)
        for r in records:
            table.put(r)
        table.save(target)
        print(f"written to {target}")


if __name__ == "__main__":
    main()
