"""segkit's compile options and their grammar, each parsed once per compilation.

``segkit_bookend`` ("none" | "outputs" | "inputs+outputs", default "outputs") runs the fusions through segkit's
bookend pass; ``segkit_check=True`` validates each new input signature of segkit's fusions once against the
reference interpreter and refuses a wrong nvFuser result (warning, reference result instead); ``segkit_fuse``
("opaque" | "fused" | "auto" | "thunder", default "auto") says where the norms and RoPE run (thunder_exec.decide).
A mapping sets the mode per op (``FusePolicy``), e.g. ``{"*": "fused", "norm_bwd": "opaque"}``: norms and RoPE
fused except the norm backward; a key ``OP@SHAPE`` sets it for the calls of one shape (thunder_exec.calls.
call_shape: rows x hidden of a norm, x's shape of a RoPE), e.g. ``{"norm_bwd@131072x128": "thunder"}``:
Qwen3-0.6B's per-head q norms at batch 4, T=2048, left to Thunder. ``segkit_gqa`` ("auto" | True | False) and
``segkit_attention`` ("cudnn" | "cudnn-as-is" | "thunder") steer the attention (thunder_exec.gqa,
thunder_exec.attention). ``segkit_norm_saves`` ("input" | "output", default "input") says what a norm's backward
reads: x, or the forward's output y (Apex's ``memory_efficient=True``: x need not be kept for the backward, the next
op saves y anyway; fusions.rmsnorm_bwd_from_output says what it costs where a weight is exactly 0).

Thunder starts each compilation (a cache miss) with a fresh record of the options it was asked for
(``CompileStats.last_compile_reasons``); an option is parsed on its first use in a compilation and kept beside that
record, so the checkers, transforms and passes of one compilation share one parse and the next compilation reads
the options anew. An option is read only where it is used, so a bad value is named where it matters.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from thunder.core import compile_data
from thunder.core.compile_data import get_compile_option

from thunder_exec.base import warn_if_shadowed
from thunder_exec.sharding import warn_if_ignored

FUSE_MODES = ("opaque", "fused", "auto", "thunder")
# The ops a segkit_fuse mapping may name: a group, or one spec of it.
FUSE_OPS = {"norm_fwd": ("rmsnorm_fwd", "layernorm_fwd"), "norm_bwd": ("rmsnorm_bwd", "layernorm_bwd"),
            "rope_fwd": ("rope_fwd",), "rope_bwd": ("rope_bwd",)}
GQA_VALUES = ("auto", True, False)
ATTENTION_VALUES = ("cudnn", "cudnn-as-is", "thunder")
NORM_SAVES = ("input", "output")

_SHAPE = re.compile(r"\d+(x\d+)+")


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
    norm_saves: str = "input"  # what a norm's backward reads: "input" (x) or "output" (y)

    @property
    def symbol_args(self) -> tuple[str, bool]:
        """(bookend policy, check): the last arguments of segkit_ex's opaque symbols."""
        return self.bookend, self.check


# CompileStats -> (the reasons record of its compilation under way, {option: parsed value})
_PARSED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def per_compilation(name: str, parse: Callable[[], Any]) -> Any:
    """``parse()``'s value, computed once per compilation (each call outside a compilation)."""
    _, stats = compile_data._compile_data.get()  # Thunder's own (compile data, stats) of the compilation under way
    if stats is None:
        return parse()
    reasons = stats.last_compile_reasons
    held = _PARSED.get(stats)
    if held is None or held[0] is not reasons:  # a new compilation of this function
        held = _PARSED[stats] = (reasons, {})
    if name not in held[1]:
        held[1][name] = parse()
    return held[1][name]


def _parse_compile_options() -> CompileOptions:
    cd = compile_data.get_compile_data()
    if cd is not None:
        warn_if_shadowed(cd.executors_list)
        warn_if_ignored(cd)
    policy = get_compile_option("segkit_bookend",
                                "bookend policy for segkit's fusions: none | outputs | inputs+outputs")
    check = get_compile_option("segkit_check", "validate each new signature of segkit's fusions against the reference")
    fuse = get_compile_option("segkit_fuse", "segkit's norms and RoPE: opaque | fused (into nvFuser's regions) | "
                              "auto (default) | thunder (not claimed), or a mapping of ops (norm_fwd, norm_bwd, "
                              "rope_fwd, rope_bwd, a spec, '*'; an op may end in @SHAPE) to those")
    saves = get_compile_option("segkit_norm_saves", "what segkit's norm backward reads: input (x, the default) | "
                               "output (y: x need not be kept for the backward)")
    if saves is not None and saves not in NORM_SAVES:
        raise ValueError(f"segkit_norm_saves must be one of {', '.join(NORM_SAVES)}, got {saves!r}")
    return CompileOptions("outputs" if policy is None else policy, bool(check), FusePolicy.parse(fuse),
                          saves or "input")


def compile_options() -> CompileOptions:
    """segkit's compile options (``segkit_bookend``, ``segkit_check``, ``segkit_fuse``, ``segkit_norm_saves``) of
    this compilation; a value refused (FusePolicy.parse, NORM_SAVES) is a ValueError naming it."""
    return per_compilation("segkit", _parse_compile_options)


def _parse_gqa():
    value = get_compile_option("segkit_gqa", "grouped-query attention on cuDNN with k / v unrepeated: "
                                             "auto | True | False")
    if value is None:
        value = "auto"
    if not any(value is c or value == c and type(value) is type(c) for c in GQA_VALUES):
        raise ValueError(f"segkit_gqa must be one of {GQA_VALUES}, got {value!r}")
    return value


def gqa_option():
    """``segkit_gqa`` of this compilation: "auto" (the default), True or False; anything else a ValueError."""
    return per_compilation("segkit_gqa", _parse_gqa)


def _parse_attention() -> str:
    choice = get_compile_option("segkit_attention", "SDPA under segkit_ex: " + " | ".join(ATTENTION_VALUES))
    if choice is not None and choice not in ATTENTION_VALUES:
        raise ValueError(f"segkit_attention must be one of {ATTENTION_VALUES}, got {choice!r}")
    return choice or ATTENTION_VALUES[0]


def attention_option() -> str:
    """``segkit_attention`` of this compilation: one of ATTENTION_VALUES ("cudnn" by default)."""
    return per_compilation("segkit_attention", _parse_attention)
