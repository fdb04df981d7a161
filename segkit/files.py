"""Writing result files so that an interrupted run never leaves half of one (a tuning table, a campaign index)."""

from __future__ import annotations

import os
from pathlib import Path


def write_text_atomic(path: Path | str, text: str) -> None:
    """Write ``path`` whole or not at all: a sibling temporary file, then renamed over ``path`` (a process killed
    while saving leaves the previous file)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
