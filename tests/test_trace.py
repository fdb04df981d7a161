"""Profiling harness on real recorded traces (H200: an nvFuser fusion and eager PyTorch under two ranges).

Counts, names and durations are checked against the files read directly (SQL / JSON), not against
segkit's own output.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
import subprocess
import sys

import pytest

from segkit import trace
from segkit_cli.main import main as cli_main
from segkit.trace.diff import KernelStats, compare, compare_ranges, compare_tables, kernel_stats, match_kernels
from segkit.trace.model import TraceError, short_name
from segkit.trace.plot import plot_compare
from segkit.trace.report import show
from tests.conftest import DATA, H100_STEP

NSYS = DATA / "traces" / "workload_nsys.sqlite"
TORCH = DATA / "traces" / "workload_torch.json.gz"
RANGES = ["nvfuser:layernorm_fwd", "eager:layer_norm"]


def _sql(query, path=NSYS):
    con = sqlite3.connect(path)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


def test_nsys_kernels_match_the_sqlite_tables():
    t = trace.load(NSYS)
    rows = _sql("SELECT s.value, k.end - k.start, k.registersPerThread FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start")
    assert [(k.name, k.duration_ns, k.registers_per_thread) for k in t.kernels] == [tuple(r) for r in rows]
    assert t.gpu == _sql("SELECT name FROM TARGET_INFO_GPU")[0][0]
    assert t.missing == []


@pytest.mark.parametrize("name", RANGES)
def test_nsys_ranges_and_their_kernels_match_sql(name):
    t = trace.load(NSYS)
    ranges = t.ranges_named(name)
    want = _sql("SELECT n.start, n.end, n.globalTid FROM NVTX_EVENTS n LEFT JOIN StringIds s ON s.id = n.textId "
                f"WHERE n.eventType = 59 AND COALESCE(n.text, s.value) = '{name}' ORDER BY n.start")
    assert [(r.start_ns, r.end_ns) for r in ranges] == [(s, e) for s, e, _ in want] and len(want) == 3
    for r, (s, e, tid) in zip(ranges, want):
        launched = _sql("SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME a "
                        f"ON a.correlationId = k.correlationId WHERE a.start BETWEEN {s} AND {e} AND a.globalTid = {tid}")
        assert sorted(k.duration_ns for k in r.kernels) == sorted(d for (d,) in launched) and launched


def test_torch_trace_matches_the_json():
    t = trace.load(TORCH)
    events = json.load(gzip.open(TORCH, "rt"))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(t.kernels) == len(kernels)
    assert sum(k.duration_ns for k in t.kernels) == pytest.approx(sum(e["dur"] for e in kernels) * 1e3, abs=len(kernels))
    for name in RANGES:
        marks = [e for e in events if e.get("cat") == "user_annotation" and e["name"] == name]
        assert len(t.ranges_named(name)) == len(marks) == 3
        assert all(len(r.kernels) == 1 for r in t.ranges_named(name))


def test_ranges_in_segkits_nvtx_domain_are_the_user_ranges():
    """segkit.trace.range records into the 'segkit' NVTX domain; a recording made with it (H200)."""
    path = DATA / "traces" / "workload_nsys_segkit_domain.sqlite"
    t = trace.load(path)
    domain_ids = _sql("SELECT domainId FROM NVTX_EVENTS WHERE eventType = 75 AND "
                      "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId)) = 'segkit'", path)
    assert len(domain_ids) == 1
    in_domain = _sql(f"SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType = 59 AND domainId = {domain_ids[0][0]}", path)
    assert sum(r.domain == "segkit" for r in t.ranges) == in_domain[0][0] == 6
    assert t.user_range_names() == RANGES and len(t.ranges) > 100


def test_both_recorders_name_kernels_alike_and_user_ranges_are_found():
    a, b = trace.load(NSYS), trace.load(TORCH)
    assert a.user_range_names() == b.user_range_names() == RANGES
    assert len(a.ranges) > 100  # nvFuser's own NVTX ranges are there, and left out of the default views
    ka = {k.key for r in a.ranges_named(RANGES[0]) for k in r.kernels}
    kb = {k.key for r in b.ranges_named(RANGES[0]) for k in r.kernels}
    assert ka == kb == {"nvfuser_inner_persistent"}


@pytest.mark.parametrize("raw, short", [
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float)",
     "vectorized_layer_norm_kernel"),
    ("nvf::nvfuser_pointwise_f0_c1_r0_g2", "nvfuser_pointwise"),
    ("nvfuser_inner_outer_persistent_f12_c1_r0_g0", "nvfuser_inner_outer_persistent"),
])
def test_short_names(raw, short):
    assert short_name(raw) == short


def test_show_in_every_format():
    t = trace.load(NSYS)
    rows = json.loads(show(t, RANGES[0], "json"))["ranges"]
    assert rows[0]["range"] == RANGES[0] and rows[0]["instances"] == 3 and rows[0]["kernels_per_instance"] == 1
    assert rows[0]["launch_overhead_us_median"] == pytest.approx(rows[0]["wall_us_median"] - rows[0]["kernel_us_median"], rel=0.5)
    csv_text = show(t, None, "csv")
    assert csv_text.splitlines()[0].startswith("start_us,duration_us,grid")
    assert "| range" in show(t, None, "markdown")


def test_compare_a_trace_with_itself_changes_nothing():
    t = trace.load(NSYS)
    rows = compare_ranges(t, t)
    assert [r["range"] for r in rows] == RANGES and all(r["kernel B/A"] == 1.0 for r in rows)
    for name in RANGES:
        stats = kernel_stats(t.ranges_named(name))
        assert stats and all(c.flags == [] for c in match_kernels(stats, stats))
    assert "B/A" in compare(t, t, by="kernel", fmt="markdown")


def test_match_kernels_flags_what_changed():
    a = [KernelStats("k1", [100, 101, 99], (8, 1, 1), (128, 1, 1), 32), KernelStats("k2", [50, 50], (4, 1, 1), (64, 1, 1), 16)]
    b = [KernelStats("k1", [130, 131], (8, 1, 1), (256, 1, 1), 40), KernelStats("k3", [10], (1, 1, 1), (32, 1, 1), 8),
         KernelStats("k4", [5], (1, 1, 1), (32, 1, 1), 8)]
    flags = {(c.a.key if c.a else None, c.b.key if c.b else None): c.flags for c in match_kernels(a, b)}
    assert flags[("k1", "k1")] == ["block changed", "registers changed", "slower by 30%"]
    assert "renamed" in flags[("k2", "k3")] and "faster by 80%" in flags[("k2", "k3")]
    assert flags[(None, "k4")] == ["added"]
    assert match_kernels(a, a[:1])[1].flags == ["gone"]


def test_plot_writes_a_png(tmp_path):
    out = plot_compare(trace.load(NSYS), trace.load(TORCH), tmp_path / "cmp.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def _copy(tmp_path, sql):
    p = tmp_path / "r.sqlite"
    shutil.copy(NSYS, p)
    con = sqlite3.connect(p)
    con.execute(sql)
    con.commit()
    con.close()
    return p


def test_missing_table_loads_what_is_there(tmp_path):
    t = trace.load(_copy(tmp_path, "DROP TABLE NVTX_EVENTS"))
    assert t.ranges == [] and len(t.kernels) == len(trace.load(NSYS).kernels)
    assert any("NVTX_EVENTS table absent" in m for m in t.missing)


def test_missing_column_loads_what_is_there(tmp_path):
    t = trace.load(_copy(tmp_path, "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN registersPerThread"))
    assert t.kernels and all(k.registers_per_thread is None for k in t.kernels)
    assert any("registersPerThread" in m for m in t.missing)


def test_truncated_report_is_a_clear_error(tmp_path):
    p = tmp_path / "cut.sqlite"
    p.write_bytes(NSYS.read_bytes()[:5000])
    with pytest.raises(TraceError, match="cut.sqlite"):
        trace.load(p)


def test_non_nsys_sqlite_is_rejected(tmp_path):
    p = tmp_path / "other.sqlite"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE things (x INT)")
    con.commit()
    con.close()
    with pytest.raises(TraceError, match="not an nsys report"):
        trace.load(p)


@pytest.mark.parametrize("content", ['{"a": 1}', "[1, 2]", "not json"])
def test_json_that_is_not_a_chrome_trace(tmp_path, content):
    p = tmp_path / "t.json"
    p.write_text(content)
    with pytest.raises(TraceError, match="t.json"):
        trace.load(p)


def test_nsys_rep_without_nsys_says_so(tmp_path, monkeypatch):
    p = tmp_path / "r.nsys-rep"
    p.write_bytes(b"x")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TraceError, match="needs nsys on PATH"):
        trace.load(p)


def test_cli_show_and_unknown_range(capsys):
    assert cli_main(["trace", "show", str(NSYS), "--range", RANGES[1], "--format", "markdown"]) == 0
    assert "vectorized_layer_norm_kernel" in capsys.readouterr().out
    assert cli_main(["trace", "show", str(NSYS), "--range", "nope"]) == 2
    assert "no range named 'nope'" in capsys.readouterr().err


def test_capture_and_profile_on_cpu(tmp_path):
    """On a CPU machine torch.profiler still records ranges; the trace says it saw no kernels."""
    import torch

    with trace.capture() as cap:
        with trace.range("cpu-work"):
            torch.randn(64, 64) @ torch.randn(64, 64)
    assert [r.name for r in cap.trace.ranges_named("cpu-work")] == ["cpu-work"]
    script = tmp_path / "w.py"
    script.write_text("import torch\nfrom segkit import trace\nwith trace.range('step'):\n    torch.ones(3).sum()\n")
    subprocess.run([sys.executable, "-m", "segkit_cli", "profile", "--torch", "-o", str(tmp_path / "out"), "--",
                    sys.executable, str(script)], check=True, capture_output=True)
    t = trace.load(tmp_path / "out" / "trace.json")
    assert t.ranges_named("step") and any("no kernel events" in m for m in t.missing)


def test_traces_without_ranges_are_compared_whole():
    """Two torch.profiler profiles of one Llama-3-8B training step on an H100 (torch.compile; Thunder + segkit_ex),
    recorded without a user range: compared as one range each, every kernel of both files in the kernel table."""
    a_path, b_path = (H100_STEP / "profiles" / f"llama3-8b-x1-{v}.json.gz" for v in ("compile", "segkit-auto"))
    a, b = trace.load(a_path), trace.load(b_path)
    assert not a.user_range_names() and not b.user_range_names()
    tables = compare_tables(a, b, by="kernel")
    (row,) = tables["ranges"]
    for path, kernels_col, us_col in ((a_path, "A kernels", "A kernel us"), (b_path, "B kernels", "B kernel us")):
        events = [e for e in json.load(gzip.open(path, "rt"))["traceEvents"] if e.get("cat") == "kernel"]
        assert row[kernels_col] == len(events)
        assert row[us_col] == pytest.approx(sum(e["dur"] for e in events), abs=0.5)
    rows = tables["kernels"]
    assert sum(r["A us"] is not None for r in rows) == len({k.key for k in a.kernels})
    assert sum(r["B us"] is not None for r in rows) == len({k.key for k in b.kernels})
