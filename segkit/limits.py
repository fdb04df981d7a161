"""segkit's limits set in the environment, read without torch: ``SEGKIT_MAX_TENSOR_BYTES`` (the reference
interpreter's largest tensor) and ``SEGKIT_SCRIPT_TIMEOUT`` (a repro script's run while it loads).

The readers of each limit (``segkit.interp.tensor_budget``, the repro loader) refuse a bad value when they need it;
the command line refuses it as a usage error before any command runs (:func:`problems`).
"""

from __future__ import annotations

import math
import os
import re

MAX_TENSOR_BYTES_ENV = "SEGKIT_MAX_TENSOR_BYTES"
SCRIPT_TIMEOUT_ENV = "SEGKIT_SCRIPT_TIMEOUT"
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def size_in_bytes(value: str) -> int | None:
    """``value`` (bytes, or with a K/M/G/T suffix: ``8G``, ``500M``) as a positive byte count; None if it is not
    one."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?", value.strip(), re.IGNORECASE)
    if m is None:
        return None
    size = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    return size if size > 0 else None


def seconds(value: str) -> float | None:
    """``value`` as a finite positive number of seconds; None if it is not one."""
    try:
        s = float(value)
    except ValueError:
        return None
    return s if s > 0 and math.isfinite(s) else None


def problems(environ: dict[str, str] | None = None) -> list[str]:
    """One line per limit set in the environment to a value that is not one."""
    environ = os.environ if environ is None else environ
    found = []
    value = environ.get(MAX_TENSOR_BYTES_ENV, "")
    if value.strip() and size_in_bytes(value) is None:
        found.append(f"{MAX_TENSOR_BYTES_ENV}={value!r}: give a positive size in bytes, e.g. 8G or 500M")
    value = environ.get(SCRIPT_TIMEOUT_ENV, "")
    if value.strip() and seconds(value) is None:
        found.append(f"{SCRIPT_TIMEOUT_ENV}={value!r} is not a positive number of seconds")
    return found
