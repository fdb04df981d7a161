"""Bad-input probe of segkit (issue 53), as a demanding new user: runs each case as a subprocess
(``python -m segkit_cli ...`` or a Python-API snippet, 60 s timeout) and judges it.

A CLI case is right when the exit code is the expected one (2 usage, 1 failure, 0 only for a fine input),
stderr is one line ``segkit: error: ...`` (or argparse's ``segkit X: error: ...``) with no traceback and, where
given, matching the case's pattern; no file under the probe's workspace or tests/data was modified or deleted;
it finished in time; with ``--format json`` stdout parses as JSON. An API case is right when it raises a
TypeError / ValueError / SegkitError whose message matches the case's pattern (names the argument).

    python lab/probes/bad_inputs_2026_11_29.py [--only REGEX] [--jobs N] [--md OUT.md]

Run from the repository root; the subprocesses import this checkout (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
TIMEOUT = 60
ERR_LINE = re.compile(r"^segkit( [\w-]+)*: error: \S")


# ----------------------------------------------------------------------------------------------- workspace

SOFTMAX = (DATA / "pasted_repros" / "fuser_2023_08_cat.py")
GOOD = DATA / "thunder" / "rmsnorm_module_fwd_nvFusion0.py"

TWO_FUSIONS = """\
from nvfuser_direct import FusionDefinition, DataType
import torch

def first(fd):
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.neg(t))

def second(fd):
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.exp(t))

with FusionDefinition() as fd1:
    first(fd1)
with FusionDefinition() as fd2:
    second(fd2)
fd1.execute([torch.randn(4, 8, device="cuda")])
fd2.execute([torch.randn(4, 8, device="cuda")])
"""

WRONG_SHAPE = """\
from nvfuser_direct import FusionDefinition, DataType
import torch

with FusionDefinition() as fd:
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.neg(t))
fd.execute([torch.randn(3, 5, device="cuda")])
"""

WRONG_DTYPE = """\
from nvfuser_direct import FusionDefinition, DataType
import torch

with FusionDefinition() as fd:
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.neg(t))
fd.execute([torch.randn(4, 8, device="cuda").to(torch.int64)])
"""

BAD_OP = """\
from nvfuser_direct import FusionDefinition, DataType
with FusionDefinition() as fd:
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(t, dims=[5]))
"""

RAISES = "raise RuntimeError('boom from the script')\n"
EXITS = "import sys\nsys.exit(3)\n"
SLEEPS = "import time\ntime.sleep(3600)\n"
NO_OUTPUT = """\
from nvfuser_direct import FusionDefinition, DataType
with FusionDefinition() as fd:
    t = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float)
