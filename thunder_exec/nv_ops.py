"""segkit's operators on Thunder's nvFuser executor, so its regions fuse the norms and RoPE instead of being cut
by segkit_ex's opaque symbols: the registry each family file (thunder_exec.norms, thunder_exec.rope) adds its
fused operators to, and their registration on that executor.

The pattern of Thunder's own cross entropy (thunder/executors/nvfuserex_impl.py): each operator is registered ON
the nvFuser executor with a translator ``fn(args..., *, fd, lc_to_nv_map)`` that emits the op into the region's
FusionDefinition (the fusions' bodies: the same math as segkit's own fusions). Registration happens once, and
only where Thunder's nvFuser executor is loaded (a CUDA host with nvfuser_direct).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from thunder.core.devices import DeviceType
from thunder.core.proxies import TensorProxy


@dataclass(frozen=True)
class FusedOp:
    """One of segkit's operators on Thunder's nvFuser executor: its ``name``, ``meta`` and ``translator``; the
    fusion ``spec`` it emits and the ``call`` of its arguments (a thunder_exec.calls.Call, the translator's); the
    segkit_ex symbols that run the same call opaque (``opaque``: the same arguments then the compile options'
    ``symbol_args``; ``opaque_y``: y only, where nothing needs the statistics). ``key`` names it among the
    registered symbols (``FusibleSymbols.rms_fwd``).

    Not tagged REDUCTION_OP (as Thunder tags its cross entropy): the tag stops rematerialization from
    recomputing a fused forward inside the backward's region, and with the statistics saved nvFuser segmented a
    step's fused norm backward region worse (measured; the lab's index has the run)."""

    key: str
    name: str
    spec: str
    meta: Callable
    translator: Callable
    call: Callable
    opaque: str
    opaque_y: str | None = None


BY_NAME: dict[str, FusedOp] = {}  # every fused operator by its name, in the order the family files add them
NAMES: list[str] = []


def add(op: FusedOp) -> FusedOp:
    """Keep ``op`` for registration (a family file's, at import)."""
    if op.name in BY_NAME:
        raise ValueError(f"nv_ops: a fused operator {op.name!r} is already added; give the new one its own name")
    BY_NAME[op.name] = op
    NAMES.append(op.name)
    return op


@dataclass(frozen=True)
class FusibleSymbols:
    """segkit's operators registered on Thunder's nvFuser executor (``executor``), which runs them on ``device``;
    each by its FusedOp's key as an attribute (``symbols.rms_fwd``)."""

    executor: Any
    device: DeviceType
    symbols: Mapping[str, Any]

    def __getattr__(self, key: str):
        symbols = self.__dict__.get("symbols", {})
        if key in symbols:
            return symbols[key]
        raise AttributeError(f"no fused operator {key!r}; registered: {', '.join(symbols)}")


def on(device: DeviceType, *args) -> bool:
    """Every tensor argument on ``device``."""
    return all(a.device.devicetype is device for a in args if isinstance(a, TensorProxy))


def register(executor, register_supported, device: DeviceType = DeviceType.CUDA) -> FusibleSymbols:
    """Register segkit's operators on ``executor`` (Thunder's nvFuser executor) with their translators through
    ``register_supported(symbol_id, translator, checker)`` (nvfuserex_impl's); the checker wants ``device``."""
    symbols = {}
    for op in BY_NAME.values():
        sym = executor.register_operator(op.name, meta=op.meta)
        register_supported(sym.id, op.translator, functools.partial(on, device))
        symbols[op.key] = sym
    return FusibleSymbols(executor, device, symbols)


@functools.lru_cache(maxsize=1)
def registered() -> FusibleSymbols | None:
    """The operators on Thunder's nvFuser executor, registered on first use; None where that executor is not
    loaded (no CUDA or no nvfuser_direct)."""
    from thunder.executors.nvfuserex import nvfuserex

    if nvfuserex is None:
        return None
    from thunder.executors import nvfuserex_impl

    return register(nvfuserex_impl.ex, nvfuserex_impl.register_supported)
