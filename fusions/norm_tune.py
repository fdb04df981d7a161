"""What ``segkit tune`` tries for the norms beside the generic candidates: nvFuser's heuristic overrides, and for
the backward the two-stage formulation's chunks and the hand-written rows schedules, for the forward its own
rows schedules."""

from __future__ import annotations

from fusions.configs import NormConfig
from fusions.norm_bwd_rows import ROWS
from fusions.norm_bwd_rows import candidates as rows_candidates
from fusions.norm_bwd_two_stage import chunk_for
from fusions.norm_fwd_rows import FWD_ROWS
from fusions.norm_fwd_rows import candidates as fwd_rows_candidates
from segkit.tuning.search import Candidate, SpecCandidates, trial_tuning

#: the widest hidden at which the rows schedule leads the search; wider, its serial loop over a long row is
#: latency-bound and it goes to the end
ROWS_FIRST_HIDDEN = 512
#: the widest hidden at which the forward rows schedules lead the forward's search (wider, nvFuser's own
#: heuristic holds a row in enough threads already)
FWD_ROWS_FIRST_HIDDEN = 1024


def fwd_candidates(cfg: NormConfig, sm_count: int, quick: bool = True) -> SpecCandidates:
    """Overrides of nvFuser's inner persistent heuristic (rows per block; with ``quick`` also a narrower vector
    and a smaller persistent batch at 4 rows, without it their grid), and the forward rows schedules
    (fusions/norm_fwd_rows.py): first at hidden up to ``FWD_ROWS_FIRST_HIDDEN``, last wider. nvFuser's
    warp-specialized normalization scheduler (``ws_normalization``) is one of segkit.tuning.search's generic
    candidates."""
    grid = [(None, None, 2), (None, None, 4), (4, None, 4), (None, 2, 4)] if quick else \
        [(v, p, r) for v in (None, 2, 4, 8) for p in (None, 1, 2, 3) for r in (None, 2, 4, 8)
         if (v, p, r) != (None, None, None)]
    overrides = [trial_tuning(scheduler="inner_persistent", vectorize=v, persistent_batch=p, rows_per_block=r)
                 for v, p, r in grid]
    by_hand = [Candidate(FWD_ROWS, s.chunk, schedule=s.to_dict()) for s in fwd_rows_candidates(cfg, sm_count, quick)]
    if cfg.hidden <= FWD_ROWS_FIRST_HIDDEN:
        return SpecCandidates(first=by_hand, overrides=overrides)
    return SpecCandidates(overrides=overrides, last=by_hand)


def bwd_candidates(cfg: NormConfig, sm_count: int, quick: bool = True) -> SpecCandidates:
    """A grid of inner-outer persistent overrides, two-stage chunks of about 1 and 4 partials per SM (and 2, 8
    without ``quick``; and 64 rows where that gives more than 4 per SM), each with and without a bookend, and the
    rows schedules: first at a narrow hidden, last at a wide one."""
    grid = [(4, 40, 16, None), (4, None, 16, None), (2, 40, 16, None), (4, None, 16, 2)] if quick else \
        [(v, r, b, p) for v in (2, 4, 8) for r in (None, 40, 64) for b in (None, 8, 16) for p in (None, 2)]
    overrides = [trial_tuning(scheduler="inner_outer_persistent", vectorize=v, maxrregcount=r, blocks_per_sm=b,
                              persistent_batch=p) for v, r, b, p in grid]
    rows = cfg.rows
    chunks = sorted({chunk_for(rows, p * sm_count) for p in ((1, 4) if quick else (1, 2, 4, 8))}
                    | ({c for c in (64,) if rows % c == 0 and rows // c > 4 * sm_count}))
    two_stage = [Candidate("two_stage", c, None, policy) for policy in ("none", "inputs+outputs") for c in chunks]
    by_hand = [Candidate(ROWS, r.chunk, schedule=r.to_dict()) for r in rows_candidates(cfg, sm_count, quick)]
    if cfg.hidden <= ROWS_FIRST_HIDDEN:
        return SpecCandidates(first=by_hand, overrides=overrides, staged=two_stage)
    return SpecCandidates(overrides=overrides, staged=two_stage, last=by_hand)
