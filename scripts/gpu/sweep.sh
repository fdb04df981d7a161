#!/usr/bin/env bash
# sweep on the GPU host (segkit issues 23, 39): a whole benchmark suite (default the norm backward bf16
# sweep, benchmarks/test_norm_bwd.py -k bfloat16, 272 cases) sharded over the GPUs, run and resumed
# (`python -m sweep --resume WORKDIR`) until it is complete or this call's wall budget ends, so one
# device call finishes as much as it can and the next call continues where it stopped.
#
#   SWEEP_BUDGET_S=540  wall seconds for this call (each run's --time-limit is what is left, less the grace and a
#                       margin); no run starts with less than SWEEP_MIN_RUN_S=60 left
#   SWEEP_GRACE_S=20    a case may overrun the limit this long before SIGINT, and SIGINT this long before SIGKILL
#   SWEEP_GPUS=all      or N (SWEEP_GPUS=1 with its own SWEEP_WORK measures the one-GPU side)
#   SWEEP_WORK=/tmp/segkit-sweep/w   the sweep's workdir. It holds sweep.json (the merged record so far) and the
#                       shared Inductor / Triton compile cache, so on a warm host the next call resumes warm. On a
#                       fresh host, unpack the previous call's $OUT/sweep/workdir.tgz into the tree and point
#                       SWEEP_WORK at it: the sweep resumes (cold compile cache).
#   SWEEP_K=bfloat16    the -k expression; SWEEP_WARMUP=N (see --warmup)
#   SWEEP_SUITE=benchmarks/test_norm_bwd.py   one or more files, space-separated; the whole sweep (issue 39):
#                       "benchmarks/test_norm_bwd.py benchmarks/test_norm_fwd.py benchmarks/test_qkv_split_rope.py
#                       benchmarks/test_fp8_amax.py" (926 bf16 cases; about 3.4 times the norm backward's 272)
# Shards are balanced by the committed durations of the suite on this GPU (benchmarks/durations/), where there are.
# Writes $OUT/sweep/sweep.log, $OUT/sweep/merged.json (every run so far merged: one pytest-benchmark JSON with the
# machine block) and $OUT/sweep/workdir.tgz (the workdir without its compile cache), and prints per run and shard:
# wall, cases run / not run, time to the first case, compile (preparation) time and case time.
set -uo pipefail
source .gpu/activate.sh
export PYTHONUNBUFFERED=1
DEST="${OUT:-/tmp/segkit-out}/sweep"
mkdir -p "$DEST"
LOG="$DEST/sweep.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
BUDGET="${SWEEP_BUDGET_S:-540}"
GRACE="${SWEEP_GRACE_S:-20}"
MIN_RUN="${SWEEP_MIN_RUN_S:-60}"
GPUS="${SWEEP_GPUS:-all}"
WORK="${SWEEP_WORK:-/tmp/segkit-sweep/w}"
K="${SWEEP_K:-bfloat16}"
SUITE="${SWEEP_SUITE:-benchmarks/test_norm_bwd.py}"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
mkdir -p "$(dirname "$WORK")"

rc=3
while :; do
  left=$(( BUDGET - SECONDS - 2 * GRACE - 15 ))
  if (( left < MIN_RUN )); then echo "=== ${left} s left of the ${BUDGET} s budget: no further run in this call"; break; fi
  if [ -f "$WORK/sweep.json" ]; then
    echo; echo "=== resuming the sweep in $WORK on $GPUS GPU(s), --time-limit $left ($(date -u +%H:%M:%S))"
    args=(--resume "$WORK")
  else
    echo; echo "=== sweep on $GPUS GPU(s): $SUITE -k '$K', --time-limit $left ($(date -u +%H:%M:%S))"
    read -ra files <<< "$SUITE"
    args=(--workdir "$WORK" -- "${files[@]}" -k "$K")
  fi
  timeout -k 10 $(( left + 2 * GRACE + 10 )) python -m sweep --gpus "$GPUS" --time-limit "$left" \
    --grace "$GRACE" --warmup "${SWEEP_WARMUP:-0}" -o "$DEST/merged.json" "${args[@]}"
  rc=$?
  echo "sweep exit $rc (0 complete, 3 incomplete: see sweep.not_run, 1 a case failed, 2 refused)"
  [ "$rc" = 3 ] || break
done
tar czf "$DEST/workdir.tgz" --exclude=compile-cache -C "$(dirname "$WORK")" "$(basename "$WORK")"

echo; echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), budget $BUDGET s, exit $rc)"
python - "$WORK/sweep.json" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    raise SystemExit(f"no merged record ({e})")
s = doc["sweep"]
print("machine:", ", ".join(f"{k} {v}" for k, v in (doc.get("machine") or {}).items() if v is not None))
print(f"{'run':>3} {'GPUs':>4} {'wall s':>7} {'run':>4} {'not run':>7}")
for i, r in enumerate(s.get("runs", []), 1):
    print(f"{i:>3} {len(r['devices']):>4} {r['wall_s']:7.1f} {r['cases_run']:4d} {r['not_run']:7d}")
print("this call's last run, per shard: to first case / compile (preparation) / in cases, s")
for device, t in s["timing"].items():
    print(f"  device {device}: {t['to_first_case_s']} / {t.get('compile_s')} ({t.get('compiled_cases')} cases) / "
          f"{t['cases_s']} ({t['cases_run']} cases)")
print(f"whole sweep: {s['counts']}, complete: {s['complete']}")
PY
[ "$rc" = 0 ] && [ "$GPUS" != 1 ] && python -m sweep --estimate-one-gpu "$WORK/sweep.json"
exit 0
