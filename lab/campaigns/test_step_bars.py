"""lab/campaigns/step_bars.py: the step table's timing bars of past work items, on hand-made step-table documents
(moved from tests/test_model_step.py with ``--bars``).

    python -m pytest lab/campaigns
"""

from __future__ import annotations

import statistics

from lab.campaigns import step_bars


def test_step_bars_pair_the_passes_and_never_pass_a_case_not_measured():
    """``--bars``: segkit_ex's default against stock Thunder on every case (not slower: ratio >= 1) and against
    torch.compile on the Llama-3-8B cases (faster), paired over the interleaved passes where both rows have them,
    else from the step medians; a missing rival is "not measured"."""
    from sweep.machine import KEY

    def row(case, variant, ms, steps=None):
        return {"case": case, "variant": variant, "ms": ms, "ms_steps": steps or []}

    doc = {KEY: {"gpu": "Test GPU"}, "run": {"back_to_back": 5}, "rows": [
        row("llama3-8b-x1", "thunder", 11.0, [11.0, 11.0, 11.0]),
        row("llama3-8b-x1", "compile", 9.0, [9.0, 10.0, 10.0]),  # faster by median, slower in 2 of 3 passes
        row("llama3-8b-x1", "segkit-auto", 9.5, [9.5, 9.5, 9.5]),
        row("pythia-1b-x2", "thunder", 5.0),
        row("pythia-1b-x2", "segkit-auto", 5.5),  # no passes: the step medians decide
        row("qwen3-8b-x1", "segkit-auto", 9.0)]}
    got = {bar: (result, detail) for bar, result, detail in step_bars.bars(doc)}
    assert got["llama3-8b-x1: not slower than stock Thunder"][0] == "met"
    result, detail = got["llama3-8b-x1: faster than torch.compile"]
    assert result == "met" and detail.startswith("1.053x (paired, faster in 2/3); Test GPU, 5 steps back to back")
    assert got["pythia-1b-x2: not slower than stock Thunder"][0] == "missed"
    assert "step medians" in got["pythia-1b-x2: not slower than stock Thunder"][1]
    assert "pythia-1b-x2: faster than torch.compile" not in got  # only the Llama-3-8B cases carry that bar
    assert got["qwen3-8b-x1: not slower than stock Thunder"][0] == "not measured"


def test_small_model_bar_takes_each_sides_best_and_never_passes_a_case_not_measured():
    """``--bars`` on the small models: segkit_ex's default or its CUDA-graph variant, whichever does better, at
    least 1.05x over the faster of torch.compile's modes (default, reduce-overhead); without both of
    torch.compile's rows a case is "not measured", however fast segkit_ex was."""
    from sweep.machine import KEY

    def row(case, variant, ms):
        return {"case": case, "variant": variant, "ms": ms, "ms_steps": [ms] * 3}

    rows = [row("llama3.2-1b-x2", "compile", 10.0), row("llama3.2-1b-x2", "compile-graphs", 9.0),
            row("llama3.2-1b-x2", "segkit-auto", 8.8),  # 1.023x over compile-graphs alone: short of the bar
            row("llama3.2-1b-x2", "segkit-graphs", 8.4),  # 1.071x over compile-graphs
            row("qwen3-0.6b-x2", "compile", 10.0), row("qwen3-0.6b-x2", "segkit-auto", 5.0),
            row("llama3-8b-x1", "compile", 10.0), row("llama3-8b-x1", "compile-graphs", 9.0),
            row("llama3-8b-x1", "segkit-auto", 5.0)]
    bar = "llama3.2-1b-x2: 1.05x over torch.compile's best mode"

    def got(rows):
        doc = {KEY: {"gpu": "Test GPU"}, "run": {}, "rows": rows}
        return {b: (result, detail) for b, result, detail in step_bars.bars(doc)}

    result, detail = got(rows)[bar]
    assert result == "met" and detail.startswith("1.071x (segkit-graphs against compile-graphs; paired, faster in 3/3)")
    result, detail = got([r for r in rows if r["variant"] != "segkit-graphs"])[bar]
    assert result == "missed" and detail.startswith("1.023x (segkit-auto against compile-graphs")
    without = got([r for r in rows if r["variant"] != "compile-graphs" or r["case"] != "llama3.2-1b-x2"])
    assert without[bar][0] == "not measured"
    bars = got(rows)
    assert bars["qwen3-0.6b-x2: 1.05x over torch.compile's best mode"][0] == "not measured"  # no compile-graphs
    assert not any(b.startswith("llama3-8b-x1: 1.05x") for b in bars)  # the Llama-3-8B cases have their own bar
    assert "llama3.2-1b-x2: faster than torch.compile" not in bars


