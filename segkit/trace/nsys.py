"""Read nsys reports: export .nsys-rep to SQLite with ``nsys export``, then read the tables that are there.

Tables and columns are looked up by name in the file (PRAGMA table_info), so a
report from an older or newer nsys loads what it has; everything it lacks is
listed in ``Trace.missing``.
"""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

from segkit.trace.model import ApiCall, Kernel, Range, Trace, TraceError, attach_kernels, set_depths, to_int

KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
STRINGS = "StringIds"
GPU_INFO = "TARGET_INFO_GPU"
NVTX_PUSH_POP, NVTX_START_END, NVTX_DOMAIN_CREATE = 59, 60, 75


def export_sqlite(report: Path) -> Path:
    """``nsys export --type sqlite`` next to the report (reused when newer than the report)."""
    out = report.with_suffix(".sqlite")
    if out.exists() and out.stat().st_mtime >= report.stat().st_mtime:
        return out
    nsys = shutil.which("nsys")
    if nsys is None:
        raise TraceError(f"{report}: reading .nsys-rep needs nsys on PATH (or export it: nsys export --type sqlite)")
    proc = subprocess.run([nsys, "export", "--type", "sqlite", "--force-overwrite", "true", "-o", str(out), str(report)],
                          capture_output=True, text=True)
    if proc.returncode != 0 or not out.exists():
        raise TraceError(f"{report}: nsys export failed: {(proc.stderr or proc.stdout).strip()[-500:]}")
    return out


