"""What a command runs on: a repro script, or a named workload ``NAME:CONFIG``, and whether nvFuser is here.

``resolve`` classifies a command's TARGET once and loads its fusion into a ``Target``, which makes the inputs on
any device; the commands pass the ``Target`` down instead of the string. Workload names resolve through the
core's registry (``segkit.workloads``), which importing ``fusions`` fills.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from segkit.errors import NvFuserUnavailableError, ReproError, UsageError


@dataclass(frozen=True)
class Target:
    """A command's TARGET, resolved once: ``given`` as typed, the recorded fusion ``fd``, and where it came from:
    a loaded repro script (``repro``) or a workload's spec and config (``spec``, ``config``)."""

    given: str
    fd: Any
    repro: Any = None
    spec: Any = None
    config: str | None = None

    @property
    def kind(self) -> str:
        """"script" or "workload"."""
        return "script" if self.repro is not None else "workload"

    def inputs(self, device: str) -> list:
        """The fusion's inputs on ``device``: the script's own, or the workload config's."""
        if self.repro is not None:
            return self.repro.make_inputs(device)
        return list(self.spec.make_inputs(self.config, device=device).values())


def resolve(target: str, fusion: str | None = None) -> Target:
    """A repro script path (``fusion``: which of its fusions, see load_script), else a workload NAME:CONFIG; a
    target that is neither is a usage error."""
    from pathlib import Path

    if Path(target).exists():
        repro = load_script(target, fusion)
        return Target(target, repro.fd, repro=repro)
    spec, cfg, fd = _workload_fusion(target, fusion)
    return Target(target, fd, spec=spec, config=cfg)


def nvfuser_available() -> bool:
    from segkit.nvfuser.run import nvfuser_available as available

    return available()


def require_nvfuser(what: str, target: str | None = None, fusion: str | None = None) -> None:
    """Refuse to go on without nvFuser. ``target`` (a script or NAME:CONFIG, with ``fusion``) is loaded on the CPU
    first, so a bad target is named as such (a usage error, a script that does not load), not as a missing GPU."""
    if not nvfuser_available():
        if target is not None:
            resolve(target, fusion)
        raise NvFuserUnavailableError(f"segkit {what} runs the fusion on nvFuser: it needs a CUDA device and nvfuser_direct")


def workload(name: str):
    """The registered workload ``name`` (``fusions`` imported first, so its specs are registered)."""
    import fusions  # noqa: F401 (registers its specs)
    from segkit.workloads import get

    return get(name)


def add_fusion_option(parser) -> None:
    """``--fusion NAME``: which fusion of a script that builds several (the error without it lists them)."""
    from segkit_cli.argtypes import name

    parser.add_argument("--fusion", metavar="NAME", default=None, type=name,
                        help="the fusion to use when the script builds several (its function, class or variable "
                             "name; without it, a script with several lists them)")


def load_script(path: str, fusion: str | None = None):
    """A repro script recorded into segkit's IR (``fusion``: which one, by name); a fusion with no outputs is
    refused (nothing to run). What the loader noticed (names it supplied, the script stopping after its fusion
    ran) goes to stderr, one line each."""
    import sys

    from segkit.repro import load_repro

    repro = load_repro(path, fusion=fusion)
    for note in repro.notes:
        print(f"note: {note}", file=sys.stderr)
    if not repro.fd.fusion.outputs:
        raise ReproError(f"{path}: the fusion{' ' + repro.name if repro.name else ''} has no outputs "
                         "(no fd.add_output(...)): nothing to run or check")
    return repro


def load_target(target: str, device: str, fusion: str | None = None):
    """A repro script path, or a workload as NAME:CONFIG; returns (fd, inputs). ``fusion``: see load_script."""
    resolved = resolve(target, fusion)
    return resolved.fd, resolved.inputs(device)


def _workload_fusion(target: str, fusion: str | None):
    """(spec, config, fusion) of a target that is no file: a fusions spec NAME:CONFIG (no inputs built)."""
    if ":" not in target:
        raise UsageError(f"no such file: {target} (and not a fusions spec NAME:CONFIG)")
    if fusion is not None:
        raise UsageError(f"--fusion {fusion}: picks a fusion of a repro script; {target} is a fusions spec")
    name, cfg = target.split(":", 1)
    try:
        spec = workload(name)
        return spec, cfg, spec.build(cfg)
    except KeyError as e:
        raise UsageError(f"{target}: {e.args[0] if e.args else e}") from None
