"""CUDA requests of a repro script served on the CPU while segkit loads it: tensors asked of a CUDA device are
made on the CPU (real values: an index tensor stays in range), or on the meta device beyond ``REAL_TENSOR_BYTES``
each or ``REAL_TOTAL_BYTES`` in all (layout kept, nothing allocated: loading a repro of a large model costs no
memory), and remembered as device tensors so that the script's own CPU tensors stay CPU tensors; ``torch.cuda``'s
device queries answer as for one device and its synchronization calls do nothing."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten
from torch.utils.weak import WeakIdKeyDictionary

#: A tensor the script makes for a CUDA device beyond this many bytes, or beyond this total for the whole
#: script, is made on the meta device.
REAL_TENSOR_BYTES = 64 * 2**20
REAL_TOTAL_BYTES = 512 * 2**20


def _is_cuda(device: Any) -> bool:
    if isinstance(device, int) and not isinstance(device, bool):
        return True  # torch reads a bare int as a CUDA ordinal
    return isinstance(device, (str, torch.device)) and str(device).startswith("cuda")


class CpuForCuda(TorchFunctionMode):
    """Tensors asked of a CUDA device are made on the CPU (or on meta, beyond ``REAL_TENSOR_BYTES`` each or
    ``REAL_TOTAL_BYTES`` in all) and remembered as device tensors, as is what ``.cuda()`` / ``.to('cuda')``
    copy and what any op computes from one: the script's CPU tensors stay CPU tensors (nvFuser refuses them)."""

    def __init__(self) -> None:
        super().__init__()
        self.real_bytes = 0  # made on the CPU so far
        self.on_device = WeakIdKeyDictionary()  # the tensors that are CUDA tensors in the script's eyes

    def is_device(self, x: Any) -> bool:
        return isinstance(x, torch.Tensor) and x in self.on_device

    def mark(self, result: Any) -> Any:
        for t in tree_flatten(result)[0]:
            if isinstance(t, torch.Tensor):
                self.on_device[t] = True
        return result

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "cuda" or (name == "to" and (any(_is_cuda(a) for a in args[1:]) or _is_cuda(kwargs.get("device")))):
            kwargs.pop("device", None)
            kwargs.pop("non_blocking", None)
            rest = [a for a in args[1:] if not _is_cuda(a) and not isinstance(a, bool)] if name == "to" else []
            moved = args[0].to(*rest, **kwargs) if rest or kwargs else args[0]
            return self.mark(moved.clone() if moved is args[0] else moved)
        if name == "pin_memory":
            return args[0]
        if not _is_cuda(kwargs.get("device")):
            result = func(*args, **kwargs)
            if any(self.is_device(t) for t in tree_flatten((args, kwargs))[0]):
                self.mark(result)
            return result
        kwargs["device"] = "meta"
        try:
            made = func(*args, **kwargs)
        except Exception:  # torch's CPU error for bad arguments says more than the meta one
            made = None
        size = made.untyped_storage().nbytes() if isinstance(made, torch.Tensor) else 0
        if made is None or size <= min(REAL_TENSOR_BYTES, REAL_TOTAL_BYTES - self.real_bytes):
            kwargs["device"] = "cpu"
            made = func(*args, **kwargs)
            self.real_bytes += size
        return self.mark(made)


class _Event:
    """``torch.cuda.Event``: timing a loaded script measures nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def record(self, *args: Any) -> None:
        return None

    synchronize = wait = record

    def elapsed_time(self, other: Any) -> float:
        return 0.0


def _nothing(*args: Any, **kwargs: Any) -> None:
    return None


_CUDA_ANSWERS: dict[str, Callable[..., Any]] = {
    "is_available": lambda: True, "device_count": lambda: 1, "current_device": lambda: 0,
    "get_device_name": lambda *a: "segkit reference (cpu)", "get_device_capability": lambda *a: (9, 0),
    "synchronize": _nothing, "empty_cache": _nothing, "set_device": _nothing, "manual_seed": _nothing,
    "manual_seed_all": _nothing, "reset_peak_memory_stats": _nothing, "max_memory_allocated": lambda *a: 0,
    "memory_allocated": lambda *a: 0, "Event": _Event,
}


class GpuStreamNeeded(RuntimeError):
    """A script asked for a CUDA stream where there is no GPU: a stream orders work on a GPU, which the CPU has
    none of (torch's own error blames the CUDA driver's version)."""


def _no_stream(name: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise GpuStreamNeeded(f"torch.cuda.{name}: the script needs a GPU stream, and this machine has no GPU "
                              "(segkit loads scripts on the CPU): drop the stream from the script, or run it on a "
                              "GPU host")
    return refuse


#: Without a GPU: what asks for a stream, refused saying so.
_STREAMS = ("Stream", "ExternalStream", "stream", "current_stream", "default_stream", "set_stream")


@contextlib.contextmanager
def no_cuda(devices: CpuForCuda) -> Iterator[None]:
    """The block's CUDA requests served on the CPU by ``devices`` (a stream, without a GPU, refused as
    GpuStreamNeeded); torch.cuda and the torch random state restored after."""
    answers = dict(_CUDA_ANSWERS)
    if not torch.cuda.is_available():
        answers.update({n: _no_stream(n) for n in _STREAMS if hasattr(torch.cuda, n)})
    saved = {n: getattr(torch.cuda, n) for n in answers}
    try:
        for n, answer in answers.items():
            setattr(torch.cuda, n, answer)
        with torch.random.fork_rng(devices=[]), devices:
            torch.manual_seed(0)
            yield
    finally:
        for n, f in saved.items():
            setattr(torch.cuda, n, f)