class _Db:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            self.con.text_factory = lambda b: b.decode("utf-8", "replace")  # a damaged string is still a string
            self.tables = {r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as e:
            raise TraceError(f"{path}: not a readable SQLite database ({e})") from None

    def columns(self, table: str) -> set[str]:
        return {r[1] for r in self.con.execute(f"PRAGMA table_info({table})")}

    def rows(self, table: str, wanted: list[str], missing: list[str]) -> list[dict]:
        """Rows of ``table`` with the wanted columns that exist (absent ones read as None, and noted)."""
        have = self.columns(table)
        absent = [c for c in wanted if c not in have]
        if absent:
            missing.append(f"{table} lacks column(s) {', '.join(absent)}")
        present = [c for c in wanted if c in have]
        try:
            cur = self.con.execute(f"SELECT {', '.join(present)} FROM {table}")
            return [dict(zip(present, r), **{c: None for c in absent}) for r in cur]
        except sqlite3.DatabaseError as e:
            raise TraceError(f"{self.path}: table {table} cannot be read ({e})") from None


def _quick_check(db: _Db) -> None:
    """SQLite's own structural check (pages, b-trees, records; not the indexes' contents): a file damaged in
    place reads as rows of garbage, or as fewer rows, without it."""
    problems = [str(r[0]) for r in db.con.execute("PRAGMA quick_check(5)")]
    if problems != ["ok"]:
        raise TraceError(f"{db.path}: damaged SQLite file (PRAGMA quick_check: {'; '.join(problems)[:300]})")


class _Strings:
    """nsys's string table (StringIds): the names kernels, launch calls and ranges refer to by id. An id that is
    not in the table, or whose bytes are not UTF-8, is a TraceError naming the row that refers to it: a damaged
    table would otherwise name kernels and ranges wrongly. Without the table, names read as their ids (noted)."""

    def __init__(self, db: _Db, path: Path, missing: list[str]) -> None:
        self.path, self.raw = path, None
        if STRINGS in db.tables:
            self.raw = dict(db.con.execute(f"SELECT id, CAST(value AS BLOB) FROM {STRINGS}"))
        else:
            missing.append(f"{STRINGS} table absent: names read as ids")
        self.decoded: dict = {}

    def __call__(self, i, table: str, row: int, column: str) -> str:
        if i is None:
            return ""
        if self.raw is None:
            return str(i)
        if i in self.decoded:
            return self.decoded[i]
        where = f"{self.path}: {table} row {row} column {column}"
        if i not in self.raw:
            raise TraceError(f"{where}: string id {i!r:.40} is not in {STRINGS}: the string table is damaged or "
                             "incomplete")
        value = self.raw[i]
        try:
            text = value.decode("utf-8") if isinstance(value, bytes) else str(value)
        except UnicodeDecodeError as e:
            raise TraceError(f"{where}: {STRINGS} id {i} is not valid UTF-8 ({e.reason} at byte {e.start}: "
                             f"{value[max(e.start - 20, 0):e.start + 10]!r}): the string table is damaged") from None
        self.decoded[i] = text
        return text


def load_sqlite(path: Path) -> Trace:
    """A Trace from an nsys SQLite export; a damaged file or a field of the wrong type is a TraceError."""
    try:
        return _load_sqlite(path)
    except sqlite3.Error as e:
        raise TraceError(f"{path}: damaged or not an nsys SQLite export ({type(e).__name__}: {e})") from None
    except (RecursionError, MemoryError, OverflowError, UnicodeError) as e:
        raise TraceError(f"{path}: cannot be read ({type(e).__name__}: {e})") from None


def _load_sqlite(path: Path) -> Trace:
    db = _Db(path)
    if not db.tables & {KERNELS, NVTX, RUNTIME}:
        raise TraceError(f"{path}: not an nsys report (none of {KERNELS}, {NVTX}, {RUNTIME} is in it)")
    _quick_check(db)
    missing: list[str] = []
    text = _Strings(db, path, missing)

    def num(r: dict, col: str, table: str, n: int, optional: bool = True):
        return to_int(r[col], f"{path}: {table} row {n} column {col}", optional)

    api = []
    if RUNTIME in db.tables:
        for n, r in enumerate(db.rows(RUNTIME, ["start", "end", "correlationId", "nameId", "globalTid"], missing)):
            start, end = num(r, "start", RUNTIME, n, False), num(r, "end", RUNTIME, n, False)
            if end < start:
                raise TraceError(f"{path}: {RUNTIME} row {n}: ends ({end}) before it starts ({start})")
            api.append(ApiCall(text(r["nameId"], RUNTIME, n, "nameId"), start, end,
                               num(r, "correlationId", RUNTIME, n), num(r, "globalTid", RUNTIME, n)))
    else:
        missing.append(f"{RUNTIME} table absent: no launch calls (host latency and range attribution by GPU time)")
    launches = {a.correlation_id: a for a in api if a.correlation_id is not None}

    kernels = []
    if KERNELS in db.tables:
        cols = ["start", "end", "streamId", "correlationId", "gridX", "gridY", "gridZ", "blockX", "blockY", "blockZ",
                "registersPerThread", "staticSharedMemory", "dynamicSharedMemory", "shortName", "demangledName"]
        for n, r in enumerate(db.rows(KERNELS, cols, missing)):
            r = {c: (r[c] if c in ("shortName", "demangledName") else num(r, c, KERNELS, n, c not in ("start", "end")))
                 for c in cols}
            call = launches.get(r["correlationId"])
            grid = (r["gridX"], r["gridY"], r["gridZ"]) if None not in (r["gridX"], r["gridY"], r["gridZ"]) else None
            block = (r["blockX"], r["blockY"], r["blockZ"]) if None not in (r["blockX"], r["blockY"], r["blockZ"]) else None
            if r["end"] < r["start"]:
                raise TraceError(f"{path}: {KERNELS} row {n}: ends ({r['end']}) before it starts ({r['start']})")
            demangled = text(r["demangledName"], KERNELS, n, "demangledName")
            kernels.append(Kernel(
                name=text(r["shortName"], KERNELS, n, "shortName") or demangled, start_ns=r["start"],
                duration_ns=r["end"] - r["start"], demangled=demangled, stream=r["streamId"],
                grid=grid, block=block, registers_per_thread=r["registersPerThread"],
                static_smem=r["staticSharedMemory"], dynamic_smem=r["dynamicSharedMemory"],
                correlation_id=r["correlationId"], launch_ns=call.start_ns if call else None,
                thread=call.thread if call else None))
    else:
        missing.append(f"{KERNELS} table absent: no kernels (was the run traced with --trace=cuda?)")
    if KERNELS in db.tables and not kernels:
        missing.append(f"no kernels: {KERNELS} is empty (the run launched no CUDA kernel while traced, or the "
                       "export lost them); kernel times and range attribution are all empty")

    ranges = []
    if NVTX in db.tables:
        rows = db.rows(NVTX, ["start", "end", "eventType", "text", "textId", "globalTid", "domainId"], missing)
        for n, r in enumerate(rows):
            for c in ("start", "end", "eventType", "globalTid", "domainId"):
                r[c] = num(r, c, NVTX, n)
            r["text"] = None if r["text"] is None else str(r["text"])
        domains = {r["domainId"]: r["text"] or text(r["textId"], NVTX, n, "textId")
                   for n, r in enumerate(rows) if r["eventType"] == NVTX_DOMAIN_CREATE}
        for n, r in enumerate(rows):
            if r["eventType"] not in (NVTX_PUSH_POP, NVTX_START_END) or r["start"] is None or r["end"] is None:
                continue  # a marker, a domain, or a range never closed
            if r["end"] < r["start"]:
                raise TraceError(f"{path}: {NVTX} row {n}: ends ({r['end']}) before it starts ({r['start']})")
            ranges.append(Range(r["text"] or text(r["textId"], NVTX, n, "textId"), r["start"], r["end"],
                                thread=r["globalTid"], domain=domains.get(r["domainId"])))
    else:
        missing.append(f"{NVTX} table absent: no ranges (was the run traced with --trace=nvtx?)")
    set_depths(ranges)
    attach_kernels(ranges, sorted(kernels, key=lambda k: k.start_ns), missing)

    gpu = None
    if GPU_INFO in db.tables and "name" in db.columns(GPU_INFO):
        row = db.con.execute(f"SELECT name FROM {GPU_INFO} LIMIT 1").fetchone()
        gpu = str(row[0]) if row and row[0] is not None else None
    return Trace(str(path), "nsys", sorted(kernels, key=lambda k: k.start_ns), ranges, api, gpu, missing)
