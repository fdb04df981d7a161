"""Writes that cannot lose data, on the tools beside ``segkit`` (issue 76 item 2): each case the issue found losing
a file (the gate's outputs onto its inputs, the step table's --merge onto a run, a summary over a user's
summary.md, --append through a link onto the input, a 1-case --write-durations over the committed 659-case file,
sweep -o a directory) is refused before the work, or merged, and nothing is left behind (no temp file, the input
byte for byte as it was). In-process (``main([...])``), on CPU.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from benchmarks import gate, summarize
from segkit.errors import UsageError
from segkit.files import protected, write_atomic, write_text_atomic
from sweep import launch, plan
from tests.conftest import ROOT

MACHINE = {"gpu": "NVIDIA H200", "driver": "580", "torch": "2.11", "nvfuser_direct": "0.2", "commit": "abc1234",
           "date": "2026-11-29"}


def bench_run(path, us: float = 110.0):
    """A pytest-benchmark run of one headline case."""
    path.write_text(json.dumps({"datetime": "2026-11-29T10:37:15+00:00", "benchmarks": [{
        "name": "test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward-segkit]",
        "fullname": "benchmarks/test_qkv_split_rope.py::test_qkv_split_rope[Llama-2-13b-hf_bs2-bfloat16-forward-segkit]",
        "params": {"shape": "Llama-2-13b-hf_bs2", "dtype": "bfloat16", "mode": "forward", "executor": "segkit"},
        "stats": {"min": us * 1e-6, "max": us * 1e-6}, "extra_info": {"kernel_us_median": us}}],
        "machine_info": {"machine": MACHINE}}))
    return path


def sweep_tests(path):
    path.write_text(json.dumps({"sweep": {"counts": {"passed": 1}, "complete": True, "outcomes": {"t": "passed"}}}))
    return path


def _leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.tmp"))


def _refused(capsys, code: int, *words: str) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and all(w in err for w in words), (code, err)
    assert "Traceback" not in err
    return err


def test_gate_compare_never_writes_its_ids_over_the_run(tmp_path, capsys):
    """``compare RUN.json --rerun-ids RUN.json`` once truncated the run to 0 bytes, exit 0."""
    run = bench_run(tmp_path / "headline.json")
    before = run.read_bytes()
    _refused(capsys, gate.main(["compare", str(run), "--rerun-ids", str(run)]), "--rerun-ids", "is the input")
    link = tmp_path / "ids.txt"
    link.symlink_to(run)  # through a link too
    _refused(capsys, gate.main(["compare", str(run), "--rerun-ids", str(link)]), "is the input")
    assert run.read_bytes() == before and not _leftovers(tmp_path)


def test_gate_record_never_writes_over_its_run_or_a_file_of_another_kind(tmp_path, capsys, monkeypatch):
    """``record --bench RUN.json -o RUN.json`` once replaced the run with the record; a JSON file that is not a
    gate record is written over only with --force."""
    monkeypatch.setattr(gate, "load_baseline", lambda path=None: {})
    run, tests = bench_run(tmp_path / "headline.json"), sweep_tests(tmp_path / "gpu_tests.json")
    before = run.read_bytes()
    argv = ["record", "--tests", str(tests), "--bench", str(run), "--commit", "c"]
    _refused(capsys, gate.main([*argv, "-o", str(run)]), "--out", "is the input")
    assert run.read_bytes() == before
    notes = tmp_path / "notes.json"
    notes.write_text(json.dumps({"todo": ["mine"]}))
    _refused(capsys, gate.main([*argv, "-o", str(notes)]), "not one this command wrote", "--force")
    assert json.loads(notes.read_text()) == {"todo": ["mine"]}
    assert gate.main([*argv, "-o", str(notes), "--force"]) == 1  # written (the gate fails: nothing judged)
    assert json.loads(notes.read_text())["gate"] == "fail"
    assert gate.main([*argv, "-o", str(notes)]) == 1  # its own record now: written over without --force
    assert not _leftovers(tmp_path)


def test_model_step_merge_never_writes_its_table_over_a_run(tmp_path, capsys):
    """``model_step.py --merge a.json b.json --out a.json`` once turned a.json into a markdown table."""
    from benchmarks.model_step import main

    doc = {"machine": MACHINE, "run": {}, "rows": [{"case": "llama3-8b-x1", "variant": "thunder", "ms": 5.0}]}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(doc))
    b.write_text(json.dumps(doc))
    before = a.read_bytes()
    _refused(capsys, main(["--merge", str(a), str(b), "--out", str(a)]), "--out", "is the input")
    _refused(capsys, main(["--merge", str(a), str(b), "--json", str(b)]), "--json", "is the input")
    assert a.read_bytes() == before and not _leftovers(tmp_path)


def test_summarize_never_writes_over_a_users_summary(tmp_path, capsys):
    """``summarize RUN OUT_DIR`` once overwrote the user's summary.md; a folder that holds a user's files is
    refused, a new one is taken (and then is summarize's own)."""
    run = bench_run(tmp_path / "headline.json")
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "summary.md").write_text("my notes\n")
    _refused(capsys, summarize.main([str(run), str(mine)]), "holds files segkit did not write", "summary.md")
    assert (mine / "summary.md").read_text() == "my notes\n"
    out = tmp_path / "out"
    assert summarize.main([str(run), str(out)]) == 0 and (out / "summary.md").exists()
    assert summarize.main([str(run), str(out)]) == 0  # its own folder: written again
    assert not _leftovers(tmp_path)


