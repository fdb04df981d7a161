"""segkit check / minimize on nvFuser: the GQA wrong-k case is flagged, right fusions pass."""

from __future__ import annotations

import pytest

import segkit
from segkit.check import check
from segkit_cli.main import main as cli_main
from segkit.interp import random_inputs
from segkit.minimize import size_of
from tests.conftest import DATA

pytestmark = pytest.mark.gpu

GQA = DATA / "thunder" / "rope_llama3_8b_fwd_nvFusion0.py"
MHA = DATA / "thunder" / "rope_mha_fwd_nvFusion0.py"
MINIMIZED = DATA / "minimized" / "gqa_k_nvfuser.py"


def test_check_flags_thunders_gqa_fusion(record):
    r = segkit.load_repro(GQA)
    report = check(r.fd, r.make_inputs("cuda"))
    record({"test": "check", "case": GQA.name, "rel_err": [d.rel_err for d in report.diffs]})
    assert report.error is None and not report.ok and report.worst.rel_err > 0.5


def test_check_passes_the_multi_head_cases():
    r = segkit.load_repro(MHA)
    assert check(r.fd, r.make_inputs("cuda")).ok
    assert cli_main(["check", "qkv_split_rope_fwd:Llama-2-13b-hf_bs2"]) == 0
    assert cli_main(["check", "qkv_split_rope_fwd:Llama-3-8B_bs1"]) == 0  # segkit's GQA builder is right


@pytest.mark.parametrize("realization", ["segment_set", "host"])
def test_bookending_does_not_avoid_the_gqa_bug(realization, record):
    """Both realizations of inputs+outputs still compute a wrong k (measured; see bookend-h200.md)."""
    r = segkit.load_repro(GQA)
    report = check(r.fd, r.make_inputs("cuda"), policy="inputs+outputs", realization=realization)
    record({"test": "check_bookend", "realization": realization, "rel_err": [d.rel_err for d in report.diffs]})
    assert report.error is None and not report.ok


def test_minimize_says_so_when_nothing_mismatches(tmp_path, capsys):
    out = tmp_path / "min.py"
    assert cli_main(["minimize", str(MHA), "-o", str(out)]) == 0
    assert not out.exists() and "already matches" in capsys.readouterr().out


def test_committed_minimized_repro_still_mismatches():
    r = segkit.load_repro(MINIMIZED)
    assert size_of(r.fd)[0] <= 8
    assert not check(r.fd, random_inputs(r.fd, "cuda")).ok
