"""What a command runs on: a repro script, or a named workload ``NAME:CONFIG``, and whether nvFuser is here.

Workload names resolve through the core's registry (``segkit.workloads``), which importing ``fusions`` fills.
"""

from __future__ import annotations

from segkit.errors import NvFuserUnavailableError, ReproError, UsageError


def nvfuser_available() -> bool:
    from segkit.nvf import nvfuser_available as available

    return available()


def require_nvfuser(what: str) -> None:
    if not nvfuser_available():
        raise NvFuserUnavailableError(f"segkit {what} runs the fusion on nvFuser: it needs a CUDA device and nvfuser_direct")


def workload(name: str):
    """The registered workload ``name`` (``fusions`` imported first, so its specs are registered)."""
    import fusions  # noqa: F401 (registers its specs)
    from segkit.workloads import get

    return get(name)


def load_script(path: str):
    """A repro script recorded into segkit's IR; a fusion with no outputs is refused (nothing to run)."""
    from segkit.repro import load_repro

    repro = load_repro(path)
    if not repro.fd.fusion.outputs:
        raise ReproError(f"{path}: the fusion has no outputs (no fd.add_output(...)): nothing to run or check")
    return repro


def load_target(target: str, device: str):
    """A repro script path, or a workload as NAME:CONFIG; returns (fd, inputs)."""
    from pathlib import Path

    if Path(target).exists():
        repro = load_script(target)
        return repro.fd, repro.make_inputs(device)
    if ":" not in target:
        raise UsageError(f"no such file: {target} (and not a fusions spec NAME:CONFIG)")
    name, cfg = target.split(":", 1)
    try:
        spec = workload(name)
        return spec.build(cfg), list(spec.make_inputs(cfg, device=device).values())
    except KeyError as e:
        raise UsageError(f"{target}: {e.args[0] if e.args else e}") from None