def test_host_and_memory_bound_bars_compare_the_columns_and_never_pass_a_column_not_measured():
    """Issue 54's column bars: segkit_ex's host ms at or below stock Thunder's on every case; its memory-bound
    kernel time (the breakdown column) at most 0.9x torch.compile's on Llama-3-8B x1 and the HF Llama; a row
    without the column (no host time on CPU, no profile) is "not measured"."""
    from sweep.machine import KEY

    def row(case, variant, host=None, memory=None):
        return {"case": case, "variant": variant, "ms": 1.0, "ms_steps": [], "host_ms": host,
                "breakdown": {} if memory is None else {"memory_bound": memory}}

    doc = {KEY: {"gpu": "Test GPU"}, "run": {}, "rows": [
        row("llama3-8b-x1", "thunder", 3.32, 883.0), row("llama3-8b-x1", "compile", 2.51, 670.2),
        row("llama3-8b-x1", "segkit-auto", 3.06, 705.8),
        row("hf-llama-x2", "thunder", 9.0), row("hf-llama-x2", "compile", 5.0, 600.0),
        row("hf-llama-x2", "segkit-auto", 9.5, 500.0),
        row("pythia-1b-x2", "thunder"), row("pythia-1b-x2", "segkit-auto", 4.0, 100.0)]}
    got = {bar: (result, detail) for bar, result, detail in step_bars.bars(doc)}
    assert got["llama3-8b-x1: host ms at or below stock Thunder's"] == ("met", "0.922x (3.06 against 3.32); Test GPU, "
                                                                        "each step alone")
    result, detail = got["llama3-8b-x1: memory-bound kernels at most 0.9x torch.compile's"]
    assert result == "missed" and detail.startswith("1.053x (705.80 against 670.20)")
    assert got["hf-llama-x2: host ms at or below stock Thunder's"][0] == "missed"
    assert got["hf-llama-x2: memory-bound kernels at most 0.9x torch.compile's"][0] == "met"  # 0.833x
    assert got["pythia-1b-x2: host ms at or below stock Thunder's"][0] == "not measured"  # Thunder's host: none
    assert not any(b.startswith("pythia-1b-x2: memory-bound") for b in got)


def test_own_regions_bar_wants_8_of_10_paired_passes_over_stock_thunder():
    """Issue 54: segkit_ex with attention left to Thunder (``segkit-own``: its norms and RoPE alone) faster than
    stock Thunder in at least 8 of 10 paired passes; 7 of 10 misses however good the median, step medians alone
    (one round) are "not measured", and a run without the row carries no such bar."""
    from sweep.machine import KEY

    thunder = [10.0] * 10

    def bars(own_steps, ms=None, control=None):
        rows = [{"case": "llama3-8b-x1", "variant": "thunder", "ms": 10.0, "ms_steps": thunder},
                {"case": "llama3-8b-x1", "variant": "segkit-own", "ms": ms or statistics.median(own_steps or [9.0]),
                 "ms_steps": own_steps}]
        if control:
            rows.append({"case": "llama3-8b-x1", "variant": "thunder-again", "ms": statistics.median(control),
                         "ms_steps": control})
        doc = {KEY: {"gpu": "Test GPU"}, "run": {}, "rows": rows}
        return {b: (result, detail) for b, result, detail in step_bars.bars(doc)}

    bar = "llama3-8b-x1: attention left to Thunder, faster than stock Thunder in 8/10 paired passes"
    result, detail = bars([9.9] * 8 + [10.1] * 2)[bar]
    assert result == "met" and detail.startswith("1.010x (paired, faster in 8/10)")
    result, detail = bars([9.0] * 7 + [10.5] * 3)[bar]
    assert result == "missed" and "faster in 7/10" in detail
    assert bars([], ms=9.0)[bar][0] == "not measured"
    with_control = bars([9.9] * 8 + [10.1] * 2, control=[9.95] * 7 + [10.05] * 3)[bar]
    assert with_control[0] == "met" and "A/A control thunder-again 1.005x (faster in 7/10)" in with_control[1]
    assert "A/A" not in result and "A/A" not in bars([9.9] * 10)[bar][1]  # no control row, no control quoted
    assert not any("attention left to Thunder" in b for b in step_bars.bars(
        {KEY: {"gpu": "Test GPU"}, "run": {}, "rows": [{"case": "llama3-8b-x1", "variant": "thunder", "ms": 10.0}]}))


def test_host_bar_pairs_the_passes_where_both_rows_have_them():
    """With host times per interleaved pass the host bar is the median over passes of segkit_ex's over Thunder's
    (a slow spell lands on both); without them, the two medians."""
    from sweep.machine import KEY

    def doc(ours_steps, thunder_steps):
        rows = [{"case": "llama3-8b-x1", "variant": "thunder", "ms": 10.0, "host_ms": 4.0, "host_steps": thunder_steps},
                {"case": "llama3-8b-x1", "variant": "segkit-auto", "ms": 9.0, "host_ms": 4.2, "host_steps": ours_steps}]
        got = step_bars.bars({KEY: {"gpu": "Test GPU"}, "run": {}, "rows": rows})
        return next((r, d) for b, r, d in got if b == "llama3-8b-x1: host ms at or below stock Thunder's")

    # Thunder's host drifts up over the passes; ours under it in 3 of 4: ratios 0.968, 0.975, 0.983, 1.016
    result, detail = doc([3.0, 3.9, 5.9, 6.5], [3.1, 4.0, 6.0, 6.4])
    assert result == "met" and detail.startswith("0.979x (paired, at or below in 3/4; medians 4.20 against 4.00)")
    result, detail = doc([], [])
    assert result == "missed" and detail.startswith("1.050x (4.20 against 4.00)")  # the medians alone
