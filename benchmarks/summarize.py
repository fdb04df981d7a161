"""Summarize a pytest-benchmark JSON run: per suite and shape, the best executor, segkit's share of the
measured copy bandwidth and its speedup over each competitor (geometric means), plus one PNG per suite.

    python -m benchmarks.summarize RUN.json [RUN.json ...] OUT_DIR

Several runs (a suite split across GPU calls) are summarized together; every ratio still compares
executors measured in the same run, because each case's executors run back to back in one session.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate


def load(path: Path) -> tuple[dict, list[dict]]:
    data = json.loads(Path(path).read_text())
    rows = []
    for b in data.get("benchmarks", []):
        p, info = b.get("params") or {}, b.get("extra_info") or {}
        if "kernel_us_median" not in info:
            continue
        params = {k: _plain(v) for k, v in p.items()}
        case = tuple(params[k] for k in sorted(params) if k != "executor")
        rows.append({"suite": b["name"].split("[")[0], "case": case, "params": params, "executor": p["executor"],
                     "us": info["kernel_us_median"], "pct": info.get("pct_of_copy_bw"), "kernels": info.get("kernels"),
                     "wall_us": info.get("wall_us_median"), "wall_us_runtime": info.get("wall_us_runtime")})
    return data.get("machine_info", {}), rows


def _plain(value) -> str:
    """pytest-benchmark stores a torch.dtype parameter as 'UNSERIALIZABLE[torch.bfloat16]': keep 'bfloat16'."""
    return str(value).removeprefix("UNSERIALIZABLE[").removesuffix("]").removeprefix("torch.")


def load_runs(paths: list[Path]) -> tuple[dict, list[dict]]:
    """Rows of every run; the machine of the first, with each run's measured copy bandwidth listed."""
    machines, rows = [], []
    for path in paths:
        machine, run_rows = load(path)
        machines.append(machine)
        rows += run_rows
    machine = dict(machines[0]) if machines else {}
    bws = [m.get("copy_gbs") for m in machines if m.get("copy_gbs")]
    if bws:
        machine["copy_gbs"] = " / ".join(f"{b:.0f}" for b in bws) + " GB/s (per run)"
    return machine, rows


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
    lines = ["# Benchmark summary", "", "Machine: " + ", ".join(f"{k} {v}" for k, v in sorted(machine.items())
                                                             if k in ("gpu", "driver", "torch", "nvfuser_direct", "lightning-thunder",
                                                                      "liger-kernel", "quack-kernels", "copy_gbs")), ""]
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
    machine, rows = load_runs([Path(a) for a in sys.argv[1:-1]])
    print(write(machine, summarize(rows), Path(sys.argv[-1])).read_text())


if __name__ == "__main__":
    main()
