"""segkit_ex itself and what every file of its symbols shares: the dtypes the fusions take, the compile options,
the executor-order warning and Thunder / torch dtype helpers.

The bottom of thunder_exec: the symbol files (norms, qkv_rope, rope, route_verify) register on
``segkit_ex`` from here, and recognize / routes sit above them, so the imports run one way.

Compile options: ``segkit_bookend`` ("none" | "outputs" | "inputs+outputs", default "outputs") runs the fusions
through segkit's bookend pass; ``segkit_check=True`` validates each new input signature of segkit's fusions once
against the reference interpreter and refuses a wrong nvFuser result (warning, reference result instead);
``segkit_fuse`` ("opaque" | "fused" | "auto" | "thunder", default "auto") puts the norms and RoPE into Thunder's
nvFuser regions as fusible symbols ("fused"), or where the cut cost model says so ("auto"; fusions.cut_cost; where
Thunder's nvFuser executor is not loaded, auto is opaque), instead of segkit_ex's opaque symbols
(thunder_exec.fusible); "thunder" leaves the calls to Thunder's own decomposition (segkit_ex does not claim them),
as "auto" does where a step measured Thunder's own faster (fusions/claim_evidence.json). A call is left to
Thunder when its forward's or its backward's op is. A mapping sets the mode per op (``FusePolicy``), e.g.
``{"*": "fused", "norm_bwd": "opaque"}``: norms and RoPE fused except the norm backward; a key ``OP@SHAPE`` sets it
for the calls of one shape (``call_shape``: rows x hidden of a norm, x's shape of a RoPE), e.g.
``{"norm_bwd@131072x128": "thunder"}``: Qwen3-0.6B's per-head q norms at batch 4, T=2048, left to Thunder.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

import torch
from thunder.core import dtypes
from thunder.core.compile_data import get_compile_data, get_compile_option
from thunder.extend import FusionExecutor, OperatorExecutor, register_executor

segkit_ex = OperatorExecutor("segkit", version="0.2")
register_executor(segkit_ex)

@dataclass
class ClaimMode:
    """``real``: a claim is being checked (thunder_exec.claim_check) on real CPU tensors, so segkit's entry
    functions compute with torch on the reference interpreter instead of putting symbols in a trace."""

    real: bool = False


CLAIM_MODE = ClaimMode()

_WARNED: set[tuple[str, ...]] = set()


def warn_if_shadowed(executors) -> None:
    """Warn (once per executor list) when a fusion executor comes before segkit_ex: the first executor that can
    run or fuse a symbol owns its grad rule, so segkit's fused backward would never run."""
    executors = list(executors or ())
    if segkit_ex not in executors:
        return
    before = [e for e in executors[:executors.index(segkit_ex)] if isinstance(e, FusionExecutor)]
    names = tuple(str(e.name) for e in executors)
    if before and names not in _WARNED:
        _WARNED.add(names)
        warnings.warn(f"segkit_ex comes after {', '.join(str(e.name) for e in before)} in the executors list "
                      f"{list(names)}: they take the norms first and segkit's fused backward is never used; "
                      "put segkit_ex first (thunder_exec.executors())", stacklevel=3)


FUSE_MODES = ("opaque", "fused", "auto", "thunder")
# The ops a segkit_fuse mapping may name: a group, or one spec of it.
FUSE_OPS = {"norm_fwd": ("rmsnorm_fwd", "layernorm_fwd"), "norm_bwd": ("rmsnorm_bwd", "layernorm_bwd"),
            "rope_fwd": ("rope_fwd",), "rope_bwd": ("rope_bwd",)}


_SHAPE = re.compile(r"\d+(x\d+)+")


def call_shape(cfg) -> str:
    """The shape a ``segkit_fuse`` key ``OP@SHAPE`` names for a call of config ``cfg``: rows x hidden for a norm
    (``NormConfig``), x's shape for a RoPE (``ApplyRopeConfig``), e.g. "131072x128", "4x16x2048x128"."""
    dims = (cfg.rows, cfg.hidden) if hasattr(cfg, "hidden") else cfg.shape
    return "x".join(str(d) for d in dims)


