"""Which directories segkit may write its results into: new ones, empty ones, and its own.

A command that writes a directory (a fuzz campaign, a profile, CSV tables, per-segment repros) may replace or
delete files there; in a directory holding a user's own files that loses them. So segkit writes into a
directory only if it is new, empty, or marked as segkit's: ``MARKER`` (``.segkit-output``, naming the command)
is written when segkit takes a new or empty directory, and a directory segkit wrote before the marker existed is
recognised by the names its command always writes (a campaign's ``index.json``).
"""

from __future__ import annotations

from pathlib import Path

from segkit.errors import UsageError

MARKER = ".segkit-output"


def foreign_entries(directory: Path, owned_if: tuple[str, ...] = ()) -> list[str]:
    """The names in ``directory`` that make it the user's (empty when it is new, empty, or segkit's own)."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    names = sorted(p.name for p in directory.iterdir())
    if MARKER in names or any(n in names for n in owned_if):
        return []
    return names


def refuse_foreign(directory: Path, flag: str, owned_if: tuple[str, ...] = ()) -> None:
    """Refuse (UsageError, one line) a directory that holds files segkit did not write there."""
    names = foreign_entries(directory, owned_if)
    if names:
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise UsageError(f"{flag} {directory}: the directory holds files segkit did not write ({shown}; no "
                         f"{MARKER}): segkit writes only into a new, an empty, or its own directory; give a new "
                         "or empty directory")


def mark(directory: Path, command: str) -> bool:
    """Write the marker into ``directory`` (which exists) unless it is there; True if it was written."""
    path = Path(directory) / MARKER
    if path.exists():
        return False
    path.write_text(f"written by {command}\n")
    return True
