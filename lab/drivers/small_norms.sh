#!/usr/bin/env bash
# Issue 54, the small models' norms: segkit's schedules searched at the step's own norm signatures on this GPU, then
# the step timed with them. Qwen3-0.6B's per-head q / k norm backward is its costliest memory-bound work left to
# Thunder (lab/runs/h200x2-2026-11-29-small-graphs: two inner-outer kernels per layer against torch.compile's
# per-row kernels and split weight sums), and no tuning entry existed at those signatures, so "auto" never weighed
# segkit's rows schedules there; the committed claim evidence measured the claims fused, and applies only while
# the claim would still run fused (thunder_exec.decide.cut_cost.declines).
#
#   1. `segkit tune` each RMSNorm direction at the small models' named configs (fusions/configs.py), SMALL_TUNE_S
#      seconds each, the two directions on two GPUs where there are two, into copies of the committed table, then
#      merged into $DIR/tunings.json (least kernel time per config).
#   2. The step table with SEGKIT_TUNING_TABLE=$DIR/tunings.json, one case per GPU, 2 rounds (paired, rotated),
#      profiled: thunder, segkit-auto, and the claim evidence per shape (every norm claimed; Qwen3-0.6B's q / k
#      norms left to Thunder; every norm left to Thunder), for `python -m benchmarks.cut_evidence small-norms
#      --spec rmsnorm_bwd --claimed segkit-norms-claimed --declined segkit-qk-norms-thunder` (the q / k shapes) and
#      `--claimed segkit-qk-norms-thunder --declined segkit-norms-thunder` (the block norms).
#   The two phases do not fit one 10-minute device call: SMALL_PART=tune, bring tunings.json back into the tree,
#   then SMALL_PART=step SMALL_TUNINGS=that/tunings.json.
#
#   SMALL_PART      tune | step | all (default all)
#   SMALL_TUNINGS   the tuning table the step runs with (default: the one phase 1 wrote)
#   SMALL_TUNE_S    seconds per search (default 40)
#   SMALL_BUDGET_S  seconds per step-table process (default 420)
#   SMALL_CASES     default qwen3-0.6b-x2,llama3.2-1b-x2
#   SMALL_VARIANTS  default thunder,segkit-auto,segkit-norms-claimed,segkit-qk-norms-thunder,segkit-norms-thunder
# Writes $OUT/small-norms.tgz (tune logs, the tables, the step table's JSON, logs and profiles) and prints the
# searches' winners and the table; merge a winner into the committed table with
# `python -m segkit_cli tune --merge tunings.json` once the step says it pays.
set -uo pipefail
source .gpu/activate.sh
DIR="${OUT:-/tmp/segkit-out}/small-norms"
mkdir -p "$DIR"
TUNE_S="${SMALL_TUNE_S:-40}"
BUDGET="${SMALL_BUDGET_S:-420}"
PART="${SMALL_PART:-all}"
GPUS=$(nvidia-smi -L | wc -l)

tune() {  # SPEC GPU: every small-model config of SPEC, one after the other, on GPU
  cp fusions/tunings.json "$DIR/tunings-$1.json"
  for cfg in qwen3_0.6b_q qwen3_0.6b_k qwen3_0.6b llama3.2_1b; do
    CUDA_VISIBLE_DEVICES=$2 timeout $((TUNE_S + 60)) python -m segkit_cli tune "$1:$cfg" --budget "$TUNE_S" \
      --out "$DIR/tunings-$1.json" > "$DIR/tune-$1-$cfg.log" 2>&1
    echo "segkit tune $1:$cfg exit $?: $(grep -m1 "^winner on" "$DIR/tune-$1-$cfg.log")"
  done
}
if [ "$PART" != step ]; then
  tune rmsnorm_bwd 0 &
  tune rmsnorm_fwd $((GPUS > 1 ? 1 : 0)) &
  wait
  python -m segkit_cli tune --merge "$DIR/tunings-rmsnorm_bwd.json" "$DIR/tunings-rmsnorm_fwd.json" \
    --out "$DIR/tunings.json" > "$DIR/merge.log" 2>&1 || { echo "merge failed:"; tail -5 "$DIR/merge.log"; }
fi
if [ "$PART" = tune ]; then
  tar czf "$DIR/../small-norms-tune.tgz" -C "$DIR" . && exit 0
fi
export SEGKIT_TUNING_TABLE="${SMALL_TUNINGS:-$DIR/tunings.json}"

IFS=, read -ra CASES <<< "${SMALL_CASES:-qwen3-0.6b-x2,llama3.2-1b-x2}"
for i in "${!CASES[@]}"; do
  CUDA_VISIBLE_DEVICES=$((i % GPUS)) timeout -s INT $((BUDGET + 120)) python benchmarks/model_step.py \
    --case "${CASES[$i]}" --variants-from lab/campaigns/step_controls.json --variants "${SMALL_VARIANTS:-thunder,segkit-auto,segkit-norms-claimed,segkit-qk-norms-thunder,segkit-norms-thunder}" --rounds 2 \
    --iters 10 --budget-s "$BUDGET" --profile "$DIR/profiles" --json "$DIR/step-$i.json" > "$DIR/step-$i.log" 2>&1 &
  (( (i + 1) % GPUS == 0 )) && wait
done
wait
python benchmarks/model_step.py --merge "$DIR"/step-*.json --out "$DIR/model_step.md" --json "$DIR/model_step.json" \
  > "$DIR/step-merge.log" 2>&1
python -m lab.campaigns.step_bars "$DIR/model_step.json" > "$DIR/bars.md" 2>&1
gzip -f "$DIR/model_step.json"
tar czf "$DIR/../small-norms.tgz" -C "$DIR" .
cat "$DIR/model_step.md" "$DIR/bars.md"
