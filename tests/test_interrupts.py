"""Ctrl-C at any moment of fuzz, tune, sweep and a script's loading (issue 53): exit status 130, one line on
stderr, no traceback (none from a worker process either), and every output untouched or resumable.

Each command runs in its own session and gets SIGINT as a terminal sends it: to its whole process group."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_script_isolation import _alive

ENV = {**os.environ, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}


#: Start the command as a terminal would: SIGINT at its default whatever this test process inherited (an
#: ignored signal stays ignored across exec, and pytest's process may hold it ignored while a library starts a
#: worker of its own).
FRESH = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); " \
        "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"


#: ``python -c AT_STATE MARK STATE MODULE ARGS...``: run ``python -m MODULE ARGS`` as a terminal starts it (SIGINT
#: raising KeyboardInterrupt, as FRESH) and create the file MARK once the child reached STATE, so that a test
#: interrupts it in that state however loaded the machine is, not after a time: ``import:NAME`` when module NAME
#: begins to be imported (``segkit_cli.main``: the command's own code is starting, inside its Ctrl-C guard, past
#: the interpreter's start-up where no command can answer a Ctrl-C), ``call:MODULE.FUNCTION`` when that function is
#: first called (the search validating its first candidate).
AT_STATE = """\
import importlib, runpy, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
mark, state, module = sys.argv[1:4]
del sys.argv[1:4]
kind, name = state.split(":", 1)
if kind == "import":
    class Mark:
        def find_spec(self, fullname, path=None, target=None):
            if fullname == name:
                open(mark, "a").close()
    sys.meta_path.insert(0, Mark())
else:
    owner, attr = name.rsplit(".", 1)
    owner = importlib.import_module(owner)
    real = getattr(owner, attr)
    def first_call(*args, **kw):
        open(mark, "a").close()
        return real(*args, **kw)
    setattr(owner, attr, first_call)
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def _interrupt_at(module: str, args: list[str], state: str, marks: Path, cwd: Path | None = None):
    """``python -m module args`` (in ``cwd``, default ``marks``) interrupted once it reached ``state`` (AT_STATE;
    its mark file in ``marks``); (status, stdout, stderr)."""
    mark = marks / f"reached-{state.replace(':', '-')}"
    return _interrupt(["-c", AT_STATE, str(mark), state, module, *args], lambda s: mark.exists(), cwd or marks,
                      fresh=False)