"""


def build(ws: Path) -> dict[str, str]:
    """The probe's files in ``ws``; returns name -> path."""
    f: dict[str, str] = {"ws": str(ws)}

    def put(name: str, data: str | bytes) -> str:
        p = ws / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data if isinstance(data, bytes) else data.encode())
        f[name] = str(p)
        return str(p)

    def copy(name: str, src: Path) -> str:
        p = ws / name
        p.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, p)
        f[name] = str(p)
        return str(p)

    copy("good.py", GOOD)
    copy("cat.py", SOFTMAX)
    put("two.py", TWO_FUSIONS)
    put("shape.py", WRONG_SHAPE)
    put("dtype.py", WRONG_DTYPE)
    put("badop.py", BAD_OP)
    put("raises.py", RAISES)
    put("exits.py", EXITS)
    put("sleeps.py", SLEEPS)
    put("noout.py", NO_OUTPUT)
    put("syntax.py", "def f(:\n  pass\n")
    put("empty.py", "")
    put("nofusion.py", "x = 1\n")
    put("bin.py", bytes(range(256)) * 8)
    put("latin1.py", "# caf\xe9\nx = 1\n".encode("latin-1"))
    put("bom.py", b"\xef\xbb\xbf" + GOOD.read_bytes())
    (ws / "adir").mkdir()
    f["adir"] = str(ws / "adir")
    (ws / "userdir").mkdir()
    put("userdir/precious.txt", "keep me\n")
    f["userdir"] = str(ws / "userdir")
    os.symlink(ws / "good.py", ws / "link.py")
    f["link.py"] = str(ws / "link.py")
    os.symlink(ws / "gone.py", ws / "dangling.py")
    f["dangling.py"] = str(ws / "dangling.py")
    os.symlink(ws / "fwd.py", ws / "fwdlink.py")
    os.symlink(ws / "loop.py", ws / "loop.py")
    f["loop.py"] = str(ws / "loop.py")
    f["long"] = str(ws / ("x" * 300 + ".py"))
    # Thunder traces
    copy("fwd.py", DATA / "thunder_traces" / "litgpt_llama_tiny_cpu.fwd.py")
    copy("bwd.py", DATA / "thunder_traces" / "litgpt_llama_tiny_cpu.bwd.py")
    put("trace_syntax.py", (DATA / "thunder_traces" / "litgpt_llama_tiny_cpu.fwd.py").read_text()[:700])
    put("trace_noregions.py", "import torch\n\ndef computation(a):\n  # a: \"cpu f32[4]\"\n  return a\n")
    put("trace_nocomputation.py", "x = 1\n")
    # profiles
    copy("torch.json.gz", DATA / "traces" / "workload_torch.json.gz")
    copy("nsys.sqlite", DATA / "traces" / "workload_nsys.sqlite")
    copy("step.json.gz", DATA / "step_h100" / "profiles" / "llama3-8b-x1-segkit-auto.json.gz")
    raw = (DATA / "traces" / "workload_torch.json.gz").read_bytes()
    put("trunc.json.gz", raw[: len(raw) // 2])
    put("notgzip.json.gz", b"this is not gzip\n")
    put("notrace.json", '{"hello": 1}')
    put("list.json", "[1, 2, 3]")
    put("events_bad.json", '{"traceEvents": [1, "x", null]}')
    put("events_nodur.json", '{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel"}]}')
    put("events_nan.json", '{"traceEvents": [{"ph": "X", "name": "k", "cat": "kernel", "ts": NaN, "dur": 1}]}')
    put("emptytrace.json", '{"traceEvents": []}')
    put("empty.json", "")
    put("bin.json", bytes(range(256)) * 4)
    put("latin1.json", '{"traceEvents": [{"name": "caf\xe9"}]}'.encode("latin-1"))
    put("gz_empty.json.gz", gzip.compress(b""))
    put("gz_bin.json.gz", gzip.compress(bytes(range(256)) * 4))
    put("unknown.txt", "some text\n")
    put("bin.nsys-rep", bytes(range(256)) * 4)
    con = sqlite3.connect(ws / "notables.sqlite")
    con.execute("create table other (x integer)")
    con.commit()
    con.close()
    f["notables.sqlite"] = str(ws / "notables.sqlite")
    put("notsqlite.sqlite", "plain text, not a database\n")
    con = sqlite3.connect(ws / "emptykernels.sqlite")
    src = sqlite3.connect(DATA / "traces" / "workload_nsys.sqlite")
    for (sql,) in src.execute("select sql from sqlite_master where type='table' and sql is not null"):
        con.execute(sql)
    con.commit()
    con.close()
    src.close()
    f["emptykernels.sqlite"] = str(ws / "emptykernels.sqlite")
    # fuzz: a campaign written by the reference target, a finding, a folder with a foreign index.json
    camp = ws / "camp"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    subprocess.run([sys.executable, "-m", "segkit_cli", "fuzz", "--target", "reference", "--workers", "0",
                    "--max-cases", "2", "--quiet", "-o", str(camp)], env=env, cwd=ws, capture_output=True,
                   timeout=300)
    f["camp"] = str(camp)
    copy("finding/f001_mismatch.py", GOOD)
    f["finding"] = str(ws / "finding")
    put("fakeidx/index.json", '{"findings": "not a list"}')
    f["fakeidx"] = str(ws / "fakeidx")
    put("badidx/index.json", "{nope")
    f["badidx"] = str(ws / "badidx")
    put("listidx/index.json", "[1, 2]")
    f["listidx"] = str(ws / "listidx")
    put("tuning.json", '{"entries": []}')
    put("tuning_bad.json", '{"entries": [{"x": 1}]}')
    (ws / "cwd").mkdir()
    f["cwd"] = str(ws / "cwd")
    return f


# ----------------------------------------------------------------------------------------------- cases

@dataclass
class Case:
    name: str
    argv: list[str]                 # CLI argv, or [] for an API case
    rc: int | tuple[int, ...]       # expected exit code(s)
    says: str = ""                  # a regex the error line must match (case-insensitive)
    code: str = ""                  # API snippet (raises or prints)
    stdin: str | None = None
    env: dict = field(default_factory=dict)


CLI: list[tuple[str, list[str], int | tuple[int, ...], str]] = [
    # repro
    ("repro-missing", ["repro", "{ws}/nope.py"], 2, "nope.py"),
    ("repro-dir", ["repro", "{adir}"], 2, "directory"),
    ("repro-empty", ["repro", "{empty.py}"], 1, "empty.py"),
    ("repro-binary", ["repro", "{bin.py}"], 2, "bin.py"),
    ("repro-latin1", ["repro", "{latin1.py}"], 2, "UTF-8"),
    ("repro-syntax", ["repro", "{syntax.py}"], 1, "syntax"),
    ("repro-nofusion", ["repro", "{nofusion.py}"], 1, "fusion"),
    ("repro-two-no-fusion", ["repro", "{two.py}"], (1, 2), "--fusion"),
    ("repro-two-bad-fusion", ["repro", "{two.py}", "--fusion", "third"], (1, 2), "third"),
    ("repro-two-empty-fusion", ["repro", "{two.py}", "--fusion", ""], 2, "--fusion"),
    ("repro-wrong-shape", ["repro", "{shape.py}"], 1, "shape|size"),
    ("repro-wrong-dtype", ["repro", "{dtype.py}"], 1, "dtype|Float|Long|int64"),
    ("repro-bad-op", ["repro", "{badop.py}"], 1, "dim"),
    ("repro-raises", ["repro", "{raises.py}"], 1, "boom"),
    ("repro-sys-exit", ["repro", "{exits.py}"], 1, "exit"),
    ("repro-no-output", ["repro", "{noout.py}"], 1, "output"),
    ("repro-dangling", ["repro", "{dangling.py}"], 2, "dangling.py"),
    ("repro-symlink-loop", ["repro", "{loop.py}"], 2, "loop.py"),
    ("repro-long-name", ["repro", "{long}"], 2, "xxxx"),
    ("repro-timeout-nan", ["repro", "{good.py}"], 2, "SEGKIT_SCRIPT_TIMEOUT"),
    ("repro-timeout-neg", ["repro", "{good.py}"], 2, "SEGKIT_SCRIPT_TIMEOUT"),
    ("repro-sleeps", ["repro", "{sleeps.py}"], 1, "seconds|time"),
    ("repro-maxbytes-bad", ["repro", "{good.py}"], 2, "SEGKIT_MAX_TENSOR_BYTES"),
    # bookend
    ("bookend-bad-policy", ["bookend", "{good.py}", "--policy", "all"], 2, "--policy"),
    ("bookend-bad-ops", ["bookend", "{good.py}", "--ops", "slice,frobnicate"], 2, "frobnicate"),
    ("bookend-empty-ops", ["bookend", "{good.py}", "--ops", ""], 2, "--ops"),
    ("bookend-plot-is-input", ["bookend", "{good.py}", "--plot", "{ws}/good"], (0, 2), ""),
    ("bookend-plot-unwritable", ["bookend", "{good.py}", "--plot", "/proc/nonexistent/x"], 2, "--plot"),
    ("bookend-syntax", ["bookend", "{syntax.py}"], 1, "syntax"),
    ("bookend-two", ["bookend", "{two.py}", "--fusion", "nope"], (1, 2), "nope"),
    # check
    ("check-tol-nan", ["check", "{good.py}", "--dtype-tol", "bf16=nan"], 2, "--dtype-tol"),
    ("check-tol-neg", ["check", "{good.py}", "--dtype-tol", "bf16=-1"], 2, "--dtype-tol"),
    ("check-tol-noeq", ["check", "{good.py}", "--dtype-tol", "bf16"], 2, "--dtype-tol"),
    ("check-bad-spec", ["check", "rmsnorm_fwd:nosuchconfig"], 2, "nosuchconfig"),
    ("check-spec-empty-config", ["check", "rmsnorm_fwd:"], 2, "rmsnorm_fwd"),
    ("check-two-fusion-spec", ["check", "rmsnorm_fwd:nanogpt", "--fusion", "x"], 2, "--fusion"),
    ("check-wrong-shape", ["check", "{shape.py}"], 1, "shape|size"),
    ("check-binary", ["check", "{bin.py}"], 2, "bin.py"),
    # minimize
    ("minimize-out-is-input", ["minimize", "{good.py}", "-o", "{good.py}"], 2, "input"),
    ("minimize-out-symlink-input", ["minimize", "{good.py}", "-o", "{link.py}"], 2, "input"),
    ("minimize-out-dir", ["minimize", "{good.py}", "-o", "{adir}"], 2, "directory"),
    ("minimize-max-seconds-nan", ["minimize", "{good.py}", "-o", "{ws}/m.py", "--max-seconds", "nan"], 2,
     "--max-seconds"),
    ("minimize-max-seconds-neg", ["minimize", "{good.py}", "-o", "{ws}/m.py", "--max-seconds", "-3"], 2,
     "--max-seconds"),
    ("minimize-no-o", ["minimize", "{good.py}"], 2, "-o"),
    ("minimize-missing", ["minimize", "{ws}/nope.py", "-o", "{ws}/m.py"], 2, "nope.py"),
    # profile
    ("profile-no-command", ["profile"], 2, "command"),
    ("profile-out-is-file", ["profile", "-o", "{good.py}", "--torch", "--", "true"], 2, "-o|--output"),
    ("profile-out-userdir", ["profile", "-o", "{userdir}", "--torch", "--", "true"], 2, "new or empty"),
    ("profile-missing-cmd", ["profile", "-o", "{ws}/prof_out", "--torch", "--", "{ws}/no_such_program"], (1, 2),
     "no_such_program"),
    ("profile-nsys-torch", ["profile", "--nsys", "--torch", "--", "true"], 2, "not allowed|--torch|--nsys"),
    # trace show
    ("show-missing", ["trace", "show", "{ws}/nope.json"], 2, "nope.json"),
    ("show-dir", ["trace", "show", "{adir}"], 2, "directory"),
    ("show-trunc-gzip", ["trace", "show", "{trunc.json.gz}"], 1, "trunc.json.gz"),
    ("show-notgzip", ["trace", "show", "{notgzip.json.gz}"], 1, "notgzip"),
    ("show-notrace", ["trace", "show", "{notrace.json}"], 1, "notrace.json"),
    ("show-list", ["trace", "show", "{list.json}"], 1, "list.json"),
    ("show-events-bad", ["trace", "show", "{events_bad.json}"], 1, "events_bad.json"),
    ("show-events-nodur", ["trace", "show", "{events_nodur.json}"], (0, 1), ""),
    ("show-empty-file", ["trace", "show", "{empty.json}"], 1, "empty.json"),
    ("show-bin", ["trace", "show", "{bin.json}"], 1, "bin.json"),
    ("show-latin1", ["trace", "show", "{latin1.json}"], 1, "latin1.json"),
    ("show-gz-empty", ["trace", "show", "{gz_empty.json.gz}"], 1, "gz_empty"),
    ("show-gz-bin", ["trace", "show", "{gz_bin.json.gz}"], 1, "gz_bin"),
    ("show-unknown-ext", ["trace", "show", "{unknown.txt}"], (1, 2), "unknown.txt"),
    ("show-bin-nsysrep", ["trace", "show", "{bin.nsys-rep}"], 1, "nsys"),
    ("show-notables-sqlite", ["trace", "show", "{notables.sqlite}"], 1, "notables.sqlite"),
    ("show-notsqlite", ["trace", "show", "{notsqlite.sqlite}"], 1, "notsqlite"),
    ("show-emptytrace-json", ["trace", "show", "{emptytrace.json}", "--format", "json"], (0, 1), ""),
    ("show-emptykernels-json", ["trace", "show", "{emptykernels.sqlite}", "--format", "json"], (0, 1), ""),
    ("show-json-pure", ["trace", "show", "{torch.json.gz}", "--format", "json"], 0, ""),
    ("show-bad-table", ["trace", "show", "{torch.json.gz}", "--format", "csv", "--table", "nosuch"], 2, "nosuch"),
    ("show-table-with-json", ["trace", "show", "{torch.json.gz}", "--table", "kernels"], 2, "--table"),
    ("show-csvdir-userdir", ["trace", "show", "{torch.json.gz}", "--format", "csv", "--csv-dir", "{userdir}"], 2,
     "new or empty"),
    ("show-csvdir-no-csv", ["trace", "show", "{torch.json.gz}", "--csv-dir", "{ws}/csvx"], 2, "--csv-dir"),
    ("show-bad-format", ["trace", "show", "{torch.json.gz}", "--format", "yaml"], 2, "--format"),
    ("show-range-missing-json", ["trace", "show", "{torch.json.gz}", "--range", "no-such-range", "--format",
                                 "json"], (0, 1, 2), "no-such-range"),
    # trace compare
    ("compare-same-file", ["trace", "compare", "{torch.json.gz}", "{torch.json.gz}", "--format", "json"], (0, 2),
     ""),
    ("compare-one-missing", ["trace", "compare", "{torch.json.gz}", "{ws}/nope.json"], 2, "nope.json"),
    ("compare-plot-is-input", ["trace", "compare", "{torch.json.gz}", "{nsys.sqlite}", "--plot",
                               "{torch.json.gz}"], 2, "input|--plot"),
    ("compare-plot-dir", ["trace", "compare", "{torch.json.gz}", "{nsys.sqlite}", "--plot", "{adir}"], 2,
     "directory"),
    ("compare-corrupt-b", ["trace", "compare", "{torch.json.gz}", "{trunc.json.gz}"], 1, "trunc.json.gz"),
    ("compare-bad-by", ["trace", "compare", "{torch.json.gz}", "{nsys.sqlite}", "--by", "op"], 2, "--by"),
    ("compare-json-pure", ["trace", "compare", "{torch.json.gz}", "{nsys.sqlite}", "--format", "json"], 0, ""),
    ("compare-csvdir-is-input-dir", ["trace", "compare", "{torch.json.gz}", "{nsys.sqlite}", "--format", "csv",
                                     "--csv-dir", "{ws}"], 2, "--csv-dir"),
    # trace idle
    ("idle-min-us-nan", ["trace", "idle", "{torch.json.gz}", "--min-us", "nan"], 2, "--min-us"),
    ("idle-min-us-neg", ["trace", "idle", "{torch.json.gz}", "--min-us", "-5"], 2, "--min-us"),
    ("idle-min-us-inf", ["trace", "idle", "{torch.json.gz}", "--min-us", "inf"], 2, "--min-us"),
    ("idle-top-zero", ["trace", "idle", "{torch.json.gz}", "--top", "0"], 2, "--top"),
    ("idle-top-huge", ["trace", "idle", "{torch.json.gz}", "--top", "99999999999999999999999", "--format", "json"],
     (0, 2), ""),
    ("idle-top-float", ["trace", "idle", "{torch.json.gz}", "--top", "2.5"], 2, "--top"),
    ("idle-step-empty", ["trace", "idle", "{torch.json.gz}", "--step", ""], 2, "--step"),
    ("idle-step-missing-json", ["trace", "idle", "{torch.json.gz}", "--step", "nosuchstep", "--format", "json"],
     (0, 1, 2), "nosuchstep"),
    ("idle-trunc", ["trace", "idle", "{trunc.json.gz}"], 1, "trunc.json.gz"),
    ("idle-notables", ["trace", "idle", "{notables.sqlite}", "--format", "json"], 1, "notables.sqlite"),
    ("idle-empty-trace-json", ["trace", "idle", "{emptytrace.json}", "--format", "json"], (0, 1), ""),
    ("idle-events-nan", ["trace", "idle", "{events_nan.json}", "--format", "json"], (0, 1), ""),
    ("idle-json-pure", ["trace", "idle", "{step.json.gz}", "--format", "json"], 0, ""),
    ("idle-csv-table-bad", ["trace", "idle", "{torch.json.gz}", "--format", "csv", "--table", "nope"], 2, "nope"),
    # trace breakdown
    ("breakdown-missing", ["trace", "breakdown", "{ws}/nope.json.gz"], 2, "nope.json.gz"),
    ("breakdown-same-twice-json", ["trace", "breakdown", "{step.json.gz}", "{step.json.gz}", "--format", "json"],
     (0, 2), ""),
    ("breakdown-one-corrupt", ["trace", "breakdown", "{step.json.gz}", "{trunc.json.gz}"], 1, "trunc.json.gz"),
    ("breakdown-dir", ["trace", "breakdown", "{adir}"], 2, "directory"),
    ("breakdown-step-empty", ["trace", "breakdown", "{step.json.gz}", "--step", ""], 2, "--step"),
    ("breakdown-empty-trace-json", ["trace", "breakdown", "{emptytrace.json}", "--format", "json"], (0, 1), ""),
    ("breakdown-notables", ["trace", "breakdown", "{notables.sqlite}"], 1, "notables.sqlite"),
    ("breakdown-json-pure", ["trace", "breakdown", "{step.json.gz}", "--format", "json"], 0, ""),
    ("breakdown-csvdir-file", ["trace", "breakdown", "{step.json.gz}", "--format", "csv", "--csv-dir",
                               "{good.py}"], 2, "--csv-dir"),
    ("breakdown-no-reports", ["trace", "breakdown"], 2, "reports"),
    # demo
    ("demo-extra", ["demo", "--nope"], 2, "--nope"),
    # segments
    ("segments-reps-zero", ["segments", "{good.py}", "--reps", "0"], 2, "--reps"),
    ("segments-reps-nan", ["segments", "{good.py}", "--reps", "nan"], 2, "--reps"),
    ("segments-emit-userdir", ["segments", "{good.py}", "--emit-dir", "{userdir}"], 2, "new or empty"),
    ("segments-emit-file", ["segments", "{good.py}", "--emit-dir", "{good.py}"], 2, "--emit-dir"),
    ("segments-plot-is-input", ["segments", "{good.py}", "--plot", "{ws}/good"], (0, 2), ""),
    ("segments-syntax", ["segments", "{syntax.py}"], 1, "syntax"),
    ("segments-two-bad", ["segments", "{two.py}", "--fusion", "nope"], (1, 2), "nope"),
    ("segments-spec-bad", ["segments", "nosuch:cfg"], 2, "nosuch"),
    # report
    ("report-out-is-input", ["report", "{good.py}", "-o", "{good.py}"], 2, "input"),
    ("report-out-symlink", ["report", "{good.py}", "-o", "{link.py}"], 2, "input"),
    ("report-out-unwritable", ["report", "{good.py}", "-o", "/proc/nonexistent/r.html"], 2, "-o|--output"),
    ("report-two", ["report", "{two.py}", "-o", "{ws}/r2.html"], (1, 2), "--fusion"),
    ("report-latin1", ["report", "{latin1.py}", "-o", "{ws}/r3.html"], 2, "UTF-8"),
    # regions
    ("regions-missing", ["regions", "{ws}/nope.py"], 2, "nope.py"),
    ("regions-dir", ["regions", "{adir}"], 2, "directory"),
    ("regions-empty", ["regions", "{empty.py}"], 1, "empty.py"),
    ("regions-binary", ["regions", "{bin.py}"], (1, 2), "bin.py"),
    ("regions-latin1", ["regions", "{latin1.py}"], (1, 2), "latin1.py"),
    ("regions-syntax", ["regions", "{trace_syntax.py}"], 1, "trace_syntax.py"),
    ("regions-no-computation", ["regions", "{trace_nocomputation.py}"], 1, "trace_nocomputation.py"),
    ("regions-no-regions-json", ["regions", "{trace_noregions.py}", "--format", "json"], (0, 1), ""),
    ("regions-repro-not-trace", ["regions", "{good.py}"], 1, "good.py"),
    ("regions-json-trace", ["regions", "{torch.json.gz}"], (1, 2), "torch.json.gz"),
    ("regions-bad-gpu", ["regions", "{fwd.py}", "--gpu", "a100x"], 2, "--gpu"),
    ("regions-gpu-empty", ["regions", "{fwd.py}", "--gpu", ""], 2, "--gpu"),
    ("regions-bw-nan", ["regions", "{fwd.py}", "--bandwidth", "nan"], 2, "--bandwidth"),
    ("regions-bw-zero", ["regions", "{fwd.py}", "--bandwidth", "0"], 2, "--bandwidth"),
    ("regions-bw-inf", ["regions", "{fwd.py}", "--bandwidth", "inf"], 2, "--bandwidth"),
    ("regions-bw-huge", ["regions", "{fwd.py}", "--bandwidth", "1e400"], 2, "--bandwidth"),
    ("regions-step-neg", ["regions", "{fwd.py}", "--step-ms", "-1"], 2, "--step-ms"),
    ("regions-launch-nan", ["regions", "{fwd.py}", "--launch-us", "nan"], 2, "--launch-us"),
    ("regions-host-neg", ["regions", "{fwd.py}", "--host-us", "-2"], 2, "--host-us"),
    ("regions-kpc-zero", ["regions", "{fwd.py}", "--kernels-per-cut", "-1"], 2, "--kernels-per-cut"),
    ("regions-html-is-input", ["regions", "{fwd.py}", "--html", "{fwd.py}"], 2, "input"),
    ("regions-html-dir", ["regions", "{fwd.py}", "--html", "{adir}"], 2, "directory"),
    ("regions-html-unwritable", ["regions", "{fwd.py}", "--html", "/proc/nonexistent/x.html"], 2, "--html"),
    ("regions-profile-missing", ["regions", "{fwd.py}", "--profile", "{ws}/nope.json.gz"], 2, "nope.json.gz"),
    ("regions-profile-corrupt", ["regions", "{fwd.py}", "--profile", "{trunc.json.gz}"], 1, "trunc.json.gz"),
    ("regions-profile-is-trace", ["regions", "{fwd.py}", "--profile", "{fwd.py}"], (1, 2), "fwd.py"),
    ("regions-same-twice-json", ["regions", "{fwd.py}", "{fwd.py}", "--format", "json"], (0, 2), ""),
    ("regions-bwd-then-fwd-json", ["regions", "{bwd.py}", "{fwd.py}", "--format", "json"], (0, 1, 2), ""),
    ("regions-json-pure", ["regions", "{fwd.py}", "{bwd.py}", "--format", "json"], 0, ""),
    ("regions-json-html-pure", ["regions", "{fwd.py}", "--format", "json", "--html", "{ws}/reg.html"], 0, ""),
    ("regions-bad-format", ["regions", "{fwd.py}", "--format", "csv"], 2, "--format"),
    ("regions-three", ["regions", "{fwd.py}", "{bwd.py}", "{fwd.py}"], 2, "TRACE|trace"),
    # reuse
    ("reuse-bad-inner-outer", ["reuse", "{good.py}", "--inner-outer", "both"], 2, "--inner-outer"),
    ("reuse-syntax", ["reuse", "{syntax.py}"], 1, "syntax"),
    ("reuse-two", ["reuse", "{two.py}"], (1, 2), "--fusion"),
    ("reuse-reps-huge", ["reuse", "{good.py}", "--reps", "1e9"], 2, "--reps"),
    # tune
    ("tune-no-target", ["tune"], 2, "target|--merge"),
    ("tune-bad-spec", ["tune", "nosuch:cfg", "--reference"], 2, "nosuch"),
    ("tune-budget-nan", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--budget", "nan"], 2, "--budget"),
    ("tune-shard-bad", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--shard", "3/2"], 2, "--shard"),
    ("tune-shard-zero", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--shard", "0/0"], 2, "--shard"),
    ("tune-out-write", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--out", "{ws}/t.json", "--write"], 2,
     "--out|--write"),
    ("tune-merge-missing", ["tune", "--merge", "{ws}/nope.json"], 2, "nope.json"),
    ("tune-merge-bad", ["tune", "--merge", "{tuning_bad.json}"], (1, 2), "tuning_bad.json"),
    ("tune-merge-binary", ["tune", "--merge", "{bin.json}"], (1, 2), "bin.json"),
    ("tune-out-is-input", ["tune", "{good.py}", "--reference", "--out", "{good.py}"], 2, "input"),
    ("tune-amaxes-bad", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--amaxes", "x,y"], 2, "--amaxes"),
    ("tune-dtype-bad", ["tune", "rmsnorm_fwd:nanogpt", "--reference", "--dtype", "fp64"], 2, "--dtype"),
    # fuzz
    ("fuzz-o-userdir", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                        "{userdir}"], 2, "new or empty"),
    ("fuzz-o-file", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o", "{good.py}"], 2,
     "-o|--output"),
    ("fuzz-o-existing-camp", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                              "{camp}"], 2, "--resume"),
    ("fuzz-resume-fakeidx", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                             "{fakeidx}", "--resume"], 2, "index.json"),
    ("fuzz-resume-badidx", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                            "{badidx}", "--resume"], 2, "index.json"),
    ("fuzz-resume-listidx", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                             "{listidx}", "--resume"], 2, "index.json"),
    ("fuzz-resume-new", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                         "{ws}/fresh_camp", "--resume"], (0, 2), ""),
    ("fuzz-resume-other-seed", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                                "{camp}", "--resume", "--seed", "7"], (0, 2), ""),
    ("fuzz-minutes-nan", ["fuzz", "--minutes", "nan", "-o", "{ws}/f1"], 2, "--minutes"),
    ("fuzz-minutes-zero", ["fuzz", "--minutes", "0", "-o", "{ws}/f1"], 2, "--minutes"),
    ("fuzz-seed-float", ["fuzz", "--seed", "1.5", "-o", "{ws}/f1"], 2, "--seed"),
    ("fuzz-workers-neg", ["fuzz", "--workers", "-1", "-o", "{ws}/f1"], 2, "--workers"),
    ("fuzz-timeout-inf", ["fuzz", "--case-timeout", "inf", "-o", "{ws}/f1"], 2, "--case-timeout"),
    ("fuzz-max-ops-zero", ["fuzz", "--max-ops", "0", "-o", "{ws}/f1"], 2, "--max-ops"),
    ("fuzz-max-elements-huge", ["fuzz", "--max-elements", "1e30", "-o", "{ws}/f1"], 2, "--max-elements"),
    ("fuzz-bad-target", ["fuzz", "--target", "gpu", "-o", "{ws}/f1"], 2, "--target"),
    ("fuzz-replay-missing", ["fuzz", "--replay", "{ws}/nope"], 2, "nope"),
    ("fuzz-replay-file", ["fuzz", "--replay", "{good.py}"], 2, "good.py"),
    ("fuzz-replay-empty-dir", ["fuzz", "--replay", "{adir}"], (0, 1, 2), "adir|finding"),
    ("fuzz-replay-badidx", ["fuzz", "--replay", "{badidx}"], (1, 2), "index.json"),
    ("fuzz-replay-userdir", ["fuzz", "--replay", "{userdir}"], (0, 1, 2), "userdir|finding"),
    ("fuzz-replay-with-o", ["fuzz", "--replay", "{camp}", "-o", "{ws}/f2"], 2, "-o|--output|--replay"),
    ("fuzz-replay-with-resume", ["fuzz", "--replay", "{camp}", "--resume"], 2, "--resume|--replay"),
    ("fuzz-replay-and-emit", ["fuzz", "--replay", "{camp}", "--emit", "{good.py}"], 2, "--emit|--replay"),
    ("fuzz-emit-missing", ["fuzz", "--emit", "{ws}/nope.py"], 2, "nope.py"),
    ("fuzz-emit-dir", ["fuzz", "--emit", "{adir}"], 2, "directory"),
    ("fuzz-emit-syntax", ["fuzz", "--emit", "{syntax.py}"], 1, "syntax"),
    ("fuzz-emit-two", ["fuzz", "--emit", "{two.py}"], (1, 2), "--fusion"),
    ("fuzz-emit-binary", ["fuzz", "--emit", "{bin.py}"], 2, "bin.py"),
    ("fuzz-emit-with-o", ["fuzz", "--emit", "{good.py}", "-o", "{ws}/f3"], 2, "-o|--output|--emit"),
    ("fuzz-emit-with-minutes", ["fuzz", "--emit", "{good.py}", "--minutes", "1"], 2, "--minutes|--emit"),
    ("fuzz-fusion-without-emit", ["fuzz", "--fusion", "x", "-o", "{ws}/f4", "--max-cases", "1"], 2, "--fusion"),
    ("fuzz-o-inside-input", ["fuzz", "--replay", "{camp}", "--minutes", "1"], 2, "--minutes|--replay"),
    # added in the second pass
    ("fuzz-emit-two-with-fusion", ["fuzz", "--emit", "{two.py}", "--fusion", "second"], 0, ""),
    ("fuzz-emit-index-json", ["fuzz", "--emit", "{camp}/index.json"], 1, "index.json|fusion"),
    ("fuzz-replay-nvfuser-no-gpu", ["fuzz", "--replay", "{camp}"], (0, 1), ""),
    ("fuzz-o-inside-campaign", ["fuzz", "--target", "reference", "--workers", "0", "--max-cases", "1", "-o",
                                "{camp}/sub"], (0, 2), ""),
    ("show-long-name", ["trace", "show", "{ws}/" + "y" * 300 + ".json"], 2, "yyyy"),
    ("regions-same-via-symlink", ["regions", "{fwd.py}", "{ws}/fwdlink.py", "--format", "json"], (0, 2), ""),
    ("profile-child-fails", ["profile", "-o", "{ws}/prof2", "--torch", "--", sys.executable, "-c",
                             "raise SystemExit(3)"], (1, 3), ""),
    ("bookend-two-with-fusion", ["bookend", "{two.py}", "--fusion", "second"], 0, ""),
    ("segments-two-with-fusion", ["segments", "{two.py}", "--fusion", "first"], 0, ""),
    ("reuse-spec-with-fusion", ["reuse", "rmsnorm_fwd:nanogpt_tiny", "--fusion", "x"], 2, "--fusion"),
    ("check-table-option", ["check", "{good.py}", "--dtype-tol", "bf16=1e-2", "--dtype-tol", "bf16=2e-2"], (1, 2),
     ""),
    # global
    ("no-command", [], 2, "command|required"),
    ("unknown-command", ["frobnicate"], 2, "frobnicate"),
    ("debug-after-dashdash", ["profile", "--torch", "--", "--debug"], (1, 2), ""),
]

