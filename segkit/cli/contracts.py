"""The paths of one command line, checked once after parsing and before the command runs (docs/cli.md,
"Contracts").

Each argument type declares its contract (``argtypes.contract_of``): an input path, an output path, or a value.
From the parsed arguments of the chosen subcommand this module refuses (UsageError, one line naming both flags)
an output that is one of the inputs (paths resolved, symlinks and hard links included), an output directory
that would rewrite an input inside it, two outputs that write one file, and an output directory that holds
files segkit did not write (``segkit.output_dirs``). :func:`taken` then marks the output directories as
segkit's own while the command runs.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from segkit import limits
from segkit.errors import UsageError
from segkit.files import protected
from segkit.output_dirs import MARKER, mark, refuse_foreign
from segkit.cli.argtypes import Contract, contract_of


def subparsers_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def leaf_parsers(parser: argparse.ArgumentParser,
                 path: tuple[str, ...] = ()) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every subcommand's parser, by its words (``("trace", "show")``)."""
    sub = subparsers_of(parser)
    if sub is None:
        return {path: parser}
    leaves = {}
    for word, p in sub.choices.items():
        leaves.update(leaf_parsers(p, path + (word,)))
    return leaves


def chosen(parser: argparse.ArgumentParser,
           args: argparse.Namespace) -> tuple[tuple[str, ...], argparse.ArgumentParser]:
    """The words and the parser of the subcommand ``args`` were parsed by."""
    words: tuple[str, ...] = ()
    while (sub := subparsers_of(parser)) is not None:
        word = getattr(args, sub.dest)
        words, parser = words + (word,), sub.choices[word]
    return words, parser


def flag(action: argparse.Action) -> str:
    """How the user names an argument: its long option, or a positional's metavar."""
    if action.option_strings:
        return max(action.option_strings, key=len)
    return action.metavar if isinstance(action.metavar, str) else action.dest.upper()


@dataclass(frozen=True)
class PathArg:
    """One path of the command line: the flag that gave it, its contract and the path."""

    flag: str
    contract: Contract
    path: Path

    def __str__(self) -> str:
        return f"{self.flag} {self.path}"


def path_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[PathArg]:
    """The input and output paths given to ``parser``'s command (a spec NAME:CONFIG is no path)."""
    found = []
    for action in parser._actions:
        contract = contract_of(action.type)
        value = getattr(args, action.dest, None)
        if contract is None or contract.role == "value" or value is None:
            continue
        values = value if isinstance(value, list) else [value]
        if contract.last is not None and not getattr(args, contract.last_unless, None):
            *values, last = values
            found.append(PathArg(flag(action), contract.last, _checked(contract.checks[1], last, action)))
        for v in values:
            if (contract.maybe_path and not Path(v).exists()) or (isinstance(v, str) and v in contract.words):
                continue
            found.append(PathArg(flag(action), contract,
                                 _checked(contract.checks[0], v, action) if contract.checks else Path(v)))
    return found


def _checked(argtype, value, action: argparse.Action) -> Path:
    """``value`` through ``argtype`` once its place in a list is known; its refusal is a UsageError naming it."""
    try:
        return argtype(str(value))
    except argparse.ArgumentTypeError as e:
        raise UsageError(f"argument {flag(action)}: {e}") from None


def _action(parser: argparse.ArgumentParser, option: str) -> argparse.Action:
    return next(a for a in parser._actions if option in a.option_strings)


def _given(parser: argparse.ArgumentParser, args: argparse.Namespace, option: str) -> bool:
    """Whether ``option`` was given a value other than its default."""
    action = _action(parser, option)
    return getattr(args, action.dest, None) not in (None, False, action.default)


