# segkit fuzz finding f010: mismatch under realization inputs+outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 22.40; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 1.40e+00 (tol 1e-05), max abs 5.2 at [15237]: MISMATCH
# Signature: mismatch:reshape>reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# The fusion below is what nvFuser ran under inputs+outputs/segment_set: segkit.bookend's segment_set ops written out.
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, 32, -1], contiguity=[True, True, None, False], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.reshape(tv0, new_shape=[72, 32, 16])
    tv2 = fd.ops.segment_set(tv1)
    tv3 = fd.ops.reshape(tv2, new_shape=[2304, 16])
    tv4 = fd.ops.reshape(tv3, new_shape=[36864])
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


inputs = [strided(2303, (9, 8, 32, 16), (256, 32, 0, 2), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (36864,), 'tol': 1e-05, 'max_abs': 3.72510027885437, 'points': {(15237,): -2.4561941623687744, (0,): -1.1258398294448853, (7372,): -1.4270646572113037, (14745,): 2.2975423336029053, (22117,): 0.09275517612695694, (29490,): 0.23678180575370789, (36863,): 1.3348419666290283}, 'sum': -336.5229766778648, 'abs sum': 29028.490245636553, 'weighted sum': -611.2652540045361}]

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
