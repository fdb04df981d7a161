# segkit fuzz finding f034: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 29.39; minimized from 8 to 8 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/mutator.cpp:44, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:slice>cast>triu>cast>cast>broadcast>expand>add
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
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[1, -1, -1], contiguity=[None, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    tv2 = fd.ops.slice(tv0, start_indices=[5, 12], end_indices=[6, 117])
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4 = fd.ops.triu(tv2, diagonal=-2)
    tv5 = fd.ops.cast(tv3, dtype=DataType.Half)
    tv6 = fd.ops.cast(tv4, dtype=DataType.Float)
    tv7 = fd.ops.broadcast(tv6, is_broadcast_dim=[False, False, True])
    tv8 = fd.ops.expand(tv7, shape=[1, 105, 4])
    tv9 = fd.ops.add(tv1, tv8)
    fd.add_output(tv9)
    fd.add_output(tv5)


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


inputs = [strided(1024, (8, 128), (128, 1), torch.float16), strided(420, (1, 105, 4), (420, 4, 1), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (1, 105, 4), 'tol': 1e-05, 'max_abs': 4.292890548706055, 'points': {(0, 0, 0): -1.3836430311203003, (0, 20, 3): 1.3460702896118164, (0, 41, 3): -2.507221221923828, (0, 62, 3): 2.655407190322876, (0, 83, 3): -1.9220632314682007, (0, 104, 3): -2.4447500705718994}, 'sum': 49.05593689903617, 'abs sum': 493.9647984839976, 'weighted sum': 3.503692597675366}, {'shape': (8, 128), 'tol': 0.01, 'max_abs': 4.1015625, 'points': {(0, 0): -1.1259765625, (1, 76): 0.662109375, (3, 25): -1.2177734375, (4, 101): 0.7978515625, (6, 50): -1.1220703125, (7, 127): -1.7109375}, 'sum': 32.925546169281006, 'abs sum': 829.1745171546936, 'weighted sum': -19.381232703070022}]

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
