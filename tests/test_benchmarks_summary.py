"""benchmarks.summarize on a small pytest-benchmark JSON (the structure pytest-benchmark writes)."""

from __future__ import annotations

import json

from benchmarks.summarize import geomean, load, summarize, write


def _bench(name, shape, executor, us, pct):
    return {"name": f"{name}[{shape}-bfloat16-{executor}]", "params": {"shape": shape, "dtype": "torch.bfloat16",
            "executor": executor}, "extra_info": {"kernel_us_median": us, "pct_of_copy_bw": pct, "kernels": 1}}


def test_summary_ratios_best_and_geomean(tmp_path):
    data = {"machine_info": {"gpu": "NVIDIA H200", "copy_gbs": 4200.0}, "benchmarks": [
        _bench("test_norm_bwd", "a", "segkit", 100.0, 90.0), _bench("test_norm_bwd", "a", "eager", 200.0, 45.0),
        _bench("test_norm_bwd", "b", "segkit", 50.0, 80.0), _bench("test_norm_bwd", "b", "eager", 25.0, 160.0),
        {"name": "test_norm_bwd[c-bfloat16-quack]", "params": {"shape": "c", "executor": "quack"}, "extra_info": {}},
    ]}
    path = tmp_path / "run.json"
    path.write_text(json.dumps(data))
    machine, rows = load(path)
    assert len(rows) == 4  # the skipped benchmark (no kernel time) is left out
    s = summarize(rows)["test_norm_bwd"]
    assert s["speedups"]["eager"] == [2.0, 0.5]
    assert [r["best"] for r in s["table"]] == ["segkit", "eager"]
    assert abs(geomean(s["speedups"]["eager"]) - 1.0) < 1e-12
    md = write(machine, summarize(rows), tmp_path / "out").read_text()
    assert "eager: 1.00x over 2 cases, segkit faster in 1" in md and "NVIDIA H200" in md
    assert (tmp_path / "out" / "test_norm_bwd.png").stat().st_size > 1000
