"""segkit_ex where Thunder users shard training (issue 73 item 3), on CPU with 2 gloo ranks: Thunder's
``ddp(jit(m))`` and ``fsdp(jit(m))`` (ZERO2, and ZERO3 with block bucketing as Thunder runs it) and torch FSDP2
``fully_shard`` + ``thunderfx``, on a 2-layer litgpt Llama and a 2-layer Hugging Face Llama, fp32: loss and grads
within 1e-5 of single-process eager on both ranks' batches, segkit's norms and RoPE claimed on every rank.

The two ranks start once (torchrun, tests/distributed_ranks.py) and run every case; each test reads their results.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
import thunder

from tests.conftest import ROOT
from tests.distributed_ranks import CASES
from thunder_exec import sharding

WORLD = 2
TOL = 1e-5


@pytest.fixture(scope="module")
def ranks(tmp_path_factory) -> list[dict]:
    """Both ranks' results (tests/distributed_ranks.py), from one torchrun on gloo with no GPU visible."""
    out = tmp_path_factory.mktemp("ranks")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
           "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    env.pop("SEGKIT_DIST_CASES", None)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
                           str(WORLD), "-m", "tests.distributed_ranks", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    print(f"2 gloo ranks, {len(CASES)} cases: {time.perf_counter() - start:.0f} s")
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(WORLD)]


def _case(ranks, name) -> list[dict]:
    got = [r["cases"][name] for r in ranks]
    for g in got:
        assert "error" not in g, g
    return got


@pytest.mark.parametrize("name", list(CASES))
def test_loss_and_grads_match_single_process_eager_on_every_rank(ranks, name):
    for r, got in enumerate(_case(ranks, name)):
        assert (got["rank"], got["world"]) == (r, WORLD)
        assert got["loss_err"] <= TOL and got["grad_err"] <= TOL, got


@pytest.mark.parametrize("name", list(CASES))
def test_norms_and_rope_are_segkits_on_every_rank(ranks, name):
    """Every norm and RoPE call the eager step made is segkit's, forward and backward, counted per executed call
    (thunder_exec.claim_count: under thunderfx a decoder-layer graph dynamo reuses counts once per call)."""
    for got in _case(ranks, name):
        norms, attentions = got["eager_calls"]
        assert (norms, attentions) == (5, 2)  # 2 layers x 2 norms + the final norm; 2 attentions, each q and k RoPE'd
        assert got["claims"] == [norms, norms, 2 * attentions, 2 * attentions], got


def test_thunder_fsdp_gathers_in_the_forward_and_ddp_does_not(ranks):
    for got in _case(ranks, "litgpt-fsdp-zero2") + _case(ranks, "hf-fsdp-zero2"):
        assert got["all_gathers"][0] > 0 and got["all_gathers"][1] == 0, got  # ZERO2: kept for the backward
    for got in _case(ranks, "litgpt-ddp") + _case(ranks, "hf-ddp"):
        assert got["all_gathers"] == [0, 0], got


def test_zero3_with_bucketing_runs_as_zero2_and_segkit_says_so_once(ranks):
    """On the Thunder versions segkit names (sharding.IGNORES_ZERO3_AND_BUCKETING) ZERO3 with block bucketing
    traces exactly as ZERO2 (the same symbols in the same order, forward and backward), and each rank is told once,
    with the version; ZERO2 alone is not warned about."""
    ignored = thunder.__version__ in sharding.IGNORES_ZERO3_AND_BUCKETING
    for zero2, zero3 in zip(_case(ranks, "litgpt-fsdp-zero2"), _case(ranks, "litgpt-fsdp-zero3-block")):
        assert (zero2["digests"] == zero3["digests"]) == ignored, (zero2["digests"], zero3["digests"])
        assert not zero2["warnings"], zero2["warnings"]
        said = [w for w in zero3["warnings"] if w.startswith("IgnoredShardingWarning")]
        assert len(said) == ignored, zero3["warnings"]
        if ignored:
            assert f"Thunder {thunder.__version__} " in said[0]
            assert "ZERO3" in said[0] and "FSDPBucketingStrategy.BLOCK" in said[0], said[0]


def test_the_order_users_type_first_is_thunders_type_error(ranks):
    """``thunder.jit(ddp(m))`` / ``thunder.jit(fsdp(m))``: Thunder's wrappers refuse a module not yet jitted (the
    messages docs/distributed.md quotes)."""
    for r in ranks:
        errors = r["upstream_errors"]
        assert errors["jit(ddp(m))"].startswith("TypeError: Thunder DDP only works on ThunderModule, got "), errors
        assert errors["jit(fsdp(m))"].startswith(
            "TypeError: Expected `model` to be of type `thunder.core.module.ThunderModule`, but got "), errors


def test_ignored_requests_read_thunders_own_marks():
    """What thunder.distributed.fsdp marks on the module it compiles, read as segkit reads it."""
    zero3 = thunder.distributed.FSDPType.ZERO3
    zero2 = thunder.distributed.FSDPType.ZERO2
    block, none = (thunder.distributed.FSDPBucketingStrategy[n] for n in ("BLOCK", "NONE"))
    version = sharding.IGNORES_ZERO3_AND_BUCKETING[0]

    def marked(sharding_strategy, bucketing_strategy, use_fsdp=True):
        return SimpleNamespace(use_fsdp=use_fsdp, sharding_strategy=sharding_strategy,
                               bucketing_strategy=bucketing_strategy)

    assert sharding.ignored_requests(marked(zero3, block), version) == (
        "sharding_strategy=FSDPType.ZERO3", "bucketing_strategy=FSDPBucketingStrategy.BLOCK")
    assert sharding.ignored_requests(marked(zero2, block), version) == (
        "bucketing_strategy=FSDPBucketingStrategy.BLOCK",)
    assert sharding.ignored_requests(marked(zero2, none), version) == ()
    assert sharding.ignored_requests(marked(zero3, none, use_fsdp=False), version) == ()
    assert sharding.ignored_requests(marked(zero3, block), "0.0.0-a-version-that-applies-them") == ()
    assert sharding.ignored_requests(None, version) == ()


def test_an_ignored_request_is_said_once_per_process(monkeypatch):
    monkeypatch.setattr(sharding, "_SAID", set())
    monkeypatch.setattr(thunder, "__version__", sharding.IGNORES_ZERO3_AND_BUCKETING[0])
    cd = SimpleNamespace(fn=SimpleNamespace(use_fsdp=True, sharding_strategy=thunder.distributed.FSDPType.ZERO3,
                                            bucketing_strategy=thunder.distributed.FSDPBucketingStrategy.NONE))
    with pytest.warns(sharding.IgnoredShardingWarning, match=r"ZERO3\): Thunder \S+ does not apply it") as said:
        sharding.warn_if_ignored(cd)
        sharding.warn_if_ignored(cd)  # the next compilation, the same request
    assert len(said) == 1
