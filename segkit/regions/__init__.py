"""Why a Thunder program was cut between fusion regions, and what each cut costs: read saved execution traces
(segkit.regions.parse), find the regions and the cuts with the tensors crossing them (segkit.regions.analysis),
and show them as a table, JSON or an SVG strip (segkit.regions.render). No Thunder import: text in, dataclasses
out, so a trace saved on a GPU host is analysed anywhere."""

from segkit.regions.analysis import (
                                     GPU_BANDWIDTH,
                                     CostModel,
                                     Crossing,
                                     Cut,
                                     Region,
                                     RegionsError,
                                     RegionsReport,
                                     Tensor,
                                     TraceRegions,
                                     analyze,
                                     analyze_trace,
                                     cost_model,
)
from segkit.regions.parse import Call, ExecTrace, TensorType, TraceFormatError, parse_trace, parse_type

__all__ = ["GPU_BANDWIDTH", "Call", "CostModel", "Crossing", "Cut", "ExecTrace", "Region", "RegionsError",
           "RegionsReport", "Tensor", "TensorType", "TraceFormatError", "TraceRegions", "analyze", "analyze_trace",
           "cost_model", "parse_trace", "parse_type"]
