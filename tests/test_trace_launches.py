"""``segkit trace compare --by launch``: two profiles of one step aligned launch by launch. On two real H200
profiles (tests/data/step_h200: stock Thunder and Thunder + segkit_ex on Qwen3-0.6B) every launch is checked against
the chrome JSON read directly; the alignment itself on small hand-made steps."""

from __future__ import annotations

import difflib
import gzip
import itertools
import json
import time

import pytest

from segkit.trace import load
from segkit.trace.launches import align, launch_tables, step_kernels
from segkit.trace.model import Kernel, Range, Trace
from segkit_cli.main import main as cli_main
from tests.conftest import H200_STEP
from tests.synthetic_launches import model_steps

A, B = (H200_STEP / "profiles" / f"qwen3-0.6b-x2-{v}.json.gz" for v in ("thunder", "segkit-own"))


def _json_kernels(path):
    """(name, us) of every kernel event in the file, by start."""
    events = json.load(gzip.open(path, "rt"))["traceEvents"]
    return [(e["name"], e["dur"]) for e in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])]


def test_every_launch_of_both_steps_appears_once_in_order_with_its_own_time():
    tables = launch_tables(load(A), load(B))
    rows = tables["launches"]
    for side, path in (("A", A), ("B", B)):
        want = _json_kernels(path)
        got = [r[f"{side} us"] for r in rows if r[f"kernel {side}"] != "-"]
        assert got == pytest.approx([us for _, us in want], abs=0.006) and len(got) == 94
    assert [r["#"] for r in rows] == list(range(1, len(rows) + 1))


def test_kind_totals_add_the_json_kernels_of_each_kind():
    by_kind = {r["kind"]: r for r in launch_tables(load(A), load(B))["by kind"]}
    for side, path in (("A", A), ("B", B)):
        nvf = [us for name, us in _json_kernels(path) if "nvfuser" in name]
        assert by_kind["nvfuser memory-bound"][f"{side} us"] == pytest.approx(sum(nvf), abs=0.06)
        assert by_kind["nvfuser memory-bound"][f"{side} kernels"] == len(nvf)
    row = by_kind["memory-bound"]
    assert row["delta us"] == pytest.approx(row["B us"] - row["A us"], abs=0.06) and row["delta us"] > 200


def _step(*names: str) -> list[Kernel]:
    return [Kernel(n, 1000 * i, 100 + i) for i, n in enumerate(names)]


def test_an_added_kernel_leaves_the_rest_paired_by_name_and_a_renamed_stretch_pairs_in_order():
    a = _step("nvf::nvfuser_inner_persistent_f0_c1_r0_g0", "nvjet_gemm", "nvf::nvfuser_resize_f0_c1_r0_g1", "flash_fwd")
    b = _step("nvf::nvfuser_inner_persistent_f0_c1_r0_g3", "nvjet_gemm", "nvf::nvfuser_pointwise_f0_c1_r0_g0",
              "nvf::nvfuser_resize_f0_c1_r0_g2", "flash_fwd")
    pairs = [(x.a and x.a.key, x.b and x.b.key) for x in align(a, b)]
    assert pairs == [("nvfuser_inner_persistent",) * 2, ("nvjet_gemm",) * 2, (None, "nvfuser_pointwise"),
                     ("nvfuser_resize",) * 2, ("flash_fwd",) * 2]
    rows = [x.row() for x in align(_step("k1", "x", "k2"), _step("k1", "y", "z", "k2"))]
    assert [(r["kernel A"], r["kernel B"], r["changed"]) for r in rows] == [
        ("k1", "k1", ""), ("x", "y", "renamed"), ("-", "z", "added"), ("k2", "k2", "")]
    assert rows[2]["A us"] is None and rows[2]["delta us"] == pytest.approx(0.10, abs=0.005)  # z alone: 102 ns


def test_only_the_first_step_range_is_aligned():
    kernels = _step("k1", "k2", "k3", "k4")
    t = Trace("t", "torch", kernels, [Range("step", 0, 1500), Range("step", 2500, 4000)], [])
    rows = launch_tables(t, t)["launches"]
    assert [r["kernel A"] for r in rows] == ["k1", "k2"]


def test_cli_refuses_a_range_neither_has_and_plots_the_launches(tmp_path, capsys):
    assert cli_main(["trace", "compare", str(A), str(B), "--by", "launch", "--range", "nosuch"]) != 0
    err = capsys.readouterr().err
    assert "--range 'nosuch': no range named so in" in err and "step" in err
    out = tmp_path / "launches.png"
    assert cli_main(["trace", "compare", str(A), str(B), "--by", "launch", "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capsys.readouterr().out
    assert "nvfuser memory-bound" in printed and f"plot: {out}" in printed


def _difflib_pairs(a: list[Kernel], b: list[Kernel]) -> list[tuple]:
    """The alignment as it was, difflib over the whole steps: the reference for steps of real size."""
    matcher = difflib.SequenceMatcher(None, [k.key for k in a], [k.key for k in b], autojunk=False)
    return [p for _, i1, i2, j1, j2 in matcher.get_opcodes() for p in itertools.zip_longest(a[i1:i2], b[j1:j2])]


@pytest.mark.parametrize("x, y", [(A, B), (B, A)])
def test_the_real_steps_align_as_difflib_aligned_them(x, y):
    a, b = step_kernels(load(x)), step_kernels(load(y))
    assert [(p.a, p.b) for p in align(a, b)] == _difflib_pairs(a, b)


def test_two_20000_launch_steps_align_in_a_few_seconds_each_launch_with_its_own():
    """2000 generated layers (tests/synthetic_launches.py: B cuts one region in two and renames another per layer):
    difflib took minutes of CPU on these; every launch pairs with its own layer's and slot's, B's extra alone."""
    a, b = model_steps(2000)
    assert len(a) > 20000 and len(b) > 22000
    start = time.process_time()
    launches = align(a, b)
    assert time.process_time() - start < 5.0
    assert [x.a for x in launches if x.a] == a and [x.b for x in launches if x.b] == b
    alone = [x for x in launches if x.a is None or x.b is None]
    assert len(alone) == 2000 and all(x.a is None and x.b.correlation_id % 100 >= 50 for x in alone)
    assert all(x.a.correlation_id == x.b.correlation_id for x in launches if x.a and x.b)
    renamed = [x for x in launches if x.row()["changed"] == "renamed"]
    assert len(renamed) == 2000 and {(x.a.key, x.b.key) for x in renamed} == {("nvfuser_pointwise",
                                                                               "triton_poi_fused_add_0")}
