"""Thunder 0.2.6's CUDA graph runner copying an argument onto its own memory (the fix: thunder_exec.compat). Thunder's
real ``CUDAGraphRunner`` with one graph in its cache; the graph stands in for a captured one the only way a CPU can:
its replay computes from the captured buffers, as a captured graph reads them. An argument that is a new object over
the captured buffer's memory (a saved view, detached anew at every step) is not copied once the runner has replayed
that graph; anything else still is, and the replay computes from the argument's values."""

from __future__ import annotations

import pytest
import torch
from thunder.transforms.cudagraph import CUDAGraphRunner
from torch.utils._python_dispatch import TorchDispatchMode

from thunder_exec import compat


class Copies(TorchDispatchMode):
    """The ``aten.copy_`` calls made under it."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls += func is torch.ops.aten.copy_.default
        return func(*args, **(kwargs or {}))


class Replay:
    """A captured graph's replay on a CPU: out = x * w from the captured buffers."""

    def __init__(self, x, w, out):
        self.x, self.w, self.out = x, w, out

    def replay(self):
        torch.mul(self.x, self.w, out=self.out)


def runner_with_graph() -> tuple[CUDAGraphRunner, torch.Tensor, torch.Tensor, torch.Tensor]:
    """A runner whose fusion "CUDAGraph1" takes x (static: a forward graph's output) and w (copied), graph cached."""
    runner = CUDAGraphRunner()
    runner.python_callables["CUDAGraph1"] = (None, (True, False))
    x, w, out = torch.arange(9.0).reshape(3, 3), torch.full((3,), 2.0), torch.empty(3, 3)
    runner.cuda_graph_cache[runner.make_cache_key("CUDAGraph1", x, w)] = (Replay(x, w, out), (x, w), out)
    return runner, x, w, out


@pytest.fixture(autouse=True)
def fix():
    compat.install_cudagraph_alias_fix()


def test_an_argument_over_the_captured_memory_is_not_copied_onto_itself():
    runner, x, w, out = runner_with_graph()
    runner.call_cuda_graph("CUDAGraph1", x.detach(), torch.full((3,), 3.0))  # the first replay finds the graph
    for step in range(3):
        with Copies() as copies:
            got = runner.call_cuda_graph("CUDAGraph1", x.detach(), torch.full((3,), float(step)))
        assert copies.calls == 1  # w alone: x.detach() is x's memory, the captured buffer
        assert got is out and torch.equal(got, torch.arange(9.0).reshape(3, 3) * step)


def test_an_argument_over_other_memory_is_copied_and_the_replay_reads_its_values():
    runner, x, w, out = runner_with_graph()
    runner.call_cuda_graph("CUDAGraph1", x.detach(), w)
    arg = x.clone() + 1  # x's shape, dtype and strides (so x's graph), other memory
    with Copies() as copies:
        got = runner.call_cuda_graph("CUDAGraph1", arg, w.clone())
    assert copies.calls == 2
    assert torch.equal(got, (torch.arange(9.0).reshape(3, 3) + 1) * 2.0)


def test_the_fix_is_installed_once_and_keeps_thunders_method():
    from thunder.transforms import cudagraph

    method = cudagraph.CUDAGraphRunner.call_cuda_graph
    assert compat.install_cudagraph_alias_fix() and cudagraph.CUDAGraphRunner.call_cuda_graph is method
    assert method.thunder_original.__qualname__ == "CUDAGraphRunner.call_cuda_graph"
