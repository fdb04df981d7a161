"""A campaign's findings as stored: one ``Finding`` per distinct failure, listed in the directory's index.json.

Shared by the campaign (which writes them) and triage (which re-checks them and writes standalone scripts).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path

from segkit.errors import SegkitError

INDEX = "index.json"


@dataclass
class Finding:
    """A minimized, deduplicated case the target gets wrong."""

    id: str
    kind: str  # mismatch | error | crash | timeout
    realization: str
    signature: str
    detail: str
    rel_err: float = 0.0
    tol: float = 0.0
    output: int | None = None
    worst: list[int] = field(default_factory=list)
    case: str = ""
    ops_before: int = 0
    ops_after: int = 0
    minimize_seconds: float = 0.0
    minimize_checks: int = 0
    steps: list[str] = field(default_factory=list)
    hits: int = 1
    file: str = ""
    original: str = ""  # the generated case's script, before minimizing
    note: str = ""  # how it was minimized (e.g. with symbolic sizes kept), or why it was not

    @classmethod
    def from_json(cls, d: dict) -> Finding:
        """A finding from its index.json entry (fields an older or newer index adds are ignored)."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in known})


def load_findings(directory: str | Path) -> list[Finding]:
    """The findings a campaign wrote to ``directory`` (its index.json)."""
    path = Path(directory) / INDEX
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise SegkitError(f"{path}: cannot read the findings index ({e.strerror}); is this a `segkit fuzz -o` directory?") from None
    except ValueError as e:
        raise SegkitError(f"{path}: the findings index is not JSON ({e}); is this a `segkit fuzz -o` directory?") from None
    try:
        return [Finding.from_json(d) for d in data.get("findings", [])]
    except (AttributeError, TypeError) as e:
        raise SegkitError(f"{path}: not a findings index ({type(e).__name__}: {e})") from None
