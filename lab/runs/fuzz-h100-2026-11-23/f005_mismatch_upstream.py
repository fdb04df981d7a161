# segkit fuzz finding f005: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 5.13; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [5, 14, 16, 5], output [1, 14, 16, 5]: MISMATCH
# Signature: mismatch:slice>broadcast>expand
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[False, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0, 2])
    tv1 = fd.ops.slice(tv0, start_indices=[79, 0, 0], end_indices=[93, 16, 5])
    tv2 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False, False, False])
    tv3 = fd.ops.expand(tv2, shape=[5, 14, 16, 5])
    fd.add_output(tv3)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

_gen = torch.Generator().manual_seed(0)


def strided(storage, shape, strides, dtype):
    """Inputs drawn exactly as segkit's repro loader draws them (CPU generator, seed 0, in order)."""
    if dtype.is_floating_point:
        base = torch.randn(storage, generator=_gen, dtype=torch.float32).to(dtype)
    elif dtype == torch.bool:
        base = torch.randint(0, 2, (storage,), generator=_gen).bool()
    else:
        base = torch.randint(-8, 9, (storage,), generator=_gen).to(dtype)
    return base.to(DEVICE).as_strided(shape, strides)


inputs = [strided(20484, (256, 16, 5), (16, 1, 4097), torch.bfloat16)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (5, 14, 16, 5), 'tol': 0.01, 'max_abs': 3.71875, 'points': {(0, 0, 0, 0): 1.4453125, (0, 13, 15, 4): 0.048828125, (1, 13, 15, 4): 0.048828125, (2, 13, 15, 4): 0.048828125, (3, 13, 15, 4): 0.048828125, (4, 13, 15, 4): 0.048828125}, 'sum': 22.82764434814453, 'abs sum': 4657.371406555176, 'weighted sum': -7.730913586351664}]

def _close(got, want, tol, scale):
    if math.isnan(want):
        return math.isnan(got)
    return got == want or abs(got - want) <= tol * scale


bad = 0
for i, (out, want) in enumerate(zip(outputs, EXPECTED)):
    x = out.detach().to("cpu", torch.float64)
    if tuple(x.shape) != want["shape"]:
        print(f"MISMATCH output {i}: shape {tuple(x.shape)}, expected {want['shape']}")
        bad += 1
        continue
    scale = max(want["max_abs"], 1e-30)
    for index, value in want["points"].items():
        got = x[index].item()
        if not _close(got, value, want["tol"], scale):
            print(f"MISMATCH output {i} at {list(index)}: nvFuser {got!r}, expected {value!r}")
            bad += 1
    w = torch.linspace(-1, 1, x.numel(), dtype=torch.float64).reshape(x.shape)
    for name, got in (("sum", x.sum()), ("abs sum", x.abs().sum()), ("weighted sum", (x * w).sum())):
        if not _close(got.item(), want[name], want["tol"], max(want["abs sum"], 1e-30)):
            print(f"MISMATCH output {i} {name}: nvFuser {got.item()!r}, expected {want[name]!r}")
            bad += 1
print("nvFuser matches the expected values" if not bad else f"{bad} checks differ from the expected values")
sys.exit(1 if bad else 0)