def test_append_through_a_link_onto_the_input_is_refused(tmp_path, capsys):
    """``--append`` through a link onto the run once doubled the run file."""
    log = tmp_path / "run.jsonl"
    log.write_text(json.dumps({"name": "test_x[a]", "params": {"executor": "segkit"},
                               "extra_info": {"kernel_us_median": 1.0}, "machine": MACHINE}) + "\n")
    before = log.read_bytes()
    link = tmp_path / "data.jsonl"
    link.symlink_to(log)
    _refused(capsys, summarize.main([str(log), "--append", str(link), "--run", "r"]), "--append", "is the input")
    hard = tmp_path / "hard.jsonl"
    os.link(log, hard)
    _refused(capsys, summarize.main([str(log), "--append", str(hard), "--run", "r"]), "is the input")
    assert log.read_bytes() == before and not _leftovers(tmp_path)


def test_write_durations_merges_into_the_committed_file(tmp_path, monkeypatch, capsys):
    """A 1-case ``--write-durations`` once replaced the committed 659-case file with 1 case, silently: it merges,
    saying how many cases it added, replaced and kept."""
    committed = ROOT / "benchmarks" / "durations" / "tests-h200.json"
    monkeypatch.setattr(plan, "DURATIONS_DIR", tmp_path)
    shutil.copy(committed, tmp_path / committed.name)
    before = json.loads(committed.read_text())["durations"]
    one, new = next(iter(before)), "tests/test_new.py::test_new"
    merged = tmp_path / "one.json"
    merged.write_text(json.dumps({"machine": MACHINE, "sweep": {"pytest_args": json.loads(committed.read_text())["suite"],
                                                                "durations": {one: 99.0, new: 1.5}}}))
    assert launch.main(["--write-durations", str(merged)]) == 0
    said = capsys.readouterr().out
    assert f"{len(before) + 1} case(s): 1 added and 1 replaced" in said and f"{len(before) - 1} kept" in said, said
    written = json.loads((tmp_path / committed.name).read_text())
    assert written["cases"] == len(written["durations"]) == len(before) + 1
    assert written["durations"][one] == 99.0 and written["durations"][new] == 1.5
    assert all(written["durations"][c] == s for c, s in before.items() if c != one)


def test_sweep_refuses_an_output_that_is_a_directory_before_running_anything(tmp_path, capsys):
    """``sweep -o EXISTING_DIR`` once ran every case, then failed with a traceback and left a stray temp file."""
    out = tmp_path / "results"
    out.mkdir()
    code = launch.main(["--devices", "0", "-o", str(out), "--", "tests/test_nothing_here.py"])
    _refused(capsys, code, "-o/--output", "is a directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"] and not any(out.iterdir())


def test_the_atomic_writer_refuses_a_directory_or_an_input_and_leaves_no_temp_file(tmp_path):
    folder = tmp_path / "d"
    folder.mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        write_text_atomic(folder, "x")
    src = tmp_path / "in.json"
    src.write_text("keep")
    link = tmp_path / "link.json"
    link.symlink_to(src)
    with protected([src]):
        with pytest.raises(UsageError, match="is the input"):
            write_atomic(link, "lost")
    assert src.read_text() == "keep"
    write_atomic(link, "new")  # outside the command: a link's target is written, the link kept
    assert link.is_symlink() and src.read_text() == "new"
    with pytest.raises(TypeError):
        write_atomic(tmp_path / "x.json", object())  # a failed write
    assert not _leftovers(tmp_path) and not (tmp_path / "x.json").exists()
