"""Run untrusted code (a repro script being loaded) in a child process that cannot hang segkit or outlive it.

``run_isolated(func, args, ...)`` calls ``func(*args)`` in a child process and returns what it returns, or
raises what it raised; what comes back is pickled to bytes in the child and sent through a pipe, so it must be
plain data (the loader sends the recorded IR, never the script's objects). The child:

* runs in a process group of its own, ignoring SIGINT: a Ctrl-C reaches segkit only, which kills the group;
* is killed, with every process it started in its group, when it answers, when it overruns ``hard_limit``
  seconds of wall-clock time (the script caught its soft time limit, or never gives control back), when it
  dies without answering (``os._exit``), and when segkit stops waiting (an error, a Ctrl-C); on Linux it also
  dies with its parent, however that ends;
* leaves no thread behind: it ends with ``os._exit`` once it has answered (a script's non-daemon thread, its
  ``atexit`` handlers, the parent's buffered output are not run or flushed there).

Where the child comes from (``start_method``): a fork of this process while that is safe and cheap (Linux, CUDA
not initialised here, this process under ``FORK_MAX_RSS`` resident: a command-line run), else a fork of
multiprocessing's fork server, a small process started once with the loader imported and warmed
(``PRELOAD``): forking a big process costs its page tables and then a page fault for every page it writes, and
forking one that initialised CUDA is unsafe. The child gets this process's environment, working directory and
``sys.path`` either way.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing as mp
import os
import pickle
import signal
import sys
import time
import types
from collections.abc import Callable
from multiprocessing.connection import wait
from typing import Any

from segkit.errors import SegkitError, error_summary
from segkit.interrupts import sigint_deferred

#: Modules the fork server imports once, so that a child forked from it starts warm.
PRELOAD = ["segkit.repro.warm"]
#: Above this many resident bytes, children come from the fork server instead of a fork of this process.
FORK_MAX_RSS = 1 << 30
#: "fork" or "forkserver" to force one (tests); None: chosen per call (``start_method``).
FORCE: str | None = None


class ChildDied(SegkitError):
    """The child ended without an answer (``os._exit`` in the script, a signal, a crash); ``code`` is its exit
    status (negative: the signal that killed it)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"exit code {code}")
        self.code = code

    def __reduce__(self):
        return type(self), (self.code,)


class ChildOverran(SegkitError):
    """The child did not answer within its hard limit and was killed."""


def _cuda_initialised() -> bool:
    torch = sys.modules.get("torch")
    return bool(torch is not None and torch.cuda.is_initialized())


def _resident_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def start_method() -> str:
    """How the next child starts: "fork" (this process: Linux, no CUDA initialised, small) or "forkserver"."""
    if FORCE is not None:
        return FORCE
    if sys.platform == "linux" and not _cuda_initialised() and _resident_bytes() <= FORK_MAX_RSS:
        return "fork"
    return "forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn"


def _context(method: str) -> mp.context.BaseContext:
    ctx = mp.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(PRELOAD)  # read when the server starts (the first call), ignored after
    return ctx


def _die_with_parent() -> None:
    """Linux: the kernel kills this child when its parent dies (even by SIGKILL)."""
    if sys.platform != "linux":
        return
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _child(conn, func: Callable[..., Any], args: tuple, env: dict[str, str], cwd: str, path: list[str]) -> None:
    """The child's whole life: answer ``("ok", result)`` or ``("raise", exception)`` as pickled bytes, then
    end at once."""
    try:
        with contextlib.suppress(OSError):
            os.setpgid(0, 0)  # its own group: the terminal's Ctrl-C is not sent here, segkit kills the group
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)  # a handler inherited from the parent is not the loader's
        _die_with_parent()
        if os.environ != env:
            os.environ.clear()
            os.environ.update(env)
        with contextlib.suppress(OSError):
            os.chdir(cwd)
        sys.path[:] = path
        if "torch" in sys.modules:  # OpenMP's thread pool does not survive a fork: one thread, or a hang
            sys.modules["torch"].set_num_threads(1)
        try:
            answer = ("ok", func(*args))
        except BaseException as e:  # noqa: B902 (everything goes back to the parent, which decides)
            import traceback

            with contextlib.suppress(Exception):  # where it happened, for a debugger (the message stays one line)
                e.child_traceback = "".join(traceback.format_exception(e))
            answer = ("raise", e)
        try:
            data = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # an answer that is not plain data: say so instead of dying silently
            data = pickle.dumps(("raise", SegkitError(f"segkit could not send back {type(answer[1]).__name__} from "
                                                      f"its child process: {error_summary(e)}")))
        conn.send_bytes(data)
        conn.close()
    finally:
        os._exit(0)


