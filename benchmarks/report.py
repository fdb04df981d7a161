"""The results page and the README's table, generated from the results data (benchmarks/data/results.jsonl.gz):

    python -m benchmarks.report            # rewrite benchmarks/RESULTS.md and README.md's table
    python -m benchmarks.report --check    # exit 1, naming the file, where either differs from what the data gives

The current numbers: for each suite, GPU and case, the rows of the run file appended last that measured that
case side by side (a later comparison of the same case supersedes an earlier one; a run of one executor alone, as
the gate's step, supersedes none; the rest stay in the data, and in the lab). A table
row's numbers all come from that one run file, so every ratio compares executors measured side by side. Step rows
run on several ranks (their case has a ``world_size``: benchmarks/model_step_dist.py) have a table of their own. The
README's table lies between the markers ``BEGIN`` and ``END``; a README without them is left alone.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from tabulate import tabulate

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.files import write_atomic
from sweep.machine import FIELDS, ROOT
from benchmarks.summarize import geomean, read_data

DATA = Path("benchmarks/data/results.jsonl.gz")
RESULTS = Path("benchmarks/RESULTS.md")
README = Path("README.md")
BEGIN, END = "<!-- results-table:begin -->", "<!-- results-table:end -->"
COMMAND = "python -m benchmarks.report"
SEGKIT = "segkit"
STEP_SEGKIT = "segkit-auto"  # segkit_ex's default in the step table
SUITES = {  # suite -> what its kernel times are
    "norm_fwd": "RMSNorm / layer norm forward, no autograd (y alone)",
    "norm_bwd": "RMSNorm / layer norm backward (dx, dw (, db) from the saved statistics)",
    "qkv_split_rope": "litgpt's qkv split + RoPE, forward / backward",
    "qk_norm_rope": "QK-norm + RoPE (Qwen3, Gemma3, OLMo2 forms), forward with autograd / backward",
    "fp8_amax": "fp8 amax statistics (tensorwise + rowwise; rowwise + columnwise + tensorwise)",
}
# the README's headline cases: (suite, case, label)
HEADLINE = [
    ("norm_fwd", {"kind": "rmsnorm", "shape": "mixorder_576000x384", "dtype": "bfloat16"}, "RMSNorm fwd 576000x384"),
    ("norm_fwd", {"kind": "layernorm", "shape": "mixorder_576000x384", "dtype": "bfloat16"},
     "LayerNorm fwd 576000x384"),
    ("norm_bwd", {"kind": "rmsnorm", "shape": "mixorder_576000x384", "dtype": "bfloat16"}, "RMSNorm bwd 576000x384"),
    ("norm_bwd", {"kind": "layernorm", "shape": "mixorder_576000x384", "dtype": "bfloat16"},
     "LayerNorm bwd 576000x384"),
    ("qkv_split_rope", {"shape": "Llama-2-13b-hf_bs2", "dtype": "bfloat16", "mode": "forward"},
     "qkv split + RoPE fwd, Llama-2-13b bs2"),
    ("qkv_split_rope", {"shape": "Llama-2-13b-hf_bs2", "dtype": "bfloat16", "mode": "backward"},
     "qkv split + RoPE bwd, Llama-2-13b bs2"),
    ("fp8_amax", {"shape": "seed_12x34x56", "dtype": "bfloat16", "amaxes": "rowwise+columnwise+tensorwise"},
     "fp8 amaxes row+col+all, 12x34x56"),
    ("model_step", {"model": "llama3-8b-x1"}, "training step, litgpt Llama-3-8B T=4096"),
]
RIVALS = [("torch.compile", "compile"), ("thunder", "thunder"), ("liger", None), ("quack", None)]  # (suite, step)


def _natural(text: str) -> list:
    """Sort key with numbers as numbers (sweep_4096x256 before sweep_16384x256)."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", str(text))]


def _case_key(case: dict) -> list:
    return [_natural(v) for _, v in sorted(case.items())]


def _step_label(case: dict) -> str:
    """A step row's model cell: its label, and how many steps were timed back to back where that was more than one
    (each step alone otherwise: the two are different measurements of one model)."""
    k = case.get("back_to_back", 1)
    return f"{case.get('label')}, {k} steps back to back" if k > 1 else str(case.get("label"))


