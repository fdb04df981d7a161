"""Smallest repro of the host cost of a manual schedule in nvfuser_direct (for upstream): the same fusion run
through ``fd.execute`` (FusionExecutorCache) and through ``fd.manual_execute`` after
``schedule.compute_heuristics`` + ``schedule.schedule`` with nvFuser's own, unchanged parameters (so the kernel
is the same). Prints the host wall per synchronised call and the CPU time per call launched asynchronously,
medians. Standalone on purpose (its two timers repeat segkit.experiment's): it needs only torch and
nvfuser_direct, so it can go upstream as is.

    python lab/explore/manual_host_repro.py
"""

import statistics
import time

import torch
from nvfuser_direct import DataType, FusionDefinition, SchedulerType, schedule


def pointwise(fd):
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    y = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    xf, yf = fd.ops.cast(x, dtype=DataType.Float), fd.ops.cast(y, dtype=DataType.Float)
    fd.add_output(fd.ops.cast(fd.ops.add(xf, yf), dtype=DataType.BFloat16))


def rms_norm(fd):
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    xf = fd.ops.cast(x, dtype=DataType.Float)
    ms = fd.ops.sum(fd.ops.mul(xf, xf), dims=[1])
    rstd = fd.ops.rsqrt(fd.ops.add(fd.ops.mul(ms, 1.0 / 256), 1e-6))
    rstd_b = fd.ops.broadcast(rstd, is_broadcast_dim=[False, True])
    fd.add_output(fd.ops.cast(fd.ops.mul(xf, rstd_b), dtype=DataType.BFloat16))


def sync_us(call, reps=300):
    times = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def async_us(call, calls=300):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    host = time.perf_counter() - t0
    torch.cuda.synchronize()
    return host / calls * 1e6


def main():
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    for name, define, kind, n_in in (("pointwise add 4096x256", pointwise, SchedulerType.pointwise, 2),
                                     ("rms norm 4096x256", rms_norm, SchedulerType.inner_persistent, 1)):
        inputs = [torch.randn(4096, 256, device="cuda", dtype=torch.bfloat16) for _ in range(n_in)]
        with FusionDefinition() as auto:
            define(auto)
        with FusionDefinition() as manual:
            define(manual)
        params = schedule.compute_heuristics(manual.fusion, kind, inputs)
        schedule.schedule(manual.fusion, kind, params)
        a, m = auto.execute(inputs)[0], manual.manual_execute(inputs, params)[0]
        same = torch.equal(a, m)
        for label, call in (("fd.execute", lambda: auto.execute(inputs)),
                            ("fd.manual_execute", lambda: manual.manual_execute(inputs, params))):
            print(f"{name:24s} {label:18s} same output {same}  sync wall {sync_us(call):7.1f} us/call  "
                  f"async host {async_us(call):7.1f} us/call", flush=True)


if __name__ == "__main__":
    main()
