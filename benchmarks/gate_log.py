"""The gate log's form of a record (benchmarks/data/gate.jsonl): what ``land`` keeps of a gate record, and how a
reader gets its benchmark comparison back.

A landed record keeps the verdict and why, its commits, dates, GPU and machine block, the suite's counts, the
failing and not-run test ids and wall time, and every benchmark comparison; the per-test outcome log
(``tests.outcomes``, one entry per GPU test) stays in the run's own files (the sweep's merged JSON that ``record``
read), since the counts and the failing and not-run ids say what the verdict needs. The comparison is kept grouped
by case: one ``{"suite", "case", "executors": {executor: the rest of its entry}}`` per run of entries of one case,
in the record's order, so that the case is written once rather than once per executor. ``entries`` gives the flat
list back, field for field and in order, from either form.
"""

from __future__ import annotations

import json

#: The keys of a comparison entry that its group holds once.
GROUP_KEYS = ("suite", "case")


def grouped(entries: list[dict]) -> list[dict]:
    """The comparison ``entries`` (``gate.judge``'s) grouped by case: consecutive entries of one suite and case
    share a group, keyed by executor; an executor seen again in the group, or another case, starts a new one."""
    out: list[dict] = []
    for e in entries:
        last = out[-1] if out else None
        if last is None or e["executor"] in last["executors"] or \
                any(json.dumps(last[k]) != json.dumps(e.get(k)) for k in GROUP_KEYS):
            last = {"suite": e.get("suite"), "case": e.get("case"), "executors": {}}
            out.append(last)
        last["executors"][e["executor"]] = {k: v for k, v in e.items() if k not in (*GROUP_KEYS, "executor")}
    return out


def entries(record: dict) -> list[dict]:
    """The record's benchmark comparison as ``gate.judge`` wrote it (one dict per case and executor), whether the
    record is a full one or the log's grouped form."""
    out = []
    for b in record.get("benchmarks") or []:
        if "executors" not in b:  # a full record's entry
            out.append(b)
            continue
        for executor, rest in b["executors"].items():
            out.append({"suite": b["suite"], "case": b["case"], "executor": executor, **rest})
    return out


def trimmed(record: dict) -> dict:
    """``record`` as the gate log keeps it: without the per-test outcome log, the comparison grouped by case;
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
