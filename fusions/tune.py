"""Stub for the cli branch only: ``tune_spec`` lives here once the "fusions" helper moves it from segkit.tune;
the integrator takes that helper's real module instead of this one."""

from segkit.tune import tune_spec

__all__ = ["tune_spec"]
