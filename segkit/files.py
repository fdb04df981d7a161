"""Result files: written so that an interrupted run never leaves half of one (a tuning table, a campaign index, a
gate record), never onto a directory or an input of the running command, and read whether or not the lab keeps
them gzipped."""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from segkit.errors import UsageError

GZIP_MAGIC = b"\x1f\x8b"

#: The input files of the running command (segkit.cli.contracts.taken): write_atomic refuses to replace one.
_PROTECTED: list[Path] = []


@contextmanager
def protected(paths: Iterable[Path]) -> Iterator[None]:
    """While inside: ``write_atomic`` refuses to replace any of ``paths`` (the command's inputs)."""
    added = [Path(p) for p in paths]
    _PROTECTED.extend(added)
    try:
        yield
    finally:
        for p in added:
            _PROTECTED.remove(p)


def _is_input(path: Path) -> Path | None:
    for p in _PROTECTED:
        try:
            if path.exists() and p.exists() and os.path.samefile(path, p):
                return p
        except OSError:
            continue
    return None


def write_atomic(path: Path | str, data: str | bytes) -> Path:
    """Write ``path`` whole or not at all: a sibling temporary file, then renamed over ``path`` (a process killed
    while saving leaves the previous file). Refused (UsageError, one line, nothing written): a directory, or an
    input of the running command (``protected``). A link is followed: its target is replaced, the link kept. No
    temporary file is left behind on any error."""
    path = Path(path)
    if path.is_dir():
        raise UsageError(f"{path} is a directory: give a file name to write")
    if (source := _is_input(path)) is not None:
        raise UsageError(f"{path} is the input {source} of this command: writing it would destroy the input; "
                         "give another name")
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise
    return path


def write_text_atomic(path: Path | str, text: str) -> None:
    """``write_atomic`` of text (the name the callers before it use)."""
    write_atomic(path, text)


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
