"""The step table's output (benchmarks/model_step.py): the JSON document (machine block, run settings, case notes,
rows), its markdown table with ratios against stock Thunder and torch.compile, and the merge of several runs' JSON
files (one process per GPU) into one document."""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from pathlib import Path

from segkit.files import read_text, write_atomic
from sweep.machine import KEY, block_of, machine_block
from benchmarks.model_cases import CASES

def _plain(value):
    """JSON has no NaN: None instead."""
    return None if isinstance(value, float) and math.isnan(value) else value


def document(rows: list, cases: list, variants: list, opts, device: str) -> dict:
    """The JSON document of one run."""
    return {KEY: machine_block(), "variants": {v.name: v.label for v in variants},
            "run": {"device": device, "iters": opts.iters, "warmup": opts.warmup, "rounds": opts.rounds,
                    "back_to_back": opts.back_to_back, "case_limit_s": opts.case_limit_s,
                    "step": "grads set to None + forward + backward; bf16; batch 1 unless the case says bsN"},
            "cases": {c.name: c.note for c in cases},
            "rows": [{k: _plain(v) for k, v in dataclasses.asdict(r).items()} for r in rows]}


def parse_shard(text: str) -> tuple[int, int]:
    """"I/N" -> (I, N), 0 <= I < N; anything else is a one-line error."""
    try:
        index, count = (int(p) for p in text.split("/"))
    except ValueError:
        raise SystemExit(f"model_step: --shard {text!r}: expected I/N, e.g. 0/4") from None
    if not 0 <= index < count:
        raise SystemExit(f"model_step: --shard {text!r}: I must be in 0..N-1")
    return index, count


def merge(paths: list[Path]) -> dict:
    """Runs' JSON files as one document: rows in table order (cases as ``CASES`` lists them, each run's variant
    order), the first run's machine block, and every run's under ``machines`` when they differ."""
    docs = []
    for p in paths:
        try:
            docs.append(json.loads(read_text(p)))  # the lab keeps its runs gzipped
        except (OSError, EOFError, ValueError) as e:  # unreadable, truncated gzip, not UTF-8 / JSON
            raise SystemExit(f"model_step --merge: cannot read {p}: {e}") from None
        if not isinstance(docs[-1], dict) or block_of(docs[-1]) is None or "rows" not in docs[-1]:
            raise SystemExit(f"model_step --merge: {p} is not a model_step JSON file (no machine block / rows)")
        if not all(isinstance(r, dict) and isinstance(r.get("case"), str) and isinstance(r.get("variant"), str)
                   for r in docs[-1]["rows"]):
            what = "a gate record (python -m benchmarks.gate record)" if "gate" in docs[-1] else "rows of another kind"
            raise SystemExit(f"model_step --merge: {p} is not a model_step JSON file: it holds {what}, not step rows "
                             "(each with a case and a variant name); give benchmarks/model_step.py's --json")
    order = {c.name: i for i, c in enumerate(CASES)}
    rows = sorted((r for d in docs for r in d["rows"]), key=lambda r: order.get(r["case"], len(order)))
    doc = {KEY: block_of(docs[0]), "run": docs[0].get("run", {}),
           "cases": {k: v for d in docs for k, v in d.get("cases", {}).items()}, "rows": rows,
           "variants": {k: v for d in docs for k, v in d.get("variants", {}).items()},
           "merged_from": [str(p) for p in paths]}
    machines = [block_of(d) for d in docs]
    if any({k: v for k, v in m.items() if k != "date"} != {k: v for k, v in machines[0].items() if k != "date"}
           for m in machines):
        doc["machines"] = machines
    return doc


def write(doc: dict, md_path: str | None, json_path: str | None) -> None:
    """The table as markdown at ``md_path`` and as JSON at ``json_path`` (each where given), each whole or not at
    all (``write_atomic``: never onto an input of the command)."""
    if md_path:
        write_atomic(md_path, markdown(doc) + "\n")
    if json_path:
        write_atomic(json_path, json.dumps(doc, indent=1) + "\n")


def _num(value, fmt: str) -> str:
    return "" if value is None else format(value, fmt)


def _claims(c: dict, cuts: list[dict]) -> str:
    """"norms 3/3, RoPE 2/2" (calls in the traces) and, where some fusible calls stayed opaque or were left to
    Thunder (Row.cuts: one decision per signature, however many calls share it), "; opaque: rope_bwd (2 shapes);
    left to Thunder: rmsnorm_fwd (1 shape)"."""
    if not c:
        return ""
    text = f"norms {c['norm_fw']}/{c['norm_bw']}, RoPE {c['rope_fw']}/{c['rope_bw']}"
    for chosen, label in (("opaque", "opaque"), ("thunder", "left to Thunder")):
        specs = [x["spec"] for x in cuts if x["chosen"] == chosen]
        if specs:
            counts = {s: specs.count(s) for s in specs}
            text += f"; {label}: " + ", ".join(f"{s} ({n} shape{'s' if n > 1 else ''})" for s, n in counts.items())
    return text


def paired_ratio(ref_steps: list[float], steps: list[float]) -> tuple[float, int] | None:
    """(the median over passes of ref step / this step, how many passes this one was faster in) for two variants
    timed step by step in the same interleaved passes (Row.ms_steps); None unless both have the same passes."""
    if not steps or len(steps) != len(ref_steps):
        return None
    return statistics.median(r / m for r, m in zip(ref_steps, steps)), sum(m < r for r, m in zip(ref_steps, steps))


