#!/usr/bin/env bash
# The GPU gate, one command on whatever GPU host it gets (docs/developing.md "The GPU gate"):
#
#   bash scripts/gpu/gate.sh [suite|bench|all]      (default all; results under $OUT/gate, default out/gate)
#
# suite: the whole `pytest -m gpu` suite sharded over the host's GPUs (python -m sweep, GATE_PER_GPU shards per
#        GPU, default 8: the suite mostly waits on compiles), $OUT/gate/gpu_tests.json.
# bench: the headline benchmarks (python -m benchmarks.gate headline-k) and the Llama-3-8B step, compared with the
#        committed baseline for this GPU model (benchmarks/data/baseline.jsonl); ours more than 3% slower (kernel
#        cases and the step) are run again, and fail the gate if still slower.
# all:   both, then the merged record $OUT/gate/record.json (pass/fail per test, each benchmark against its
#        baseline, the machine block); exit 0 only when the gate passes. Land it with
#        `python -m benchmarks.gate land out/gate/record.json` and commit the results data.
# Run the phases in separate calls where a call is limited (a 10-minute device call): `suite`, then `bench`,
# then `record` (it reads both phases' files).
set -uo pipefail
[ -f .gpu/activate.sh ] && source .gpu/activate.sh
PHASE="${1:-all}"
DIR="${OUT:-out}/gate"
mkdir -p "$DIR"
COMMIT="${GATE_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
part() { echo; echo "=== gate: $1 ($(date -u +%H:%M:%S))"; }

if [[ "$PHASE" == suite || "$PHASE" == all ]]; then
  part "the whole GPU suite"
  # the suite's litgpt tests need litgpt staged (without it ~40 of them fail as "case failed", a false red)
  if ! python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('litgpt') is None)"; then
    echo "gate: litgpt is not importable here: stage it (EXTRA_WHEELS=\"litgpt==0.5.13 pyyaml==6.0.3\" bash ../shared/gpu/stage.sh)" >&2
    exit 2
  fi
  # each test's peak GPU memory, and how long a declared one waited for room (tests/gpu/memory_budget.py)
  SEGKIT_GPU_MEMORY_LOG="$DIR/gpu_memory.jsonl" \
  python -m sweep --gpus all --per-gpu "${GATE_PER_GPU:-8}" --time-limit "${GATE_SUITE_S:-560}" --grace 20 \
    --workdir "${GATE_WORKDIR:-$(mktemp -d)}" -o "$DIR/gpu_tests.json" -- -m gpu -p no:cacheprovider -rfE tests \
    > "$DIR/suite.log" 2>&1
  echo "sweep exit $?"; tail -5 "$DIR/suite.log"
fi

if [[ "$PHASE" == bench || "$PHASE" == all ]]; then
  part "headline benchmarks"
  # the GPU's state as timing starts (a lease's drift shows in small kernels first: clocks, another process on the GPU)
  { nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu --format=csv
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv; } > "$DIR/bench.log" 2>&1
  tail -n +2 "$DIR/bench.log" | head -3
  # each case also lands in headline.jsonl as it is measured (a phase cut by GATE_BENCH_S keeps what it measured)
  SEGKIT_BENCH_LOG="$DIR/headline.jsonl" timeout -s INT "${GATE_BENCH_S:-3600}" python -m pytest benchmarks -q \
    -p no:cacheprovider -k "$(python -m benchmarks.gate headline-k)" --benchmark-json="$DIR/headline.json" \
    >> "$DIR/bench.log" 2>&1
  echo "benchmarks exit $?"; tail -2 "$DIR/bench.log"
  part "the Llama-3-8B step"
  STEP_ARGS=$(python -c "from benchmarks.gate import STEP; print(' '.join(f'--{k} {v}' for k, v in STEP.items()))")
  # shellcheck disable=SC2086
  timeout -s INT "${GATE_STEP_S:-1800}" python benchmarks/model_step.py $STEP_ARGS --json "$DIR/step.json" \
    --out "$DIR/step.md" > "$DIR/step.log" 2>&1
  echo "step exit $?"; tail -4 "$DIR/step.md" 2>/dev/null
  part "against the baseline"
  python -m benchmarks.gate compare "$DIR/headline.json" "$DIR/step.json" --rerun-ids "$DIR/rerun.txt" \
    --rerun-step "$DIR/rerun-step.txt" --log "$DIR/headline.jsonl" > "$DIR/compare.txt"
  if [ -s "$DIR/rerun.txt" ]; then
    part "re-running $(wc -l < "$DIR/rerun.txt") case(s) past the tolerance"
    mapfile -t IDS < "$DIR/rerun.txt"
    python -m pytest -q -p no:cacheprovider "${IDS[@]}" --benchmark-json="$DIR/rerun.json" >> "$DIR/bench.log" 2>&1
  fi
  if [ -s "$DIR/rerun-step.txt" ]; then  # logs go on in step.log and bench.log: a call returns at most 8 files
    part "re-running the step, past the tolerance"
    # shellcheck disable=SC2086
    timeout -s INT "${GATE_STEP_S:-1800}" python benchmarks/model_step.py $STEP_ARGS --json "$DIR/step-rerun.json" \
      >> "$DIR/step.log" 2>&1
    echo "step re-run exit $?"; tail -3 "$DIR/step.log"
  fi
  rm -f "$DIR/rerun.txt" "$DIR/rerun-step.txt"  # done with: the re-runs' JSON files are the record
fi

if [[ "$PHASE" == record || "$PHASE" == all ]]; then
  part "record"
  RERUN=(); [ -f "$DIR/rerun.json" ] && RERUN=(--rerun "$DIR/rerun.json")
  [ -f "$DIR/step-rerun.json" ] && RERUN+=(--rerun-step "$DIR/step-rerun.json")
  python -m benchmarks.gate record --tests "$DIR/gpu_tests.json" --bench "$DIR/headline.json" \
    --step "$DIR/step.json" "${RERUN[@]}" --log "$DIR/headline.jsonl" --commit "$COMMIT" -o "$DIR/record.json"
fi
