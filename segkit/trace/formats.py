"""What a trace file holds, read from its bytes (its suffix can lie: a chrome trace saved as .sqlite, a gzip
named .json, a results.jsonl passed by mistake): gzip, SQLite, JSON, JSON lines, or none of them."""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path

from segkit.trace.model import TraceError

GZIP, SQLITE, JSON, EMPTY = "gzip", "SQLite", "JSON", "empty"
OTHER = "none of gzip, SQLite or JSON"

#: What each suffix segkit.trace.load reads promises the bytes are (.nsys-rep: nsys's own format, none of these).
PROMISED = {".sqlite": SQLITE, ".db": SQLITE, ".json": JSON, ".json.gz": GZIP, ".nsys-rep": OTHER}


def suffix(path: Path) -> str | None:
    """The trace suffix of ``path`` (``.json.gz`` whole), or None."""
    return next((s for s in PROMISED if path.name.endswith(s)), None)


def sniff(path: Path) -> str:
    """The format of ``path`` by its first bytes: GZIP, SQLITE, JSON (text starting with ``{`` or ``[``; JSON lines
    are told apart by ``json_or_lines``), EMPTY or OTHER. An unreadable file is a TraceError naming it."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as e:
        raise TraceError(f"{path}: cannot be read ({e.strerror or e})") from None
    if not head:
        return EMPTY
    if head.startswith(b"\x1f\x8b"):
        return GZIP
    if head.startswith(b"SQLite format 3\x00"):
        return SQLITE
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        return JSON
    return OTHER


def json_or_lines(text: str, path: Path):
    """The JSON value ``text`` holds; JSON lines (one value per line: a results file, not a chrome trace) or
    malformed JSON is a TraceError naming the file and the line."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        if e.msg == "Extra data" and _first_line_is_json(text):
            raise TraceError(f"{path}: JSON lines (one value per line, a results file?), not a chrome trace (one "
                             "JSON object with traceEvents, as torch.profiler's export_chrome_trace writes)") from None
        raise TraceError(f"{path}: line {e.lineno} column {e.colno}: not readable JSON ({e.msg})") from None
    except RecursionError:
        raise TraceError(f"{path}: JSON nested too deep to read") from None


def _first_line_is_json(text: str) -> bool:
    line = text.lstrip().split("\n", 1)[0]
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def read_text(path: Path, fmt: str) -> str:
    """The text of a JSON or gzip-compressed JSON file; a truncated or damaged one is a TraceError naming it."""
    try:
        if fmt == GZIP:
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return f.read()
        return path.read_text(encoding="utf-8")
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(f"{path}: damaged or truncated gzip ({type(e).__name__}: {e})") from None
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text at byte {e.start} ({e.reason})") from None


def check_suffix(path: Path, fmt: str) -> None:
    """A TraceError when ``path``'s suffix promises another format than its bytes hold, or it holds no trace
    format; a gzip named .json.gz must hold JSON (checked by the reader)."""
    promised = PROMISED.get(suffix(path) or "")
    if fmt == EMPTY:
        raise TraceError(f"{path}: empty file: not a trace (was the profile written?)")
    if promised is None:
        if fmt == OTHER:
            raise TraceError(f"{path}: unknown trace type: its bytes are {OTHER} (expected an nsys report "
                             ".nsys-rep, its SQLite export .sqlite, or a chrome trace .json / .json.gz)")
        return
    if promised != fmt:
        what = {SQLITE: ".sqlite", GZIP: ".json.gz", JSON: ".json"}.get(fmt)
        fix = f"rename it to {what}" if what else "it is no trace segkit reads"
        raise TraceError(f"{path}: named {suffix(path)} but its bytes are {fmt}, not {promised}: {fix}")
