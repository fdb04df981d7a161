"""Host time to issue one attention forward + backward, torch's flash against its cuDNN backend (segkit_ex's
attention runs cuDNN through torch, stock Thunder's flash), with the GPU queue empty (a step issued alone) and with
the GPU busy ahead of it (a long sleep kernel first: the time is the host's alone, and a wait on the GPU inside the
call would show as the sleep's length). Issue 54: where segkit_ex's extra host time per step goes. Run on a GPU host:
``python -m lab.explore.attention_host``; prints a table."""
import statistics
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = {"Llama-3-8B x1 T=4096": (1, 32, 4096, 128), "Llama-3.2-1B bs4 T=2048": (4, 32, 2048, 64)}
BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION}
N = 30


def step(q, k, v, g):
    for t in (q, k, v):
        t.grad = None
    F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(g)


def host_ms(fn, busy_cycles: int) -> float:
    times = []
    for _ in range(N):
        torch.cuda.synchronize()
        if busy_cycles:
            torch.cuda._sleep(busy_cycles)
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.synchronize()
    return statistics.median(times)


def gpu_ms(fn) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(N):
        torch.cuda.synchronize()
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}")
print("| shape | backend | GPU ms | host ms, queue empty | host ms, GPU busy ahead |")
print("|---|---|---|---|---|")
for name, shape in SHAPES.items():
    q, k, v = (torch.randn(shape, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    g = torch.randn(shape, device="cuda", dtype=torch.bfloat16)
    for backend, which in BACKENDS.items():
        with sdpa_kernel(which):
            fn = lambda: step(q, k, v, g)  # noqa: E731
            for _ in range(3):
                fn()
            row = (gpu_ms(fn), host_ms(fn, 0), host_ms(fn, 100_000_000))
        print(f"| {name} | {backend} | " + " | ".join(f"{x:.3f}" for x in row) + " |")
