# segkit fuzz finding f025: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 10.23; minimized from 7 to 7 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0: Expected value->value() == concrete_value . Tried to bind to a constant value: 4 as 1
# Signature: error:cast>sum>broadcast>slice>expand>broadcast>permute
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
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[0, 1])
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.sum(tv1, dims=[0])
    tv3 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv4 = fd.ops.slice(tv3, start_indices=[0, 1], end_indices=[1, 32])
    tv5 = fd.ops.expand(tv4, shape=[4, 31])
    tv6 = fd.ops.broadcast(tv5, is_broadcast_dim=[True, False, False])
    tv7 = fd.ops.permute(tv6, dims=[0, 2, 1])
    fd.add_output(tv7)
    fd.add_output(tv7)


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


inputs = [strided(160, (5, 32), (1, 5), torch.float16)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (1, 31, 4), 'tol': 1e-05, 'max_abs': 4.833251953125, 'points': {(0, 0, 0): -2.6806640625, (0, 6, 0): 1.88232421875, (0, 12, 1): 4.408203125, (0, 18, 1): 1.859619140625, (0, 24, 2): 2.173828125, (0, 30, 3): 0.283935546875}, 'sum': 22.68825912475586, 'abs sum': 253.98098373413086, 'weighted sum': -24.412768356199184}, {'shape': (1, 31, 4), 'tol': 1e-05, 'max_abs': 4.833251953125, 'points': {(0, 0, 0): -2.6806640625, (0, 6, 0): 1.88232421875, (0, 12, 1): 4.408203125, (0, 18, 1): 1.859619140625, (0, 24, 2): 2.173828125, (0, 30, 3): 0.283935546875}, 'sum': 22.68825912475586, 'abs sum': 253.98098373413086, 'weighted sum': -24.412768356199184}]

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
