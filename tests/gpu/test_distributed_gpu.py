"""Issue 73 item 3 on the GPU host: the sharded steps of tests/test_distributed.py on one GPU in a one-rank NCCL
group, bf16, with segkit's defaults (``segkit_fuse="auto"``, cuDNN attention: ``segkit_attention="cudnn"``): loss
and grads against eager bf16, every norm and RoPE segkit's (opaque or inside Thunder's nvFusion regions) with
Thunder FSDP's all-gathers in the same trace, litgpt's attention on cuDNN."""

from __future__ import annotations

import pytest
import torch

from tests.distributed_ranks import run_case

pytestmark = pytest.mark.gpu

TOL = 3e-2  # bf16 against bf16 eager, relative to max(1, the largest eager value), as tests/test_thunder_exec_models
JIT_CASES = ["litgpt-ddp", "litgpt-fsdp-zero2", "hf-ddp", "hf-fsdp-zero2"]
FX_CASES = ["hf-fsdp2-thunderfx", "litgpt-fsdp2-thunderfx"]


@pytest.fixture(scope="module")
def one_rank_nccl():
    """A one-rank NCCL process group on this process's GPU (an in-memory store: no port), destroyed after the
    module."""
    import torch.distributed as dist

    assert not dist.is_initialized(), "a process group is already initialized in this test process"
    device = torch.device("cuda", torch.cuda.current_device())
    dist.init_process_group("nccl", store=dist.HashStore(), rank=0, world_size=1, device_id=device)
    yield device
    dist.destroy_process_group()


def _step(name, device):
    got = run_case(name, device, torch.bfloat16, segkit_fuse="auto", segkit_attention="cudnn")
    assert got["loss_err"] <= TOL * max(1.0, abs(got["loss"])) and got["grad_err"] <= TOL, got
    assert got["eager_calls"] == [5, 2], got
    return got


@pytest.mark.parametrize("name", JIT_CASES)
def test_thunder_ddp_and_fsdp_bf16_fused_and_cudnn(one_rank_nccl, name):
    got = _step(name, one_rank_nccl)
    norms, attentions = got["eager_calls"]
    assert got["claims"] == [norms, norms, 2 * attentions, 2 * attentions], got
    if "fsdp" in name:
        assert got["all_gathers"][0] > 0, got  # the parameters' all-gathers are in the trace the norms fused into
    if name.startswith("litgpt"):  # litgpt's SDPA (Hugging Face's tiny Llama runs eager attention)
        assert "segkit_cudnn_sdpa_fwd" in got["fw_symbols"] and "segkit_cudnn_sdpa_bwd" in got["bw_symbols"], got


@pytest.mark.parametrize("name", FX_CASES)
def test_fsdp2_thunderfx_bf16(one_rank_nccl, name):
    got = _step(name, one_rank_nccl)
    norms, attentions = got["eager_calls"]
    assert got["claims"] == [norms, norms, 2 * attentions, 2 * attentions], got  # per executed call
