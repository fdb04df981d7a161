"""Step evidence for segkit_fuse="auto" (thunder_exec/decide/evidence.py) from a step table run that profiled two
variants differing in one spec's mode: the memory-bound kernel time of each profiled step (every kernel but the GEMMs
and attention, which both variants run alike and whose time follows the SM clock of the moment: the row's breakdown,
else its profile), one record per signature of the spec's calls that the first variant claimed (or fused) and
the second left to Thunder (or ran opaque): all of them, or those of one shape (a ``segkit_fuse`` key OP@SHAPE);
every other call must run alike in both. Cases where the two ran every call alike are skipped, and so are those
whose difference is within the run's A/A control (stock Thunder against itself compiled again, where the run has
both: one profiled step's sums move that much with nothing changed) and those whose paired steps contradict the
kernel sums (the variant with less kernel time slower in 8 of 10 passes). Keyed by the run's GPU. Every
memory-bound kernel counts, whoever runs it: a cut can hand work to another executor (a layout copy in torch, say).

    python -m benchmarks.cut_evidence RUN_DIR --spec rope_bwd --fused segkit-rope-bwd-fused \\
        --opaque segkit-rope-bwd-opaque [--write | --out FILE]
    python -m benchmarks.cut_evidence RUN_DIR --spec rmsnorm_bwd --claimed segkit-auto \\
        --declined segkit-norms-thunder [--write | --out FILE]
    python -m benchmarks.cut_evidence STEP_JSON --spec rope_bwd --fused segkit-rope-bwd-fused \\
        --opaque segkit-auto --host-only [--write | --out FILE]

The variants compared are the step table's controls, one spec's mode (or one shape's) changed against segkit_ex's
modes; they are a table, not product variants: the lab's is lab/campaigns/step_controls.json, run as
``python benchmarks/model_step.py --variants-from lab/campaigns/step_controls.json --variants segkit-auto,...
--rounds 2 --profile DIR`` (or ``MODELS_VARIANTS_FROM`` with scripts/gpu/models.sh and ``MODELS_PROFILE=1``). The
A/A control ``thunder-again`` is the step table's own.

The first form writes CutEvidence (fused against opaque: thunder_exec/decide/cut_evidence.json), the second
ClaimEvidence (the calls claimed, as "auto" ran them, against left to Thunder: thunder_exec/decide/claim_evidence.json).
RUN_DIR holds the run's ``model_step.json`` (or ``.json.gz``) and ``profiles/`` (scripts/gpu/models.sh with
MODELS_PROFILE=1).
A CutEvidence record carries the host time per step the cut added where the run timed both variants' host per
interleaved pass (``host_steps``: the median of the paired differences); the third form adds that host time from
another run (no profiles needed) to the records already there, since "auto" weighs the kernel time a cut saves
against the host time it adds.
"""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import replace
from pathlib import Path

from benchmarks.model_table import CONTROL_VARIANT, speedup
from sweep.machine import KEY
from thunder_exec.decide.evidence import (CLAIMS_PATH, EVIDENCE_PATH, ClaimEvidence, ClaimTable, CutEvidence,
                                          EvidenceTable)
from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.errors import UsageError
from segkit.files import read_text
from segkit.trace import load
from segkit.trace.breakdown import per_step


def memory_bound_us(profile: Path) -> float:
    """The memory-bound kernel time of a profiled step (``segkit trace breakdown``: every kernel but matmuls and
    attention). A step table profile holds its profiled steps alone (torch.profiler's active window), each in a step
    range since the step table marks them; one recorded before it did is read whole, which is those steps."""
    return per_step(load(profile), whole=True)["memory-bound us"]


def _step_memory_bound_us(run: Path, case: str, row: dict) -> float:
    """The row's memory-bound us: its ``breakdown`` (the step table's, from the same profile), else its profile."""
    got = (row.get("breakdown") or {}).get("memory_bound")
    if got is not None:
        return got
    path = run / "profiles" / f"{case}-{row['variant']}.json.gz"
    if not path.exists():
        raise SystemExit(f"cut_evidence: no profile {path} and no breakdown in its row (run with MODELS_PROFILE=1)")
    return round(memory_bound_us(path), 2)


def _row(rows: list[dict], case: str, variant: str) -> dict | None:
    return next((r for r in rows if r["case"] == case and r["variant"] == variant), None)


