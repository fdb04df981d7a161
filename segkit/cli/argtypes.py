"""Argument types for the ``segkit`` command line: each checks one kind of argument when it is parsed
(before any long run) and refuses it with one line naming the argument and what to do.

Use them as argparse ``type=`` functions; they raise ``argparse.ArgumentTypeError``, which the CLI
prints as a usage error (exit 2). Only the standard library is imported at module level, so that
``segkit --help`` stays fast.

Every type declares its :class:`Contract` (``contract_of``): an input path, an output path (a file, a
plot stem, or a directory and the names written in it) or a plain value. ``segkit.cli.contracts``
compares each command's outputs with its inputs before the command runs, and a test walks every
subcommand's parser: an option whose type is not declared here fails it (docs/cli.md, "Contracts").
"""

from __future__ import annotations

import argparse
import difflib
import functools
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_PLOT_SUFFIXES = (".png", ".svg", ".pdf")
_DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32", "float": "float32",
                  "fp64": "float64", "double": "float64"}


@dataclass(frozen=True)
class Contract:
    """What an argument type's value is to the command: ``role`` "input" (a path it reads), "output" (a path it
    writes) or "value" (no path). ``kind`` for paths: "file", "dir", or "stem" (an output: STEM plus each of
    ``writes``' suffixes). ``writes`` for an output "dir": the glob patterns of the names written inside it;
    ``owned_if``: names whose presence marks the directory as segkit's own besides the marker file (a layout
    segkit wrote before the marker existed). ``maybe_path``: an input that is a path only where it exists
    (a repro script, or a fusions spec NAME:CONFIG)."""

    role: str
    kind: str = ""
    writes: tuple[str, ...] = ()
    owned_if: tuple[str, ...] = ()
    maybe_path: bool = False
    #: an output file: whether an existing file at the path is one this command may write over (its own kind of
    #: file, e.g. a JSON record with its keys); None: any file. Another is refused without ``--force``.
    owns: Callable[[Path], bool] | None = None
    #: an output file: the directory it lies in may be new (the command makes it)
    new_parent: bool = False
    #: a positional list of inputs whose last value is an output of this contract (RUN ... OUT_DIR), unless the
    #: option of dest ``last_unless`` is given
    last: "Contract | None" = None
    last_unless: str = ""
    #: the types each value is checked with once its place is known (the inputs', the last one's)
    checks: tuple = ()
    #: values that are words, not paths (a cache option's 'none')
    words: tuple[str, ...] = ()
    #: an output directory any run may share and write into (a compile cache): not refused for holding others' files
    shared: bool = False

    def written(self, value: Path) -> list[Path]:
        """The files an output file or stem writes."""
        if self.kind == "stem":
            return [value.with_suffix(s) for s in self.writes]
        return [value] if self.kind == "file" else []


#: Every argument type of the command line and its contract (see contract_of).
VALIDATED: dict[Callable, Contract] = {}


def declare(contract: Contract):
    """Register an argument type with its contract (the decorator every type here carries)."""
    def register(check):
        VALIDATED[check] = contract
        return check

    return register


def contract_of(argtype) -> Contract | None:
    """The contract of a validated argument type, None for anything else (a bare ``int``, no type)."""
    try:
        return VALIDATED.get(argtype)
    except TypeError:  # an unhashable type= object
        return None


INPUT_FILE, INPUT_DIR, VALUE = Contract("input", "file"), Contract("input", "dir"), Contract("value")


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


@declare(INPUT_FILE)
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


@declare(INPUT_DIR)
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


@declare(INPUT_FILE)
@_fs_checked
def existing_path(value: str) -> Path:
    """A file or a directory that exists (a run folder, or the one file of it that a command reads)."""
    path = Path(value)
    if path.is_dir():
        return existing_dir(value)
    if value.strip() and not path.exists():
        raise argparse.ArgumentTypeError(f"no such file or directory: {value}{_did_you_mean(path)}")
    return existing_file(value)


@declare(INPUT_FILE)
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


@declare(Contract("input", "file", maybe_path=True))
def script_or_spec(value: str) -> str:
    """A repro script, or a fusions spec NAME:CONFIG (checked when the fusion is built)."""
    if Path(value).exists() or not re.fullmatch(r"[A-Za-z_]\w*:[^/\\]+", value):
        return script(value)
    return value