def current(rows: list[dict]) -> list[dict]:
    """The rows of, per (suite, GPU, case), the run file appended last that measured that case side by side (more
    than one executor); one that measured it alone (the gate's step, segkit's variant only) supersedes nothing
    unless no run compared the case."""
    executors: dict[tuple, set] = defaultdict(set)
    for r in rows:
        executors[r["suite"], r["gpu"], _case_id(r), r["run"], r["source"]].add(r["executor"])
    latest, alone = {}, {}
    for r in rows:
        case, file = (r["suite"], r["gpu"], _case_id(r)), (r["run"], r["source"])
        (latest if len(executors[(*case, *file)]) > 1 else alone)[case] = file
    pick = alone | latest
    return [r for r in rows if pick[r["suite"], r["gpu"], _case_id(r)] == (r["run"], r["source"])]


def _case_id(r: dict) -> str:
    return repr(sorted(r["case"].items()))


def _grouped(rows: list[dict]) -> dict[tuple[str, str], dict[str, dict[str, dict]]]:
    """(suite, gpu) -> case id -> executor -> row (current rows only)."""
    out: dict = defaultdict(lambda: defaultdict(dict))
    for r in current(rows):
        out[r["suite"], r["gpu"]][_case_id(r)][r["executor"]] = r
    return out


def _us(v) -> str:
    return "" if v is None else f"{v:.1f}"


def _speedup(ref: dict | None, ours: dict | None) -> tuple[float, int | None, int] | None:
    """``ours``' speed-up over ``ref``: kernel suites the ratio of kernel times; step rows as the step table
    computes it (paired over the interleaved passes where both have them)."""
    if not ref or not ours:
        return None
    if ours["suite"] == "model_step":
        from benchmarks.model_table import speedup

        return speedup(ref["metrics"], ours["metrics"])
    a, b = ref["metrics"].get("us"), ours["metrics"].get("us")
    return (a / b, None, 0) if a and b else None


def _ratio(got) -> str:
    if got is None:
        return ""
    ratio, faster, passes = got
    return f"{ratio:.2f}x" if faster is None else f"{ratio:.3f}x ({faster}/{passes})"


def _machines(groups: dict, gpu: str) -> str:
    """The machine block of each current run file of ``gpu`` (``groups``: ``_grouped``'s), one table row per
    file."""
    files = {}
    for (suite, g), cases in groups.items():
        if g != gpu:
            continue
        for r in (r for ex in cases.values() for r in ex.values()):
            files.setdefault((r["run"], r["source"]), (r, set()))[1].add(suite)
    keys = [k for k in FIELDS if k not in ("gpu", "date", "commit") and any(
        r["machine"].get(k) is not None for r, _ in files.values())]
    table = [[run, source, ", ".join(sorted(suites)), r["date"], r["commit"],
              *[_field(r["machine"].get(k)) for k in keys]]
             for (run, source), (r, suites) in sorted(files.items())]
    return tabulate(table, headers=["run", "file", "suites", "date", "commit", *keys], tablefmt="github",
                    disable_numparse=True)


def _field(v) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k}: {x:.0f}" for k, x in sorted(v.items()))
    return "" if v is None else str(v)


def _kernel_table(cases: dict[str, dict[str, dict]]) -> tuple[str, list[str]]:
    """A kernel suite's table on one GPU (a row per case) and its geometric-mean lines."""
    executors = sorted({e for ex in cases.values() for e in ex if e != SEGKIT})
    some = next(iter(next(iter(cases.values())).values()))
    params = [k for k in some["case"] if k != "dtype"] + ["dtype"]
    table, speedups = [], defaultdict(list)
    for _, ex in sorted(cases.items(), key=lambda kv: _case_key(next(iter(kv[1].values()))["case"])):
        any_row = next(iter(ex.values()))
        seg = ex.get(SEGKIT)
        fastest = min(ex.values(), key=lambda r: r["metrics"]["us"])["executor"]
        pct = seg["metrics"].get("pct_copy_bw") if seg else None
        row = [*[any_row["case"].get(k, "") for k in params], _us(seg and seg["metrics"]["us"]),
               "" if pct is None else f"{pct:.0f}"]
        for e in executors:
            row.append(_us(ex[e]["metrics"]["us"]) if e in ex else "")
            if seg and e in ex:
                speedups[e].append(ex[e]["metrics"]["us"] / seg["metrics"]["us"])
        table.append(row + [fastest, any_row["run"]])
    headers = [*params, "segkit us", "segkit % copy bw", *[f"{e} us" for e in executors], "fastest", "run"]
    lines = [f"* {e}: {geomean(v):.2f}x (geometric mean of its time over segkit's, {len(v)} case{'s' * (len(v) != 1)}; "
             f"segkit faster in {sum(x > 1 for x in v)})" for e, v in sorted(speedups.items())]
    return tabulate(table, headers=headers, tablefmt="github", disable_numparse=True), lines