def _chosen(row: dict, spec: str) -> dict[str, str]:
    """The signatures of ``spec``'s calls in ``row``, each with how it ran (fused, opaque, thunder)."""
    return {c["signature"]: c["chosen"] for c in row.get("cuts", []) if c["spec"] == spec}


def _aa_us(run: Path, rows: list[dict], case: str) -> float | None:
    """The case's A/A width: how far apart the memory-bound us of stock Thunder and of the same program compiled
    again (the step table's control) came in this run; None where the run lacks either."""
    a, b = _row(rows, case, "thunder"), _row(rows, case, CONTROL_VARIANT)
    if a is None or b is None:
        return None
    return abs(_step_memory_bound_us(run, case, a) - _step_memory_bound_us(run, case, b))


CONTESTED = 0.8  # a step pairing this one-sided (8 of 10 passes, the issue-54 bar) outweighs the kernel sums


def _contested(a: dict, b: dict, a_us: float, b_us: float) -> str | None:
    """Why the two rows' steps contradict their kernel sums, or None: the variant with less memory-bound time
    slower in at least ``CONTESTED`` of the interleaved passes that time both (a host-bound step pays the host
    time a cut adds; a kernel-sum difference can be clock drift in kernels both ran alike). Rows without paired
    passes are not contested."""
    got = speedup(b, a)
    if got is None or got[1] is None or not got[2] or a_us == b_us:
        return None
    ratio, a_faster, passes = got
    fewer_us_slower = passes - a_faster if a_us < b_us else a_faster  # passes the kernel sums' winner lost
    if fewer_us_slower < CONTESTED * passes - 1e-9:
        return None
    return (f"the steps contradict the kernel sums: {a['variant']} {a_us:.1f} us against {b['variant']} "
            f"{b_us:.1f} us, but {a['variant']} paired {ratio:.3f}x, faster in {a_faster}/{passes} passes")


def _step_doc(run: Path) -> dict:
    """The step table's document of ``run``: a run folder's ``model_step.json`` (or ``.json.gz``), or a step JSON
    file itself."""
    path = run if run.is_file() else run / "model_step.json"
    path = path if path.exists() else run / "model_step.json.gz"
    if not path.exists():
        raise ValueError(f"{run}: no model_step.json or model_step.json.gz in it: give a run folder of the step "
                         "table or a step JSON file")
    try:
        doc = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg} at line {e.lineno}): want a step table's JSON") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        raise ValueError(f"{path}: not a step table's JSON (no 'rows' list): give benchmarks/model_step.py's --json")
    return doc


def _differing(doc: dict, run: Path, spec: str, first: str, second: str, first_ways: tuple[str, ...],
               second_way: str):
    """(case, first's row, second's, {signature: how it ran in ``first``}) for every case of the step document
    ``doc`` where the two variants ran ``spec``'s calls differently, the way asked and in nothing else; a case
    where they ran them alike (a model without the shape a variant keys) is skipped with a note. A variant that
    ran a call otherwise than asked is a SystemExit naming it, as is a run without both variants."""
    out, both = [], False
    for case in dict.fromkeys(r["case"] for r in doc["rows"]):
        a, b = _row(doc["rows"], case, first), _row(doc["rows"], case, second)
        if a is None or b is None:
            continue
        both = True
        ran_a, ran_b = _chosen(a, spec), _chosen(b, spec)
        if ran_a == ran_b:
            print(f"cut_evidence: {case}: {first} and {second} ran every {spec} call alike; nothing to record")
            continue
        ways = {sig: how for sig, how in ran_a.items() if how in first_ways}
        if not ways:
            raise SystemExit(f"cut_evidence: {case}: variant {first} {'/'.join(first_ways)} no {spec} call (its "
                             f"cuts: {[(c['spec'], c['chosen']) for c in a.get('cuts', [])]})")
        changed = {sig for sig in ways if ran_b.get(sig) == second_way}
        differ = {sig for sig in ran_a.keys() | ran_b.keys() if sig not in changed and ran_a.get(sig) != ran_b.get(sig)}
        if not changed or differ:
            raise SystemExit(f"cut_evidence: {case}: variant {second} ran "
                             f"{sorted(s for s, how in ran_b.items() if how == second_way)} of {spec} {second_way}: "
                             f"it must run some of {sorted(ways)} so and every other call as {first} ran it "
                             f"(otherwise: {sorted(differ)})")
        out.append((case, a, b, {sig: ways[sig] for sig in changed}))
    if not both:
        raise SystemExit(f"cut_evidence: no case of {run} has both {first} and {second}")
    return out


