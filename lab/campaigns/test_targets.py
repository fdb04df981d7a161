"""lab/campaigns/targets.py: the campaign bars, counted from measured rows (moved from
tests/test_benchmarks_summary.py and tests/test_reuse.py).

    python -m pytest lab/campaigns
"""

from __future__ import annotations

import json

from benchmarks.summarize import load_runs
from lab.campaigns import targets


def _norm_bwd_row(shape, executor, us, pct, kind="rmsnorm"):
    """One bf16 norm-backward benchmark as pytest-benchmark stores it (dtype unserializable)."""
    return {"name": f"test_norm_bwd[{kind}-{shape}-bfloat16-{executor}]", "params": {
        "kind": kind, "shape": shape, "dtype": "UNSERIALIZABLE[torch.bfloat16]", "executor": executor},
        "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": pct, "kernels": 1, "wall_us_median": 20.0}}


def _norm_bwd_targets(tmp_path, benches: list[tuple]) -> tuple[list[dict], dict[str, list]]:
    """The rows of a run made of (shape, executor, us, pct) RMSNorm-backward benchmarks, and its norm-backward
    targets by name."""
    (tmp_path / "r.json").write_text(json.dumps({"machine_info": {}, "benchmarks": [_norm_bwd_row(*b) for b in benches]}))
    _, rows = load_runs([tmp_path / "r.json"])
    return rows, {row[0]: row for row in targets.norm_bwd(rows)}


def test_targets_count_the_bars_from_measured_rows(tmp_path):
    rows, table = _norm_bwd_targets(tmp_path, [
        ("sweep_65536x4096", "segkit", 100.0, 95.0), ("sweep_65536x4096", "torch.compile", 120.0, 80.0),
        ("sweep_4096x256", "segkit", 10.0, 20.0), ("sweep_4096x256", "torch.compile", 5.0, 40.0),
        ("sweep_16384x4096", "segkit", 50.0, 85.0), ("sweep_16384x4096", "liger", 60.0, 70.0)])
    floor = table["norm bwd bf16 >= 32M elements: segkit >= 90% of floor"]
    assert floor[1] == "1 of 2" and "sweep_16384x4096 85%" in floor[2]  # 4096x256 is under 32M elements
    assert table["norm bwd bf16 sweep: segkit beats torch.compile on >= 80%"][1] == "1 of 2 (50%)"
    assert table["norm bwd bf16 sweep: segkit beats liger on >= 90%"][1] == "1 of 1 (100%)"
    assert "Another executor of the same run >= 90% on 0 of those" in floor[2]
    assert targets.nanogpt(rows) == [["nanoGPT layer norm fwd", "not measured", ""]]


def test_floor_bar_names_a_rival_that_reaches_it_and_rivals_not_run(tmp_path):
    _, table = _norm_bwd_targets(tmp_path, [
        ("mixorder_576000x384", "segkit", 450.0, 71.0), ("mixorder_576000x384", "quack", 354.0, 90.2),
        ("sweep_16384x4096", "segkit", 109.0, 88.0), ("sweep_16384x4096", "quack", 121.0, 79.6)])
    floor = table["norm bwd bf16 >= 32M elements: segkit >= 90% of floor"]
    assert floor[1] == "0 of 2"
    assert "on 1 of those: rmsnorm mixorder_576000x384 (quack 90%)" in floor[2]
    assert table["norm bwd bf16 sweep: segkit beats liger on >= 90%"][1] == "not measured in these runs"


def test_nanogpt_host_wall_bar_compares_segkit_runtime_with_bare_execute(tmp_path):
    def b(executor, us, wall, runtime=None):
        info = {"kernel_us_median": us, "pct_of_copy_bw": 50.0, "kernels": 1, "wall_us_median": wall}
        if runtime is not None:
            info["wall_us_runtime"] = runtime
        return {"name": f"test_norm_fwd[layernorm-nanogpt-bfloat16-{executor}]", "params": {
            "kind": "layernorm", "shape": "nanogpt", "dtype": "UNSERIALIZABLE[torch.bfloat16]",
            "executor": executor}, "extra_info": info}

    data = {"machine_info": {}, "benchmarks": [b("segkit", 6.0, 20.0, 25.0), b("thunder", 5.0, 90.0)]}
    (tmp_path / "r.json").write_text(json.dumps(data))
    _, rows = load_runs([tmp_path / "r.json"])
    kernel, wall = targets.nanogpt(rows)
    assert kernel[1] == "2.00x floor" and "best thunder 5.0 us = 2.00x floor" in kernel[2]
    assert wall[1] == "1.25x (segkit runtime path)" and "thunder 90 us" in wall[2]


