"""Results checked before they are printed or saved: one validator every report goes through.

``validate(result, where)`` walks a result (dataclasses, dicts, lists, tuples) and refuses a quantity that
cannot be: a byte count, a time or a count (a field or column named ``*bytes*``, ``*_us`` / ``* us``, ``*_ms``,
``*_ns``, ``kernels*``, ``instances``; not a difference of two times: ``*overhead*``, ``*lag*``) that is negative or not finite, then asks the result's own
``invariants()`` (if it has one) what else its inputs rule out (an estimate outside them). A refusal is a
ResultError naming where the value is and what it is, instead of a wrong number in a table.
"""

from __future__ import annotations

import math
import re
from dataclasses import fields, is_dataclass
from typing import Any

from segkit.errors import SegkitError


class ResultError(SegkitError, ValueError):
    """A result that cannot be right (a negative size or time, a non-finite one, an estimate its inputs rule out),
    naming where it is."""


#: Differences of two events' times, which may be negative (a range's wall time minus the GPU time of kernels that
#: ran after it ended: launch overhead; a kernel's start minus its launch call's on another clock: launch lag).
_SIGNED = re.compile(r"overhead|lag|delta", re.I)
_QUANTITY = re.compile(r"bytes|(^|[ _])(us|ms|ns)([ _]|$)|^(a |b )?kernels|^instances$|kernels_per", re.I)


def problems(result: Any, where: str = "result") -> list[str]:
    """What is wrong with ``result`` (empty when nothing is)."""
    found: list[str] = []
    _walk(result, where, None, found, set())
    return found


def validate(result: Any, where: str = "result") -> Any:
    """``result`` itself when nothing is wrong with it; else a ResultError listing the first problems."""
    found = problems(result, where)
    if found:
        more = f" (and {len(found) - 3} more)" if len(found) > 3 else ""
        raise ResultError("refusing to report a result that cannot be right: " + "; ".join(found[:3]) + more)
    return result


def _walk(x: Any, path: str, key: str | None, found: list[str], seen: set[int]) -> None:
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return
    if isinstance(x, (int, float)):
        if key is not None and _QUANTITY.search(key) and not _SIGNED.search(key):
            if isinstance(x, float) and not math.isfinite(x):
                found.append(f"{path} is {x}: a size, time or count must be a finite number")
            elif x < 0:
                found.append(f"{path} is {x}: a size, time or count cannot be negative")
        return
    if id(x) in seen:
        return
    seen.add(id(x))
    if is_dataclass(x) and not isinstance(x, type):
        for f in fields(x):
            _walk(getattr(x, f.name), f"{path}.{f.name}", f.name, found, seen)
        for name in ("nbytes", "saved_bytes"):  # computed sizes the dataclasses carry as properties
            if name not in {f.name for f in fields(x)} and hasattr(type(x), name):
                _walk(getattr(x, name), f"{path}.{name}", name, found, seen)
        check = getattr(x, "invariants", None)
        if callable(check):
            found.extend(f"{path}: {p}" for p in check())
    elif isinstance(x, dict):
        for k, v in x.items():
            _walk(v, f"{path}[{k!r}]", str(k), found, seen)
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            _walk(v, f"{path}[{i}]", key, found, seen)
