"""The errors segkit raises: each names what is wrong and where."""

from __future__ import annotations


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


class ResourceLimitError(SegkitError):
    """A tensor or a script run beyond segkit's configured limits (memory budget, time limit)."""