def _paired(run: Path, spec: str, first: str, second: str, first_ways: tuple[str, ...], second_way: str):
    """(case, machine, {signature: how it ran in ``first``}, first's memory-bound us, second's, host us second
    added (``host_added_us``)) for every case of ``run`` that ``_differing`` keeps, except one whose difference is
    within its A/A control (thunder against thunder-again, where the run has both) and one whose paired steps
    contradict the kernel sums (``_contested``): each is skipped with a note. A row with neither breakdown nor
    profile is a SystemExit naming it, as is a run with no case left."""
    doc = _step_doc(run)
    out = []
    for case, a, b, ways in _differing(doc, run, spec, first, second, first_ways, second_way):
        a_us, b_us = _step_memory_bound_us(run, case, a), _step_memory_bound_us(run, case, b)
        aa = _aa_us(run, doc["rows"], case)
        if aa is not None and abs(a_us - b_us) <= aa:
            print(f"cut_evidence: {case}: {first} {a_us:.1f} us against {second} {b_us:.1f} us is within the A/A "
                  f"control's {aa:.1f} us (thunder against {CONTROL_VARIANT}); no record")
            continue
        contested = _contested(a, b, a_us, b_us)
        if contested:
            print(f"cut_evidence: {case}: {contested}; no record")
            continue
        out.append((case, doc[KEY], ways, a_us, b_us, host_added_us(a, b)))
    if not out:
        raise SystemExit(f"cut_evidence: no case of {run} has {first} and {second} running {spec} differently "
                         f"with a record to write (each case's note above says why not)")
    return out


def host_added_us(a: dict, b: dict) -> tuple[float, int, int] | None:
    """(the median over the interleaved passes of b's host us per step minus a's, in how many passes b's was
    higher, passes) for two rows timed in the same passes (``host_steps``, ms); None where either lacks them (a run
    from before the step table timed host per pass): a lone step's host ms moves too much between leases to
    subtract."""
    ha, hb = a.get("host_steps") or [], b.get("host_steps") or []
    if not ha or len(ha) != len(hb):
        return None
    return (round(statistics.median(1e3 * (y - x) for x, y in zip(ha, hb)), 1), sum(y > x for x, y in zip(ha, hb)),
            len(ha))


def _host_source(run: Path, first: str, second: str, host: tuple[float, int, int] | None) -> str | None:
    name = f"{run.parent.name}/{run.name}" if run.is_file() else run.name
    return None if host is None else (f"{name}: {second} vs {first}, median of {host[2]} paired passes, "
                                      f"{second} higher in {host[1]}")


def _measured(machine: dict) -> str:
    return (f"{machine.get('date')}, torch {machine.get('torch')}, nvfuser_direct {machine.get('nvfuser_direct')}, "
            f"commit {machine.get('commit')}")


def evidence(run: Path, spec: str, fused: str, opaque: str) -> list[CutEvidence]:
    """CutEvidence of every case in ``run`` with both variants profiled, ``fused`` fusing the spec's calls and
    ``opaque`` running the same ones opaque."""
    return [CutEvidence(machine["gpu"], spec, sig, f_us, o_us, case,
                        f"{run.name}: profiles {case}-{fused} vs {case}-{opaque}", _measured(machine),
                        None if host is None else host[0], _host_source(run, fused, opaque, host))
            for case, machine, ways, f_us, o_us, host in _paired(run, spec, fused, opaque, ("fused",), "opaque")
            for sig in sorted(ways)]


