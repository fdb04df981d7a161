#!/usr/bin/env bash
# GPU host: thunder_exec's and the step table's GPU tests, then the step table (benchmarks/model_step.py): one
# process per GPU, each a shard of the cases (--shard I/N, longest cases first onto the least loaded GPU), each
# under a wall-clock budget (a case past its share starts no further variant; the row says so), then --merge.
# Needs litgpt's wheel staged: EXTRA_WHEELS="litgpt==0.5.13 pyyaml==6.0.3" bash ../shared/gpu/stage.sh
#
#   MODELS_PART       table (default) | tests | all: the GPU tests (~2 min) and the table (~MODELS_BUDGET_S + 2 min)
#                     do not both fit one 10-minute device call at the default budget: run them as two calls
#   MODELS_BUDGET_S   seconds per GPU process for the table (default 380; a variant started before it may overrun)
#   MODELS_CASES      comma-separated cases (default: all; python benchmarks/model_step.py --list)
#   MODELS_VARIANTS   comma-separated variants (default: all)
#   MODELS_VARIANTS_FROM   a table file of more variants (model_step.py --variants-from: a campaign's controls)
#   MODELS_ITERS      timed steps per variant (default 10)
#   MODELS_ROUNDS     time every variant this many times, the case's variants in turn (default 1; see --rounds)
#   MODELS_BACK_TO_BACK=K   time K steps issued back to back, per step (a training loop's steady state)
#   MODELS_GPUS       how many GPUs to use (default: all)
#   MODELS_TRACES=1 / MODELS_PROFILE=1   save execution traces / chrome traces under $OUT/models/
#   MODELS_HOST_PROFILE=1   where each variant's host time per step goes (cProfile text) under $OUT/models/host/
set -uo pipefail
source .gpu/activate.sh
LOG_DIR="${OUT:-/tmp}/models"
mkdir -p "$LOG_DIR"
BUDGET="${MODELS_BUDGET_S:-380}"
PART="${MODELS_PART:-table}"
N="${MODELS_GPUS:-$(nvidia-smi -L | wc -l)}"
ARGS=(--iters "${MODELS_ITERS:-10}" --rounds "${MODELS_ROUNDS:-1}" --budget-s "$BUDGET")
[ -n "${MODELS_CASES:-}" ] && ARGS+=(--case "$MODELS_CASES")
[ -n "${MODELS_BACK_TO_BACK:-}" ] && ARGS+=(--back-to-back "$MODELS_BACK_TO_BACK")
[ -n "${MODELS_VARIANTS:-}" ] && ARGS+=(--variants "$MODELS_VARIANTS")
[ -n "${MODELS_VARIANTS_FROM:-}" ] && ARGS+=(--variants-from "$MODELS_VARIANTS_FROM")
[ "${MODELS_TRACES:-0}" = 1 ] && ARGS+=(--traces "$LOG_DIR/traces")
[ "${MODELS_PROFILE:-0}" = 1 ] && ARGS+=(--profile "$LOG_DIR/profiles")
[ "${MODELS_HOST_PROFILE:-0}" = 1 ] && ARGS+=(--host-profile "$LOG_DIR/host")
{
  python -c "import benchmarks.model_cases as m; m.import_litgpt(); print('litgpt.model imports')"
  if [ "$PART" != table ]; then
    timeout 120 python -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_thunder_exec_gpu.py \
      tests/gpu/test_model_step_gpu.py 2>&1 | tail -15
  fi
} > "$LOG_DIR/models.log" 2>&1
echo "== scripts/gpu/models.sh summary"
if [ "$PART" != tests ]; then
  for ((i = 0; i < N; i++)); do  # SIGINT past the budget + 120 s: each process has written its rows so far
    CUDA_VISIBLE_DEVICES=$i timeout -s INT $((BUDGET + 120)) python benchmarks/model_step.py "${ARGS[@]}" \
      --shard "$i/$N" --json "$LOG_DIR/step-$i.json" > "$LOG_DIR/step-$i.log" 2>&1 &
  done
  wait
  python benchmarks/model_step.py --merge "$LOG_DIR"/step-*.json --out "$LOG_DIR/model_step.md" \
    --json "$LOG_DIR/model_step.json" >> "$LOG_DIR/models.log" 2>&1
fi
grep -E "passed|failed|error" "$LOG_DIR/models.log" | tail -3
[ "$PART" != tests ] && { cat "$LOG_DIR/model_step.md" 2>/dev/null || tail -20 "$LOG_DIR"/step-*.log; }
