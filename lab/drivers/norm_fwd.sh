#!/usr/bin/env bash
# Issue 38's norm forward campaign on one GPU host, resumable over calls: `segkit tune` on every bf16 forward sweep
# case (lab/campaigns/big_shapes.py, each winner checked against float64 before it is timed), then the forward suite
# (benchmarks/test_norm_fwd.py, bf16) with segkit on those winners beside torch.compile, Liger and Quack, through
# scripts/gpu/sweep.sh (resumed until complete), then the issue's bars (lab.campaigns.targets).
#
#   FWD_BUDGET_S=560     wall seconds for this call
#   FWD_TESTS="..."      GPU test files to run first (none by default)
#   FWD_TUNE_S=14        seconds of candidates per case of hidden <= 1024 (the hand rows schedules lead there)
#   FWD_TUNE_WIDE_S=8    per case of wider rows (nvFuser's heuristic overrides lead)
#   FWD_STATE=/tmp/segkit-fwd   the campaign's state on the host: tunings.json (the committed table plus this
#                        campaign's winners), tune.jsonl (every candidate of every case), sweep/ (the suite's workdir).
#                        A warm host resumes from it. On a fresh host, FWD_RESUME=DIR (a previous call's $OUT/fwd
#                        copied into the tree) seeds it: its tunings.json, tune.jsonl and workdir.tgz.
#   FWD_SUITE_K=...      the suite's -k (default: bf16, segkit, torch.compile, Liger, Quack)
# Quack runs where benchmarks/activate_quack.sh finds it unpacked on the host (benchmarks/stage_quack.sh).
# Writes $OUT/fwd/{fwd.log,tunings.json,tune.jsonl,workdir.tgz} and $OUT/sweep/{sweep.log,merged.json}; prints
# the tune's table, the suite's progress and the bars last.
set -uo pipefail
source .gpu/activate.sh
source benchmarks/activate_quack.sh || echo "quack: not unpacked on this host; the suite runs without it"
export PYTHONUNBUFFERED=1
DEST="${OUT:-/tmp/segkit-out}/fwd"
STATE="${FWD_STATE:-/tmp/segkit-fwd}"
mkdir -p "$DEST" "$STATE"
exec > >(tee -a "$DEST/fwd.log") 2>&1
BUDGET="${FWD_BUDGET_S:-560}"
left() { echo $(( BUDGET - SECONDS )); }
part() { echo; echo "=== $1 ($(date -u +%H:%M:%S), ${SECONDS}s of ${BUDGET})"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

if [ ! -f "$STATE/tunings.json" ]; then
  if [ -n "${FWD_RESUME:-}" ]; then
    cp "$FWD_RESUME/tunings.json" "$STATE/tunings.json"
    cp "$FWD_RESUME/tune.jsonl" "$STATE/tune.jsonl" 2>/dev/null
    [ -f "$FWD_RESUME/workdir.tgz" ] && tar xzf "$FWD_RESUME/workdir.tgz" -C "$STATE"
    echo "resumed from $FWD_RESUME"
  else
    cp fusions/tunings.json "$STATE/tunings.json"
  fi
fi

if [ -n "${FWD_TESTS:-}" ]; then
  part "GPU tests: $FWD_TESTS"
  read -ra tests <<< "$FWD_TESTS"
  timeout -s INT $(( $(left) - 60 )) python -m pytest -m gpu -q -p no:cacheprovider -rxXf "${tests[@]}" 2>&1 | tail -25
  echo "tests exit ${PIPESTATUS[0]}"
fi

SPECS=rmsnorm_fwd,layernorm_fwd
if [ ! -f "$STATE/tune.done" ]; then
  part "segkit tune, every bf16 forward case this GPU has no winner for yet"
  python -m lab.campaigns.big_shapes --specs "$SPECS" --min-elements 0 --skip-tuned --out "$STATE/tunings.json" \
    --budget "${FWD_TUNE_S:-14}" --budget-wide "${FWD_TUNE_WIDE_S:-8}" --time-limit $(( $(left) - 90 )) \
    --jsonl "$STATE/tune.jsonl" 2>&1 | grep -E "^(===|past|winner|--skip|NVIDIA)" | tail -n 60
  # complete when no case is left for this GPU
  python - "$STATE/tunings.json" <<'PY' && touch "$STATE/tune.done"
import sys
from lab.campaigns.big_shapes import cases, tuned_already
from segkit.tuning import TuningTable, gpu_model
table, gpu = TuningTable.load(sys.argv[1]), gpu_model()
left = [f"{s}:{c}" for s, c in cases(("rmsnorm_fwd", "layernorm_fwd"), 0) if not tuned_already(table, gpu, s, c)]
print(f"tune: {len(left)} cases left on {gpu}" + (": " + ", ".join(left) if left else ""))
sys.exit(1 if left else 0)
PY
  [ -f "$STATE/tune.jsonl" ] && python -m lab.campaigns.big_shapes --table "$STATE/tune.jsonl"
fi

if [ -f "$STATE/tune.done" ] && (( $(left) > 150 )); then
  part "the forward suite on this campaign's winners"
  SEGKIT_TUNING_TABLE="$STATE/tunings.json" SWEEP_SUITE=benchmarks/test_norm_fwd.py SWEEP_WORK="$STATE/sweep" \
    SWEEP_K="${FWD_SUITE_K:-bfloat16 and (segkit or compile or liger or quack) and not thunder}" \
    SWEEP_BUDGET_S=$(( $(left) - 30 )) bash scripts/gpu/sweep.sh | tail -n 25
  cp "${OUT:-/tmp/segkit-out}/sweep/workdir.tgz" "$DEST/workdir.tgz" 2>/dev/null
  rm -f "${OUT:-/tmp/segkit-out}/sweep/workdir.tgz"
  part "the bars"
  python -m lab.campaigns.targets "${OUT:-/tmp/segkit-out}/sweep/merged.json"
fi
cp "$STATE/tunings.json" "$DEST/tunings.json"
cp "$STATE/tune.jsonl" "$DEST/tune.jsonl" 2>/dev/null
exit 0
