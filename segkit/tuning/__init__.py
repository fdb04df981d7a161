"""nvFuser tunings: what a fusion builder (or ``segkit tune``) keeps where nvFuser's default heuristics fall short.

* ``table`` -- ``NvTuning`` (scheduler choices for one fusion) and the ``TuningTable`` of ``segkit tune``'s winners
  per GPU model; its names are re-exported here (``segkit.tuning.NvTuning``);
* ``search`` -- ``segkit tune``'s search over formulations x scheduler options x bookend policy.

Running a fusion the way its ``NvTuning`` says (``TunedFusion``) is the backend's: ``segkit.nvfuser.tuned``.
"""

from segkit.tuning.table import (REUSE, NvTuning, TableEntry, TuningTable, describe_schedule, formulation_label,
                                 gpu_model, tuning_from_dict, tuning_to_dict)

__all__ = ["REUSE", "NvTuning", "TableEntry", "TuningTable", "describe_schedule", "formulation_label", "gpu_model",
           "tuning_from_dict", "tuning_to_dict"]
