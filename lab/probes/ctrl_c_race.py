"""Ctrl-C at a moment of `segkit tune` on a small script, or of `segkit fuzz`, many times over (issue 53's contract:
exit 130, one line). Prints each run that broke it and a count of (exit status, first line of stderr). CPU only;
run from a checkout's root: ``python -m lab.probes.ctrl_c_race RUNS SECONDS [CHECKOUT] [tune|fuzz]``, SECONDS a
number or a range ``A-B`` (each run a uniform draw). The process starts as a terminal starts it (SIGINT at its
default) in a session of its own, and the SIGINT goes to its whole process group."""
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

# the suite's own script and start (tests/test_interrupts.py): the probe is its test, many times over
from tests.test_interrupts import BIG_SCRIPT as SCRIPT, FRESH  # noqa: E402

runs, moments = int(sys.argv[1]), [float(x) for x in sys.argv[2].split("-")]
checkout = Path(sys.argv[3] if len(sys.argv) > 3 else ".").resolve()
command = sys.argv[4] if len(sys.argv) > 4 else "tune"
ARGV = {"tune": ["tune", "big.py", "--reference"],  # the fuzz command as the suite starts it: one folder a run
        "fuzz": ["fuzz", "--target", "reference", "--workers", "1", "--quiet", "--max-cases", "100000", "-o",
                 "findings{i}"]}[command]
env = {**os.environ, "PYTHONPATH": str(checkout), "CUDA_VISIBLE_DEVICES": ""}
seen = Counter()
with tempfile.TemporaryDirectory() as tmp:
    (Path(tmp) / "big.py").write_text(SCRIPT)
    for i in range(runs):
        p = subprocess.Popen([sys.executable, "-c", FRESH, "-m", "segkit_cli", *(a.format(i=i) for a in ARGV)],
                             cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
        time.sleep(random.uniform(moments[0], moments[-1]))
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=120)
        seen[(p.returncode, (err.strip().splitlines() or [""])[0][:100])] += 1
        if p.returncode != 130 or len(err.strip().splitlines()) != 1 or not err.startswith("segkit: interrupted"):
            print(f"run {i}: exit {p.returncode}\n  stdout tail: {out[-300:]!r}\n  stderr: {err[-1500:]}", flush=True)
for (code, line), n in seen.most_common():
    print(f"{n:4d} x exit {code}: {line}")
