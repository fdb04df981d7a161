# segkit fuzz finding f022: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 1.43; minimized from 2 to 1 ops in 1 s (9 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.
# Signature: error:matmul
# Steps: keep output 1; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 5, 7, 17], contiguity=[None, False, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 0, 2, 1])
    tv1 = fd.define_tensor(shape=[17, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.matmul(tv0, tv1)
    fd.add_output(tv2)


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


inputs = [strided(601, (2, 5, 7, 17), (0, 1, 86, 5), torch.float32), strided(17, (17, 1), (1, 1), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (2, 5, 7, 1), 'tol': 1e-05, 'max_abs': 8.282624244689941, 'points': {(0, 0, 0, 0): -3.058203935623169, (0, 1, 6, 0): -4.9826130867004395, (0, 3, 6, 0): -4.3213348388671875, (1, 0, 6, 0): -2.3941595554351807, (1, 2, 6, 0): 2.372429847717285, (1, 4, 6, 0): -1.4178187847137451}, 'sum': -50.002892792224884, 'abs sum': 191.7669604420662, 'weighted sum': -6.302584829537767}]

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
