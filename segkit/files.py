"""Result files: written so that an interrupted run never leaves half of one (a tuning table, a campaign index),
and read whether or not the lab keeps them gzipped."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``path`` whole or not at all: a sibling temporary file, then renamed over ``path`` (a process killed
    while saving leaves the previous file)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def read_text(path: Path | str) -> str:
    """A result file's text, gunzipped when it is gzip data (by its first bytes, whatever its name says). A file
    that is neither UTF-8 text nor gzip of it is a ValueError of one line (the file, what it is not), never the
    decoder's dump of its bytes."""
    path = Path(path)
    data = path.read_bytes()
    try:
        if data[:2] == GZIP_MAGIC:
            data = gzip.decompress(data)
        return data.decode()
    except (EOFError, OSError, zlib.error) as e:
        raise ValueError(f"{path}: truncated or corrupt gzip data ({e})") from None
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte 0x{data[e.start]:02x} at offset {e.start})") from None