def with_host(run: Path, spec: str, fused: str, opaque: str, table: EvidenceTable) -> list[CutEvidence]:
    """``table``'s records of ``spec`` with the host time the cut added, timed in ``run`` (a step table run
    without profiles will do: only its paired host passes are read), for every case where ``opaque`` ran the
    spec's calls opaque and ``fused`` fused them, all else alike; a run without paired host passes, or a
    signature ``table`` has no record of on the run's GPU (the kernel side comes first), is a SystemExit."""
    doc = _step_doc(run)
    gpu, out = doc[KEY]["gpu"], []
    for case, a, b, ways in _differing(doc, run, spec, fused, opaque, ("fused",), "opaque"):
        host = host_added_us(a, b)
        if host is None:
            raise SystemExit(f"cut_evidence: {case}: {run} did not time {fused} and {opaque}'s host per pass "
                             f"(host_steps); no host time to record")
        for sig in sorted(ways):
            record = table.lookup(gpu, spec, sig)
            if record is None:
                raise SystemExit(f"cut_evidence: no {spec} record for {sig} on {gpu} to add a host time to: record "
                                 f"the kernel side first (a run with profiles)")
            out.append(replace(record, host_us=host[0], host_source=_host_source(run, fused, opaque, host)))
    return out


def claim_evidence(run: Path, spec: str, claimed: str, declined: str) -> list[ClaimEvidence]:
    """ClaimEvidence of every case in ``run`` with both variants profiled, ``claimed`` claiming the spec's calls
    (fused or opaque) and ``declined`` leaving the same ones to Thunder."""
    return [ClaimEvidence(machine["gpu"], spec, sig, c_us, d_us, ways[sig], case,
                          f"{run.name}: profiles {case}-{claimed} vs {case}-{declined}", _measured(machine))
            for case, machine, ways, c_us, d_us, _ in _paired(run, spec, claimed, declined, ("fused", "opaque"),
                                                               "thunder")
            for sig in sorted(ways)]


def build_parser() -> Parser:
    """``python -m benchmarks.cut_evidence``'s command line."""
    parser = Parser(prog="python -m benchmarks.cut_evidence", description=__doc__.splitlines()[0])
    parser.add_argument("run", type=argtypes.existing_path, metavar="RUN",
                        help="a step table's run folder (model_step.json and its profiles) or a step JSON file")
    parser.add_argument("--spec", type=argtypes.name, required=True)
    parser.add_argument("--fused", type=argtypes.name, help="the variant with the spec fused")
    parser.add_argument("--opaque", type=argtypes.name, help="the variant with the spec opaque, all else the same")
    parser.add_argument("--claimed", type=argtypes.name, help="the variant with the spec claimed (as auto runs it)")
    parser.add_argument("--declined", type=argtypes.name,
                        help="the variant with the spec left to Thunder, all else the same")
    parser.add_argument("--host-only", action="store_true", help="with --fused / --opaque: add the host time the "
                        "cut added, timed in RUN's paired passes, to the records already there (RUN may be a step "
                        "JSON without profiles)")
    parser.add_argument("--write", action="store_true", help=f"merge into {EVIDENCE_PATH.name} (or "
                        f"{CLAIMS_PATH.name} with --claimed / --declined)")
    parser.add_argument("--out", type=argtypes.output_file_of("an evidence table", argtypes.json_holding("records")),
                        help="merge into this file instead")
    parser.add_force()
    parser.goes_with("--host-only", "--fused")
    parser.set_defaults(func=_cut_evidence)
    return parser


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.cut_evidence``: every failure one line."""
    return entry.run(build_parser, argv)


def _cut_evidence(args) -> int:
    if (args.fused is None) != (args.opaque is None) or (args.claimed is None) != (args.declined is None) or \
            (args.fused is None) == (args.claimed is None):
        raise UsageError("give either --fused and --opaque, or --claimed and --declined")
    if args.host_only:  # the records to add to: the file it writes to
        records = with_host(args.run, args.spec, args.fused, args.opaque, EvidenceTable.load(args.out or EVIDENCE_PATH))
        table, path = EvidenceTable, EVIDENCE_PATH
    elif args.fused is not None:
        records, table, path = evidence(args.run, args.spec, args.fused, args.opaque), EvidenceTable, EVIDENCE_PATH
    else:
        records = claim_evidence(args.run, args.spec, args.claimed, args.declined)
        table, path = ClaimTable, CLAIMS_PATH
    for r in records:
        print(f"{r.gpu} {r.spec} {r.signature}: gain {r.gain_us:.1f} us ({r.describe()})")
    target = args.out or (path if args.write else None)
    if target is not None:
        merged = table.load(target)
        for r in records:
            merged.put(r)
        merged.save(target)
        print(f"written to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
