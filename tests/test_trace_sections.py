"""``segkit trace compare --by section``: one step's memory-bound kernels summed between its GEMMs and attention
kernels, two variants paired by place. On the step table's two H200 profiles of litgpt Llama-3-8B x1
(tests/data/step_h200_breakdown: torch.compile and Thunder + segkit_ex), checked against the chrome JSON read
directly; the pairing itself on small hand-made steps."""

from __future__ import annotations

import gzip
import json

import pytest

from segkit.trace import load
from segkit.trace.sections import cut, pair, section_tables
from segkit.trace.model import Kernel
from segkit_cli.main import main as cli_main
from tests.conftest import DATA

COMPILE, SEGKIT = (DATA / "step_h200_breakdown" / f"llama3-8b-x1-{v}.json.gz" for v in ("compile", "segkit-auto"))
COMPUTE = ("nvjet", "cudnn", "compute_dot_do_o", "convert_dq")  # the GEMM and attention kernels of these profiles


def _json_kernels(path):
    """(name, us) of every kernel event in the file, by start."""
    events = json.load(gzip.open(path, "rt"))["traceEvents"]
    kernels = sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e["ts"])
    return [(e["name"], e["dur"]) for e in kernels]


def test_every_memory_bound_kernel_is_in_one_section_and_the_forward_pairs_by_place():
    tables = section_tables(load(COMPILE), load(SEGKIT))
    for side, path in (("A", COMPILE), ("B", SEGKIT)):
        kernels = _json_kernels(path)
        compute = [n for n, _ in kernels if any(c in n for c in COMPUTE)]
        memory = [us for n, us in kernels if not any(c in n for c in COMPUTE)]
        (total,) = [t for t in tables["total"] if t["profile"] == side]
        assert total["sections"] == len(compute) + 1  # one before the first compute kernel, one after each
        assert total["memory-bound kernels"] == len(memory)
        assert total["memory-bound us"] == pytest.approx(sum(memory), abs=0.1)
        rows = [r for r in tables["sections"] if r[f"{side} us"] is not None]
        assert sum(r[f"{side} us"] for r in rows) == pytest.approx(sum(memory), abs=0.5)
    rows = tables["sections"]
    forward = rows[:rows.index(next(r for r in rows if r["after"].startswith("attention cudnn") and "bprop" in
                                    r["after"]))]
    assert len(forward) > 10
    first_attention = next(i for i, r in enumerate(rows) if r["after"].startswith("attention"))
    rope = rows[first_attention - 1]  # after the qkv projection, before the attention: the RoPE in both
    assert rope["paired"] and rope["A us"] > 20 and rope["B us"] > 20 and "cat" in rope["A longest"]
    assert all(r["paired"] for r in rows[:first_attention + 4])  # the forward up to the MLP pairs by place
    deltas = [abs(r["delta us"]) for r in tables["largest deltas"]]
    assert deltas == sorted(deltas, reverse=True) and len(deltas) == 10


def _step(*names: str) -> list[Kernel]:
    return [Kernel(n, 1000 * i, 100 + i) for i, n in enumerate(names)]


def test_a_section_is_cut_at_each_compute_kernel_and_an_extra_gemm_leaves_the_rest_paired():
    a = _step("triton_norm", "nvjet_qkv", "triton_rope", "triton_copy", "flash_fwd", "nvjet_o", "triton_add")
    sections = cut(a)
    assert [(s.opened_by, [k.key for k in s.kernels]) for s in sections] == [
        ("start", ["triton_norm"]), ("gemm", ["triton_rope", "triton_copy"]), ("attention", []),
        ("gemm", ["triton_add"])]
    b = _step("nvf::nvfuser_inner_persistent_f0_c1_r0_g0", "nvjet_qkv", "nvf::nvfuser_resize_f0_c1_r0_g1",
              "nvjet_extra", "flash_fwd", "nvjet_o", "nvf::nvfuser_pointwise_f0_c1_r0_g2")
    pairs = pair(cut(a), cut(b))
    shape = [(x and x.opened_by, y and y.opened_by, y and y.opener and y.opener.key) for x, y in pairs]
    assert shape == [("start", "start", None), ("gemm", "gemm", "nvjet_qkv"), (None, "gemm", "nvjet_extra"),
                     ("attention", "attention", "flash_fwd"), ("gemm", "gemm", "nvjet_o")]
    assert pairs[1][0].us == pytest.approx((102 + 103) / 1e3) and pairs[1][1].longest() == "nvfuser_resize 0.1"


def test_cli_prints_the_sections_and_refuses_what_does_not_go_with_them(tmp_path, capsys):
    assert cli_main(["trace", "compare", str(COMPILE), str(SEGKIT), "--by", "section", "--top", "3"]) == 0
    printed = capsys.readouterr().out
    assert "memory-bound us" in printed and "in paired sections us" in printed and "attention cudnn" in printed
    assert cli_main(["trace", "compare", str(COMPILE), str(SEGKIT), "--top", "3"]) != 0
    assert "--top" in capsys.readouterr().err
    assert cli_main(["trace", "compare", str(COMPILE), str(SEGKIT), "--by", "section", "--plot",
                     str(tmp_path / "x.png")]) != 0
    assert "--by section has no plot" in capsys.readouterr().err and not (tmp_path / "x.png").exists()
