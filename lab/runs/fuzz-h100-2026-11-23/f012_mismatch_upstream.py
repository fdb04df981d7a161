# segkit fuzz finding f012: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 27.27; minimized from 2 to 2 ops in 2 s (9 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 4.74e+00 (tol 1e-05), max abs 4.74 at [0]: MISMATCH
# Signature: mismatch:cast>var
# Steps: size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 2], contiguity=[None, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.var(tv1, dims=[0], correction=0)
    fd.add_output(tv2)
    fd.add_output(tv1)
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


inputs = [strided(2, (2, 2), (0, 1), torch.bfloat16)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (2,), 'tol': 1e-05, 'max_abs': 0.0, 'points': {(0,): 0.0, (1,): 0.0}, 'sum': 0.0, 'abs sum': 0.0, 'weighted sum': 0.0}, {'shape': (2, 2), 'tol': 1e-05, 'max_abs': 1.5390625, 'points': {(0, 0): 1.5390625, (0, 1): -0.29296875, (1, 0): 1.5390625, (1, 1): -0.29296875}, 'sum': 2.4921875, 'abs sum': 3.6640625, 'weighted sum': -1.2213541666666665}, {'shape': (2,), 'tol': 1e-05, 'max_abs': 0.0, 'points': {(0,): 0.0, (1,): 0.0}, 'sum': 0.0, 'abs sum': 0.0, 'weighted sum': 0.0}]

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
