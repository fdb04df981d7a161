"""What a user asked of Thunder's FSDP and Thunder does not do, said once: on the Thunder versions named in
``IGNORES_ZERO3_AND_BUCKETING``, ``thunder.distributed.fsdp(..., sharding_strategy=FSDPType.ZERO3)`` and any
``bucketing_strategy`` but NONE give the traces of ZERO2 without bucketing (those versions have no ZERO3
rematerialization or bucketing pass), so the memory and the collectives the user asked for are not what runs.

segkit_ex sees the request where Thunder's own executors read it: ``thunder.distributed.fsdp`` marks the module it
compiles (``use_fsdp``, ``sharding_strategy``, ``bucketing_strategy``), and segkit's compile options are parsed once
per compilation (thunder_exec.decide.options), which calls ``warn_if_ignored``.
"""

from __future__ import annotations

import warnings

import thunder

# Thunder versions whose fsdp runs ZERO3 and bucketing as plain ZERO2: their traces equal ZERO2's
# (tests/test_distributed.py compares them on the version installed).
IGNORES_ZERO3_AND_BUCKETING = ("0.2.6",)

_SAID: set[tuple[str, ...]] = set()


class IgnoredShardingWarning(UserWarning):
    """Thunder's FSDP was asked for a sharding or bucketing strategy that this Thunder version does not apply."""


def ignored_requests(module, version: str | None = None) -> tuple[str, ...]:
    """The arguments of ``thunder.distributed.fsdp`` given to the module being compiled that Thunder ``version``
    (the installed one by default) ignores: empty for a module fsdp did not wrap, or a version that applies them."""
    version = thunder.__version__ if version is None else version
    if not getattr(module, "use_fsdp", False) or version not in IGNORES_ZERO3_AND_BUCKETING:
        return ()
    sharding, bucketing = getattr(module, "sharding_strategy", None), getattr(module, "bucketing_strategy", None)
    asked = []
    if getattr(sharding, "name", None) == "ZERO3":
        asked.append("sharding_strategy=FSDPType.ZERO3")
    if getattr(bucketing, "name", "NONE") != "NONE":
        asked.append(f"bucketing_strategy=FSDPBucketingStrategy.{bucketing.name}")
    return tuple(asked)


def warn_if_ignored(compile_data) -> None:
    """Warn once per process and request when the module of ``compile_data`` (Thunder's CompileData of the
    compilation under way) was given fsdp arguments that this Thunder version ignores."""
    asked = ignored_requests(getattr(compile_data, "fn", None))
    if not asked or asked in _SAID:
        return
    _SAID.add(asked)
    warnings.warn(f"thunder.distributed.fsdp({', '.join(asked)}): Thunder {thunder.__version__} does not apply it "
                  "(no ZERO3 rematerialization or bucketing pass): the step runs as ZERO2 without bucketing, "
                  "parameters gathered in the forward kept for the backward; pass FSDPType.ZERO2 and "
                  "FSDPBucketingStrategy.NONE to say what runs, or shard with torch FSDP2 (fully_shard + "
                  "thunderfx, docs/distributed.md)", IgnoredShardingWarning, stacklevel=2)