@contextlib.contextmanager
def _may_have_children():
    """multiprocessing refuses children to a daemonic process (a fuzz worker): this one's child is killed with
    its group whatever happens, and dies with it (``_die_with_parent``)."""
    me = mp.current_process()
    daemonic = me.daemon
    if daemonic:
        me.daemon = False
    try:
        yield
    finally:
        if daemonic:
            me.daemon = True


@contextlib.contextmanager
def _main_module_hidden(method: str):
    """A fork server's child imports the parent's ``__main__`` before it runs anything (multiprocessing's
    spawn preparation): that would run a command line's main, or a user's unguarded script, again. The child
    needs nothing from it (``func`` lives in an importable module), so it is not told about it."""
    if method == "fork":
        yield
        return
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _kill_group(proc: mp.process.BaseProcess) -> None:
    """Kill the child and every process of its group (what the script started). Not waited for: tearing down
    a big address space takes a while, and multiprocessing reaps it when the next child starts."""
    pid = proc.pid
    if pid is not None:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # not yet in its own group


def _flush_output() -> None:
    """What this process printed so far is not the child's to repeat (a fork copies unflushed buffers)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


def run_isolated(func: Callable[..., Any], args: tuple = (), hard_limit: float = math.inf) -> Any:
    """``func(*args)`` run in a child process (see the module docstring): its result, or its exception raised
    here. ChildOverran when it gives no answer within ``hard_limit`` seconds, ChildDied when it ends without
    one. ``func`` and ``args`` must pickle (the fork server's children get them through a pipe)."""
    method = start_method()
    ctx = _context(method)
    _flush_output()
    receiver, sender = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(sender, func, args, dict(os.environ), os.getcwd(), list(sys.path)),
                       daemon=True)
    try:
        # a Ctrl-C during the fork is raised after it, not swallowed by the at-fork hooks (sigint_deferred)
        with _may_have_children(), _main_module_hidden(method), sigint_deferred():
            proc.start()  # from the fork server: returns once the child is forked (the server's start-up is not its)
        start = time.monotonic()
        sender.close()
        with contextlib.suppress(OSError):
            os.setpgid(proc.pid, proc.pid)  # as the child does itself (a fork's parent may): whichever runs first
        while True:
            left = None if math.isinf(hard_limit) else hard_limit - (time.monotonic() - start)
            if left is not None and left <= 0:
                raise ChildOverran(f"no answer in {hard_limit:g} s")
            ready = wait([receiver, proc.sentinel], timeout=left)
            if receiver in ready:
                try:
                    data = receiver.recv_bytes()
                except (EOFError, OSError):
                    proc.join(5)
                    raise ChildDied(proc.exitcode) from None
                break
            if proc.sentinel in ready and not receiver.poll():
                proc.join(5)
                raise ChildDied(proc.exitcode)
    finally:
        _kill_group(proc)
        receiver.close()
    try:
        kind, value = pickle.loads(data)
    except Exception as e:
        raise SegkitError(f"segkit could not read back its child process's answer: {error_summary(e)}") from None
    if kind == "raise":
        raise value
    return value
