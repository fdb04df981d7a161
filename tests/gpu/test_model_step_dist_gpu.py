"""The step table on N ranks (benchmarks/model_step_dist.py) proved on one GPU: torchrun with one NCCL rank, the
tiny case in bf16, every variant (Liger's where liger_kernel is installed, else a skipped row saying so): each row
measured, peak memory per rank reported for every variant, the interconnect named, segkit_ex's claims equal to the
eager step's calls, grads against eager within the bf16 bar of tests/gpu/test_distributed_gpu.py."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.gpu

TOL = 3e-2  # bf16 against bf16 eager (tests/gpu/test_distributed_gpu.py's bar)


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("dist-gpu")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH"))))}
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "1",
                           str(ROOT / "benchmarks" / "model_step_dist.py"), "--case", "tiny-gpt", "--iters", "3",
                           "--warmup", "1", "--json", str(out / "table.json")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads((out / "table.json").read_text())


def test_one_nccl_rank_measures_every_variant(table):
    assert table["run"]["backend"] == "nccl" and table["machine"]["world_size"] == 1
    assert table["machine"]["gpu_count"] == 1 and table["machine"]["interconnect"] not in ("", "gloo/cpu")
    liger = importlib.util.find_spec("liger_kernel") is not None
    for row in table["rows"]:
        if row["variant"] == "thunder-fsdp-liger" and not liger:
            assert row["note"].startswith("skipped: ") and "liger_kernel" in row["note"], row
            continue
        assert not row["note"].startswith(("failed", "skipped")), row
        assert row["tokens_per_s"] > 0 and row["peak_gib"] > 0 and len(row["peak_gib_ranks"]) == 1, row
        assert row["grad_err"] <= TOL, row


@pytest.mark.parametrize("variant", ["segkit-fsdp", "fsdp2-thunderfx-segkit"])
def test_segkit_claims_every_eager_call(table, variant):
    row = next(r for r in table["rows"] if r["variant"] == variant)
    norms, attentions = row["eager_calls"]
    assert row["claims"] == {"norm_fw": norms, "norm_bw": norms, "rope_fw": 2 * attentions,
                             "rope_bw": 2 * attentions}, row
    assert row["claims_agree"] is True
