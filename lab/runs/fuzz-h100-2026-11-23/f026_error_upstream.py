# segkit fuzz finding f026: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 10.41; minimized from 3 to 2 ops in 0 s (9 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected orig_domain_a.back()->isBroadcast() == orig_domain_b.at(b_kpos)->isBroadcast() . K should be broadcast in both A and B, or neither.
# Signature: error:matmul>reshape
# Steps: cut at tv2; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[17, 3], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[7, 64, 1, 17], contiguity=[True, True, None, None], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.ops.matmul(tv1, tv0)
    tv3 = fd.ops.reshape(tv2, new_shape=[448, 1, 3])
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


inputs = [strided(51, (17, 3), (3, 1), torch.float32), strided(448, (7, 64, 1, 17), (64, 1, 1, 0), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (448, 1, 3), 'tol': 1e-05, 'max_abs': 20.762069702148438, 'points': {(0, 0, 0): -7.870063304901123, (89, 0, 1): -2.0905795097351074, (179, 0, 0): -3.5196664333343506, (268, 0, 1): -3.6185712814331055, (358, 0, 0): 1.7713640928268433, (447, 0, 2): -1.9399346113204956}, 'sum': -25.99074616166763, 'abs sum': 3921.0775545807555, 'weighted sum': 9.421080596944215}]

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
