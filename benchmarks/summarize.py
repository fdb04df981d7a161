"""Summarize a pytest-benchmark JSON run: per suite and shape, the best executor, segkit's share of the
measured copy bandwidth and its speedup over each competitor (geometric means), plus one PNG per suite.

    python -m benchmarks.summarize RUN.json [RUN.json ...] OUT_DIR
    python -m benchmarks.summarize RUN.json [RUN.json ...] --append benchmarks/data/results.jsonl.gz --run NAME

Several runs (a suite split across GPU calls) are summarized together; every ratio still compares
executors measured in the same run, because each case's executors run back to back in one session.
A run is a pytest-benchmark JSON (a merged sweep's too), a perf campaign's ``results.json`` or a
``SEGKIT_BENCH_LOG`` JSON-lines file; each carries its machine block (sweep/machine.py), printed above
the tables. Runs on different GPU models are refused (their ratios do not belong in one column); a file
written before machine blocks existed reads as an unknown machine, named by its folder.

``--append DATA --run NAME`` adds the runs' measurements to the results data (benchmarks/data/results.jsonl.gz, which
``python -m benchmarks.report`` turns into benchmarks/RESULTS.md and the README's table): one row per measured
(suite, case, executor), with its provenance (``PROVENANCE``: the machine block, commit, date, the run's name, as the
lab's index lists it, and the file in that run). A step table's JSON (benchmarks/model_step.py) is read too, and the
step table's on N ranks (benchmarks/model_step_dist.py): its rows' ``world_size`` goes into their case.
Appending the same run again adds nothing; a row without its provenance is refused, naming the field.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.errors import UsageError
from segkit.files import read_text, write_atomic
from sweep.machine import FIELDS, block_of, legacy_block


class MixedMachines(ValueError):
    """Runs measured on different GPU models were given together."""


def is_lines(path: Path) -> bool:
    """Whether a results file is JSON lines (``.jsonl``, or ``.jsonl.gz``)."""
    return Path(path).name.removesuffix(".gz").endswith(".jsonl")


def _read(path: Path) -> tuple[dict | None, list[dict]]:
    """(machine block or None, benchmark records) of any results format; a record has name, params, extra_info."""
    text = read_text(path)
    if is_lines(path):
        lines = [data_line(line, path, i) for i, line in enumerate(text.splitlines(), 1) if line.strip()]
        blocks = [block_of(r) for r in lines if block_of(r)]
        gpus = sorted({b.get("gpu") or "?" for b in blocks})
        if len(gpus) > 1:
            raise MixedMachines(f"{path}: its lines were measured on different GPUs ({', '.join(gpus)})")
        return (blocks[0] if blocks else None), lines
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e.msg} at line {e.lineno}): give a pytest-benchmark JSON run, a "
                         "results.json or a JSON-lines log") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a JSON {type(data).__name__}, not an object: give a pytest-benchmark JSON run "
                         "(an object with 'benchmarks')")
    if "benchmarks" in data:
        return block_of(data) or legacy_block(data), data["benchmarks"]
    return block_of(data) or ({"gpu": data["gpu"], "torch": data.get("torch")} if data.get("gpu") else None), \
        data.get("norm_bwd") or []  # perf.sh's results.json


def load(path: Path) -> tuple[dict, list[dict]]:
    block, records = _read(path)
    rows = []
    for b in records:
        p, info = b.get("params") or {}, b.get("extra_info") or {}
        if "kernel_us_median" not in info:
            continue
        us = info["kernel_us_median"]
        if not isinstance(us, (int, float)) or isinstance(us, bool) or not (math.isfinite(us) and us >= 0):
            raise ValueError(f"{path}: {b.get('name')}: kernel_us_median is {us!r}, not a finite time >= 0")
        params = {k: _plain(v) for k, v in p.items()}
        case = tuple(params[k] for k in sorted(params) if k != "executor")
        rows.append({"suite": b["name"].split("[")[0], "case": case, "params": params, "executor": p["executor"],
                     "us": info["kernel_us_median"], "pct": info.get("pct_of_copy_bw"), "kernels": info.get("kernels"),
                     "wall_us": info.get("wall_us_median"), "wall_us_runtime": info.get("wall_us_runtime")})
    return block or {"gpu": None, "unknown": f"unknown machine (no machine block; folder {Path(path).parent.name})"}, rows


def _plain(value) -> str:
    """pytest-benchmark stores a torch.dtype parameter as 'UNSERIALIZABLE[torch.bfloat16]': keep 'bfloat16'."""
    return str(value).removeprefix("UNSERIALIZABLE[").removesuffix("]").removeprefix("torch.")


def load_runs(paths: list[Path]) -> tuple[dict, list[dict]]:
    """Rows of every run; the machine of the first, with each run's measured copy bandwidth listed. Runs on
    different GPU models are refused (``MixedMachines``); an unknown machine beside a known one is noted."""
    machines, rows = [], []
    for path in paths:
        machine, run_rows = load(path)
        machines.append(machine)
        rows += run_rows
    gpus = {str(p): m["gpu"] for p, m in zip(paths, machines) if m.get("gpu")}
    if len(set(gpus.values())) > 1:
        raise MixedMachines("runs on different GPUs cannot share a ratio column: "
                            + "; ".join(f"{p}: {g}" for p, g in gpus.items()))
    machine = dict(next((m for m in machines if m.get("gpu")), machines[0] if machines else {}))
    unknown = [m["unknown"] for m in machines if m.get("unknown")]
    if unknown and gpus:
        machine["unknown"] = "; ".join(unknown) + " (not checked to be the same GPU)"
    bws = [_gbs(m.get("copy_gbs")) for m in machines if m.get("copy_gbs")]
    if len(bws) > 1:
        machine["copy_gbs"] = " / ".join(bws) + " GB/s (per run)"
    return machine, rows


def _gbs(v) -> str:
    """A run's copy bandwidth: one number, or per device for a sweep."""
    if isinstance(v, dict):
        return ", ".join(f"{k}: {float(x):.0f}" for k, x in v.items())
    return f"{float(v):.0f}"


