"""Repro scripts run in a child process (issue 53): no script can hang segkit, outlive it or swallow its time
limit, and every entry that loads a script goes through that one mechanism (segkit.repro.isolate)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import segkit
import segkit.repro
import segkit.repro.isolate as isolate
import segkit.repro.load as load
from segkit.errors import ReproError, ResourceLimitError, SegkitError
from segkit_cli.main import main
from tests.bad_input_scripts import SOFTMAX
from tests.conftest import ROOT

LIMIT = 3  # SEGKIT_SCRIPT_TIMEOUT of the command-line runs
SWALLOW = "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except:\n        pass\n"


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _scripts(tmp_path: Path) -> dict[str, tuple[Path, int, str]]:
    """name -> (script, expected exit status, what its one stderr line says; "" for none)."""
    pidfile = tmp_path / "grandchild.pid"
    cases = {
        "thread.py": (SOFTMAX + "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,)).start()\n",
                      0, ""),
        "swallow.py": (SOFTMAX + SWALLOW, 1, rf"swallow\.py: the script ran longer than {LIMIT} s and did not stop"),
        "os_exit.py": ("import os\nos._exit(3)\n" + SOFTMAX, 1, r"os_exit\.py: the script's process exited with code 3"),
        "sys_exit.py": ("import sys\nsys.exit(4)\n" + SOFTMAX, 1, r"sys_exit\.py:2: SystemExit: 4"),
        "grandchild.py": ("import os, time\npid = os.fork()\nif pid == 0:\n    time.sleep(3600)\n    os._exit(0)\n"
                          f"open({str(pidfile)!r}, 'w').write(str(pid))\n" + SOFTMAX, 0, ""),
    }
    out = {}
    for name, (text, code, words) in cases.items():
        (tmp_path / name).write_text(text)
        out[name] = (tmp_path / name, code, words)
    return out


def test_no_script_hangs_segkit_or_outlives_it(tmp_path):
    """Each script, through ``python -m segkit_cli repro`` (run side by side): ends within its limit and a few
    seconds, with its result or one error line; nothing it started runs on."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SEGKIT_SCRIPT_TIMEOUT": str(LIMIT), "CUDA_VISIBLE_DEVICES": ""}
    scripts = _scripts(tmp_path)
    started = time.monotonic()
    procs = {name: subprocess.Popen([sys.executable, "-m", "segkit_cli", "repro", str(path)], cwd=tmp_path, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
             for name, (path, _, _) in scripts.items()}
    results = {}
    try:
        for name, proc in procs.items():
            out, err = proc.communicate(timeout=max(1.0, 120 - (time.monotonic() - started)))
            results[name] = (proc.returncode, out, err, time.monotonic() - started)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
    for name, (code, out, err, seconds) in results.items():
        _, want_code, words = scripts[name]
        assert code == want_code, (name, code, err)
        assert "Traceback" not in err, (name, err)
        lines = [ln for ln in err.splitlines() if ln.strip()]
        if words:
            assert len(lines) == 1 and lines[0].startswith("segkit: error: "), (name, err)
            assert re.search(words, lines[0]), (name, lines[0])
        else:
            assert "tv" in out and not lines, (name, out, err)  # the fusion printed, nothing on stderr
        # five interpreters start side by side on a small machine: a hang is what this bounds
        assert seconds < LIMIT + load.HARD_KILL_GRACE_S + 60, (name, seconds)
    grandchild = int((tmp_path / "grandchild.pid").read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild), "the process the script forked outlived segkit"


@pytest.fixture
def quick(monkeypatch):
    """A short hard kill, so a script swallowing its limit costs about a second."""
    monkeypatch.setattr(load, "HARD_KILL_GRACE_S", 0.5)
    monkeypatch.setenv("SEGKIT_SCRIPT_TIMEOUT", "0.5")


@pytest.mark.parametrize("method", ["fork", "forkserver"])
def test_both_start_methods_load_and_kill(method, monkeypatch, tmp_path, quick):
    """A fork of this process (a command line) and a child of the warm fork server (a big process, CUDA
    initialised) load the same and stop a script that swallows its limit the same."""
    monkeypatch.setattr(isolate, "FORCE", method)
    repro = segkit.load_repro(SOFTMAX)
    assert [op.name for op in repro.fd.fusion.ops][:2] == ["max", "broadcast_in_dim"]
    assert repro.fd.fusion.ops[0].site.startswith("<repro>:")  # each op still names the script line that made it
    x = repro.make_inputs("cpu")
    assert segkit.run_reference(repro.fd, x)[0].sum().item() == pytest.approx(8.0, rel=1e-5)
    script = tmp_path / "swallow.py"
    script.write_text(SOFTMAX + SWALLOW)
    t0 = time.monotonic()
    with pytest.raises(ResourceLimitError, match=r"swallow\.py: the script ran longer than 0\.5 s and did not stop"):
        segkit.load_repro(script)
    assert time.monotonic() - t0 < 10
    (tmp_path / "relative.py").write_text(SOFTMAX)
    monkeypatch.chdir(tmp_path)  # the child works where the caller does now
    assert segkit.load_repro("relative.py").name == "nvfuser_fusion_id0"


def test_an_error_in_the_script_still_names_its_line_and_op():
    with pytest.raises(SegkitError, match=r"fd\.ops\.frobnicate is not in segkit's op catalogue \(at <repro>:9: T4 = "):
        segkit.load_repro(SOFTMAX.replace("fd.ops.exp(T3)", "fd.ops.frobnicate(T3)"))


def test_a_script_that_kills_its_own_process_is_one_error():
    with pytest.raises(ReproError, match=r"^<repro>: the script's process was killed by SIGKILL before segkit "):
        segkit.load_repro("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n" + SOFTMAX)


def test_the_script_sees_the_callers_environment(monkeypatch):
    monkeypatch.setenv("SEGKIT_TEST_ROWS", "5")
    repro = segkit.load_repro("import os\nN = int(os.environ['SEGKIT_TEST_ROWS'])\n"
                              + SOFTMAX.replace("[8, 16]", "[N, 16]").replace("[8, 1]", "[N, 1]")
                              .replace("(8, 16)", "(N, 16)"))
    assert repro.fd.fusion.inputs[0].shape == (5, 16)


# --------------------------------------------------------------------------- every entry, one mechanism
def _hanging(tmp_path: Path) -> str:
    path = tmp_path / "hangs.py"
    path.write_text(SOFTMAX + SWALLOW)
    return str(path)


COMMANDS = [["repro"], ["bookend", "--policy", "outputs"], ["check"], ["minimize", "-o", "{tmp}/min.py"],
            ["segments"], ["report", "-o", "{tmp}/r.html"], ["reuse"], ["tune", "--reference"], ["fuzz", "--emit"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_loads_scripts_in_the_child(command, tmp_path, monkeypatch, capsys, quick):
    """A script that swallows its time limit ends each command that loads one with the one-line kill."""
    import segkit_cli.targets as targets

    monkeypatch.setattr(targets, "require_nvfuser", lambda *args: None)  # check / minimize load before the GPU runs
    script = _hanging(tmp_path)
    name, *options = command
    argv = [name, *([script] if name != "fuzz" else []), *(o.format(tmp=tmp_path) for o in options)]
    argv += [script] if name == "fuzz" else []
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search(r"hangs\.py: the script ran longer than 0\.5 s and did not stop", err[0]), err


def test_every_python_entry_loads_scripts_in_the_child(tmp_path, quick):
    import fusions  # noqa: F401 (the experiment's named workloads)
    from segkit.experiment import workloads
    from segkit.fuzz.targets import run_script, target
    from segkit.tuning.search import tune_script

    script = _hanging(tmp_path)
    entries = {"segkit.load_repro": lambda: segkit.load_repro(script),
               "segkit.repro.load_repro": lambda: segkit.repro.load_repro(script),
               "fuzz run_script": lambda: run_script(target("reference"), script, ("plain",)),
               "tune_script": lambda: tune_script(script, reference=True),
               "experiment.workloads": lambda: workloads(True, "cpu", [script])}
    for what, call in entries.items():
        with pytest.raises(ResourceLimitError, match="did not stop at its time limit"):
            call()


#: Product code that runs Python code it did not import. Each is not a repro script being loaded: the profiler
#: runs the user's own command as a program, and `segments --emit-dir` re-runs the scripts segkit just wrote.
RUNS_CODE_ELSEWHERE = {"segkit/trace/torch_run.py": {"exec(compile(", "runpy.run_module", "runpy.run_path"},
                       "segkit/segments.py": {"exec(compile("}}


def test_no_product_code_runs_a_script_but_the_loader():
    """Only segkit.repro.load runs script text (in the child); nothing else calls exec / runpy on a script (the
    profiler runs the user's program as Python would: a script, -c code or -m module)."""
    found = {}
    for package in ("segkit", "segkit_cli", "fusions", "thunder_exec", "benchmarks", "sweep"):
        for path in (ROOT / package).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            for hit in re.findall(r"\bexec\(compile\(|\brunpy\.run_\w+", path.read_text()):
                found.setdefault(rel, set()).add(hit)
    found.pop("segkit/repro/load.py", None)
    assert found == RUNS_CODE_ELSEWHERE
