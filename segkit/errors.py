"""The errors segkit raises: each names what is wrong and where."""

from __future__ import annotations

import re


class SegkitError(Exception):
    """Base class for segkit's own errors."""


class UnsupportedOpError(SegkitError, AttributeError):
    """An op the catalogue does not have, with its call site (an AttributeError, so hasattr works)."""


class FusionDefinitionError(SegkitError):
    """A recorded op whose arguments do not fit it (shapes, ranks, dims), with its call site."""


class EmptyFusionError(FusionDefinitionError, NotImplementedError):
    """Executing a definition with no outputs (nvFuser raises NotImplementedError for it too)."""


class InputMismatchError(SegkitError):
    """A runtime input that does not match its define_tensor spec."""


class ReproError(SegkitError):
    """A script that is not a loadable repro, with the line and the reason."""


class NvFuserUnavailableError(SegkitError):
    """nvfuser_direct or a CUDA device is needed and missing."""


class UsageError(SegkitError):
    """A command-line argument that cannot work (a missing file, a bad value, an unwritable output path);
    the CLI exits 2 for these, before any long run."""


class ArgumentError(SegkitError, TypeError, ValueError):
    """A public function called with an argument of the wrong type or value, naming the function, the argument
    and what was given (segkit.args.checked); a TypeError and a ValueError, for callers catching either."""


class UnknownNameError(UsageError, KeyError):
    """A fusions spec or config name that does not exist, with the names that do (a KeyError, for lookups)."""

    def __str__(self) -> str:  # KeyError's own quotes the message
        return str(self.args[0]) if self.args else ""


class TuningTableError(SegkitError, ValueError):
    """A tuning table file that is missing where one must be, empty, unreadable or malformed (a ValueError, as
    before)."""


class ResourceLimitError(SegkitError):
    """A tensor or a script run beyond segkit's configured limits (memory budget, time limit)."""


_ASSERT = re.compile(r"INTERNAL ASSERT (?:FAILED )?at \S*?([\w./-]+\.(?:cpp|h|cu)):(\d+)")
_BOILERPLATE = re.compile(r"please report a bug|^Exception raised from|^frame #\d+|^\s*$")


def nvfuser_assert(text: str) -> re.Match | None:
    """Where ``text`` names an nvFuser internal assert, as nvFuser writes it ("INTERNAL ASSERT FAILED at
    <path>:<line>") or as :func:`error_summary` does ("INTERNAL ASSERT at <file>:<line>"): the match, its
    groups the source path and the line."""
    return _ASSERT.search(text)


def error_summary(e: BaseException, limit: int = 300) -> str:
    """One line for an exception from nvFuser (or anything): its first informative line. nvFuser's internal
    asserts open with a generic "INTERNAL ASSERT FAILED at <file>:<line>, please report a bug ..." line and
    say what failed on the next one: both are kept, as "INTERNAL ASSERT at <file>:<line>: <what>"."""
    lines = [ln.strip() for ln in str(e).strip().splitlines()]
    head = lines[0] if lines else ""
    m = nvfuser_assert(head)
    if m:
        what = next((ln for ln in lines[1:] if not _BOILERPLATE.search(ln)), "")
        prefix = head[:m.start()].strip().rstrip(":")
        text = f"{prefix + ': ' if prefix else ''}INTERNAL ASSERT at {m.group(1).rsplit('/csrc/', 1)[-1]}:{m.group(2)}"
        head = f"{text}: {what}" if what else text
    return f"{type(e).__name__}: {head}"[:limit]
