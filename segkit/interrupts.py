"""Ctrl-C held over a block: SIGINT blocked in the main thread while the block runs, and a Ctrl-C meanwhile
delivered right after it (or, taken by another thread, still raised in the main one): never lost, never raised
inside the block. Or deferred: Python code in the block runs, a Ctrl-C meanwhile is noted and raised after it."""

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


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """A Ctrl-C during the block is noted, not raised, and raised as KeyboardInterrupt when the block ends (with the
    SIGINT handler the block found; its own handler ignores SIGINT, none is raised; off the main thread:
    nothing). For a block where Python would swallow it: ``os.fork`` runs its at-fork hooks (logging's lock
    release) after the fork in both processes, and reports an exception raised in one as unraisable and goes on,
    so a Ctrl-C landing there was lost (the command ran to its end, status 0). A forked child inherits the noting
    handler until it sets its own."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if noted and callable(previous):
            previous(signal.SIGINT, None)  # Python's default handler raises KeyboardInterrupt
        elif noted and previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def children_ignore_sigint() -> Iterator[None]:
    """Processes started in the block begin with SIGINT ignored, from their first instruction: an ignored signal
    stays ignored across fork and exec, and Python keeps it so at start-up. (A blocked mask does not reach them:
    multiprocessing's spawn starts its child with no signal blocked.) This process holds Ctrl-C meanwhile
    (``sigint_held``): blocked, a Ctrl-C is queued whatever the disposition, and delivered once the block has put
    its handler back. Off the main thread: nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with sigint_held():
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


def interrupt_in(e: BaseException) -> KeyboardInterrupt | None:
    """The KeyboardInterrupt behind ``e``, through its causes and contexts, else None: a Ctrl-C that a library
    turned into another exception (Python wraps one raised in a descriptor's ``__set_name__``, while a class is
    made, in a RuntimeError: hypothesis's import under a Ctrl-C ended `segkit fuzz` as an unexpected error)."""
    seen = set()
    while e is not None and id(e) not in seen:
        if isinstance(e, KeyboardInterrupt):
            return e
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return None


def interrupt_handled() -> None:
    """Say that the KeyboardInterrupt being handled is handled. CPython marks one that left Python code run through
    PyRun_* (C extensions evaluate Python source that way, torch's import among them) as unhandled, and ends the
    process by SIGINT at exit, after the handler printed its line and chose status 130 (the Ctrl-C at segkit's start
    that exited -2). Every PyRun_* call clears that mark as it starts: an empty one does."""
    import ctypes

    ctypes.pythonapi.PyRun_SimpleString(b"")