def _norm_fwd_targets(tmp_path, benches: list[tuple]) -> dict[str, list]:
    """Issue 38's forward bars of a run made of (kind, shape, executor, us, pct) bf16 forward benchmarks."""

    def b(kind, shape, executor, us, pct):
        return {"name": f"test_norm_fwd[{kind}-{shape}-bfloat16-{executor}]", "params": {
            "kind": kind, "shape": shape, "dtype": "UNSERIALIZABLE[torch.bfloat16]", "executor": executor},
            "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": pct, "kernels": 1}}

    (tmp_path / "r.json").write_text(json.dumps({"machine_info": {}, "benchmarks": [b(*x) for x in benches]}))
    _, rows = load_runs([tmp_path / "r.json"])
    return {row[0]: row for row in targets.norm_fwd(rows)}


def test_forward_bars_count_a_case_won_only_against_all_three_rivals(tmp_path):
    rivals = ("torch.compile", "liger", "quack")
    table = _norm_fwd_targets(tmp_path, [
        *[("rmsnorm", "mixorder_576000x384", ex, us, pct) for ex, us, pct in
          (("segkit", 200.0, 95.0), ("torch.compile", 204.0, 93.0), ("liger", 260.0, 73.0), ("quack", 201.0, 94.5))],
        *[("layernorm", "mixorder_576000x384", ex, us, 80.0) for ex, us in
          (("segkit", 230.0), ("torch.compile", 210.0), ("liger", 300.0), ("quack", 220.0))],
        ("rmsnorm", "sweep_4096x256", "segkit", 4.0, 50.0), ("rmsnorm", "sweep_4096x256", "torch.compile", 5.0, 40.0)])
    fastest = table[f"norm fwd bf16: segkit fastest of segkit, {', '.join(rivals)} in >= 32 of 40"]
    assert fastest[1] == "missed: 1 of 3"  # 4096x256 is faster than torch.compile alone: Liger, Quack not measured
    assert "layernorm mixorder_576000x384 (torch.compile 210.0 vs 230.0 us)" in fastest[2]
    assert "sweep_4096x256 (no liger, quack)" in fastest[2]
    assert table[f"norm fwd bf16 rmsnorm 576000 x 384: faster than {', '.join(rivals)}"][1] == "met"
    layernorm = table[f"norm fwd bf16 layernorm 576000 x 384: faster than {', '.join(rivals)}"]
    assert layernorm[1] == "missed" and "torch.compile 210.0 us (0.91x)" in layernorm[2]
    floor = table["norm fwd bf16 >= 32M elements: segkit >= 90% of floor"]
    assert floor[1] == "1 of 2" and "layernorm mixorder_576000x384 80%" in floor[2]


def test_fp8_amax_bar_takes_segkits_best_formulation(tmp_path):
    """The fp8 amax bar: segkit's best formulation against torch.compile with and without the reuse pass."""

    def row(shape, executor, us, pct):
        return {"name": f"test_fp8_amax[{shape}-bfloat16-t-{executor}]", "params": {
            "shape": shape, "dtype": "torch.bfloat16", "amaxes": "t", "executor": executor},
            "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": pct, "kernels": 1}}

    runs = [row("a", "segkit", 20.0, 50.0), row("a", "segkit:inner_outer", 10.0, 85.0),
            row("a", "torch.compile", 12.0, 70.0), row("a", "torch.compile+reuse_fx", 11.0, 77.0),
            row("b", "segkit", 10.0, 85.0), row("b", "torch.compile", 9.0, 90.0),
            row("b", "torch.compile+reuse_fx", 12.0, 70.0)]
    (tmp_path / "r.json").write_text(json.dumps({"machine_info": {}, "benchmarks": runs}))
    _, rows = load_runs([tmp_path / "r.json"])
    table = targets.fp8_amax(rows)
    assert [r[1] for r in table] == ["met", "missed"]
    assert table[0][2].startswith("segkit:inner_outer 10.0 us 85%")
