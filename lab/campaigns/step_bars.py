"""The step table's timing bars of past work items (issue 37: segkit_ex's default not slower than stock Thunder on
any case and faster than torch.compile on the Llama-3-8B step; issue 54: the small models, host time, memory-bound
kernels, segkit's own regions), checked on step-table runs (benchmarks/model_step.py --json); moved from the step
table's ``--bars``.

    python -m lab.campaigns.step_bars RUN.json [RUN.json ...]
"""

from __future__ import annotations

import sys

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser

from benchmarks.model_table import CONTROL_VARIANT, merge, paired_ratio, speedup
from sweep.machine import KEY

STEP_BAR_CASES = ("llama3-8b-x1", "llama3-8b-x2")  # issue 37: faster than torch.compile on the Llama-3-8B step
SMALL_BAR_CASES = ("llama3.2-1b-x2", "qwen3-0.6b-x2")  # issue 54: 1.05x over torch.compile's best mode
SMALL_BAR = 1.05
MEMORY_BAR_CASES = ("llama3-8b-x1", "hf-llama-x2")  # issue 54: memory-bound kernels at most 0.9x torch.compile's
MEMORY_BAR = 0.9
OWN_VARIANT = "segkit-own"  # issue 54: segkit_ex with attention left to Thunder, its own regions alone,
OWN_BAR_FASTER = 8          # faster than stock Thunder in at least 8 of 10 paired passes on every case


def best_against(by: dict, case: str, ours: tuple[str, ...], rivals: tuple[str, ...]):
    """(our variant, rival, speedup as ``speedup`` gives it) for the best of ``ours`` against the best of
    ``rivals``: the highest over our measured variants of the lowest speed-up over the rivals; None unless one of
    ours and every rival has a step time (a rival not measured might have been the best)."""
    mine = [by[(case, v)] for v in ours if (by.get((case, v)) or {}).get("ms")]
    theirs = [by.get((case, v)) for v in rivals]
    if not mine or not all(r and r.get("ms") for r in theirs):
        return None
    best = None
    for m in mine:
        rival, got = min(((r["variant"], speedup(r, m)) for r in theirs), key=lambda x: x[1][0])
        if best is None or got[0] > best[2][0]:
            best = m["variant"], rival, got
    return best


def bars(doc: dict, variant: str = "segkit-auto") -> list[list[str]]:
    """Issue 37's timing bars on one step-table run, as [bar, met / missed / not measured, detail] rows:
    ``variant`` (segkit_ex's default) not slower than stock Thunder on any case, and faster than torch.compile on
    the Llama-3-8B cases (one met is the bar); and issue 54's on the small models: segkit_ex's default, with
    Thunder's CUDA graphs where they win, at least 1.05x over torch.compile's best mode (default or
    reduce-overhead); and issue 54's on every case: segkit_ex's host ms per step at or below stock Thunder's, and
    on the Llama-3-8B x1 and HF Llama cases its memory-bound kernel time per step (the breakdown column, from a
    profile) at most 0.9x torch.compile's; and where the run has the ``segkit-own`` row (attention left to Thunder),
    that row faster than stock Thunder in at least 8 of 10 paired passes. A case without the rows or columns a bar
    compares is "not measured", never met."""
    by = {(r["case"], r["variant"]): r for r in doc["rows"]}
    k = doc["run"].get("back_to_back") or 1
    timing = f"{doc[KEY].get('gpu')}, " + ("each step alone" if k == 1 else f"{k} steps back to back")
    out = []
    for case in dict.fromkeys(r["case"] for r in doc["rows"]):
        ours = by.get((case, variant))
        rivals = [("thunder", "not slower than stock Thunder", lambda x: x >= 1.0)]
        if case in STEP_BAR_CASES:
            rivals.append(("compile", "faster than torch.compile", lambda x: x > 1.0))
        for rival, what, ok in rivals:
            got = speedup(by.get((case, rival)), ours) if ours else None
            if got is None:
                out.append([f"{case}: {what}", "not measured", timing])
                continue
            ratio, faster, passes = got
            how = "step medians" if faster is None else f"paired, faster in {faster}/{passes}"
            out.append([f"{case}: {what}", "met" if ok(ratio) else "missed", f"{ratio:.3f}x ({how}); {timing}"])
        if (case, OWN_VARIANT) in by:
            out.append(_own_bar(case, by[(case, OWN_VARIANT)], by.get((case, "thunder")), timing,
                                by.get((case, CONTROL_VARIANT))))
        out.append(_host_bar(case, ours, by.get((case, "thunder")), timing))
        if case in MEMORY_BAR_CASES:
            out.append(_column_bar(f"{case}: memory-bound kernels at most {MEMORY_BAR}x torch.compile's", ours,
                                   by.get((case, "compile")), lambda r: (r.get("breakdown") or {}).get("memory_bound"),
                                   MEMORY_BAR, timing))
        if case in SMALL_BAR_CASES:
            what = f"{case}: {SMALL_BAR}x over torch.compile's best mode"
            got = best_against(by, case, (variant, "segkit-graphs"), ("compile", "compile-graphs"))
            if got is None:
                out.append([what, "not measured", timing])
            else:
                mine, rival, (ratio, faster, passes) = got
                how = "step medians" if faster is None else f"paired, faster in {faster}/{passes}"
                out.append([what, "met" if ratio >= SMALL_BAR else "missed",
                            f"{ratio:.3f}x ({mine} against {rival}; {how}); {timing}"])
    return out