def _same(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
        return a.resolve() == b.resolve()
    except OSError:
        return False


def _inside(path: Path, directory: Path, patterns: tuple[str, ...]) -> bool:
    """Whether ``path`` lies in ``directory`` (resolved) under a name matching one of ``patterns``."""
    try:
        rel = path.resolve().relative_to(directory.resolve())
    except (ValueError, OSError):
        return False
    return str(rel) != "." and any(fnmatch.fnmatch(str(rel), p) for p in patterns)


def check(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[PathArg]:
    """Refuse (UsageError) a limit in the environment that is not one, an option given without the option it goes
    with, and what would overwrite an input or a user's directory; returns the output directories."""
    for problem in limits.problems():
        raise UsageError(problem)
    paths = path_args(parser, args)
    inputs = [p for p in paths if p.contract.role == "input"]
    outputs = [p for p in paths if p.contract.role == "output"]
    dirs = [o for o in outputs if o.contract.kind == "dir"]
    written = [(o, w) for o in outputs for w in o.contract.written(o.path)]
    for o, w in written:
        shown = str(o) if w == o.path else f"{o} (it writes {w})"
        for i in inputs:
            if i.contract.kind == "file" and _same(w, i.path):
                raise UsageError(f"{shown} is the input {i}: writing it would destroy the input; give another name")
        for d in dirs:
            if _inside(w, d.path, d.contract.writes):
                raise UsageError(f"{shown} lies in {d}, which the command writes: give a path outside it")
    for k, (o, w) in enumerate(written):
        for o2, w2 in written[k + 1:]:
            if _same(w, w2):
                raise UsageError(f"{o} and {o2} both write {w}: give each its own name")
    for d in dirs:
        for i in inputs:
            if (i.contract.kind == "file" and _inside(i.path, d.path, d.contract.writes)) or (
                    i.contract.kind == "dir" and (_same(i.path, d.path) or _inside(i.path, d.path, ("*",)))):
                raise UsageError(f"{d} would rewrite the input {i} in it: give a directory that holds no input")
        if not d.contract.shared:
            refuse_foreign(d.path, d.flag, d.contract.owned_if)
    force = getattr(args, "force", False) is True
    for o in outputs:
        if o.contract.kind == "file" and o.contract.owns is not None and o.path.is_file() and not force \
                and not o.contract.owns(o.path):
            again = "; pass --force to write over it" if any("--force" in a.option_strings for a in parser._actions) \
                else ""
            raise UsageError(f"{o}: the file exists and is not one this command wrote (it would be lost): give a new "
                             f"name{again}")
    for option, other, values in getattr(parser, "needs", ()):
        if _given(parser, args, option) and (not _given(parser, args, other) if not values
                                             else getattr(args, _action(parser, other).dest) not in values):
            raise UsageError(f"{option} goes with {other}{' ' + ' or '.join(values) if values else ''}: give both "
                             f"or leave {option} out")
    return [d for d in dirs if not d.contract.shared]


def _new_parts(directory: Path) -> list[Path]:
    """``directory`` and its parents that do not exist yet, deepest first."""
    new = []
    while not directory.exists() and directory != directory.parent:
        new.append(directory)
        directory = directory.parent
    return new


@contextmanager
def taken(dirs: list[PathArg], command: str, inputs: list[PathArg] = ()) -> Iterator[None]:
    """The output directories made (where new) and marked as ``command``'s while the command runs; one that the
    command left with nothing but the marker is put back as it was (removed where it was new). ``inputs`` (files)
    are refused by ``segkit.files.write_atomic`` meanwhile: no write of the command replaces one."""
    marked: list[tuple[Path, list[Path]]] = []
    for d in dirs:
        new = _new_parts(d.path)
        try:
            d.path.mkdir(parents=True, exist_ok=True)
            if mark(d.path, command):
                marked.append((d.path, new))
        except OSError:  # the command meets the same error and reports it in its own words
            pass
    try:
        with protected([p.path for p in inputs]):
            yield
    finally:
        for path, new in marked:
            try:
                if [p.name for p in path.iterdir()] == [MARKER]:
                    (path / MARKER).unlink()
                    for part in new:
                        part.rmdir()
            except OSError:
                pass
