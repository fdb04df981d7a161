"""Read torch.profiler chrome traces (.json / .json.gz) into the Trace model.

torch.profiler records no NVTX; its ranges are record_function annotations, which
are what users mark (segkit.trace.range writes one), so they count as user ranges.
"""

from __future__ import annotations

import math
from pathlib import Path

from segkit.trace.formats import GZIP, JSON, json_or_lines, read_text, sniff
from segkit.trace.model import (MAX_FIELD, USER_DOMAIN, ApiCall, Kernel, Range, Trace, TraceError, attach_kernels,
                                in_range, set_depths, to_int, to_xyz)

_LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def _ns(us, what: str, signed: bool = False) -> int:
    """Microseconds (torch's unit) as ns: a finite number, not negative unless ``signed``, within 64 bits."""
    if isinstance(us, bool) or not isinstance(us, (int, float)):
        raise TraceError(f"{what}: expected a number of microseconds, got {us!r:.40}")
    if not math.isfinite(us) or abs(us) > MAX_FIELD / 1000:
        raise TraceError(f"{what}: expected a finite number of microseconds within 64 bits of ns, got {us!r}: the "
                         "file is damaged")
    return in_range(int(round(float(us) * 1000)), what, signed)


def _text(value, what: str) -> str:
    if not isinstance(value, str):
        raise TraceError(f"{what}: expected a string, got {value!r:.40}")
    return value


def _tid(value, where: str):
    """A thread id: torch writes ints, some tools strings; it is only compared."""
    if value is None or (isinstance(value, (int, str)) and not isinstance(value, bool)):
        return value
    raise TraceError(f"{where} tid: expected a number or a string, got {value!r:.40}")


def load_chrome(path: Path) -> Trace:
    """A Trace from a chrome trace; unreadable JSON or an event field of the wrong type is a TraceError."""
    fmt = sniff(path)
    if fmt not in (GZIP, JSON):
        raise TraceError(f"{path}: not a chrome trace: its bytes are {fmt}, not JSON or gzip-compressed JSON")
    data = json_or_lines(read_text(path, fmt), path)
    events = data.get("traceEvents") if isinstance(data, dict) else data
    if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
        raise TraceError(f"{path}: not a chrome trace (no 'traceEvents' list of event objects)")
    missing: list[str] = []
    api, kernels, ranges = [], [], []
    for n, e in enumerate(events):
        if e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        where = f"{path}: traceEvents[{n}]"
        cat, args = _text(e.get("cat", ""), f"{where} cat"), e.get("args") or {}
        if not isinstance(args, dict):
            raise TraceError(f"{where}: 'args' must be an object, got {args!r:.40}")
        start = _ns(e["ts"], f"{where} ts")
        end = in_range(start + _ns(e["dur"], f"{where} dur"), f"{where} ts + dur")
        name = _text(e.get("name", ""), f"{where} name")
        if cat in _LAUNCH_CATS:
            api.append(ApiCall(name, start, end, to_int(args.get("correlation"), f"{where} correlation"),
                               _tid(e.get("tid"), where)))
        elif cat == "kernel":
            kernels.append(Kernel(
                name=name, start_ns=start, duration_ns=end - start, demangled=name,
                stream=to_int(args.get("stream"), f"{where} stream"), grid=to_xyz(args.get("grid"), f"{where} grid"),
                block=to_xyz(args.get("block"), f"{where} block"),
                registers_per_thread=to_int(args.get("registers per thread"), f"{where} registers per thread"),
                dynamic_smem=to_int(args.get("shared memory"), f"{where} shared memory"),
                correlation_id=to_int(args.get("correlation"), f"{where} correlation")))
        elif cat == "user_annotation":
            ranges.append(Range(name, start, end, thread=_tid(e.get("tid"), where), domain=USER_DOMAIN))
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
    props = data.get("deviceProperties") if isinstance(data, dict) else None
    device = props[0].get("name") if isinstance(props, list) and props and isinstance(props[0], dict) else None
    return Trace(str(path), "torch", kernels, ranges, api, None if device is None else str(device), missing)
