"""Trace readers check what they read (issue 76 item 3): a negative, non-finite or out-of-range time, duration, size
or count is refused where it is read, naming the file and the event or row, in every reader (chrome JSON, .json.gz,
nsys SQLite); and a file's format is read from its bytes, so a suffix that lies, or a file of no trace format, is
named and refused instead of misread."""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sqlite3

import pytest

from segkit import trace
from segkit.trace.model import TraceError
from segkit_cli.main import main as cli_main
from tests.synthetic_nsys import RECORDED


def _chrome(kernel_dur=5.0, kernel_ts=110.0, **kernel_args) -> dict:
    """A one-step chrome trace: a step range and two GEMM kernels (the second one's fields as given)."""
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 101.0, "dur": 2.0, "tid": 1,
              "args": {"correlation": 1}}
    return {"traceEvents": [
        {"ph": "X", "cat": "user_annotation", "name": "step", "ts": 100.0, "dur": 50.0, "tid": 1},
        launch, {**launch, "ts": 104.0, "args": {"correlation": 2}},
        {"ph": "X", "cat": "kernel", "name": "nvjet_gemm", "ts": 102.0, "dur": 2.0, "args": {"correlation": 1}},
        {"ph": "X", "cat": "kernel", "name": "nvjet_gemm", "ts": kernel_ts, "dur": kernel_dur,
         "args": {"correlation": 2, **kernel_args}}]}


def _write(path, data) -> str:
    text = json.dumps(data)
    (gzip.open(path, "wt") if path.name.endswith(".gz") else open(path, "w")).write(text)
    return str(path)


def test_a_good_profile_reads(tmp_path, capsys):
    assert cli_main(["trace", "breakdown", _write(tmp_path / "t.json", _chrome()), "--format", "json"]) == 0
    gemm = json.loads(capsys.readouterr().out)["breakdown"][1]
    assert gemm["per step"] == "gemm" and gemm["t us"] == 7.0 and gemm["t kernels"] == 2


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
@pytest.mark.parametrize("fields, message", [
    (dict(kernel_dur=-3.0), r"traceEvents\[4\] dur: -3000 is negative"),
    (dict(kernel_dur=1e308), r"traceEvents\[4\] dur: expected a finite number of microseconds within 64 bits"),
    (dict(kernel_ts=-110.0), r"traceEvents\[4\] ts: -110000 is negative"),
    (dict(grid=[-1, 1, 1]), r"traceEvents\[4\] grid: -1 is negative"),
    (dict(registers_per_thread="nan"), r"registers per thread: expected a finite number"),
])
def test_a_bad_number_in_a_chrome_trace_is_refused_naming_the_event(tmp_path, capsys, suffix, fields, message):
    """Before: a kernel of -3 us read as "gemm 7.00 us, 2 kernels" (-3 + 2 + ... summed), 1e308 as an unexpected
    error asking for a bug report."""
    fields = {k.replace("_", " ") if k == "registers_per_thread" else k: v for k, v in fields.items()}
    path = _write(tmp_path / f"t{suffix}", _chrome(**fields))
    with pytest.raises(TraceError, match=message):
        trace.load(path)
    assert cli_main(["trace", "breakdown", path]) != 0
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and path in err and "unexpected" not in err and "Traceback" not in err, err


def _nsys(tmp_path, *statements) -> str:
    p = tmp_path / "r.sqlite"
    shutil.copy(RECORDED, p)
    con = sqlite3.connect(p)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return str(p)


FIRST = "(SELECT rowid FROM {} ORDER BY start LIMIT 1)"


@pytest.mark.parametrize("statement, message", [
    (f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = -5, \"end\" = 10 WHERE rowid = "
     f"{FIRST.format('CUPTI_ACTIVITY_KIND_KERNEL')}", r"CUPTI_ACTIVITY_KIND_KERNEL row 0 column start: -5 is negative"),
    (f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 1e308 WHERE rowid = "
     f"{FIRST.format('CUPTI_ACTIVITY_KIND_KERNEL')}", r"CUPTI_ACTIVITY_KIND_KERNEL row 0 column end: .* 64 bits"),
    (f"UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET registersPerThread = -2 WHERE rowid = "
     f"{FIRST.format('CUPTI_ACTIVITY_KIND_KERNEL')}", r"row 0 column registersPerThread: -2 is negative"),
    ("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET gridX = 'inf'", r"column gridX: expected a finite number"),
    (f"UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = start - 1 WHERE rowid = "
     f"{FIRST.format('CUPTI_ACTIVITY_KIND_RUNTIME')}", r"CUPTI_ACTIVITY_KIND_RUNTIME row 0: ends \(\d+\) before"),
    ("UPDATE NVTX_EVENTS SET \"end\" = start - 1 WHERE eventType = 59", r"NVTX_EVENTS row \d+: ends \(\d+\) before"),
])
def test_a_bad_number_in_an_nsys_export_is_refused_naming_the_row(tmp_path, capsys, statement, message):
    path = _nsys(tmp_path, statement)
    with pytest.raises(TraceError, match=message):
        trace.load(path)
    assert cli_main(["trace", "show", path]) != 0
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and path in err and "unexpected" not in err, err