def machine_lines(machine: dict) -> list[str]:
    """The machine block as a markdown table (what the summary prints above its tables)."""
    if machine.get("gpu") is None and machine.get("unknown"):
        return [f"Machine: {machine['unknown']}"]
    rows = [[k, _gbs(machine[k]) if k == "copy_gbs" and not isinstance(machine[k], str) else machine[k]]
            for k in FIELDS if machine.get(k) is not None]
    lines = ["Machine:", "", tabulate(rows, headers=["field", "value"], tablefmt="github")]
    return lines + (["", f"Also: {machine['unknown']}"] if machine.get("unknown") else [])


def by_case(rows: list[dict]) -> dict[str, dict[tuple, dict[str, dict]]]:
    """suite -> case -> executor -> row: the executors of one case side by side."""
    out: dict[str, dict[tuple, dict[str, dict]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        out[r["suite"]][r["case"]][r["executor"]] = r
    return out


def summarize(rows: list[dict]) -> dict[str, dict]:
    """suite -> {"table": rows for markdown, "speedups": executor -> [segkit speedup per case]}."""
    out: dict[str, dict] = {}
    for suite, cases in by_case(rows).items():
        table, speedups = [], defaultdict(list)
        for case, ex in cases.items():
            best = min(ex.values(), key=lambda r: r["us"])
            seg = ex.get("segkit")
            row = {"case": " ".join(case), "best": best["executor"], "best us": round(best["us"], 1)}
            if seg:
                row["segkit us"] = round(seg["us"], 1)
                row["segkit kernels"] = seg["kernels"]
                row["segkit % copy bw"] = None if seg["pct"] is None else round(seg["pct"], 1)
                for name, r in sorted(ex.items()):
                    if name != "segkit":
                        row[f"vs {name}"] = round(r["us"] / seg["us"], 2)
                        speedups[name].append(r["us"] / seg["us"])
            table.append(row)
        out[suite] = {"table": table, "speedups": dict(speedups)}
    return out


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def write(machine: dict, summary: dict[str, dict], out_dir: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    lines = ["# Benchmark summary", "", *machine_lines(machine), ""]
    for suite, s in summary.items():
        lines += [f"## {suite}", "", "Speedup of segkit (competitor time / segkit time; >1 = segkit faster), "
                  "geometric mean over cases:", ""]
        lines += [f"* {name}: {geomean(v):.2f}x over {len(v)} cases, segkit faster in "
                  f"{sum(x > 1 for x in v)}" for name, v in sorted(s["speedups"].items())]
        lines += ["", tabulate(s["table"], headers="keys", tablefmt="github"), ""]
        if s["speedups"]:
            fig, ax = plt.subplots(figsize=(12, 4))
            for name, v in sorted(s["speedups"].items()):
                ax.plot(range(len(v)), v, marker="o", label=name)
            ax.axhline(1.0, color="gray", lw=0.8)
            ax.set_yscale("log")
            ax.set_xlabel("case (table order)")
            ax.set_ylabel("speedup of segkit")
            ax.set_title(suite)
            ax.legend()
            fig.tight_layout()
            fig.savefig(out_dir / f"{suite}.png", dpi=100)
            plt.close(fig)
            lines.append(f"![{suite}]({suite}.png)\n")
    md = out_dir / "summary.md"
    write_atomic(md, "\n".join(lines))
    return md


# --- the results data: rows with provenance --------------------------------------------------------------------
#
# One JSON object a line, of two kinds. A row is one measured (suite, case, executor) of a run: "suite", "case" (the
# parameters), "executor", "metrics", and its provenance "gpu", "commit", "date", "run" (the run's name: the lab's
# index lists each run by it, with its folder) and "source" (the file in that run). A machine line, {"run",
# "source", "machine"}, holds the machine block of the rows of that run file once (driver, CUDA and library
# versions, copy bandwidth), written before them; ``read_data`` joins it into each row, so a reader gets every row
# whole.

PROVENANCE = ("suite", "case", "executor", "gpu", "commit", "date", "run", "source", "machine")  # every row's
MACHINE_FIELDS = ("gpu", "driver")  # the machine block names at least these
# extra_info key -> metric name, for the kernel suites (kernel times in us; pct: of the run's measured copy bandwidth)
METRICS = {"kernel_us_median": "us", "gbs": "gbs", "pct_of_copy_bw": "pct_copy_bw", "bytes": "bytes",
           "kernels": "kernels", "formulation": "formulation", "two_stage_chunk": "two_stage_chunk",
           "fx_reuse_rewrites": "fx_reuse_rewrites"}
STEP_METRICS = ("ms", "ms_rounds", "ms_steps", "host_ms", "host_steps", "peak_gib", "saved_gib", "kernels", "regions",
                "claims", "grad_err", "first_step_s", "breakdown", "note",
                # the step table on N ranks (benchmarks/model_step_dist.py): per GPU, each rank's, whether ranks agree
                "tokens_per_s", "ms_ranks", "peak_gib_ranks", "claims_agree", "eager_calls")


class MissingProvenance(ValueError):
    """A results row lacks a field a reader needs to know where and how it was measured."""


def _num(v):
    """Floats to 5 significant digits (the data stays small; a kernel time has 3-4), whole floats as ints."""
    if isinstance(v, float):
        v = float(f"{v:.5g}")
        return int(v) if v.is_integer() and abs(v) < 1e15 else v
    if isinstance(v, list):
        return [_num(x) for x in v]
    return v


def row_key(row: dict) -> tuple:
    """What makes a row one measurement: its run and file, suite, case and executor."""
    return row["run"], row["source"], row["suite"], json.dumps(row["case"], sort_keys=True), row["executor"]


def check_row(row: dict, where: str = "row") -> dict:
    """``row`` when it carries its provenance (``PROVENANCE``, the machine block's ``MACHINE_FIELDS``) and metrics;
    else ``MissingProvenance`` naming the missing field."""
    what = f"{where} ({row.get('suite')} {row.get('case')} {row.get('executor')})"
    for field in PROVENANCE + ("metrics",):
        if row.get(field) in (None, "", {}):
            raise MissingProvenance(f"{what} has no {field!r}: every row names {', '.join(PROVENANCE)}")
    for m, v in row["metrics"].items():
        if isinstance(v, (int, float)) and not isinstance(v, bool) and not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{what}: metrics.{m} is {v!r}: a time, size or count is a finite number >= 0; fix "
                             "or drop the row")
    for field in MACHINE_FIELDS:
        if not row["machine"].get(field):
            raise MissingProvenance(f"{what} has no 'machine.{field}' (its machine block names no {field})")
    if not re.fullmatch(r"[\w.+-]+", str(row["run"])):
        raise MissingProvenance(f"{what}: 'run' {row['run']!r} is not a run name "
                                "(letters, digits, '.', '_', '+', '-')")
    return row


CONFLICT = ("<<<<<<<", "=======", ">>>>>>>", "|||||||")


def data_line(line: str, path: Path, number: int) -> dict:
    """One line of a data file as its JSON object; a merge-conflict marker or a line that is not a JSON object is
    a ValueError naming the file and the line."""
    if line.startswith(CONFLICT):
        raise ValueError(f"{path}:{number}: a merge conflict marker ({line[:7]}): resolve the conflict (keep both "
                         "sides' lines) and run again")
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{number}: not JSON ({e.msg} at column {e.colno}): fix or drop the line") from None
    if not isinstance(obj, dict):
        raise ValueError(f"{path}:{number}: a JSON {type(obj).__name__}, not an object (one row a line)")
    return obj


def read_data(path: Path) -> list[dict]:
    """The rows of a results data file, in the order they were appended, each joined with its machine line and
    checked (``check_row``)."""
    if not Path(path).exists():
        return []
    machines, rows = {}, []
    for i, line in enumerate(read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        obj = data_line(line, path, i)
        if "suite" not in obj and "machine" in obj:
            machines[obj.get("run"), obj.get("source")] = obj["machine"]
            continue
        machine = machines.get((obj.get("run"), obj.get("source")))
        rows.append(check_row({**obj, **({"machine": machine} if machine else {})}, f"{path}:{i}"))
    return rows


def add_lines(path: Path, lines: list[str], replace: bool = False) -> None:
    """Append ``lines`` to the data file ``path`` (or with ``replace``, make them its whole text). A ``.gz`` file
    (the results data: ``benchmarks/data/results.jsonl.gz``) is written whole, gzip of its text at the highest level
    with no time stamp, so the same data is the same bytes; either kind is replaced atomically."""
    path = Path(path)
    text = "".join(lines) if replace or not path.exists() else read_text(path) + "".join(lines)
    if path.name.endswith(".gz"):
        write_atomic(path, gzip.compress(text.encode(), compresslevel=9, mtime=0))
    else:
        write_atomic(path, text)


def _lines(rows: list[dict], written: set) -> list[str]:
    """``rows`` as data lines: each run file's machine line (unless in ``written``) before its first row."""
    out = []
    for r in rows:
        if (r["run"], r["source"]) not in written:
            written.add((r["run"], r["source"]))
            out.append({"run": r["run"], "source": r["source"], "machine": r["machine"]})
        out.append({k: v for k, v in r.items() if k != "machine"})
    return [json.dumps(o, separators=(",", ":")) + "\n" for o in out]


def _source(path: Path, name: str) -> str:
    """The file's path inside the run's folder (the part after the folder named ``name``), else its name."""
    parts = Path(path).parts
    if name in parts:
        i = len(parts) - 1 - parts[::-1].index(name)
        if i < len(parts) - 1:
            return "/".join(parts[i + 1:])
    return Path(path).name


def _provenance(doc: dict, block: dict | None, commit: str | None) -> dict:
    """gpu, commit, date and the machine block (None values left out) of a document: the block's, else
    pytest-benchmark's ``datetime`` and ``commit_info`` (a file written before blocks existed); ``commit`` given
    on the command line wins over both (a copied tree's git directory can be stale)."""
    block = {k: _num(v) if not isinstance(v, dict) else {d: _num(x) for d, x in v.items()}
             for k, v in (block or {}).items() if v is not None}
    date, block_commit = block.pop("date", None), block.pop("commit", None)
    info = doc.get("commit_info") if isinstance(doc.get("commit_info"), dict) else {}
    return {"gpu": block.get("gpu"), "commit": commit or block_commit or (info.get("id") or "")[:7] or None,
            "date": date or (doc.get("datetime") or "")[:10] or None, "machine": block}


def data_rows(path: Path, run: str, commit: str | None = None) -> list[dict]:
    """The results rows of one run file (any format ``load`` reads, or a step table's JSON), with provenance;
    ``run``: the run's name (its rows name it; the lab's index lists it with its folder)."""
    name = run.strip("/")
    where = {"run": name, "source": _source(path, name)}
    doc = {} if is_lines(path) else json.loads(read_text(path))
    if isinstance(doc.get("rows"), list) and block_of(doc):  # a step table (benchmarks/model_step.py)
        prov = _provenance(doc, block_of(doc), commit)
        k = (doc.get("run") or {}).get("back_to_back") or 1
        out = []
        for r in doc["rows"]:
            case = {"model": r["case"], "label": r.get("label") or r["case"], **({"back_to_back": k} if k > 1 else {}),
                    **({"world_size": r["world_size"]} if r.get("world_size") else {})}  # a run on N ranks
            metrics = {m: _num(r.get(m)) for m in STEP_METRICS if r.get(m) not in (None, "", [], {})}
            opaque = [c["spec"] for c in r.get("cuts") or [] if c.get("chosen") == "opaque"]
            metrics |= {"opaque": opaque} if opaque else {}
            out.append({"suite": "model_step", "case": case, "executor": r["variant"],
                        "metrics": metrics or {"ms": None}, **prov, **where})
        return out
    block, records = _read(path)
    prov = _provenance(doc, block or legacy_block(doc), commit)
    out = []
    for b in records:
        info, params = b.get("extra_info") or {}, b.get("params") or {}
        if "kernel_us_median" not in info:
            continue
        metrics = {new: _num(info[old]) for old, new in METRICS.items() if info.get(old) is not None}
        stats = b.get("stats") or {}
        metrics |= {f"us_{s}": _num(stats[s] * 1e6) for s in ("min", "max", "iqr") if stats.get(s) is not None}
        out.append({"suite": b["name"].split("[")[0].removeprefix("test_"),
                    "case": {k: _plain(v) for k, v in params.items() if k != "executor"},
                    "executor": params["executor"], "metrics": metrics,
                    **(_provenance(b, block_of(b), commit) if block_of(b) else prov), **where})
    return out


def append(paths: list[Path], data: Path, run: str, commit: str | None = None) -> tuple[int, int]:
    """Append the runs' rows to ``data`` (created if missing): (rows added, rows already there). Every row is
    checked first, so a run lacking provenance adds nothing."""
    rows = read_data(data)
    have, written = {row_key(r) for r in rows}, {(r["run"], r["source"]) for r in rows}
    new = [check_row(r, str(p)) for p in paths for r in data_rows(p, run, commit)]
    fresh = []
    for r in new:
        if row_key(r) not in have:
            have.add(row_key(r))
            fresh.append(r)
    if fresh:
        Path(data).parent.mkdir(parents=True, exist_ok=True)
        add_lines(Path(data), _lines(fresh, written))
    return len(fresh), len(new) - len(fresh)


#: The summary folder: summary.md and one PNG per suite.
SUMMARY_DIR = argtypes.output_dir_writing("summary.md", "*.png")


def build_parser() -> Parser:
    """``python -m benchmarks.summarize``'s command line."""
    ap = Parser(prog="python -m benchmarks.summarize", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="RUN.json", type=argtypes.inputs_then(SUMMARY_DIR, "append"),
                    help="RUN.json ... [OUT_DIR]: the last is the summary folder unless --append")
    ap.add_argument("--append", metavar="DATA.jsonl", type=argtypes.output_file_of("results data", new_parent=True),
                    help="append the runs' rows to this results data file")
    ap.add_argument("--run", type=argtypes.name, help="with --append: the run's name (its folder's name in the lab)")
    ap.add_argument("--commit", type=argtypes.name,
                    help="with --append: the commit measured (wins over the file's own: a copied tree's git "
                         "can be stale)")
    ap.add_argument("--out", metavar="OUT_DIR", type=SUMMARY_DIR, help="with --append: also write the summary there")
    for option in ("--run", "--commit", "--out"):
        ap.goes_with(option, "--append")
    ap.set_defaults(func=_summarize)
    return ap


def _summarize(args) -> int:
    if args.append and not args.run:
        raise UsageError("--append needs --run NAME (the run's name, its folder's name in the lab)")
    runs, out = (args.paths, args.out) if args.append else (args.paths[:-1], args.paths[-1])
    if not runs:
        raise UsageError("give RUN.json [RUN.json ...] OUT_DIR: no run before the summary folder")
    machine, rows = load_runs([Path(a) for a in runs])
    if args.append:
        added, there = append([Path(a) for a in runs], Path(args.append), args.run, args.commit)
        print(f"{args.append}: {added} rows appended, {there} already there (run {args.run})")
    if out:
        print(write(machine, summarize(rows), Path(out)).read_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.summarize``: every failure one line (``summarize: error: ...``)."""
    return entry.run(build_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
