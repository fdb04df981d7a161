# Source: https://github.com/NVIDIA/Fuser/blob/06a16a0b3333076816068ca44542d97677316091/tests/python/test_pointwise.py#L72-L87
# Committed by nvFuser developers: test_cpu_add in tests/python/test_pointwise.py (commit 06a16a0b3, 2025-08-24).
# Targets: nvfuser 0.2.x legacy bindings (August 2025).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
from nvfuser import FusionDefinition, DataType
import pytest


def test_cpu_add():
    inputs = [
        torch.tensor(2.0, device="cpu", dtype=torch.float),
        torch.randn(3, device="cuda", dtype=torch.float),
    ]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        s0 = fd.from_pytorch(inputs[1])
        t1 = fd.ops.add(t0, s0)
        fd.add_output(t1)

    with FusionDefinition() as fd:
        fusion_func(fd)
    nvf_out = fd.execute(inputs)
    torch.testing.assert_close(nvf_out[0], inputs[0] + inputs[1])
