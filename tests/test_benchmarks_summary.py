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


def test_runs_are_summarized_together_with_each_runs_bandwidth(tmp_path):
    from benchmarks.summarize import load_runs

    paths = []
    for i, (shape, bw) in enumerate([("a", 4200.0), ("b", 4250.0)]):
        data = {"machine_info": {"gpu": "NVIDIA H200", "copy_gbs": bw}, "benchmarks": [
            _bench("test_norm_bwd", shape, "segkit", 10.0, 90.0), _bench("test_norm_bwd", shape, "eager", 30.0, 30.0)]}
        paths.append(tmp_path / f"run{i}.json")
        paths[-1].write_text(json.dumps(data))
    machine, rows = load_runs(paths)
    assert machine["copy_gbs"] == "4200 / 4250 GB/s (per run)"
    assert summarize(rows)["test_norm_bwd"]["speedups"]["eager"] == [3.0, 3.0]


def test_rope_floor_counts_v_only_when_grouped_query_attention_materializes_it():
    import fusions
    from benchmarks.workloads import rope_bytes

    spec = fusions.get("qkv_split_rope_fwd")
    for cfg in (spec.config("Llama-2-13b-hf_bs2_tiny"), spec.config("Llama-3-8B_bs2_tiny")):
        s, heads = cfg.dtype.itemsize, cfg.batch * cfg.n_head * cfg.T * cfg.head_size
        qkv_in = cfg.batch * cfg.T * cfg.qkv_width
        both = s * (qkv_in + 3 * heads + 2 * cfg.T * cfg.rope_n_elem)  # read all of qkv, write q, k, v
        v_moved = s * (cfg.batch * cfg.T * cfg.n_query_groups * cfg.head_size + heads)
        want = both if cfg.n_query_groups != cfg.n_head else both - v_moved
        assert rope_bytes(cfg, "forward") == want
        assert rope_bytes(cfg, "backward") == both  # read dq, dk, dv and the tables, write dqkv
