"""Does an attention call block the host until the GPU catches up? Each call is issued behind ~5 ms of queued GPU
work (torch.cuda._sleep), and the host time of the call alone is taken (perf_counter); a call that returns in tens
of us issues asynchronously, one that takes ~5 ms waited for the queue. Asked by issue 54: segkit_ex's lone-step
host ms rose with its cuDNN attention (Llama-3-8B x1, H200: 4.55 ms against 3.59 with the attention left to
Thunder's flash path) while its Python time under cProfile fell (3.97 against 4.34 for stock Thunder).
GPU host: ``python -m lab.probes.attention_host_block``; prints one row per call."""
import statistics
import time

import torch

B, H, T, D = 1, 32, 4096, 128
torch.manual_seed(0)
q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
dy = torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16)
scale = D ** -0.5


def cudnn_fwd():
    return torch.ops.aten._scaled_dot_product_cudnn_attention(q, k, v, None, True, 0.0, True, False, scale=scale)


def flash_fwd():
    return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, True, False, scale=scale)


cf = cudnn_fwd()
ff = flash_fwd()


def cudnn_bwd():
    y, lse, _, _, _, _, seed, offset, _ = cf
    return torch.ops.aten._scaled_dot_product_cudnn_attention_backward(
        dy, q, k, v, y, lse, seed, offset, None, None, None, T, T, 0.0, True, scale=scale)


def flash_bwd():
    y, lse, cq, ck, mq, mk, seed, offset, _ = ff
    return torch.ops.aten._scaled_dot_product_flash_attention_backward(
        dy, q, k, v, y, lse, cq, ck, mq, mk, 0.0, True, seed, offset, scale=scale)


def matmul():
    return q @ k.transpose(-1, -2)


def host_us(fn, behind_ms: float) -> float:
    times = []
    for _ in range(7):
        torch.cuda.synchronize()
        if behind_ms:
            torch.cuda._sleep(int(behind_ms * 1.98e6))  # ~cycles at the H200's 1980 MHz
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    torch.cuda.synchronize()
    return statistics.median(times[2:])


print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; q/k/v {B}x{H}x{T}x{D} bf16, causal")
print(f"{'call':12s} {'host us, queue empty':>22s} {'host us, behind ~5 ms':>22s}")
for name, fn in [("matmul", matmul), ("cudnn_fwd", cudnn_fwd), ("cudnn_bwd", cudnn_bwd), ("flash_fwd", flash_fwd),
                 ("flash_bwd", flash_bwd)]:
    for _ in range(3):
        fn()
    print(f"{name:12s} {host_us(fn, 0):22.1f} {host_us(fn, 5):22.1f}")
