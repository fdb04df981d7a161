"""The step table on N ranks (benchmarks/model_step_dist.py, issue 75 items 1 and 3) on CPU with 2 gloo ranks
under torchrun: the tiny litgpt GPT with its loss, Thunder FSDP + segkit_ex and eager FSDP2 (Liger's variant
skipped with its reason: no CUDA), two interleaved rounds. Its rows carry world_size 2, finite tokens/s, grads
within 1e-5 (fp32) of single-process eager, claims equal on both ranks and to the eager step's calls; the results
data keeps their world_size and the results page shows them in their own table. The other variants (stock Thunder
FSDP, FSDP2 + ThunderFX + segkit_ex, torch.compile + FSDP2) run with ``-m models``. The weak-scaling arithmetic and
the interconnect summary are checked on synthetic input."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

WORLD = 2
TOL = 1e-5
ITERS, ROUNDS = 2, 2


def _run(out, variants: str, rounds: int = ROUNDS) -> dict:
    """The step table's JSON from one torchrun of 2 gloo ranks on the tiny case, no GPU visible."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
                           str(WORLD), str(ROOT / "benchmarks" / "model_step_dist.py"), "--case", "tiny-gpt",
                           "--variants", variants, "--iters", str(ITERS), "--warmup", "1", "--rounds", str(rounds),
                           "--json", str(out / "table.json"), "--out", str(out / "table.md")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads((out / "table.json").read_text())


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> dict:
    return _run(tmp_path_factory.mktemp("dist"), "eager-fsdp2,segkit-fsdp,thunder-fsdp-liger")


def _check_measured(row: dict) -> None:
    """A row every rank measured: world size 2, finite tokens/s over the slowest rank's step, grads within TOL."""
    assert row["world_size"] == WORLD, row
    assert "failed" not in row["note"], row["note"]
    assert len(row["ms_ranks"]) == WORLD and row["ms"] == max(row["ms_ranks"]), row
    assert math.isfinite(row["tokens_per_s"]) and row["tokens_per_s"] > 0, row
    assert row["tokens_per_s"] == pytest.approx(2 * 16 / (row["ms"] / 1e3)), row  # batch 2 x T 16 per rank
    assert row["grad_err"] is not None and row["grad_err"] <= TOL, row
    assert row["peak_gib"] is None and row["peak_gib_ranks"] == [], row  # CPU: no CUDA memory counters


def test_the_machine_block_names_the_ranks_and_interconnect(table):
    machine = table["machine"]
    assert (machine["world_size"], machine["gpu_count"], machine["interconnect"]) == (WORLD, 0, "gloo/cpu")
    assert table["run"]["backend"] == "gloo" and table["run"]["world_size"] == WORLD


@pytest.mark.parametrize("variant", ["eager-fsdp2", "segkit-fsdp"])
def test_rows_measured_on_both_ranks_within_tolerance_of_eager(table, variant):
    row = next(r for r in table["rows"] if r["variant"] == variant)
    _check_measured(row)
    # two rounds: round 1 alone, then ITERS interleaved passes of every variant (model_step's rounds)
    assert len(row["ms_rounds"]) == ROUNDS and len(row["ms_steps"]) == ITERS * (ROUNDS - 1), row


def test_segkit_claims_every_eager_call_on_both_ranks(table):
    row = next(r for r in table["rows"] if r["variant"] == "segkit-fsdp")
    norms, attentions = row["eager_calls"]
    assert (norms, attentions) == (5, 2)  # 2 layers x 2 norms + the final norm; 2 attentions, q and k RoPE'd
    assert row["claims"] == {"norm_fw": norms, "norm_bw": norms, "rope_fw": 2 * attentions,
                             "rope_bw": 2 * attentions}, row
    assert row["claims_agree"] is True, row
    assert row["saved_gib"] > 0, row
    eager = next(r for r in table["rows"] if r["variant"] == "eager-fsdp2")
    assert eager["claims"] == {} and eager["claims_agree"] is None  # nothing of Thunder's to count


def test_liger_is_skipped_with_its_reason_on_cpu(table):
    row = next(r for r in table["rows"] if r["variant"] == "thunder-fsdp-liger")
    assert row["ms"] is None and row["note"].startswith("skipped: ") and "CUDA device" in row["note"], row


def test_the_results_data_keeps_world_size_and_the_page_shows_the_rows(table, tmp_path):
    """Appended to a temporary copy of the results data: each row's case names its world size, and the results
    page has a table of rows on several ranks. The CPU run's machine block names no GPU or driver, which a results
    row must: the copy of the table given to summarize names stand-ins."""
    from benchmarks import report, summarize

    doc = copy.deepcopy(table)
    doc["machine"] |= {"gpu": "test stand-in GPU", "driver": "test stand-in driver"}
    run = tmp_path / "run" / "table.json"
    run.parent.mkdir()
    run.write_text(json.dumps(doc))
    data = tmp_path / "results.jsonl.gz"
    added, again = summarize.append([run], data, "test-run")
    assert (added, again) == (len(doc["rows"]), 0)
    rows = summarize.read_data(data)
    assert {r["case"]["world_size"] for r in rows} == {WORLD}
    segkit = next(r for r in rows if r["executor"] == "segkit-fsdp")
    assert segkit["metrics"]["tokens_per_s"] > 0 and segkit["metrics"]["claims_agree"] is True
    page = report.results_md(rows)
    assert "### Training step on several ranks (test stand-in GPU)" in page
    assert "### Training step (test stand-in GPU)" not in page  # no one-GPU row in this data
    line = next(x for x in page.splitlines() if "| segkit-fsdp " in x)
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[1] == str(WORLD) and cells[3] == f"{segkit['metrics']['tokens_per_s']:.1f}", line
    assert "norms 5/5, RoPE 4/4" in line and cells[9] == "yes", line