@dataclass(frozen=True)
class FusePolicy:
    """``segkit_fuse`` parsed: a mode (FUSE_MODES) per fusible op; ``default`` for ops no override names.
    ``overrides`` maps spec names (rmsnorm_bwd, ...), or a spec name and a call's shape (rmsnorm_bwd@131072x128),
    to modes."""

    default: str = "auto"
    overrides: tuple[tuple[str, str], ...] = ()

    def mode(self, spec_name: str, shape: str | None = None) -> str:
        """The mode of a call of ``spec_name`` whose ``call_shape`` is ``shape``: its shape's key, else its op's."""
        modes = dict(self.overrides)
        return modes.get(f"{spec_name}@{shape}") or modes.get(spec_name, self.default)

    @classmethod
    def parse(cls, value) -> FusePolicy:
        """A mode, or a mapping {"*" | a FUSE_OPS group | one of its specs, each optionally "@SHAPE": mode};
        anything else is a ValueError naming the key or value at fault. A spec's own key beats its group's, and a
        key with a shape beats one without."""
        if value is None:
            return cls()
        if isinstance(value, str):
            return cls(_fuse_mode(value, "segkit_fuse"))
        if not isinstance(value, Mapping):
            raise ValueError(f"segkit_fuse must be a mode ({', '.join(FUSE_MODES)}) or a mapping of ops to modes, "
                             f"got {type(value).__name__} {value!r}")
        specs = {s: g for g, members in FUSE_OPS.items() for s in members}
        default, by_group, by_spec = cls().default, {}, {}
        for key, mode in value.items():
            mode = _fuse_mode(mode, f"segkit_fuse[{key!r}]")
            op, at, shape = str(key).partition("@")
            if at and not _SHAPE.fullmatch(shape):
                raise ValueError(f"segkit_fuse: {key!r}: a shape is sizes joined by x (rows x hidden of a norm, x's "
                                 f"shape of a RoPE), e.g. 'norm_bwd@131072x128', got {shape!r}")
            suffix = f"@{shape}" if at else ""
            if key == "*":
                default = mode
            elif op in FUSE_OPS:
                by_group.update({f"{s}{suffix}": mode for s in FUSE_OPS[op]})
            elif op in specs:
                by_spec[f"{op}{suffix}"] = mode
            else:
                raise ValueError(f"segkit_fuse: unknown op {op!r}; known: '*', {', '.join(FUSE_OPS)}, "
                                 f"{', '.join(specs)} (each may end in @SHAPE)")
        merged = {**by_group, **by_spec}
        plain = {s: m for s, m in merged.items() if "@" not in s and m != default}
        shaped = {s: m for s, m in merged.items() if "@" in s and m != plain.get(s.partition("@")[0], default)}
        return cls(default, tuple(sorted({**plain, **shaped}.items())))


def _fuse_mode(mode, where: str) -> str:
    if mode not in FUSE_MODES:
        raise ValueError(f"{where} must be one of {', '.join(FUSE_MODES)}, got {mode!r}")
    return mode


class CompileOptions(NamedTuple):
    """segkit's compile options of the current compilation."""

    bookend: str
    check: bool
    fuse: FusePolicy

    @property
    def symbol_args(self) -> tuple[str, bool]:
        """(bookend policy, check): the last arguments of segkit_ex's opaque symbols."""
        return self.bookend, self.check


def compile_options() -> CompileOptions:
    """segkit's compile options (``segkit_bookend``, ``segkit_check``, ``segkit_fuse``); a ``segkit_fuse`` that
    FusePolicy.parse refuses is a ValueError naming it."""
    cd = get_compile_data()
    if cd is not None:
        warn_if_shadowed(cd.executors_list)
    policy = get_compile_option("segkit_bookend", "bookend policy for segkit's fusions: none | outputs | inputs+outputs")
    check = get_compile_option("segkit_check", "validate each new signature of segkit's fusions against the reference")
    fuse = get_compile_option("segkit_fuse", "segkit's norms and RoPE: opaque | fused (into nvFuser's regions) | "
                              "auto (default) | thunder (not claimed), or a mapping of ops (norm_fwd, norm_bwd, "
                              "rope_fwd, rope_bwd, a spec, '*'; an op may end in @SHAPE) to those")
    return CompileOptions("outputs" if policy is None else policy, bool(check), FusePolicy.parse(fuse))


def supported(d) -> bool:
    """Whether segkit's norm and RoPE fusions take dtype ``d`` (Thunder's or torch's)."""
    return torch_dtype(d) in (torch.bfloat16, torch.float16, torch.float32)


def torch_dtype(d) -> torch.dtype:
    """``d`` as a torch dtype (Thunder's proxies carry Thunder dtypes, real tensors torch's)."""
    return d if isinstance(d, torch.dtype) else dtypes.to_torch_dtype(d)


def dtype_name(d) -> str:
    """``d``'s short name ("bfloat16"), for refusal messages."""
    return str(torch_dtype(d)).removeprefix("torch.")
