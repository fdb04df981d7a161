"""thunder+segkit_ex's norm backward at the headline shape (576000x384 bf16) under each segkit_fuse mode, and stock
Thunder: the backward's time (CUDA events, median of 20) and Thunder's last backward execution trace, to see what
the fused mode's region computes. On H200 the headline case took 1341 us under "auto" (it picks "fused"), against
342 us opaque (2026-11-26) and stock Thunder's 697 (issues 52 and 54). GPU host:
``python -m lab.probes.norm_bwd_fuse_probe [rmsnorm|layernorm]``; prints a table, the traces after it."""
import statistics
import sys

import torch
import torch.nn.functional as F

import thunder
import thunder_exec

KIND = sys.argv[1] if len(sys.argv) > 1 else "rmsnorm"
ROWS, H = 576000, 384
thunder_exec.install()
torch.manual_seed(0)
x = torch.randn(ROWS, H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
w = torch.randn(H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
b = torch.zeros(H, device="cuda", dtype=torch.bfloat16, requires_grad=True)
dy = torch.randn(ROWS, H, device="cuda", dtype=torch.bfloat16)
leaves = [x, w] if KIND == "rmsnorm" else [x, w, b]


def norm(*args):
    if KIND == "rmsnorm":
        return F.rms_norm(args[0], (H,), args[1], 1e-6)
    return F.layer_norm(args[0], (H,), args[1], args[2], 1e-5)


want = torch.autograd.grad(norm(*leaves), leaves, dy)
variants = {"stock Thunder": thunder.jit(norm)}
for mode in ("auto", "fused", "opaque"):
    variants[f"segkit_ex {mode}"] = thunder.jit(norm, executors=thunder_exec.executors(), segkit_fuse=mode)
traces = {}
print(f"{KIND} backward {ROWS}x{H} bf16 on {torch.cuda.get_device_name()}")
print("| variant | backward us | max abs err vs eager (dx) |")
print("|---|---|---|")
for name, fn in variants.items():
    y = fn(*leaves)
    got = torch.autograd.grad(y, leaves, dy, retain_graph=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(20):
        torch.cuda.synchronize()
        start.record()
        torch.autograd.grad(y, leaves, dy, retain_graph=True)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    err = (got[0].float() - want[0].float()).abs().max().item()
    print(f"| {name} | {statistics.median(times):.1f} | {err:.3g} |")
    traces[name] = thunder.last_backward_traces(fn)[-1]
for name, trace in traces.items():
    print(f"\n===== {name}: backward execution trace\n{trace}")