def _own_bar(case: str, own: dict, thunder: dict | None, timing: str, control: dict | None = None) -> list[str]:
    """[bar, result, detail] for "segkit_ex with attention left to Thunder faster than stock Thunder in at least
    OWN_BAR_FASTER of 10 paired passes": its norms and RoPE must pay on their own. Paired passes only (rounds >= 2);
    step medians alone are "not measured". Where the run has the A/A control (``control``: stock Thunder compiled
    again, paired with it too), the detail quotes it: a ratio within the control's is not a resolved gain."""
    what = f"{case}: attention left to Thunder, faster than stock Thunder in {OWN_BAR_FASTER}/10 paired passes"
    got = speedup(thunder, own) if thunder else None
    if got is None or got[1] is None:
        return [what, "not measured", timing + ("" if got is None else "; no paired passes (--rounds 2 or more)")]
    ratio, faster, passes = got
    met = ratio > 1.0 and faster * 10 >= OWN_BAR_FASTER * passes
    detail = f"{ratio:.3f}x (paired, faster in {faster}/{passes})"
    same = speedup(thunder, control) if control else None
    if same is not None and same[1] is not None:
        detail += f"; A/A control {CONTROL_VARIANT} {same[0]:.3f}x (faster in {same[1]}/{same[2]})"
    return [what, "met" if met else "missed", f"{detail}; {timing}"]


def _host_bar(case: str, ours: dict | None, thunder: dict | None, timing: str) -> list[str]:
    """[bar, result, detail] for "host ms at or below stock Thunder's": paired over the interleaved passes where
    both rows have their host times (the median over passes of ours / Thunder's, and in how many passes ours was
    lower), else the two medians (``_column_bar``)."""
    what = f"{case}: host ms at or below stock Thunder's"
    mine, theirs = ((r or {}).get("host_steps") or [] for r in (ours, thunder))
    paired = paired_ratio(mine, theirs) if mine else None  # (median of ours / Thunder's, passes Thunder's was lower)
    if paired is None:
        return _column_bar(what, ours, thunder, lambda r: r.get("host_ms"), 1.0, timing)
    ratio, lower = paired[0], len(mine) - paired[1]
    return [what, "met" if ratio <= 1.0 else "missed",
            f"{ratio:.3f}x (paired, at or below in {lower}/{len(mine)}; medians {ours['host_ms']:.2f} against "
            f"{thunder['host_ms']:.2f}); {timing}"]


def _column_bar(what: str, ours: dict | None, rival: dict | None, value, at_most: float, timing: str) -> list[str]:
    """[bar, result, detail] for "ours' ``value`` at most ``at_most`` x the rival's" (lower is better)."""
    mine, theirs = (None if r is None else value(r) for r in (ours, rival))
    if mine is None or not theirs:
        return [what, "not measured", timing]
    ratio = mine / theirs
    return [what, "met" if ratio <= at_most else "missed", f"{ratio:.3f}x ({mine:.2f} against {theirs:.2f}); {timing}"]


def build_parser() -> Parser:
    """``python -m lab.campaigns.step_bars``'s command line (built through segkit.cli, as every entry point is)."""
    parser = Parser(prog="python -m lab.campaigns.step_bars", description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=argtypes.existing_file, metavar="STEP.json",
                        help="step-table JSON files (gzipped or not)")
    parser.set_defaults(func=_step_bars)
    return parser


def _step_bars(args) -> int:
    from tabulate import tabulate

    rows = [row for p in args.runs for row in bars(merge([p]))]
    print(tabulate(rows, headers=["bar", "result", "detail"], tablefmt="github"))
    return 0


def main(argv: list[str] | None = None) -> int:
    """A file that is not a step table's JSON (a gate record) is one line naming it."""
    return entry.run(build_parser, argv)


if __name__ == "__main__":
    sys.exit(main())