def test_a_suffix_that_lies_is_named_with_what_the_bytes_are(tmp_path):
    chrome = _write(tmp_path / "real.json", _chrome())
    cases = {  # file name -> its bytes, and what the error says
        "nsys.json": (RECORDED.read_bytes(), "named .json but its bytes are SQLite, not JSON: rename it to .sqlite"),
        "chrome.sqlite": (open(chrome, "rb").read(), "named .sqlite but its bytes are JSON, not SQLite: rename it to "
                                                     ".json"),
        "zipped.json": (gzip.compress(open(chrome, "rb").read()), "named .json but its bytes are gzip"),
        "plain.json.gz": (open(chrome, "rb").read(), "named .json.gz but its bytes are JSON, not gzip"),
        "chrome.nsys-rep": (open(chrome, "rb").read(), "named .nsys-rep but its bytes are JSON"),
        "empty.json": (b"", "empty file"),
        "text.json": (b"step,us\n1,2\n", "named .json but its bytes are none of gzip, SQLite or JSON"),
        "results.json": (b'{"case": 1}\n{"case": 2}\n', "JSON lines (one value per line"),
        "cut.json.gz": (gzip.compress(open(chrome, "rb").read())[:-12], "damaged or truncated gzip"),
        "cut.json": (open(chrome, "rb").read()[:-30], "line 1 column"),
    }
    for name, (data, message) in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        with pytest.raises(TraceError) as got:
            trace.load(p)
        assert str(p) in str(got.value) and message in str(got.value), (name, str(got.value))


def test_a_file_without_a_trace_suffix_is_read_by_its_bytes(tmp_path):
    p = tmp_path / "profile"
    shutil.copy(RECORDED, p)
    assert trace.load(p).kernels == trace.load(RECORDED).kernels
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(TraceError, match="unknown trace type: its bytes are none of"):
        trace.load(tmp_path / "notes.txt")


@pytest.mark.parametrize("argv, tables", [
    (["show", "{t}"], "kernels, ranges, notes"),
    (["compare", "{t}", "{t}"], "ranges"),
    (["compare", "{t}", "{t}", "--by", "launch"], "launches, by kind"),
    (["idle", "{t}"], "summary"),
    (["breakdown", "{t}"], "breakdown"),
])
@pytest.mark.parametrize("to_dir", [True, False], ids=["csv-dir", "stdout"])
def test_a_table_not_there_is_named_with_the_tables_there(tmp_path, capsys, argv, tables, to_dir):
    """Before: ``--csv-dir DIR --table nosuch`` wrote nothing and said nothing, exit 0."""
    t = _write(tmp_path / "t.json", _chrome())
    out = tmp_path / "csv"
    argv = ["trace", *(a.format(t=t) for a in argv), "--format", "csv", "--table", "nosuch"]
    assert cli_main(argv + (["--csv-dir", str(out)] if to_dir else [])) != 0
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "--table 'nosuch': no such table; tables: " in lines[0], captured.err
    assert tables in lines[0] and not captured.out and not out.exists()


def test_a_trace_named_without_its_suffix_is_read_by_its_bytes(tmp_path, capsys):
    """A chrome trace saved as ``profile`` (no suffix) is a trace: the command line reads it by its bytes, as
    segkit.trace.load does; a file of no trace format is still refused, naming what its bytes are."""
    from segkit.cli import argtypes

    trace = tmp_path / "profile"
    trace.write_text(json.dumps({"traceEvents": []}))
    assert argtypes.trace_file(str(trace)) == trace
    text = tmp_path / "notes"
    text.write_text("not a trace\n")
    with pytest.raises(argparse.ArgumentTypeError, match=r"notes: unknown trace type: its bytes are none of gzip"):
        argtypes.trace_file(str(text))
    named = tmp_path / "run.sqlite"
    named.write_text(json.dumps({"traceEvents": []}))
    with pytest.raises(argparse.ArgumentTypeError, match=r"named .sqlite but its bytes are JSON.*rename it to .json"):
        argtypes.trace_file(str(named))