@declare(Contract("input", "file", maybe_path=True))
@_fs_checked
def optional_file(value: str) -> Path:
    """An input file that may not exist yet (a log a run writes only when it gets that far): where it exists, a
    readable file, not a directory."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty path")
    return existing_file(value) if Path(value).exists() else Path(value)


@declare(INPUT_FILE)
def trace_file(value: str) -> Path:
    """An existing trace: .nsys-rep, .sqlite/.db or a chrome trace .json/.json.gz, or a file of another name whose
    bytes are one (SQLite, JSON, gzip: segkit.trace.formats); a suffix that promises another format than its bytes
    hold, an empty file or one of no trace format is refused, naming what its bytes are."""
    from segkit.trace.formats import check_suffix, sniff
    from segkit.trace.model import TraceError

    path = existing_file(value)
    try:
        check_suffix(path, sniff(path))
    except TraceError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return path


def _writable_dir(d: Path, what: str) -> None:
    if not d.exists():
        raise argparse.ArgumentTypeError(f"{what}: directory {str(d)!r} does not exist (create it first)")
    if not d.is_dir():
        raise argparse.ArgumentTypeError(f"{what}: {str(d)!r} is not a directory")
    if not os.access(d, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{what}: directory {str(d)!r} is not writable")


@declare(Contract("output", "file"))
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


def output_file_of(what: str | None = None, owns: Callable[[Path], bool] | None = None,
                   new_parent: bool = False) -> Callable[[str], Path]:
    """The type of an output file that holds ``what`` (a gate record, a merged sweep): an existing file at the path
    is written over only where ``owns(path)`` says it is one (else refused before the command runs, unless
    ``--force``). ``new_parent``: its directory may be new (the command makes it)."""
    @declare(Contract("output", "file", owns=owns, new_parent=new_parent))
    @_fs_checked
    def output_file_owned(value: str) -> Path:
        path = Path(value)
        if not new_parent or path.parent.exists():
            return output_file(value)
        if not value.strip():
            raise argparse.ArgumentTypeError("an empty output path")
        _output_dir(str(path.parent))
        return path

    output_file_owned.__doc__ = f"An output file{' (' + what + ')' if what else ''}: see output_file_of."
    return output_file_owned


def json_holding(*keys: str) -> Callable[[Path], bool]:
    """``owns`` for an output of JSON: an empty file, or a JSON object with one of ``keys`` (its own kind)."""
    def owns(path: Path) -> bool:
        import json

        from segkit.files import read_text

        try:
            text = read_text(path)
            doc = json.loads(text) if text.strip() else {}
        except (OSError, ValueError):
            return False
        return isinstance(doc, dict) and (not doc or any(k in doc for k in keys))

    return owns


def text_starting(*heads: str) -> Callable[[Path], bool]:
    """``owns`` for a text output: an empty file, or one that starts with one of ``heads``."""
    def owns(path: Path) -> bool:
        try:
            text = path.read_text()
        except (OSError, ValueError):
            return False
        return not text.strip() or text.lstrip().startswith(heads)

    return owns


def inputs_then(last_type: Callable[[str], Path], unless: str,
                first_type: Callable[[str], Path] = existing_file) -> Callable[[str], Path]:
    """The type of a positional list INPUT ... LAST: each value an input file (``first_type``), the last one an
    output of ``last_type`` (a summary folder) unless the option of dest ``unless`` is given. Each value is
    checked once its place is known (segkit.cli.contracts), with the types' own one-line refusals."""
    @declare(Contract("input", "file", last=contract_of(last_type), last_unless=unless,
                      checks=(first_type, last_type)))
    def input_or_last(value: str) -> Path:
        if not value.strip():
            raise argparse.ArgumentTypeError("an empty path")
        return Path(value)

    return input_or_last


def _output_dir(value: str) -> Path:
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


def output_dir_writing(*patterns: str, owned_if: tuple[str, ...] = ()) -> Callable[[str], Path]:
    """The type of an output directory a command writes the names matching ``patterns`` into (glob patterns;
    an input among them would be rewritten). ``owned_if``: see Contract. The directory itself is checked
    once parsed (segkit.cli.contracts): new, empty, or segkit's own."""
    @declare(Contract("output", "dir", writes=patterns, owned_if=owned_if))
    @_fs_checked
    def output_dir(value: str) -> Path:
        """A directory segkit may create or write into: not an existing file; its nearest existing parent
        writable."""
        return _output_dir(value)

    return output_dir


def cache_dir_or(*words: str) -> Callable[[str], Path | str]:
    """The type of a cache directory (shared by runs: its files are no user's), or one of ``words`` (e.g. 'none',
    'workdir') which are kept as given."""
    @declare(Contract("output", "dir", writes=("*",), words=words, shared=True))
    @_fs_checked
    def cache_dir(value: str) -> Path | str:
        """A cache directory segkit may create or write into, or one of the words the option takes."""
        return value if value in words else _output_dir(value)

    return cache_dir


#: An output directory anything may be written into.
output_dir = output_dir_writing("*")


@declare(Contract("output", "stem", writes=(".dot", ".png", ".svg")))
@_fs_checked
def plot_stem(value: str) -> Path:
    """STEM of the pictures segkit draws: STEM.dot, STEM.png and STEM.svg (an output file's checks)."""
    return output_file(value)


@declare(Contract("output", "file"))
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


@declare(VALUE)
def positive_float(value: str) -> float:
    return _positive(value, float, "a finite number")


@declare(VALUE)
def nonnegative_float(value: str) -> float:
    """A finite number >= 0 (0: none of it)."""
    return _positive(value, float, "a finite number", allow_zero=True)


@declare(VALUE)
def count(value: str) -> int:
    """A whole number >= 0 (e.g. workers, where 0 means: in this process)."""
    return _positive(value, int, "a whole number", allow_zero=True)


@declare(VALUE)
def positive_int(value: str) -> int:
    return _positive(value, int, "a whole number")


@declare(VALUE)
@declare(VALUE)
def whole_number(value: str) -> int:
    """Any whole number (e.g. a seed)."""
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None


def _one_line(value: str) -> str:
    if any(ord(c) < 32 for c in value):
        raise argparse.ArgumentTypeError(f"{value!r} holds a line break or a control character")
    return value


@declare(VALUE)
def name(value: str) -> str:
    """A name (a fusion, a range, a table, a GPU): not empty, one line; spaces around it are kept (a range's
    name is matched exactly)."""
    if not value.strip():
        raise argparse.ArgumentTypeError("an empty name")
    return _one_line(value)


@declare(VALUE)
def text(value: str) -> str:
    """Free text on one line, possibly empty (the command checks what it means, e.g. a comma-separated list)."""
    return _one_line(value)


@declare(VALUE)
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


@declare(VALUE)
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


@declare(VALUE)
def shard(value: str) -> tuple[int, int]:
    """I/N: shard I of N of a search, 0 <= I < N."""
    try:
        index, count = (int(p) for p in value.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/N, e.g. 0/2") from None
    if count <= 0 or not 0 <= index < count:
        raise argparse.ArgumentTypeError(f"{value!r}: expected I/N with N > 0 and I in 0..N-1, e.g. 0/2")
    return index, count

