"""segkit_ex's decisions, in one place: what each norm / RoPE call it could claim becomes, and why.

The rule, per call, under ``segkit_fuse`` (options; "auto" by default, parsed once per compilation):

1. **Claim it?** "thunder" leaves the call to Thunder's own decomposition; so does "auto" where a step measured
   Thunder's own faster on this GPU for the call's signature (claim evidence), while the call would still run as
   that step ran it. A call's forward and backward are claimed or left together (choice.declined).
2. **Fused or opaque?** "fused" puts it into Thunder's nvFuser regions, "opaque" runs segkit's own kernel as a
   separate call. "auto" fuses, except where a step measured the cut both ways (cut evidence: opaque only where
   the kernel time it saved exceeds the host time it added), or, unmeasured, where the tuning table says segkit's
   kernel gains more than the cut costs (cut_cost.decide). Without Thunder's nvFuser executor, opaque
   (choice.chosen).
3. **Alone after all?** After the fusion pass, a fused call alone in its region cuts nothing by running opaque:
   it does where the tuning table has segkit's kernel faster than nvFuser's default (alone, cut_cost.decide_alone).

Each call's choice and its reason are kept in ``CHOICES`` (``clear_notes()`` forgets them). Grouped-query
attention is decided the same way (``segkit_gqa``, GQA evidence: choice.grouping). The evidence tables are
committed beside this file and read by one loader (evidence.committed_table).
"""

from __future__ import annotations

from thunder_exec.decide.choice import (CHOICES, Choice, FuseFallbackWarning, chosen, clear_notes, declined, grouping,
                                        record)
from thunder_exec.decide.cut_cost import FUSED, OPAQUE, THUNDER, CutDecision, CutPolicy, decide, decide_alone
from thunder_exec.decide.options import CompileOptions, FusePolicy, compile_options

__all__ = ["CHOICES", "FUSED", "OPAQUE", "THUNDER", "Choice", "CompileOptions", "CutDecision", "CutPolicy",
           "FuseFallbackWarning", "FusePolicy", "chosen", "clear_notes", "compile_options", "decide", "decide_alone",
           "declined", "grouping", "record"]