# environment overrides for some cases
ENV = {
    "repro-timeout-nan": {"SEGKIT_SCRIPT_TIMEOUT": "nan"},
    "repro-timeout-neg": {"SEGKIT_SCRIPT_TIMEOUT": "-4"},
    "repro-sleeps": {"SEGKIT_SCRIPT_TIMEOUT": "3"},
    "repro-maxbytes-bad": {"SEGKIT_MAX_TENSOR_BYTES": "lots"},
}

API_PRE = "R = segkit.load_repro({good!r})\nfd = R.fd\ninputs = R.make_inputs()\n"

# (name, code, regex the message must match); the code runs after `import segkit, torch`
API: list[tuple[str, str, str]] = [
    ("api-load-none", "segkit.load_repro(None)", "path_or_source"),
    ("api-load-int", "segkit.load_repro(3)", "path_or_source"),
    ("api-load-missing", "segkit.load_repro({ws!r} + '/nope.py')", "nope.py"),
    ("api-load-dir", "segkit.load_repro({adir!r})", "adir|directory"),
    ("api-load-timeout-neg", "segkit.load_repro({good!r}, timeout=-1)", "timeout"),
    ("api-load-timeout-nan", "segkit.load_repro({good!r}, timeout=float('nan'))", "timeout"),
    ("api-load-fusion-int", "segkit.load_repro({two!r}, fusion=3)", "fusion"),
    ("api-load-fusion-missing", "segkit.load_repro({two!r}, fusion='third')", "third"),
    ("api-load-binary", "segkit.load_repro({bin!r})", "bin.py|UTF-8"),
    ("api-bookend-policy", API_PRE + "segkit.bookend(fd, policy='all')", "policy"),
    ("api-bookend-ops-str", API_PRE + "segkit.bookend(fd, ops='slice')", "ops"),
    ("api-bookend-ops-unknown", API_PRE + "segkit.bookend(fd, ops={{'frob'}})", "frob|ops"),
    ("api-bookend-fd-none", "segkit.bookend(None)", "fd"),
    ("api-check-inputs-none", API_PRE + "segkit.check(fd, None)", "inputs"),
    ("api-check-tol-nan", API_PRE + "segkit.check(fd, inputs, tol={{torch.float32: float('nan')}})", "tol"),
    ("api-check-tol-neg", API_PRE + "segkit.check(fd, inputs, tol={{torch.float32: -1.0}})", "tol"),
    ("api-run-ref-wrong-count", API_PRE + "segkit.run_reference(fd, [])", "input"),
    ("api-run-ref-wrong-shape", API_PRE + "segkit.run_reference(fd, [torch.zeros(3, 3)] * len(inputs))",
     "shape|size"),
    ("api-run-ref-maxbytes-neg", API_PRE + "segkit.run_reference(fd, inputs, max_tensor_bytes=-1)",
     "max_tensor_bytes"),
    ("api-random-inputs-seed-str", API_PRE + "segkit.random_inputs(fd, seed='x')", "seed"),
    ("api-random-inputs-shapes-neg", API_PRE + "segkit.random_inputs(fd, shapes=[[-1, 4]] * len(inputs))",
     "shapes|-1"),
    ("api-random-inputs-device", API_PRE + "segkit.random_inputs(fd, device='nodevice')", "device"),
    ("api-emit-style", API_PRE + "segkit.emit_repro(fd, style='modern')", "style"),
    ("api-run-plan-backend", API_PRE + "segkit.run_plan(segkit.bookend(fd), inputs, backend='tpu')", "backend"),
    ("api-run-plan-realization", API_PRE + "segkit.run_plan(segkit.bookend(fd), inputs, realization='x')",
     "realization"),
    ("api-reuse-inner-outer", API_PRE + "segkit.reuse_reductions(fd, inner_outer='both')", "inner_outer"),
    ("api-find-aliases-str", "segkit.find_aliases('fd')", "fd"),
    ("api-trace-load-none", "import segkit.trace\nsegkit.trace.load(None)", "path"),
    ("api-trace-load-missing", "import segkit.trace\nsegkit.trace.load({ws!r} + '/nope.json')", "nope.json"),
    ("api-trace-load-trunc", "import segkit.trace\nsegkit.trace.load({trunc!r})", "trunc.json.gz"),
    ("api-trace-load-notables", "import segkit.trace\nsegkit.trace.load({notables!r})", "notables.sqlite"),
    ("api-trace-load-dir", "import segkit.trace\nsegkit.trace.load({adir!r})", "adir|directory"),
    ("api-trace-range-int", "import segkit.trace\nwith segkit.trace.range(3): pass", "name"),
    ("api-trace-idle-min-neg", "import segkit.trace, segkit.trace.idle as i\n"
     "i.idle_tables(segkit.trace.load({torch!r}), min_us=-1)", "min_us"),
    ("api-trace-idle-min-nan", "import segkit.trace, segkit.trace.idle as i\n"
     "i.idle_tables(segkit.trace.load({torch!r}), min_us=float('nan'))", "min_us"),
    ("api-trace-gaps-str", "import segkit.trace.idle as i\ni.gaps({torch!r})", "trace"),
    ("api-trace-idle-tables-top0", "import segkit.trace, segkit.trace.idle as i\n"
     "i.idle_tables(segkit.trace.load({torch!r}), top=0)", "top"),
    ("api-trace-breakdown-empty", "import segkit.trace.breakdown as b\nb.breakdown_tables([])", "trace|profile"),
    ("api-trace-breakdown-str", "import segkit.trace.breakdown as b\nb.breakdown_tables({torch!r})",
     "trace|profile"),
    ("api-fusions-get-none", "import fusions\nfusions.get(None)", "name"),
    ("api-fusions-get-unknown", "import fusions\nfusions.get('nosuch')", "nosuch"),
    ("api-fusions-get-empty", "import fusions\nfusions.get('')", "name|''"),
    ("api-fusions-get-config", "import fusions\nfusions.get('rmsnorm_fwd:nosuch')", "nosuch"),
    ("api-thunder-route-bad", "import thunder_exec\nthunder_exec.route(lambda x: x, to='softmax')", "to|softmax"),
    ("api-thunder-route-notfn", "import thunder_exec\nthunder_exec.route(3, to='rms_norm')", "fn"),
    ("api-thunder-clear-str", "import thunder_exec\nthunder_exec.clear_caches(keep_compiled='yes')",
     "keep_compiled"),
    ("api-thunder-executors-arg", "import thunder_exec\nthunder_exec.executors('x')", "executors|argument"),
    ("api-regions-parse-none", "import segkit.regions as r\nr.parse_trace(None)", "source"),
    ("api-regions-parse-garbage", "import segkit.regions as r\nr.parse_trace('def f(:', label='x.py')", "x.py"),
    ("api-fuzz-o-userdir", "import segkit.fuzz as f\nf.fuzz('reference', {userdir!r}, "
     "max_cases=1, workers=0, progress=False)", "userdir|new or empty"),
    ("api-fuzz-bad-target", "import segkit.fuzz as f\nf.fuzz('tpu', {ws!r} + '/fz', max_cases=1, "
     "workers=0, progress=False)", "target"),
    ("api-fuzz-minutes-nan", "import segkit.fuzz as f\nf.fuzz('reference', {ws!r} + '/fz2', "
     "minutes=float('nan'), workers=0, progress=False)", "minutes"),
    ("api-fuzz-resume-userdir", "import segkit.fuzz as f\nf.fuzz('reference', {userdir!r}, max_cases=1, "
     "workers=0, resume=True, progress=False)", "userdir|index"),
    ("api-load-empty", "segkit.load_repro('')", "path|empty"),
    ("api-spec-build-bad", "import fusions\nfusions.get('rmsnorm_fwd').build('nosuch')", "nosuch"),
    ("api-spec-inputs-device", "import fusions\nfusions.get('rmsnorm_fwd').make_inputs('nanogpt_tiny', "
     "device='nodev')", "device"),
    ("api-trace-range-empty", "import segkit.trace\nwith segkit.trace.range(''): pass", "name"),
    ("api-regions-cost-nan", "import segkit.regions as r\nr.cost_model('h100', float('nan'))", "bandwidth"),
    ("api-check-outputs-none", API_PRE + "segkit.check_outputs(fd, inputs, None)", "outputs"),
    ("api-fuzz-replay-missing", "import segkit.fuzz as f\nf.replay({ws!r} + '/nope', 'reference')", "nope"),
]


