"""Read torch.profiler chrome traces (.json / .json.gz) into the Trace model.

torch.profiler records no NVTX; its ranges are record_function annotations, which
are what users mark (segkit.trace.range writes one), so they count as user ranges.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from segkit.trace.model import USER_DOMAIN, ApiCall, Kernel, Range, Trace, TraceError, attach_kernels, set_depths

_LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def _ns(us) -> int:
    return int(round(float(us) * 1000))


def _xyz(v):
    return tuple(int(x) for x in v) if isinstance(v, (list, tuple)) and len(v) == 3 else None


def load_chrome(path: Path) -> Trace:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt") as f:
            data = json.load(f)
    except (OSError, EOFError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise TraceError(f"{path}: not readable JSON ({e})") from None
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise TraceError(f"{path}: not a chrome trace (no 'traceEvents' list of event objects)")
    missing: list[str] = []
    api, kernels, ranges = [], [], []
    for e in events:
        if e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        cat, args = e.get("cat", ""), e.get("args") or {}
        start, end = _ns(e["ts"]), _ns(e["ts"]) + _ns(e["dur"])
        if cat in _LAUNCH_CATS:
            api.append(ApiCall(e.get("name", ""), start, end, args.get("correlation"), e.get("tid")))
        elif cat == "kernel":
            smem = args.get("shared memory")
            kernels.append(Kernel(
                name=e.get("name", ""), start_ns=start, duration_ns=end - start, demangled=e.get("name", ""),
                stream=args.get("stream"), grid=_xyz(args.get("grid")), block=_xyz(args.get("block")),
                registers_per_thread=args.get("registers per thread"),
                dynamic_smem=smem, correlation_id=args.get("correlation")))
        elif cat == "user_annotation":
            ranges.append(Range(e.get("name", ""), start, end, thread=e.get("tid"), domain=USER_DOMAIN))
    if not kernels:
        missing.append("no kernel events (was CUDA activity recorded?)")
    launches = {a.correlation_id: a for a in api if a.correlation_id is not None}
    for k in kernels:
        call = launches.get(k.correlation_id)
        if call is not None:
            k.launch_ns, k.thread = call.start_ns, call.thread
    set_depths(ranges)
    kernels.sort(key=lambda k: k.start_ns)
    attach_kernels(ranges, kernels, missing)
    device = (data.get("deviceProperties") or [{}])[0].get("name") if isinstance(data, dict) else None
    return Trace(str(path), "torch", kernels, ranges, api, device, missing)
