"""Differential fuzzing of nvFuser against the reference interpreter (see segkit/fuzz/campaign.py)."""

from segkit.fuzz.campaign import Finding, Summary, fuzz
from segkit.fuzz.gen import Case, cases
from segkit.fuzz.targets import REALIZATIONS, Target, run_case, target
from segkit.fuzz.triage import emit_standalone, replay

__all__ = ["Case", "Finding", "REALIZATIONS", "Summary", "Target", "cases", "emit_standalone", "fuzz", "replay",
           "run_case", "target"]
