"""What a command runs on: a repro script, or a named workload ``NAME:CONFIG``, and whether nvFuser is here.

Workload names resolve through the core's registry (``segkit.workloads``), which importing ``fusions`` fills.
"""

from __future__ import annotations

from segkit.errors import NvFuserUnavailableError, ReproError, UsageError


def nvfuser_available() -> bool:
    from segkit.nvfuser.run import nvfuser_available as available

    return available()


def require_nvfuser(what: str, target: str | None = None, fusion: str | None = None) -> None:
    """Refuse to go on without nvFuser. ``target`` (a script or NAME:CONFIG, with ``fusion``) is loaded on the CPU
    first, so a bad target is named as such (a usage error, a script that does not load), not as a missing GPU."""
    if not nvfuser_available():
        from pathlib import Path

        if target is not None and Path(target).exists():
            load_script(target, fusion)
        elif target is not None:
            _workload_fusion(target, fusion)
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
    from pathlib import Path

    if Path(target).exists():
        repro = load_script(target, fusion)
        return repro.fd, repro.make_inputs(device)
    spec, cfg, fd = _workload_fusion(target, fusion)
    return fd, list(spec.make_inputs(cfg, device=device).values())


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
