"""A campaign's findings directory: checked before the campaign runs, and locked while it runs.

A campaign writes its findings at the end of a long run; a directory it cannot write, or one another
campaign is writing, would lose them; and it rewrites its index and summary and drops the repros its index
does not name, which in a folder of the user's own files would lose those. :func:`claim` checks the
directory (new, empty, or segkit's own: ``segkit.output_dirs``, where an ``index.json`` marks a campaign
written before the marker existed; and the files a campaign rewrites in it), marks it, and takes its lock:
a lock file holding the owner's pid, held with ``fcntl.flock``. The kernel drops a flock when its process
dies, so the lock of a killed campaign is taken over; a live one is refused, naming its pid.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass
from pathlib import Path

from segkit.errors import SegkitError, UsageError
from segkit.fuzz.findings import INDEX
from segkit.output_dirs import mark, refuse_foreign

LOCK = ".segkit-fuzz.lock"
#: The files a campaign rewrites in its directory (besides its findings' repros).
REWRITTEN = ("index.json", "summary.md")


@dataclass
class CampaignLock:
    """The held lock of one findings directory; :meth:`release` gives it back (and removes the lock file)."""

    path: Path
    fd: int | None = None
    taken_over: int | None = None  # pid of a dead campaign whose lock file was left behind

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)  # while held: a campaign waiting on this file retries (see claim)
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def _holder(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def check_writable(out: Path) -> None:
    """Refuse (UsageError, one line) a findings directory a campaign could not write its results into."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"fuzz: findings directory {out} exists and is a file; give a directory")
    refuse_foreign(out, "fuzz: findings directory", owned_if=(INDEX, LOCK))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"fuzz: cannot create the findings directory {out}: {e.strerror or e}") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise UsageError(f"fuzz: findings directory {out} is not writable")
    for name in REWRITTEN:
        f = out / name
        if f.is_dir():
            raise UsageError(f"fuzz: {f} is a directory; the campaign writes a file there")
        if f.exists() and not os.access(f, os.W_OK):
            raise UsageError(f"fuzz: {f} exists and is not writable")


def claim(out: Path) -> CampaignLock:
    """Check ``out`` and lock it for this process; a directory another live campaign holds is refused."""
    out = Path(out)
    check_writable(out)
    path = out / LOCK
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise UsageError(f"fuzz: cannot write the lock file {path}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(fd)
            os.close(fd)
            who = f"pid {pid}" if pid else "another process"
            raise SegkitError(f"fuzz: {out} is in use by another campaign ({who}, lock file {path}): wait for it "
                              "to end, or give another -o") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # else the holder removed the file as we opened it: take the new one
            break
        os.close(fd)
    mark(out, "segkit fuzz")
    previous = _holder(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return CampaignLock(path, fd, taken_over=previous if previous and previous != os.getpid() else None)