def _step_table(cases: dict[str, dict[str, dict]]) -> str:
    table = []
    for _, ex in sorted(cases.items(), key=lambda kv: _case_key(next(iter(kv[1].values()))["case"])):
        for variant, r in sorted(ex.items()):
            m = r["metrics"]
            claims = m.get("claims") or {}
            table.append([_step_label(r["case"]), variant, "" if m.get("ms") is None else f"{m['ms']:.2f}",
                          _ratio(_speedup(ex.get("thunder"), r)) if variant != "thunder" else "",
                          _ratio(_speedup(ex.get("compile"), r)) if variant != "compile" else "",
                          "" if m.get("host_ms") is None else f"{m['host_ms']:.2f}",
                          "" if m.get("peak_gib") is None else f"{m['peak_gib']:.2f}",
                          "" if m.get("saved_gib") is None else f"{m['saved_gib']:.3g}",
                          m.get("kernels", ""),
                          f"norms {claims['norm_fw']}/{claims['norm_bw']}, RoPE {claims['rope_fw']}/{claims['rope_bw']}"
                          if claims else "",
                          "" if m.get("grad_err") is None else f"{m['grad_err']:.1e}", m.get("note", ""),
                          r["run"] + "/" + r["source"].rsplit("/", 1)[0]
                          if "/" in r["source"] else r["run"]])
    return tabulate(table, headers=["model", "variant", "step ms", "vs thunder", "vs compile", "host ms", "peak GiB",
                                    "saved for bw GiB", "kernels", "segkit claims fw/bw", "grad err", "note", "run"],
                    tablefmt="github", disable_numparse=True)


def _ranks(ex: dict[str, dict]) -> int | None:
    """The number of ranks a step case ran on (benchmarks/model_step_dist.py's rows), None for the one-GPU table."""
    return next(iter(ex.values()))["case"].get("world_size")


def _ranks_table(cases: dict[str, dict[str, dict]]) -> str:
    """The step rows on N ranks, a row per (model, ranks, variant)."""
    table = []
    for _, ex in sorted(cases.items(), key=lambda kv: _case_key(next(iter(kv[1].values()))["case"])):
        for variant, r in sorted(ex.items()):
            m, agree = r["metrics"], r["metrics"].get("claims_agree")
            claims = m.get("claims") or {}
            table.append([r["case"].get("label"), r["case"]["world_size"], variant,
                          "" if m.get("tokens_per_s") is None else f"{m['tokens_per_s']:.1f}",
                          "" if m.get("ms") is None else f"{m['ms']:.2f}",
                          _ratio(_speedup(ex.get("thunder-fsdp"), r)) if variant != "thunder-fsdp" else "",
                          _ratio(_speedup(ex.get("compile-fsdp2"), r)) if variant != "compile-fsdp2" else "",
                          "" if m.get("peak_gib") is None else f"{m['peak_gib']:.2f}",
                          f"norms {claims['norm_fw']}/{claims['norm_bw']}, RoPE {claims['rope_fw']}/{claims['rope_bw']}"
                          if claims else "", "" if agree is None else ("yes" if agree else "no"),
                          "" if m.get("grad_err") is None else f"{m['grad_err']:.1e}", m.get("note", ""), r["run"]])
    return tabulate(table, headers=["model", "ranks", "variant", "tokens/s per GPU", "step ms", "vs thunder-fsdp",
                                    "vs compile-fsdp2", "peak GiB per rank", "segkit claims fw/bw", "ranks agree",
                                    "grad err", "note", "run"], tablefmt="github", disable_numparse=True)


#: The step breakdown's columns (benchmarks.model_measure.step_breakdown: us per step), in the page's order.
BREAKDOWN = (("attention", "attention"), ("gemm", "GEMMs"), ("nvfuser_memory_bound", "nvFuser memory-bound"),
             ("other_memory_bound", "other memory-bound"), ("memory_bound", "memory-bound"), ("idle", "idle"),
             ("lead_in", "host lead-in"), ("step", "step"))


