"""lab/drivers/perf.sh's results.json writer (its summary heredoc), run as the script runs it: the file carries the
machine block and benchmarks.summarize reads its ``norm_bwd`` records.

    python -m pytest lab/drivers
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import summarize
from sweep.machine import FIELDS, KEY

ROOT = Path(__file__).resolve().parents[2]


def _perf_summary_script() -> str:
    text = (ROOT / "lab" / "drivers" / "perf.sh").read_text()
    return text.split("<<'EOF'\n", 1)[1].split("\nEOF\n", 1)[0]


def test_perf_sh_results_json_carries_the_block_and_summarize_reads_it(tmp_path):
    work = tmp_path / "tmp"
    work.mkdir()
    line = {"name": "test_norm_bwd[rmsnorm-mixorder_576000x384-bfloat16-segkit]",
            "params": {"kind": "rmsnorm", "shape": "mixorder_576000x384", "dtype": "torch.bfloat16",
                       "executor": "segkit"},
            "extra_info": {"kernel_us_median": 475.1, "kernels": 2.0, "pct_of_copy_bw": 93.6, "copy_gbs": 2988.3,
                           "two_stage_chunk": None}}
    other = {**line, "name": line["name"].replace("segkit]", "compile]"),
             "params": {**line["params"], "executor": "torch.compile"},
             "extra_info": {**line["extra_info"], "kernel_us_median": 483.0}}
    (work / "bench.jsonl").write_text("\n".join(json.dumps(x) for x in (line, other)) + "\n")
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-", str(work), str(out)], input=_perf_summary_script(), cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert list(doc[KEY]) == list(FIELDS) and doc[KEY]["copy_gbs"] == 2988.3
    machine, rows = summarize.load(out)
    assert machine == doc[KEY]
    assert summarize.summarize(rows)["test_norm_bwd"]["speedups"]["torch.compile"] == [pytest.approx(483.0 / 475.1)]
