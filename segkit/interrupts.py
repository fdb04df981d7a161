"""Ctrl-C held over a block: SIGINT blocked in the main thread while the block runs, and a Ctrl-C meanwhile
delivered right after it (or, taken by another thread, still raised in the main one): never lost, never raised
inside the block."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C for the block (off the main thread, where Python raises no KeyboardInterrupt: nothing). Two
    uses: processes started in the block begin with SIGINT blocked (a signal mask survives fork and exec), and
    code that must not be interrupted half-way (an import that runs Python callbacks from C++) finishes first."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
