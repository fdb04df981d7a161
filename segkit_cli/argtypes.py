"""Argument types for the ``segkit`` command line: each checks one kind of argument when it is parsed
(before any long run) and refuses it with one line naming the argument and what to do.

Use them as argparse ``type=`` functions; they raise ``argparse.ArgumentTypeError``, which the CLI
prints as a usage error (exit 2). Only the standard library is imported at module level, so that
``segkit --help`` stays fast.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import math
import os
import re
from pathlib import Path

_PLOT_SUFFIXES = (".png", ".svg", ".pdf")
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32",
                  "fp64": "float64", "double": "float64"}


def _did_you_mean(path: Path) -> str:
    parent = path.parent if str(path.parent) else Path(".")
    try:
        names = [p.name for p in parent.iterdir()]
    except OSError:
        return ""
    close = difflib.get_close_matches(path.name, names, n=1)
    return f" (did you mean {str(parent / close[0])!r}?)" if close else ""


def _fs_checked(check):
    """A path check whose file-system errors (a name too long, a loop of links, a lost mount) are refused like
    any other bad path: one line naming the path and the reason."""
    @functools.wraps(check)
    def wrapper(value: str):
        try:
            return check(value)
        except OSError as e:
            shown = value if len(value) <= 80 else value[:77] + "..."
            raise argparse.ArgumentTypeError(f"{shown}: {e.strerror or e}") from None

    return wrapper


@_fs_checked
def existing_file(value: str) -> Path:
    """A file that exists and is not a directory."""
    path = Path(value)
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty path")
    if not path.exists():
        glob = " (a shell pattern that matched no file?)" if any(c in value for c in "*?[") else ""
        raise argparse.ArgumentTypeError(f"no such file: {value}{glob or _did_you_mean(path)}")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a directory; give a file")
    if not os.access(path, os.R_OK):
        raise argparse.ArgumentTypeError(f"{value} is not readable (permissions)")
    return path


@_fs_checked
def existing_dir(value: str) -> Path:
    """A directory that exists."""
    path = Path(value)
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty path")
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no such directory: {value}{_did_you_mean(path)}")
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a file; give a directory")
    return path


def script(value: str) -> str:
    """A repro script: an existing, readable UTF-8 Python file (any name; ``.py`` is not required)."""
    from segkit.errors import ReproError
    from segkit.repro import read_script

    existing_file(value)
    try:
        read_script(value)
    except ReproError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return value


def script_or_spec(value: str) -> str:
    """A repro script, or a fusions spec NAME:CONFIG (checked when the fusion is built)."""
    if Path(value).exists() or not re.fullmatch(r"[A-Za-z_]\w*:[^/\\]+", value):
        return script(value)
    return value


def trace_file(value: str) -> Path:
    """An existing trace: .nsys-rep, .sqlite/.db or a chrome trace .json/.json.gz."""
    path = existing_file(value)
    if not path.name.endswith((".nsys-rep", ".sqlite", ".db", ".json", ".json.gz")):
        raise argparse.ArgumentTypeError(f"{value}: unknown trace type (expected .nsys-rep, .sqlite, .json or .json.gz)")
    return path


def _writable_dir(d: Path, what: str) -> None:
    if not d.exists():
        raise argparse.ArgumentTypeError(f"{what}: directory {str(d)!r} does not exist (create it first)")
    if not d.is_dir():
        raise argparse.ArgumentTypeError(f"{what}: {str(d)!r} is not a directory")
    if not os.access(d, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{what}: directory {str(d)!r} is not writable")


@_fs_checked
def output_file(value: str) -> Path:
    """A file segkit may write: not a directory, in an existing writable directory; overwritten if present."""
    path = Path(value)
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty output path")
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a directory; give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{value} exists and is not writable")
    _writable_dir(path.parent if str(path.parent) else Path("."), value)
    return path


@_fs_checked
def output_dir(value: str) -> Path:
    """A directory segkit may create or write into: not an existing file; its nearest existing parent writable."""
    path = Path(value)
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty output directory")
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} exists and is a file; give a directory")
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise argparse.ArgumentTypeError(f"{value}: {str(probe)!r} is a file, not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{value}: directory {str(probe)!r} is not writable")
    return path


def plot_file(value: str) -> Path:
    """An image file to write: an output file ending in .png, .svg or .pdf (so the name written is the name given)."""
    path = output_file(value)
    if path.suffix.lower() not in _PLOT_SUFFIXES:
        raise argparse.ArgumentTypeError(f"{value}: give a file name ending in {', '.join(_PLOT_SUFFIXES)}")
    return path


def _positive(value: str, kind: type, what: str, allow_zero: bool = False):
    try:
        x = kind(value)
    except (ValueError, OverflowError):
        raise argparse.ArgumentTypeError(f"{value!r} is not {what}") from None
    if not (math.isfinite(x) and (x >= 0 if allow_zero else x > 0)):
        raise argparse.ArgumentTypeError(f"{value!r}: give {what} {'>= 0' if allow_zero else '> 0'}")
    return x


def positive_float(value: str) -> float:
    return _positive(value, float, "a finite number")


def nonnegative_float(value: str) -> float:
    """A finite number >= 0 (0: none of it)."""
    return _positive(value, float, "a finite number", allow_zero=True)


def count(value: str) -> int:
    """A whole number >= 0 (e.g. workers, where 0 means: in this process)."""
    return _positive(value, int, "a whole number", allow_zero=True)


def positive_int(value: str) -> int:
    return _positive(value, int, "a whole number")


def dtype_tolerance(value: str) -> tuple:
    """DTYPE=TOL, e.g. bf16=2e-2: a torch floating dtype and a finite tolerance >= 0."""
    name, eq, tol = value.partition("=")
    name, tol = name.strip(), tol.strip()
    if not eq or not name or not tol:
        raise argparse.ArgumentTypeError(f"{value!r}: give DTYPE=TOL, e.g. bf16=2e-2")
    import torch

    dtype = getattr(torch, _DTYPE_ALIASES.get(name, name), None)
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise argparse.ArgumentTypeError(f"{value!r}: unknown floating dtype {name!r} (e.g. bf16, fp16, fp32, float64)")
    try:
        x = float(tol)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: tolerance {tol!r} is not a number") from None
    if not math.isfinite(x) or x < 0:
        raise argparse.ArgumentTypeError(f"{value!r}: the tolerance must be a finite number >= 0")
    return dtype, x


def meta_ops(value: str) -> frozenset[str]:
    """A comma-separated list of meta ops the bookend pass may cut (spaces around names are ignored)."""
    from segkit.alias import meta_ops as catalogue_meta_ops

    known = catalogue_meta_ops()
    names = [n.strip() for n in value.split(",")]
    if not any(names):
        raise argparse.ArgumentTypeError("empty; leave --ops out to allow every meta op")
    if "" in names:
        raise argparse.ArgumentTypeError(f"{value!r} has an empty op name")
    for n in names:
        if n not in known:
            close = difflib.get_close_matches(n, sorted(known), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise argparse.ArgumentTypeError(f"{n!r} is not a meta op{hint}; meta ops: {', '.join(sorted(known))}")
    return frozenset(names)


def shard(value: str) -> tuple[int, int]:
    """I/N: shard I of N of a search, 0 <= I < N."""
    try:
        index, count = (int(p) for p in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/N, e.g. 0/2") from None
    if count <= 0 or not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/N with N > 0 and I in 0..N-1, e.g. 0/2")
    return index, count


def not_an_input(output: Path, *inputs: str | Path, flag: str = "-o") -> None:
    """Refuse (UsageError) an output path that names one of the command's own input files: writing it would
    destroy the input."""
    from segkit.errors import UsageError

    for given in inputs:
        if given is not None and Path(given).exists() and Path(output).exists() and Path(output).samefile(given):
            raise UsageError(f"{flag} {output} is the input {given} itself: writing it would destroy the input; "
                             "give another file name")
