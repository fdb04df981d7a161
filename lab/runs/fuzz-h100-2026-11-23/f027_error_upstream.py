# segkit fuzz finding f027: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 16.11; minimized from 5 to 5 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected new_id->getIterType() == IterType::Broadcast . Squeezed IterDomain iS19{i1} must concretize to IterType::Broadcast but found iS19{i1}
# Signature: error:stride_order>broadcast>expand>sum>reshape
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
    tv0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0, 3])
    tv1 = fd.ops.stride_order(tv0, stride_order=[2, 3, 1, 0])
    tv2 = fd.ops.broadcast(tv1, is_broadcast_dim=[False, False, True, False, False])
    tv3 = fd.ops.expand(tv2, shape=[7, 5, 5, 33, 7])
    tv4 = fd.ops.sum(tv2, dims=[0])
    tv5 = fd.ops.reshape(tv4, new_shape=[5, 33, 7])
    fd.add_output(tv5)
    fd.add_output(tv3)
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


inputs = [strided(8085, (7, 5, 33, 7), (165, 33, 1, 1155), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (5, 33, 7), 'tol': 1e-05, 'max_abs': 10.935302734375, 'points': {(0, 0, 0): -0.5902211666107178, (0, 32, 6): -1.0798673629760742, (1, 32, 6): 6.730165481567383, (2, 32, 6): 1.1744694709777832, (3, 32, 6): -2.050471782684326, (4, 32, 6): 2.0109848976135254}, 'sum': -61.5692369453609, 'abs sum': 2427.62137472257, 'weighted sum': -3.1730997082381833}, {'shape': (7, 5, 5, 33, 7), 'tol': 1e-05, 'max_abs': 4.1014933586120605, 'points': {(0, 0, 0, 0, 0): -1.1258398294448853, (1, 1, 4, 32, 6): 0.5310236215591431, (2, 3, 4, 32, 6): -0.39415469765663147, (4, 0, 4, 32, 6): 0.02507951483130455, (5, 2, 4, 32, 6): 0.7798939943313599, (6, 4, 4, 32, 6): 1.9506887197494507}, 'sum': -307.84613391952007, 'abs sum': 32299.55023503033, 'weighted sum': -204.57365342473253}, {'shape': (5, 33, 7), 'tol': 1e-05, 'max_abs': 10.935302734375, 'points': {(0, 0, 0): -0.5902211666107178, (0, 32, 6): -1.0798673629760742, (1, 32, 6): 6.730165481567383, (2, 32, 6): 1.1744694709777832, (3, 32, 6): -2.050471782684326, (4, 32, 6): 2.0109848976135254}, 'sum': -61.5692369453609, 'abs sum': 2427.62137472257, 'weighted sum': -3.1730997082381833}]

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