def test_the_markdown_table_has_a_row_per_variant(tmp_path, table):
    from benchmarks import model_dist_table

    text = model_dist_table.markdown(table)
    assert "2 ranks, gloo, interconnect gloo/cpu" in text
    assert sum(line.startswith("| Llama-3.2-1B GPT (tiny)") for line in text.splitlines()) == 3, text


@pytest.mark.models
def test_the_other_variants_on_two_gloo_ranks(tmp_path):
    """Stock Thunder FSDP, FSDP2 + ThunderFX + segkit_ex and torch.compile + FSDP2, one round (minutes on CPU)."""
    doc = _run(tmp_path, "thunder-fsdp,fsdp2-thunderfx-segkit,compile-fsdp2", rounds=1)
    rows = {r["variant"]: r for r in doc["rows"]}
    for row in rows.values():
        _check_measured(row)
    assert rows["fsdp2-thunderfx-segkit"]["claims"] == {"norm_fw": 5, "norm_bw": 5, "rope_fw": 4, "rope_bw": 4}
    assert rows["fsdp2-thunderfx-segkit"]["claims_agree"] is True
    assert rows["thunder-fsdp"]["claims"] == {"norm_fw": 0, "norm_bw": 0, "rope_fw": 0, "rope_bw": 0}


def test_weak_scaling_efficiency_and_segkits_gain_per_world_size():
    """Synthetic rows: efficiency is tokens/s per GPU over the same variant's at the smallest world size run."""
    from benchmarks.model_dist_table import weak_scaling

    rows = [{"case": "c", "variant": v, "world_size": w, "tokens_per_s": t}
            for v, w, t in (("thunder-fsdp", 1, 100.0), ("thunder-fsdp", 2, 90.0), ("thunder-fsdp", 8, 80.0),
                            ("segkit-fsdp", 1, 120.0), ("segkit-fsdp", 8, 88.0), ("eager-fsdp2", 2, 50.0),
                            ("eager-fsdp2", 8, None))]
    got = {(s["variant"], s["world_size"]): s for s in weak_scaling(rows)}
    assert set(got) == {("thunder-fsdp", 1), ("thunder-fsdp", 2), ("thunder-fsdp", 8), ("segkit-fsdp", 1),
                        ("segkit-fsdp", 8), ("eager-fsdp2", 2)}
    assert got["thunder-fsdp", 8]["efficiency"] == pytest.approx(0.8)
    assert got["segkit-fsdp", 8]["efficiency"] == pytest.approx(88 / 120)
    assert got["eager-fsdp2", 2]["efficiency"] == 1.0 and got["eager-fsdp2", 2]["base_world_size"] == 2
    assert got["segkit-fsdp", 8]["segkit_over_thunder"] == pytest.approx(1.1)
    assert got["thunder-fsdp", 2]["segkit_over_thunder"] is None  # no segkit row at 2 ranks


def test_interconnect_summary_counts_link_kinds_between_the_gpus_used():
    """A made-up ``nvidia-smi topo -m`` matrix of 4 GPUs (2 NVLink pairs, the rest across sockets) and a NIC."""
    from benchmarks.model_dist import topo_summary

    text = ("\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\n"
            "GPU0\t X \tNV4\tSYS\tSYS\tPIX\t0-15\t0\n"
            "GPU1\tNV4\t X \tSYS\tSYS\tSYS\t0-15\t0\n"
            "GPU2\tSYS\tSYS\t X \tNV4\tSYS\t16-31\t1\n"
            "GPU3\tSYS\tSYS\tNV4\t X \tSYS\t16-31\t1\n"
            "NIC0\tPIX\tSYS\tSYS\tSYS\t X \n\nLegend:\n  X    = Self\n")
    assert topo_summary(text) == "SYS x4, NV4 x2"
    assert topo_summary(text, gpus=2) == "NV4 x1"
    assert topo_summary("no matrix here") is None


def test_merge_of_two_world_sizes_adds_the_weak_scaling_table(table, tmp_path):
    """The 2-rank run and a synthetic copy of it relabelled as 1 rank with every step twice as fast (test input,
    not a measurement): --merge keeps both, each machine block, and their weak scaling."""
    from benchmarks import model_step_dist

    one = copy.deepcopy(table)
    one["machine"]["world_size"] = 1
    for r in one["rows"]:
        r["world_size"] = 1
        if r["tokens_per_s"]:
            r["tokens_per_s"] *= 2
    (tmp_path / "ws1.json").write_text(json.dumps(one))
    (tmp_path / "ws2.json").write_text(json.dumps(table))
    assert model_step_dist.main(["--merge", str(tmp_path / "ws1.json"), str(tmp_path / "ws2.json"),
                                 "--json", str(tmp_path / "m.json"), "--out", str(tmp_path / "m.md")]) in (0, None)
    doc = json.loads((tmp_path / "m.json").read_text())
    assert [m["world_size"] for m in doc["machines"]] == [1, WORLD]
    got = {(s["variant"], s["world_size"]): s for s in doc["scaling"]}
    assert got["segkit-fsdp", WORLD]["efficiency"] == pytest.approx(0.5)
    assert got["segkit-fsdp", 1]["efficiency"] == 1.0
    assert "Weak scaling" in (tmp_path / "m.md").read_text()