# ----------------------------------------------------------------------------------------------- running

def snapshot(roots: list[Path]) -> dict[str, str]:
    """Path -> sha256 of every regular file (not following links) under ``roots``."""
    out = {}
    for root in roots:
        for dirpath, _, names in os.walk(root):
            for n in names:
                p = Path(dirpath) / n
                if p.is_symlink() or not p.is_file():
                    continue
                try:
                    out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
                except OSError:
                    out[str(p)] = "unreadable"
    return out


def fill(s: str, f: dict[str, str]) -> str:
    for k, v in f.items():
        s = s.replace("{" + k + "}", v)
    return s


@dataclass
class Result:
    name: str
    expected: str
    observed: str
    right: bool
    why: str


def judge_cli(name, argv, rc_want, says, f, env) -> Result:
    argv = [fill(a, f) for a in argv]
    want = rc_want if isinstance(rc_want, tuple) else (rc_want,)
    e = dict(os.environ, PYTHONPATH=str(REPO), **env)
    t0 = time.time()
    try:
        p = subprocess.run([sys.executable, "-m", "segkit_cli", *argv], env=e, cwd=f["cwd"], capture_output=True,
                           timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Result(name, f"rc {want}", "TIMEOUT", False, "hang")
    out, err = p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")
    why = []
    if p.returncode not in want:
        why.append(f"rc {p.returncode}")
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    if "Traceback" in err:
        why.append("traceback")
    if p.returncode != 0:
        if len(lines) != 1:
            why.append(f"{len(lines)} stderr lines")
        if not lines or not ERR_LINE.match(lines[-1]):
            why.append("no 'segkit: error:' line")
        elif says and not re.search(says, lines[-1], re.I):
            why.append(f"error does not name /{says}/")
        if "unexpected" in err.lower():
            why.append("unexpected error")
    if "--format" in argv and argv[argv.index("--format") + 1] == "json" and p.returncode == 0:
        try:
            json.loads(out)
        except ValueError:
            why.append("stdout not JSON")
    first = lines[-1] if lines else ""
    observed = f"rc {p.returncode}: {first[:150]}"
    if p.returncode == 0 and not first:
        observed = f"rc 0 ({time.time() - t0:.0f} s)"
    return Result(name, f"rc {'/'.join(map(str, want))}" + (f", /{says}/" if says else ""), observed, not why,
                  "; ".join(why))


API_WRAP = """
import sys, traceback
try:
    import segkit, torch
{body}
except BaseException as e:
    import segkit.errors
    ok = isinstance(e, (TypeError, ValueError, segkit.errors.SegkitError))
    msg = str(e).strip().splitlines()
    print("EXC", type(e).__name__, ok, (msg[0] if msg else "")[:300])
else:
    print("NOEXC")
"""


def judge_api(name, code, says, f) -> Result:
    keys = {"good": f["good.py"], "two": f["two.py"], "bin": f["bin.py"], "trunc": f["trunc.json.gz"],
            "notables": f["notables.sqlite"], "torch": f["torch.json.gz"], "ws": f["ws"], "adir": f["adir"],
            "userdir": f["userdir"]}
    body = code.format(**keys)
    src = API_WRAP.format(body="\n".join("    " + ln for ln in body.splitlines()))
    e = dict(os.environ, PYTHONPATH=str(REPO))
    try:
        p = subprocess.run([sys.executable, "-c", src], env=e, cwd=f["cwd"], capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return Result(name, "TypeError/ValueError/SegkitError", "TIMEOUT", False, "hang")
    out = p.stdout.decode(errors="replace").strip().splitlines()
    last = out[-1] if out else f"(no output, rc {p.returncode}) {p.stderr.decode(errors='replace')[-200:]}"
    why = []
    m = re.match(r"EXC (\S+) (True|False) (.*)", last)
    if not m:
        why.append("no exception" if last == "NOEXC" else "crashed")
    else:
        if m.group(2) != "True":
            why.append(f"raised {m.group(1)}")
        if not re.search(says, m.group(3), re.I):
            why.append(f"message does not name /{says}/")
    return Result(name, f"TypeError/ValueError/SegkitError, /{says}/", last[:170], not why, "; ".join(why))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="", help="run the cases whose name matches this regex")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--md", help="write the results table (markdown) here")
    ap.add_argument("--keep", action="store_true", help="keep the workspace")
    a = ap.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="segkit_probe_"))
    f = build(ws)
    env_of = ENV
    jobs = []
    before = snapshot([ws, DATA])
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        for name, argv, rc, says in CLI:
            if re.search(a.only, name):
                jobs.append(pool.submit(judge_cli, name, argv, rc, says, f, env_of.get(name, {})))
        for name, code, says in API:
            if re.search(a.only, name):
                jobs.append(pool.submit(judge_api, name, code, says, f))
        results = [j.result() for j in jobs]
    after = snapshot([ws, DATA])
    changed = sorted(k for k in before if after.get(k) != before[k])
    right = sum(r.right for r in results)
    rows = ["| case | expected | observed | right? |", "|---|---|---|---|"]
    for r in results:
        obs = r.observed.replace("|", "\\|").replace(str(ws), "WS").replace(str(REPO), ".")
        rows.append(f"| {r.name} | {r.expected.replace('|', chr(92) + '|')} | {obs} | "
                    f"{'yes' if r.right else 'NO: ' + r.why.replace('|', chr(92) + '|')} |")
    summary = f"{right}/{len(results)} right; files modified or deleted: {len(changed)}"
    for c in changed:
        summary += f"\n  changed: {c}"
    print("\n".join(rows))
    print(summary)
    if a.md:
        Path(a.md).write_text("\n".join(rows) + "\n\n" + summary + "\n")
    if not a.keep:
        shutil.rmtree(ws, ignore_errors=True)
    else:
        print("workspace:", ws)
    return 0 if right == len(results) and not changed else 1


if __name__ == "__main__":
    sys.exit(main())
