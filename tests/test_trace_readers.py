"""The nsys reader on damaged and large profiles: a damaged string table or file is refused with what is wrong,
an empty kernel table is said in words, and kernels are matched to ranges in time linear in the trace (checked
against the pairwise definition)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections import Counter

import pytest

from segkit import trace
from segkit.trace.model import Kernel, Range, TraceError, attach_kernels
from segkit_cli.main import main as cli_main
from tests.synthetic_nsys import RECORDED, write_profile


def _copy(tmp_path, name="r.sqlite"):
    p = tmp_path / name
    shutil.copy(RECORDED, p)
    return p


def _sql(path, *statements):
    con = sqlite3.connect(path)
    try:
        rows = [con.execute(s).fetchall() for s in statements]
        con.commit()
        return rows[-1]
    finally:
        con.close()


def test_flipped_bytes_in_a_kernel_name_are_refused(tmp_path, capsys):
    """Bytes flipped in the file where StringIds holds a kernel's name: read as if valid before (exit 0)."""
    p = _copy(tmp_path)
    (name,) = _sql(p, "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName "
                      "ORDER BY k.start LIMIT 1")[0]
    data = bytearray(p.read_bytes())
    at = [i for i in range(len(data)) if data.startswith(name.encode(), i)]  # the name, and names holding it
    assert at
    for i in at:
        data[i + 3] ^= 0x80  # ASCII with its high bit set: not UTF-8
    p.write_bytes(bytes(data))
    with pytest.raises(TraceError, match=r"StringIds id \d+ is not valid UTF-8.*string table is damaged"):
        trace.load(p)
    assert cli_main(["trace", "show", str(p)]) != 0
    assert "not valid UTF-8" in capsys.readouterr().err


def test_a_name_id_missing_from_the_string_table_is_refused(tmp_path):
    p = _copy(tmp_path)
    _sql(p, "DELETE FROM StringIds WHERE id = (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1)")
    with pytest.raises(TraceError, match=r"CUPTI_ACTIVITY_KIND_KERNEL row \d+ column shortName: string id \d+ is "
                                         "not in StringIds"):
        trace.load(p)


def test_a_range_name_id_missing_from_the_string_table_is_refused(tmp_path):
    p = _copy(tmp_path)
    _sql(p, "UPDATE NVTX_EVENTS SET textId = 999999, text = NULL WHERE rowid = (SELECT min(rowid) FROM NVTX_EVENTS "
            "WHERE eventType = 59)")
    with pytest.raises(TraceError, match="NVTX_EVENTS row .* column textId: string id 999999 is not in StringIds"):
        trace.load(p)


def test_a_damaged_b_tree_page_is_refused(tmp_path):
    """One byte flipped in a cell pointer of a StringIds page: the rows still read (before, exit 0), SQLite's
    quick_check sees the damage."""
    p = _copy(tmp_path)
    pages = [n for (n,) in _sql(p, "SELECT pageno FROM dbstat WHERE name = 'StringIds' AND pagetype = 'leaf'")]
    page_size = _sql(p, "PRAGMA page_size")[0][0]
    original = p.read_bytes()
    for page in pages:  # the first page where the flip is structural damage (not, say, a free byte)
        data = bytearray(original)
        data[(page - 1) * page_size + 115] ^= 0xFF
        p.write_bytes(bytes(data))
        con = sqlite3.connect(p)
        try:
            damaged = con.execute("PRAGMA quick_check").fetchall() != [("ok",)]
        except sqlite3.DatabaseError:
            damaged = False  # unreadable outright: another test's case
        con.close()
        if damaged:
            break
    else:
        pytest.fail("no StringIds page where one flipped byte is damage quick_check sees")
    with pytest.raises(TraceError, match="damaged SQLite file"):
        trace.load(p)


def test_an_empty_kernel_table_is_said(tmp_path, capsys):
    p = _copy(tmp_path)
    _sql(p, "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL")
    t = trace.load(p)
    assert t.kernels == [] and any(m.startswith("no kernels") for m in t.missing)
    assert cli_main(["trace", "show", str(p)]) == 0
    out = capsys.readouterr().out
    assert "note: no kernels: CUPTI_ACTIVITY_KIND_KERNEL is empty" in out
    assert cli_main(["trace", "show", str(p), "--format", "json"]) == 0
    assert "no kernels" in capsys.readouterr().out


def _pairwise(ranges: list[Range], kernels: list[Kernel]) -> dict[int, list[int]]:
    """The definition: a kernel belongs to every range containing its launch (else its start) on its thread."""
    out = {}
    for r in ranges:
        out[id(r)] = []
        for i, k in enumerate(kernels):
            t, thread = (k.start_ns, None) if k.launch_ns is None else (k.launch_ns, k.thread)
            if r.start_ns <= t <= r.end_ns and (thread is None or r.thread is None or r.thread == thread):
                out[id(r)].append(i)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_kernels_matched_to_ranges_as_pairwise(tmp_path, seed):
    t = trace.load(write_profile(tmp_path / "small.sqlite", 300, 400, seed=seed))
    assert len(t.kernels) == 400 and len(t.ranges) > 250
    assert any(k.launch_ns is None for k in t.kernels) and any(r.thread is None for r in t.ranges)
    index = {id(k): i for i, k in enumerate(t.kernels)}
    got = {id(r): [index[id(k)] for k in r.kernels] for r in t.ranges}
    assert got == _pairwise(t.ranges, t.kernels)
    assert sum(map(len, got.values())) > 400  # nested ranges share kernels


def test_kernels_matched_at_range_ends_and_on_no_thread():
    """Ends included; a kernel with no launch call in every thread's ranges; a range of no thread takes any."""
    ranges = [Range("a", 0, 10, thread=1), Range("b", 10, 20, thread=2), Range("c", 5, 15), Range("d", 30, 40)]
    kernels = [Kernel("k0", 10, 1, launch_ns=10, thread=1), Kernel("k1", 12, 1), Kernel("k2", 15, 1, launch_ns=15,
                                                                                          thread=3)]
    missing: list[str] = []
    attach_kernels(ranges, kernels, missing)
    assert [[k.name for k in r.kernels] for r in ranges] == [["k0"], ["k1"], ["k0", "k1", "k2"], []]
    assert missing and "GPU start" in missing[0]


def test_a_large_profile_loads_in_linear_time(tmp_path):
    """20000 ranges and 20000 kernels: pairwise matching took ~30 s; the sweep ~1 s (bound kept loose)."""
    p = write_profile(tmp_path / "large.sqlite", 20000, 20000)
    start = time.perf_counter()
    t = trace.load(p)
    elapsed = time.perf_counter() - start
    assert len(t.kernels) == 20000 and len(t.ranges) >= 20000
    in_steps = Counter(id(k) for r in t.ranges_named("step") for k in r.kernels)
    assert all(in_steps[id(k)] == 1 for k in t.kernels if k.launch_ns is not None)  # launched in one step each
    assert elapsed < 10, f"loading took {elapsed:.1f} s"
