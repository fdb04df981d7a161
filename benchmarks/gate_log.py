"""The gate log's form of a record (benchmarks/data/gate.jsonl): what ``land`` keeps of a gate record, and how a
reader gets its benchmark comparison back.

A landed record keeps the verdict and why, its commits, dates, GPU and machine block, the suite's counts, the
failing and not-run test ids and wall time, and every benchmark comparison; the per-test outcome log
(``tests.outcomes``, one entry per GPU test) stays in the run's own files (the sweep's merged JSON that ``record``
read), since the counts and the failing and not-run ids say what the verdict needs. The comparison is kept as a
table: ``{"fields": FIELDS, "cases": [{"suite", "case", "executors": {executor: [values]}}]}``, one case per run of
entries of one suite and case in the record's order, each executor's values those of ``fields`` in order (as many as
the entry has, from the first) and, last, an object of any other keys it has. ``entries`` gives the flat list back,
field for field and in order, from either form.
"""

from __future__ import annotations

import json

#: The keys of a comparison entry that its case holds once.
GROUP_KEYS = ("suite", "case")
#: The keys of a comparison entry written as values, in this order (``ratio`` last: an entry not measured has none).
FIELDS = ("now", "baseline", "baseline_commit", "ours", "verdict", "ratio")


def _values(entry: dict) -> list:
    """An entry's values of ``FIELDS`` while it has them, then an object of its other keys (if any)."""
    values = []
    for k in FIELDS:
        if k not in entry:
            break
        values.append(entry[k])
    rest = {k: v for k, v in entry.items() if k not in (*GROUP_KEYS, "executor", *FIELDS[:len(values)])}
    return values + [rest] if rest else values


def _entry(values: list) -> dict:
    """``_values`` undone (without the case's keys)."""
    rest = values[-1] if values and isinstance(values[-1], dict) else {}
    plain = values[:-1] if rest else values
    return dict(zip(FIELDS, plain)) | rest


def grouped(entries: list[dict]) -> dict:
    """The comparison ``entries`` (``gate.judge``'s) as the log's table: consecutive entries of one suite and case
    share a case, keyed by executor; an executor seen again in the case, or another case, starts a new one."""
    cases: list[dict] = []
    for e in entries:
        last = cases[-1] if cases else None
        if last is None or e["executor"] in last["executors"] or \
                any(json.dumps(last[k]) != json.dumps(e.get(k)) for k in GROUP_KEYS):
            last = {"suite": e.get("suite"), "case": e.get("case"), "executors": {}}
            cases.append(last)
        last["executors"][e["executor"]] = _values(e)
    return {"fields": list(FIELDS), "cases": cases}


def entries(record: dict) -> list[dict]:
    """The record's benchmark comparison as ``gate.judge`` wrote it (one dict per case and executor), whether the
    record is a full one or the log's table."""
    table = record.get("benchmarks") or []
    if isinstance(table, list):  # a full record's entries
        return table
    if tuple(table.get("fields") or ()) != FIELDS:
        raise ValueError(f"a gate log record's comparison names fields {table.get('fields')}, not {list(FIELDS)}")
    return [{"suite": c["suite"], "case": c["case"], "executor": executor, **_entry(values)}
            for c in table["cases"] for executor, values in c["executors"].items()]


def trimmed(record: dict) -> dict:
    """``record`` as the gate log keeps it: without the per-test outcome log, the comparison as its table;
    every other field as it was, in its order (a record already in this form comes back unchanged)."""
    out = dict(record)
    if isinstance(out.get("tests"), dict):
        out["tests"] = {k: v for k, v in out["tests"].items() if k != "outcomes"}
    if "benchmarks" in out:
        out["benchmarks"] = grouped(entries(out))
    return out


def line(record: dict) -> str:
    """One line of the gate log: ``trimmed(record)``, its machine block last."""
    kept = trimmed(record)
    return json.dumps({k: v for k, v in kept.items() if k != "machine"} | {"machine": kept["machine"]},
                      separators=(",", ":")) + "\n"
