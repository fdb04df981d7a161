# segkit fuzz finding f043: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 83.37; minimized from 4 to 3 ops in 3 s (12 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float64): rel err 7.82e-08 (tol 1e-10), max abs 9.54e-07 at [4, 3, 3]: MISMATCH
# Signature: mismatch:cast>linear>cast
# Steps: remove matmul -> tv5; size 16 -> 8
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[17, 8, 8], contiguity=[True, False, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1, 2])
    tv1 = fd.define_tensor(shape=[8, 8], contiguity=[False, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv3 = fd.ops.linear(tv2, tv1)
    tv4 = fd.ops.cast(tv3, dtype=DataType.Double)
    fd.add_output(tv4)


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


inputs = [strided(1151, (17, 8, 8), (1, 18, 144), torch.bfloat16), strided(71, (8, 8), (9, 1), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (17, 8, 8), 'tol': 1e-05, 'max_abs': 12.202713012695312, 'points': {(4, 3, 3): 8.346324920654297, (0, 0, 0): -1.1943835020065308, (3, 3, 1): 0.5486187934875488, (6, 6, 2): -0.0074069201946258545, (10, 1, 4): 0.2175232172012329, (13, 4, 5): -0.8342363238334656, (16, 7, 7): 0.549944281578064}, 'sum': -121.9961336068809, 'abs sum': 2077.1506859846413, 'weighted sum': -52.419072423952784}]

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
