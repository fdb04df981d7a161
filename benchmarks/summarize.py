"""Summarize a pytest-benchmark JSON run: per suite and shape, the best executor, segkit's share of the
measured copy bandwidth and its speedup over each competitor (geometric means), plus one PNG per suite.

    python -m benchmarks.summarize RUN.json [RUN.json ...] OUT_DIR

Several runs (a suite split across GPU calls) are summarized together; every ratio still compares
executors measured in the same run, because each case's executors run back to back in one session.
A run is a pytest-benchmark JSON (a merged sweep's too), ``scripts/gpu/perf.sh``'s ``results.json`` or a
``SEGKIT_BENCH_LOG`` JSON-lines file; each carries its machine block (sweep/machine.py), printed above
the tables. Runs on different GPU models are refused (their ratios do not belong in one column); a file
written before machine blocks existed reads as an unknown machine, named by its folder.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

from sweep.machine import FIELDS, block_of, legacy_block


class MixedMachines(Exception):
    """Runs measured on different GPU models were given together."""


def _read(path: Path) -> tuple[dict | None, list[dict]]:
    """(machine block or None, benchmark records) of any results format; a record has name, params, extra_info."""
    text = Path(path).read_text()
    if Path(path).suffix == ".jsonl":
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        blocks = [block_of(r) for r in lines if block_of(r)]
        gpus = sorted({b.get("gpu") or "?" for b in blocks})
        if len(gpus) > 1:
            raise MixedMachines(f"{path}: its lines were measured on different GPUs ({', '.join(gpus)})")
        return (blocks[0] if blocks else None), lines
    data = json.loads(text)
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
    md.write_text("\n".join(lines))
    return md


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: python -m benchmarks.summarize RUN.json [RUN.json ...] OUT_DIR")
    try:
        machine, rows = load_runs([Path(a) for a in sys.argv[1:-1]])
    except (MixedMachines, OSError, ValueError) as e:
        sys.exit(f"summarize: {e}")
    print(write(machine, summarize(rows), Path(sys.argv[-1])).read_text())


if __name__ == "__main__":
    main()