def _breakdown_table(cases: dict[str, dict[str, dict]]) -> str | None:
    """Where each profiled step's time goes (the rows with a ``breakdown``), us per step, and its memory-bound time
    over torch.compile's in the same run; None where no row has one."""
    table = []
    for _, ex in sorted(cases.items(), key=lambda kv: _case_key(next(iter(kv[1].values()))["case"])):
        compile_mb = (ex.get("compile", {}).get("metrics", {}).get("breakdown") or {}).get("memory_bound")
        for variant, r in sorted(ex.items()):
            b = r["metrics"].get("breakdown") or {}
            if not b:
                continue
            mb = b.get("memory_bound")
            table.append([_step_label(r["case"]), variant, *("" if b.get(k) is None else f"{b[k]:.1f}"
                                                             for k, _ in BREAKDOWN),
                          f"{mb / compile_mb:.3f}" if mb is not None and compile_mb else "", r["run"]])
    if not table:
        return None
    return tabulate(table, headers=["model", "variant", *(f"{name} us" for _, name in BREAKDOWN),
                                    "memory-bound / compile's", "run"], tablefmt="github", disable_numparse=True)


def results_md(rows: list[dict]) -> str:
    """benchmarks/RESULTS.md."""
    groups = _grouped(rows)
    gpus = sorted({g for _, g in groups})
    out = ["# Benchmark results", "",
           f"Generated from `{DATA}` by `{COMMAND}`; do not edit (`{COMMAND} --check` fails when this page differs "
           f"from the data). How a number is made: `benchmarks/README.md`. Each row names its run; the lab's index "
           "lists every run by that name with its folder: the files it was read from, its README and its logs.", "",
           "Kernel times are CUPTI device time (median of 20 rounds, cold L2), in us; `% copy bw` is the case's "
           "bytes floor at the device-to-device copy bandwidth measured in the same run; \"faster\" is the rival's "
           "time over segkit's (above 1: segkit is faster), over cases measured in the same run.", ""]
    for gpu in gpus:
        out += [f"## {gpu}", "", "Machine blocks of the runs below:", "", _machines(groups, gpu), ""]
        for suite in [*SUITES, *sorted({s for s, _ in groups if s not in SUITES and s != "model_step"})]:
            if (suite, gpu) not in groups:
                continue
            table, lines = _kernel_table(groups[suite, gpu])
            out += [f"### {suite} ({gpu})", "", SUITES.get(suite, suite) + ".", "", *lines, "", table, ""]
        one_rank = {k: ex for k, ex in groups.get(("model_step", gpu), {}).items() if not _ranks(ex)}
        ranks = {k: ex for k, ex in groups.get(("model_step", gpu), {}).items() if _ranks(ex)}
        if one_rank:
            out += [f"### Training step ({gpu})", "",
                    "bf16 training steps (grads set to None + forward + backward) of real models; step ms by CUDA "
                    "events, median of rounds; the vs columns pair the variants' interleaved passes where the run "
                    "has them (median of the reference's step over the row's, faster in k of n passes), else the "
                    "ratio of step medians; segkit-auto is Thunder + segkit_ex as it ships.", "",
                    _step_table(one_rank), ""]
            breakdown = _breakdown_table(one_rank)
            if breakdown is not None:
                out += ["Where each profiled step's time goes (`segkit trace breakdown` on one profiled step of the "
                        "row's run), us per step: memory-bound is every kernel but GEMMs and attention; idle is the "
                        "GPU's time between the step's kernels; host lead-in, from the step's start on the host to "
                        "its first kernel.", "", breakdown, ""]
        if ranks:
            out += [f"### Training step on several ranks ({gpu})", "",
                    "Training steps sharded over the ranks of one torchrun (benchmarks/model_step_dist.py), each "
                    "rank on its own batch: tokens/s per GPU and step ms of the slowest rank; peak GiB the highest "
                    "rank's; segkit claims the fewest any rank made, and whether every rank made the same; grad "
                    "error against single-process eager over every rank's batch; the vs columns as above, at the "
                    "same number of ranks.", "", _ranks_table(ranks), ""]
    return "\n".join(out).rstrip() + "\n"


def _headline_match(case: dict, want: dict) -> bool:
    """``case`` is the headline case ``want``: its keys agree, each step timed alone unless ``want`` says otherwise."""
    return case.items() >= want.items() and case.get("back_to_back", 1) == want.get("back_to_back", 1)