def _ratio(ref: dict | None, r: dict) -> str:
    """This row against ``ref``'s: paired over the interleaved passes where both have them ("1.02x (61/90)": the
    median ratio, and faster in 61 of 90 passes), else the ratio of the step medians."""
    got = speedup(ref, r)
    if got is None:
        return ""
    ratio, faster, passes = got
    return f"{ratio:.2f}x" if faster is None else f"{ratio:.3f}x ({faster}/{passes})"


def speedup(ref: dict | None, r: dict) -> tuple[float, int | None, int] | None:
    """``r``'s speed-up over ``ref`` (above 1: ``r`` is faster): (the median over the interleaved passes of ref's
    step over r's, in how many passes r was faster, passes) where both rows have the same passes, else (the ratio
    of the step medians, None, 0); None where either has no step time."""
    if ref is None or not ref.get("ms") or not r.get("ms"):
        return None
    paired = paired_ratio(ref.get("ms_steps") or [], r.get("ms_steps") or [])
    if paired is None or ref is r:
        return ref["ms"] / r["ms"], None, 0
    return paired[0], paired[1], len(r["ms_steps"])


CONTROL_VARIANT = "thunder-again"  # stock Thunder compiled a second time: the paired ratio's A/A resolution


def _back_to_back(run: dict) -> str:
    k = run.get("back_to_back") or 1
    return "" if k == 1 else (f" around {k} steps issued back to back, per step (a training loop's steady state: "
                              "each step's host lead-in overlaps the previous step's kernels)")


def _rounds(run: dict) -> str:
    n = run.get("rounds") or 1
    return "" if n == 1 else (f", in each of {n} rounds (step ms and host ms: the median of the rounds, the lowest "
                              "and highest round's step in brackets; rounds 2.. interleave the case's variants step "
                              "by step, each pass starting one variant later, and the vs columns pair them: the "
                              "median over those passes of the reference's step over the row's, and in how many "
                              "passes the row was faster)")


def _step(r: dict) -> str:
    rounds = r.get("ms_rounds") or []
    if len(rounds) < 2:
        return _num(r["ms"], ".2f")
    return f"{_num(r['ms'], '.2f')} [{min(rounds):.2f}-{max(rounds):.2f}]"


def row_line(row) -> str:
    """One row as a progress line."""
    return (f"{row.case} | {row.variant} | ms {_num(row.ms, '.2f')} | host {_num(row.host_ms, '.2f')} | "
            f"err {_num(row.grad_err, '.1e')} | first {_num(row.first_step_s, '.0f')} s | {row.note}")


def markdown(doc: dict) -> str:
    """The table: one row per case and variant; "vs Thunder" / "vs torch.compile" are their step ms over the
    row's (above 1: faster than them)."""
    m = doc[KEY]
    head = (f"GPU: {m.get('gpu')} (driver {m.get('driver')}); torch {m.get('torch')}; Thunder "
            f"{m.get('lightning-thunder')}; nvfuser_direct {m.get('nvfuser_direct')}; litgpt {m.get('litgpt')}; "
            f"transformers {m.get('transformers')}; {m.get('date')}; commit {m.get('commit')}\n\n"
            f"Step = {doc['run'].get('step', '')}; step ms by CUDA events{_back_to_back(doc['run'])}, "
            f"{doc['run'].get('warmup')} warm-up steps, "
            f"median of {doc['run'].get('iters')}{_rounds(doc['run'])}; host ms = time to issue one step; kernels of "
            "one profiled step; saved for bw = what one forward saves for its backward (autograd's saved tensors, "
            "each storage once, the model's parameters, buffers and the inputs left out); "
            "nvFusion regions and segkit claims in the last forward / backward execution traces; "
            "grad error against eager, max over grads of max |g - g_eager| / max |g_eager|, on the first step and "
            "again after the timed steps on changed inputs (floats negated, token ids rolled).\n\n")
    if "machines" in doc:
        head += "Runs on differing machines: " + "; ".join(f"{x.get('gpu')} {x.get('date')}" for x in doc["machines"])
        head += "\n\n"
    lines = ["| case | variant | step ms | vs Thunder | vs torch.compile | host ms | peak GiB | saved for bw GiB | "
             "kernels/step | nvFusion fw/bw | segkit claims fw/bw | max rel grad err | first step s | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ref = {(r["case"], r["variant"]): r for r in doc["rows"]}
    for r in doc["rows"]:
        regions = f"{r['regions'][0]}/{r['regions'][1]}" if r["regions"] else ""
        vs_thunder, vs_compile = (_ratio(ref.get((r["case"], v)), r) for v in ("thunder", "compile"))
        lines.append(
            f"| {r['label']} | {r['variant']} | {_step(r)} | {vs_thunder} | {vs_compile} | "
            f"{_num(r['host_ms'], '.2f')} | "
            f"{_num(r['peak_gib'], '.2f')} | {_num(r.get('saved_gib'), '.3g')} | {_num(r['kernels'], 'd')} | {regions} | "
            f"{_claims(r['claims'], r.get('cuts') or [])} | "
            f"{_num(r['grad_err'], '.1e')} | {_num(r['first_step_s'], '.1f')} | {r['note']} |")
    legend = ["Variants: " + "; ".join(f"{k} = {v}" for k, v in doc.get("variants", {}).items())]
    notes = [f"* {name}: {note}" for name, note in doc.get("cases", {}).items() if note]
    return head + "\n".join(lines) + "\n\n" + "\n".join(legend + (["", "Cases:"] + notes if notes else []))
