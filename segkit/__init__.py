"""segkit: record, analyse, bookend and run nvFuser fusions; see README.md."""

from segkit.alias import find_aliases, preferred_layouts
from segkit.bookend import HostPlan, Plan, bookend, run_plan
from segkit.dtypes import DataType
from segkit.errors import (
    FusionDefinitionError,
    InputMismatchError,
    NvFuserUnavailableError,
    ReproError,
    SegkitError,
    UnsupportedOpError,
)
from segkit.frontend import FusionDefinition
from segkit.check import CheckReport, check, check_outputs
from segkit.interp import random_inputs, run_reference
from segkit.nvf import nvfuser_available, run_nvfuser, to_nvfuser
from segkit.repro import Repro, emit_repro, load_repro
from segkit.reuse import ReusePlan, reuse_reductions

__all__ = [
    "HostPlan",
    "Plan",
    "bookend",
    "find_aliases",
    "preferred_layouts",
    "run_plan",
    "CheckReport",
    "check",
    "check_outputs",
    "random_inputs",
    "DataType",
    "FusionDefinition",
    "FusionDefinitionError",
    "InputMismatchError",
    "NvFuserUnavailableError",
    "Repro",
    "ReproError",
    "SegkitError",
    "UnsupportedOpError",
    "emit_repro",
    "load_repro",
    "nvfuser_available",
    "run_nvfuser",
    "run_reference",
    "to_nvfuser",
    "ReusePlan",
    "reuse_reductions",
]