def readme_table(rows: list[dict]) -> str:
    """The README's compact table: per GPU, segkit against each rival on the headline cases (ratios: the rival's
    time over segkit's, measured in the same run)."""
    groups = _grouped(rows)
    table = []
    for gpu in sorted({g for _, g in groups}):
        for suite, case, label in HEADLINE:
            cases = groups.get((suite, gpu), {})
            ex = next((e for e in cases.values() if _headline_match(next(iter(e.values()))["case"], case)), None)
            ours = ex and ex.get(STEP_SEGKIT if suite == "model_step" else SEGKIT)
            if not ours:
                continue
            unit, value = ("ms", ours["metrics"].get("ms")) if suite == "model_step" else ("us", ours["metrics"]["us"])
            cells = []
            for rival, step_rival in RIVALS:
                got = _speedup(ex.get(step_rival if suite == "model_step" else rival), ours)
                cells.append(_ratio(got))
            table.append([gpu.removeprefix("NVIDIA "), label, f"{value:.2f} {unit}" if unit == "ms" else
                          f"{value:.1f} {unit}", *cells])
    note = (f"Generated by `{COMMAND}` from `{DATA}`; every number with its run and machine: `{RESULTS}`. "
            "Ratios: the rival's time over segkit's, measured in the same run (above 1: segkit is faster); the step "
            "row is Thunder + segkit_ex (its default), paired over interleaved passes (faster in k of n). Empty: not "
            "measured in that run.")
    body = tabulate(table, headers=["GPU", "case", "segkit", "vs torch.compile", "vs Thunder", "vs Liger",
                                    "vs Quack"], tablefmt="github", disable_numparse=True)
    return f"{note}\n\n{body}\n"


def splice(readme: str, table: str) -> str | None:
    """``readme`` with ``table`` between the markers; None when it has no markers."""
    if BEGIN not in readme or END not in readme:
        return None
    if readme.count(BEGIN) > 1 or readme.count(END) > 1 or readme.index(END) < readme.index(BEGIN):
        line = lambda marker: readme[:readme.index(marker)].count("\n") + 1  # noqa: E731
        raise ValueError(f"{README}: the table markers are out of order or repeated ({END} at line {line(END)}, "
                         f"{BEGIN} at line {line(BEGIN)}): keep one {BEGIN} line before one {END} line")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table}{END}{tail}"


def generate(root: Path) -> dict[Path, str | None]:
    """path -> the text the data gives (None: README.md without markers)."""
    rows = read_data(root / DATA)
    if not rows:
        raise ValueError(f"{root / DATA} holds no rows: append a run first (python -m benchmarks.summarize --append)")
    for r in rows:
        us = r["metrics"].get("us")
        if r["suite"] != "model_step" and not isinstance(us, (int, float)):
            raise ValueError(f"{root / DATA}: the row {r['suite']} {r['case']} {r['executor']} (run {r['run']}, "
                             f"source {r['source']}) has no metrics.us: every kernel row carries its time; fix or "
                             "drop the row")
    readme = root / README
    return {RESULTS: results_md(rows),
            README: splice(readme.read_text(), readme_table(rows)) if readme.exists() else None}


def build_parser() -> Parser:
    """``python -m benchmarks.report``'s command line."""
    ap = Parser(prog=COMMAND, description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 where a generated file differs from the data")
    ap.add_argument("--root", type=argtypes.existing_dir, default=ROOT, help="the repository (default: this one)")
    ap.set_defaults(func=_report)
    return ap


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.report``: a row without provenance, a line that is not JSON: one line, exit 1."""
    return entry.run(build_parser, argv)


def _report(args) -> int:
    texts = generate(args.root)
    drifted = []
    for rel, text in texts.items():
        if text is None:
            have = "has no" if (args.root / rel).exists() else "is absent: no"
            print(f"report: {rel} {have} {BEGIN} ... {END} markers: left alone")
            continue
        path = args.root / rel
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            drifted.append(rel)
        else:
            write_atomic(path, text)
            print(f"report: wrote {rel}")
    if drifted:
        print(f"report: {', '.join(map(str, drifted))} differ{'s' if len(drifted) == 1 else ''} from what {DATA} "
              f"gives; run `{COMMAND}` and commit the result", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