def _interrupt(argv: list[str], when: Callable[[float], bool], cwd: Path, fresh: bool = True) -> tuple[int, str, str]:
    """Run ``argv`` (through FRESH unless not ``fresh``), send SIGINT to its process group once ``when(seconds since
    start)`` holds; (status, stdout, stderr)."""
    proc = subprocess.Popen([sys.executable, *(["-c", FRESH] if fresh else []), *argv], cwd=cwd, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    start = time.monotonic()
    try:
        while proc.poll() is None and not when(time.monotonic() - start):
            if time.monotonic() - start > 120:
                raise AssertionError(f"{argv}: the moment to interrupt never came")
            time.sleep(0.05)
        assert proc.poll() is None, f"{argv} ended before it was interrupted: {proc.communicate()}"
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, out, err


def _one_line(code: int, err: str, prefix: str) -> str:
    assert "Traceback" not in err, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 130 and len(lines) == 1 and lines[0].startswith(prefix), (code, err)
    return lines[0]


FUZZ_MOMENTS = {
    "starting": "import:segkit_cli.main",  # segkit still importing (AT_STATE), or the workers still starting
    "workers_up": lambda out: lambda s: out.exists(),  # the directory claimed, the worker importing torch
    "running": lambda out: lambda s: (out / "index.json").exists() and _later(out, 1.5),
}


def _later(out: Path, seconds: float) -> bool:
    return time.time() - (out / "index.json").stat().st_mtime > seconds


@pytest.mark.parametrize("moment", FUZZ_MOMENTS)
def test_an_interrupted_fuzz_campaign_is_resumable_or_gone(moment, tmp_path):
    from segkit.fuzz.campaign import fuzz

    out = tmp_path / "findings"
    args = ["fuzz", "--target", "reference", "--workers", "1", "--quiet", "--max-cases", "100000", "-o", str(out)]
    if isinstance(FUZZ_MOMENTS[moment], str):
        code, _, err = _interrupt_at("segkit_cli", args, FUZZ_MOMENTS[moment], tmp_path)
    else:
        code, _, err = _interrupt(["-m", "segkit_cli", *args], FUZZ_MOMENTS[moment](out), tmp_path)
    line = _one_line(code, err, "segkit: interrupted")
    if not out.exists():
        return  # stopped before the campaign began: no folder left behind
    assert "continue it with --resume" in line, line
    s = fuzz("reference", out, max_cases=1, workers=0, resume=True, progress=False, log=lambda _: None)
    assert s.cases >= 1


#: A search whose candidates each take the reference interpreter a while (about 10 s in all on a small machine).
BIG_SCRIPT = """\
import torch
from nvfuser_direct import FusionDefinition, DataType

with FusionDefinition() as fd:
    T0 = fd.define_tensor(shape=[4096, 4096], contiguity=[True, True], dtype=DataType.Float)
    T2 = fd.ops.sum(fd.ops.mul(T0, T0), dims=[1], keepdim=False, dtype=DataType.Float)
    T3 = fd.ops.broadcast_in_dim(T2, shape=[4096, 4096], broadcast_dims=[0])
    fd.add_output(fd.ops.permute(fd.ops.div(T0, T3), dims=[1, 0]))

inputs = [torch.randn((4096, 4096), dtype=torch.float32, device="cuda")]
fd.execute(inputs)
"""


@pytest.mark.parametrize("state", ["import:segkit_cli.main", "call:segkit.tuning.search.validate"],
                         ids=["starting", "searching"])
def test_an_interrupted_tune_says_one_line(state, tmp_path):
    """Interrupted once segkit's code is starting, or once the search validates its first candidate: states, not
    times (at 1.0 s after the start, a busy machine was sometimes still starting the interpreter)."""
    script = tmp_path / "big.py"
    script.write_text(BIG_SCRIPT)
    code, out, err = _interrupt_at("segkit_cli", ["tune", str(script), "--reference"], state, tmp_path)
    _one_line(code, err, "segkit: interrupted")
    assert "candidates match the reference" not in out


def test_an_interrupted_script_load_stops_the_script(tmp_path):
    """Ctrl-C while a script is being loaded (what check, repro, ... do first): the script's process group goes
    with it."""
    pidfile = tmp_path / "script.pid"
    script = tmp_path / "slow.py"
    script.write_text(f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    # the pid is in the file, not only the file created (open() makes it before write() fills it)
    written = lambda s: pidfile.exists() and pidfile.read_text().strip().isdigit()  # noqa: E731
    code, _, err = _interrupt(["-m", "segkit_cli", "repro", str(script)], written, tmp_path)
    _one_line(code, err, "segkit: interrupted")
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)


SLOW_SUITE = "import time\nimport pytest\n\n\n@pytest.mark.parametrize('i', range(8))\ndef test_slow(i):\n" \
             "    time.sleep(1.5)\n"


@pytest.mark.parametrize("moment", ["collecting", "running"])
def test_an_interrupted_sweep_merges_what_ran_and_resumes(moment, tmp_path):
    from sweep import resume as sweep_resume

    suite = tmp_path / "suite" / "bench_slow.py"  # outside the project: no conftest, no torch in the shards
    suite.parent.mkdir()
    suite.write_text(SLOW_SUITE)
    work, out = tmp_path / "w", tmp_path / "merged.json"
    args = ["--devices", "a,b", "--time-limit", "600", "--grace", "5", "--workdir", str(work), "-o", str(out), "--",
            str(suite)]
    if moment == "collecting":  # once the launcher begins collecting the cases (AT_STATE): a state, not a time
        code, _, err = _interrupt_at("sweep", args, "call:sweep.plan.collect", tmp_path, ROOT)
    else:
        code, _, err = _interrupt(["-m", "sweep", *args], lambda s: any(work.glob("shard*.log")), ROOT)
    line = _one_line(code, err, "sweep: interrupted")
    if moment == "collecting" and "before any shard started" in line:
        assert not out.exists() and not work.exists()  # untouched
        return
    assert f"--resume {work}" in line, line
    resume = sweep_resume.load(work, [str(suite)])  # --resume takes it: the cases not run are known
    assert resume.complete or resume.cases


def test_a_ctrl_c_while_torch_imports_is_delivered_after_the_import(tmp_path):
    """Commands import torch with Ctrl-C held (segkit_cli.main._import_held): torch's import runs Python callbacks
    from C++, where a KeyboardInterrupt aborts the process (pybind11's terminate, status -6: seen under load at
    the "starting" moment above). A module that gets SIGINT half-way through its import finishes importing, and the
    interrupt comes right after."""
    (tmp_path / "halfway.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n"
                                         "total = sum(range(100000))\n")
    code = ("import sys\nsys.path.insert(0, sys.argv[1])\nfrom segkit_cli.main import _import_held\n"
            "try:\n    _import_held('halfway')\nexcept KeyboardInterrupt:\n"
            "    print('interrupted after', 'halfway' in sys.modules)\n")
    got = subprocess.run([sys.executable, "-c", FRESH, "-c", code, str(tmp_path)], env=ENV, capture_output=True,
                         text=True, timeout=60)
    assert got.stdout.strip() == "interrupted after True", (got.stdout, got.stderr)


@pytest.mark.parametrize("module", ["segkit_cli.main", "torch", "segkit.fuzz", "hypothesis"])
def test_fuzz_interrupted_while_starting_always_ends_in_one_line(module, tmp_path):
    """Ctrl-C as each of the command's imports begins (torch's, hypothesis's among them; AT_STATE: a state, not a
    time): 130 and one line, never an abort."""
    out = tmp_path / "findings"
    code, _, err = _interrupt_at("segkit_cli", ["fuzz", "--target", "reference", "--workers", "1", "--quiet",
                                                "--max-cases", "100000", "-o", str(out)], f"import:{module}", tmp_path)
    _one_line(code, err, "segkit: interrupted")


#: A Ctrl-C that leaves Python code a C extension ran through PyRun_String (as torch's import runs some): CPython
#: marks it unhandled and, left alone, ends the process by SIGINT at exit whatever the handler chose.
PYRUN_INTERRUPTED = """
import ctypes, sys
import segkit_cli.main as cli

def interrupted_import(name):
    run = ctypes.pythonapi.PyRun_String
    run.restype, run.argtypes = ctypes.py_object, [ctypes.c_char_p, ctypes.c_int, ctypes.py_object, ctypes.py_object]
    run(b"raise KeyboardInterrupt", 257, {}, {})  # 257: Py_file_input

cli._import_held = interrupted_import
sys.exit(cli.main(["repro", "any.py"]))
"""


def test_a_ctrl_c_out_of_code_run_by_pyrun_still_exits_130(tmp_path):
    """The Ctrl-C at the start of `segkit tune` that printed its line and still ended by SIGINT (-2, one run in
    twenty): the handled interrupt is said handled (segkit.interrupts.interrupt_handled)."""
    (tmp_path / "any.py").write_text("x = 1\n")
    (tmp_path / "interrupted_cli.py").write_text(PYRUN_INTERRUPTED)
    env = {**ENV, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}  # run with -m, as `python -m segkit_cli` runs: a
    # -c program's SystemExit ends the process before CPython looks at the mark
    got = subprocess.run([sys.executable, "-c", FRESH, "-m", "interrupted_cli"], env=env, capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    _one_line(got.returncode, got.stderr, "segkit: interrupted")


def test_a_ctrl_c_during_a_fork_is_raised_after_it(tmp_path):
    """os.fork runs its at-fork hooks in both processes and reports an exception raised in one as unraisable: a
    Ctrl-C landing there was lost and `segkit tune` ran to its end with status 0 (two runs in forty). Around a
    fork that segkit starts (segkit.repro.isolate), it is raised after the fork instead."""
    code = ("import os, signal\nfrom segkit.interrupts import sigint_deferred\n"
            "os.register_at_fork(after_in_parent=lambda: os.kill(os.getpid(), signal.SIGINT))\n"
            "try:\n    with sigint_deferred():\n        pid = os.fork()\n        if pid == 0:\n            os._exit(0)\n"
            "        os.waitpid(pid, 0)\n        print('past the fork')\n"
            "except KeyboardInterrupt:\n    print('interrupted after the fork')\n")
    got = subprocess.run([sys.executable, "-c", FRESH, "-c", code], env=ENV, capture_output=True, text=True,
                         timeout=60, cwd=tmp_path)
    assert got.stdout.splitlines() == ["past the fork", "interrupted after the fork"], (got.stdout, got.stderr)
    assert "Exception ignored" not in got.stderr, got.stderr


#: A Ctrl-C raised while a class is made, in a descriptor's __set_name__ (hypothesis's import made one under the
#: fuzz command's Ctrl-C): Python wraps it in a RuntimeError.
SET_NAME_INTERRUPTED = """
import sys
import segkit_cli.main as cli

def interrupted_import(name):
    class Field:
        def __set_name__(self, owner, name):
            raise KeyboardInterrupt

    class TreeNode:
        constraints = Field()

cli._import_held = interrupted_import
sys.exit(cli.main(["repro", "any.py"]))
"""


def test_a_ctrl_c_a_library_wrapped_in_another_exception_is_still_a_ctrl_c(tmp_path):
    """`segkit fuzz` interrupted at 1.5-1.8 s under load ended as "an unexpected error in segkit" (exit 1, seven runs
    in eighty): the Ctrl-C came while hypothesis made a class, and Python raised it as "RuntimeError: Error calling
    __set_name__". A Ctrl-C behind the exception (its cause or context) is the interrupt: 130 and one line."""
    (tmp_path / "any.py").write_text("x = 1\n")
    (tmp_path / "wrapped_cli.py").write_text(SET_NAME_INTERRUPTED)
    env = {**ENV, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    got = subprocess.run([sys.executable, "-c", FRESH, "-m", "wrapped_cli"], env=env, capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    _one_line(got.returncode, got.stderr, "segkit: interrupted")


def test_a_fuzz_worker_ignores_ctrl_c_from_its_first_instruction():
    """A Ctrl-C during a worker's own start-up (its interpreter importing segkit and torch) printed the worker's
    traceback above the campaign's one line (one run in eighty): the worker begins with SIGINT ignored, as the
    kernel shows right after its start, and no SIGINT is blocked in it (multiprocessing's spawn passes no mask)."""
    from segkit.fuzz.workers import _Worker

    worker = _Worker("reference", start_timeout=120)
    try:
        with open(f"/proc/{worker.proc.pid}/status") as f:
            status = dict(line.split(":", 1) for line in f)
        assert int(status["SigIgn"], 16) & (1 << (signal.SIGINT - 1)), status["SigIgn"]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # this process: as it was
    finally:
        worker.kill()
