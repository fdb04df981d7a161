"""benchmarks.cut_evidence on recorded H200 step profiles (tests/data/step_h200_fuse_policies: Llama-3-8B x1 with
segkit's RoPE fused into Thunder's regions, and with it opaque): the records carry each profile's kernel time
outside matmuls and attention, summed here straight from the chrome traces, and refuse a run that does not fuse
the spec."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from benchmarks import cut_evidence
from sweep.machine import KEY
from thunder_exec.decide.evidence import ClaimTable, EvidenceTable
from tests.conftest import DATA

RUN = DATA / "step_h200_fuse_policies"
SIG = "shape=(1, 32, 4096, 128) cos_batch=1 table_dtype=float32 out_dtype=None bfloat16"


def _memory_bound_us(path: Path) -> float:
    """Kernels that are neither cuBLAS's nvjet GEMMs nor cuDNN's attention (the only such kernels of these steps)."""
    events = json.load(gzip.open(path))["traceEvents"]
    return sum(e["dur"] for e in events if e.get("cat") == "kernel" and not e["name"].startswith(("nvjet", "cudnn"))
               and "cudnn::" not in e["name"])


def _run(tmp_path: Path, fused_chosen: str = "fused", b_chosen: str = "opaque") -> Path:
    (tmp_path / "profiles").mkdir(parents=True)
    for variant, src in (("a", "segkit-fused"), ("b", "segkit-norms-fused")):
        shutil.copy(RUN / "profiles" / f"llama3-8b-x1-{src}.json.gz",
                    tmp_path / "profiles" / f"llama3-8b-x1-{variant}.json.gz")
    machine = json.loads((RUN / "model_step.json").read_text())[KEY]
    rows = [dict(case="llama3-8b-x1", variant="a", cuts=[dict(spec="rope_bwd", signature=SIG, mode="fused",
                                                               chosen=fused_chosen, why="")]),
            dict(case="llama3-8b-x1", variant="b", cuts=[dict(spec="rope_bwd", signature=SIG, mode=b_chosen,
                                                               chosen=b_chosen, why="")])]
    (tmp_path / "model_step.json").write_text(json.dumps({KEY: machine, "rows": rows}))
    return tmp_path


def test_records_carry_each_profiles_memory_bound_time(tmp_path):
    run = _run(tmp_path)
    (r,) = cut_evidence.evidence(run, "rope_bwd", "a", "b")
    assert r.gpu == "NVIDIA H200" and r.signature == SIG and r.case == "llama3-8b-x1"
    assert r.fused_us == pytest.approx(_memory_bound_us(run / "profiles/llama3-8b-x1-a.json.gz"), abs=0.01)
    assert r.opaque_us == pytest.approx(_memory_bound_us(run / "profiles/llama3-8b-x1-b.json.gz"), abs=0.01)
    out = tmp_path / "ev.json"
    cut_evidence.main([str(run), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b", "--out", str(out)])
    assert EvidenceTable.load(out).records() == [r]


def test_a_run_that_did_not_fuse_the_spec_is_refused(tmp_path):
    run = _run(tmp_path, fused_chosen="thunder")
    with pytest.raises(SystemExit, match="variant a fused no rope_bwd call"):
        cut_evidence.evidence(run, "rope_bwd", "a", "b")
    with pytest.raises(SystemExit, match="no case of .* has both a and c"):
        cut_evidence.evidence(run, "rope_bwd", "a", "c")


def test_claim_records_carry_the_claimed_and_the_declined_steps(tmp_path):
    """--claimed / --declined: the first variant claimed the spec's calls (here fused), the second left the same
    calls to Thunder; a record per signature, written to a claim evidence file; a second variant that claimed
    them too, or a mix of both option pairs, is refused."""
    run = _run(tmp_path, b_chosen="thunder")
    (r,) = cut_evidence.claim_evidence(run, "rope_bwd", "a", "b")
    assert (r.claimed_as, r.signature, r.case) == ("fused", SIG, "llama3-8b-x1")
    assert r.claimed_us == pytest.approx(_memory_bound_us(run / "profiles/llama3-8b-x1-a.json.gz"), abs=0.01)
    assert r.declined_us == pytest.approx(_memory_bound_us(run / "profiles/llama3-8b-x1-b.json.gz"), abs=0.01)
    out = tmp_path / "claims.json"
    cut_evidence.main([str(run), "--spec", "rope_bwd", "--claimed", "a", "--declined", "b", "--out", str(out)])
    assert ClaimTable.load(out).records() == [r]
    with pytest.raises(SystemExit, match="variant b ran \\[\\] of rope_bwd opaque"):
        cut_evidence.evidence(run, "rope_bwd", "a", "b")
    assert cut_evidence.main([str(run), "--spec", "rope_bwd", "--fused", "a", "--declined", "b"]) == 2


def test_a_variant_that_declines_one_shape_records_that_shape_alone(tmp_path):
    """A second variant that left only the calls of one shape to Thunder (segkit_fuse {"rope_bwd@...": "thunder"})
    and ran the others as the first did gives records for that shape's signature only; one that also ran another
    signature otherwise differs in more than that shape and is refused; a call left to Thunder in both is no
    difference."""
    other = SIG.replace("(1, 32,", "(1, 8,")

    def run_with(b_other: str) -> Path:
        run = _run(tmp_path / b_other, b_chosen="thunder")
        doc = json.loads((run / "model_step.json").read_text())
        a, b = doc["rows"]
        a["cuts"].append(dict(spec="rope_bwd", signature=other, mode="auto", chosen="fused", why=""))
        b["cuts"].append(dict(spec="rope_bwd", signature=other, mode="auto", chosen=b_other, why=""))
        (run / "model_step.json").write_text(json.dumps(doc))
        return run

    (r,) = cut_evidence.claim_evidence(run_with("fused"), "rope_bwd", "a", "b")
    assert (r.signature, r.claimed_as) == (SIG, "fused")
    run = run_with("thunder")  # both signatures left to Thunder in b; the first variant left the other one too
    doc = json.loads((run / "model_step.json").read_text())
    doc["rows"][0]["cuts"][1]["chosen"] = "thunder"
    (run / "model_step.json").write_text(json.dumps(doc))
    (r,) = cut_evidence.claim_evidence(run, "rope_bwd", "a", "b")
    assert r.signature == SIG
    with pytest.raises(SystemExit, match="every other call as a ran it \\(otherwise: \\['shape=\\(1, 8,"):
        cut_evidence.claim_evidence(run_with("opaque"), "rope_bwd", "a", "b")


def _with_rows(run: Path, *rows: dict) -> Path:
    doc = json.loads((run / "model_step.json").read_text())
    doc["rows"] += list(rows)
    (run / "model_step.json").write_text(json.dumps(doc))
    return run


def test_a_case_the_two_variants_ran_alike_is_skipped(tmp_path, capsys):
    """A case with no call of the keyed shape (Llama-3.2-1B beside Qwen3's q / k norms) ran both variants alike:
    it records nothing and refuses nothing; a run where every case ran alike is refused."""
    run = _with_rows(_run(tmp_path, b_chosen="thunder"),
                     dict(case="llama3.2-1b-x2", variant="a", cuts=[]), dict(case="llama3.2-1b-x2", variant="b", cuts=[]))
    (r,) = cut_evidence.claim_evidence(run, "rope_bwd", "a", "b")
    assert r.case == "llama3-8b-x1"
    assert "llama3.2-1b-x2: a and b ran every rope_bwd call alike" in capsys.readouterr().out
    alike = _run(tmp_path / "alike", fused_chosen="thunder", b_chosen="thunder")
    with pytest.raises(SystemExit, match="no case of .* has a and b running rope_bwd differently"):
        cut_evidence.claim_evidence(alike, "rope_bwd", "a", "b")


def _recorded_or_skipped(run: Path, capsys, recorded: bool, note: str) -> None:
    """The run gives the one record for SIG, or none: a refusal, with ``note`` printed for the skipped case."""
    if recorded:
        (r,) = cut_evidence.claim_evidence(run, "rope_bwd", "a", "b")
        assert r.signature == SIG
    else:
        with pytest.raises(SystemExit, match="with a record to write"):
            cut_evidence.claim_evidence(run, "rope_bwd", "a", "b")
        assert note in capsys.readouterr().out


@pytest.mark.parametrize("margin, recorded", [(1.0, False), (-1.0, True)])
def test_a_difference_within_the_runs_a_a_control_is_no_record(tmp_path, capsys, margin, recorded):
    """Where the run has stock Thunder and its A/A control (thunder-again), a difference no larger than theirs is
    skipped: one profiled step's sums move that much with nothing changed."""
    run = _run(tmp_path, b_chosen="thunder")
    diff = abs(_memory_bound_us(run / "profiles/llama3-8b-x1-a.json.gz")
               - _memory_bound_us(run / "profiles/llama3-8b-x1-b.json.gz"))
    _with_rows(run, dict(case="llama3-8b-x1", variant="thunder", cuts=[], breakdown=dict(memory_bound=700.0)),
               dict(case="llama3-8b-x1", variant="thunder-again", cuts=[],
                    breakdown=dict(memory_bound=700.0 + diff + margin)))
    _recorded_or_skipped(run, capsys, recorded, "within the A/A control's")


@pytest.mark.parametrize("lost_in, recorded", [(8, False), (7, True), (None, True)])
def test_paired_steps_that_contradict_the_kernel_sums_give_no_record(tmp_path, capsys, lost_in, recorded):
    """The variant with less memory-bound time slower in 8 of 10 interleaved passes (the HF Llama's RoPE, a7abf50:
    124 us more claimed, the claim faster in 8/10) is contested: no record; 7 of 10, or rows without paired
    passes, leave the kernel sums to decide."""
    run = _run(tmp_path, b_chosen="thunder")
    a_us = _memory_bound_us(run / "profiles/llama3-8b-x1-a.json.gz")
    b_us = _memory_bound_us(run / "profiles/llama3-8b-x1-b.json.gz")
    doc = json.loads((run / "model_step.json").read_text())
    if lost_in is not None:
        fewer, more = (doc["rows"][0], doc["rows"][1]) if a_us < b_us else (doc["rows"][1], doc["rows"][0])
        fewer["ms_steps"] = [11.0] * lost_in + [9.0] * (10 - lost_in)
        more["ms_steps"] = [10.0] * 10
        for r in doc["rows"]:
            r["ms"] = 10.0
    (run / "model_step.json").write_text(json.dumps(doc))
    _recorded_or_skipped(run, capsys, recorded, "the steps contradict the kernel sums")


def _timed(run: Path, a_host: list[float], b_host: list[float]) -> Path:
    """The run with each variant's host ms per interleaved pass (the step table's ``host_steps``)."""
    doc = json.loads((run / "model_step.json").read_text())
    doc["rows"][0]["host_steps"], doc["rows"][1]["host_steps"] = a_host, b_host
    (run / "model_step.json").write_text(json.dumps(doc))
    return run


A_HOST = [4.0, 4.4, 4.5, 4.2, 4.2, 4.5, 4.7, 4.5, 5.8, 5.8]
B_HOST = [4.7, 4.3, 4.0, 4.6, 5.4, 5.1, 5.0, 10.0, 6.4, 6.4]  # one pass 5.5 ms late: the median keeps it out


def test_records_carry_the_host_time_the_cut_added_over_paired_passes(tmp_path):
    """With host ms per pass on both rows, a record's host_us is the median of the opaque variant's minus the fused
    one's (here 1000 x median(0.7, -0.1, -0.5, 0.4, 1.2, 0.6, 0.3, 5.5, 0.6, 0.6) = 600 us, 8 of 10 higher); rows
    without them (a run from before the table timed host per pass) give none."""
    (r,) = cut_evidence.evidence(_timed(_run(tmp_path / "timed"), A_HOST, B_HOST), "rope_bwd", "a", "b")
    assert r.host_us == pytest.approx(600.0) and "median of 10 paired passes, b higher in 8" in r.host_source
    (untimed,) = cut_evidence.evidence(_run(tmp_path / "untimed"), "rope_bwd", "a", "b")
    assert untimed.host_us is None and untimed.host_source is None
    assert (untimed.fused_us, untimed.opaque_us) == (r.fused_us, r.opaque_us)


def test_host_only_adds_another_runs_host_time_to_the_records_there(tmp_path, capsys):
    """--host-only: a step run without profiles (a step JSON file will do) times the host side of records written
    from a run with profiles, keeping their kernel side; it refuses a run without per-pass host times and a
    signature with no record to add to."""
    kernels = _run(tmp_path / "kernels")
    out = tmp_path / "ev.json"
    cut_evidence.main([str(kernels), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b", "--out", str(out)])
    (before,) = EvidenceTable.load(out).records()
    host = _timed(_run(tmp_path / "host"), A_HOST, B_HOST)
    shutil.rmtree(host / "profiles")
    step = tmp_path / "host" / "step.json"
    (host / "model_step.json").rename(step)
    cut_evidence.main([str(step), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b", "--host-only",
                       "--out", str(out)])
    (after,) = EvidenceTable.load(out).records()
    assert after.host_us == pytest.approx(600.0) and after.host_source.startswith("host/step.json: b vs a")
    assert (after.fused_us, after.opaque_us, after.source) == (before.fused_us, before.opaque_us, before.source)
    assert cut_evidence.main([str(kernels), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b", "--host-only",
                              "--out", str(out)]) != 0
    assert "did not time a and b's host per pass" in capsys.readouterr().err
    assert cut_evidence.main([str(step), "--spec", "rope_bwd", "--fused", "a", "--opaque", "b", "--host-only",
                              "--out", str(tmp_path / "empty.json")]) != 0
    assert re.search("no rope_bwd record for .* to add a host time to", capsys.readouterr().err)
    assert cut_evidence.main([str(step), "--spec", "rope_bwd", "--claimed", "a", "--declined", "b",
                              "--host-only"]) == 2
