#!/usr/bin/env bash
# The GPU test suite sharded over every GPU of the host (sweep: one pinned pytest per GPU, merged):
#
#   SUITE_LIMIT_S=480 bash scripts/gpu/suite_sharded.sh [TEST PATHS]     (default: tests, i.e. every gpu test)
#
# SUITE_PER_GPU=2 (default) runs two shards on each GPU, so that one shard's CPU work (tracing, compiling) overlaps
# the other's GPU work.
#
# Shards are balanced by the committed durations of this suite on this GPU (benchmarks/durations/tests-<gpu>.json,
# which sweep picks itself), or by SUITE_DURATIONS=FILE (an earlier gpu_tests.json).
#
# Writes $OUT/gpu_tests.json (the merged sweep record: its machine block, per-case outcome and device, durations,
# per-shard timing),
# $OUT/sweep.log and $OUT/workdir.tgz (each shard's log), then prints the machine block, the outcome counts, every case that did
# not pass, and each shard's time. The litgpt tests need litgpt staged: EXTRA_WHEELS="litgpt==0.5.13".
set -uo pipefail
source .gpu/activate.sh
export PYTHONUNBUFFERED=1
OUT="${OUT:-/tmp/segkit-out}"
W="$(mktemp -d)/gpu-suite"
mkdir -p "$OUT" "$W"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/gpus.txt"
LIMIT="${SUITE_LIMIT_S:-480}"
DURATIONS="${SUITE_DURATIONS:-}"  # empty: the committed durations file of this suite and GPU, where there is one
BALANCE=()
[ -n "$DURATIONS" ] && [ -f "$DURATIONS" ] && BALANCE=(--durations "$DURATIONS")
PATHS=("$@")
[ ${#PATHS[@]} -eq 0 ] && PATHS=(tests)
timeout -k 10 $((LIMIT + 70)) python -m sweep --gpus all --per-gpu "${SUITE_PER_GPU:-2}" \
  --time-limit "$LIMIT" --grace 20 "${BALANCE[@]}" \
  --workdir "$W" -o "$W/gpu_tests.json" -- -m gpu -p no:cacheprovider -rfE "${PATHS[@]}" > "$OUT/sweep.log" 2>&1
echo "sweep exit $? (0 complete, 3 incomplete, 1 a case failed)"
cp "$W/gpu_tests.json" "$OUT/" 2>/dev/null
tar czf "$OUT/workdir.tgz" --exclude=compile-cache -C "$(dirname "$W")" gpu-suite
tail -5 "$OUT/sweep.log"
python - "$W/gpu_tests.json" <<'PY'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
print("machine:", ", ".join(f"{k} {v}" for k, v in (doc.get("machine") or {}).items() if v is not None))
sweep = doc["sweep"]
outcomes = sweep["outcomes"]
print("shards per GPU:", doc["sweep"]["launcher"].get("shards_per_gpu"))
print("outcomes:", dict(collections.Counter(v["outcome"] for v in outcomes.values())),
      "not run:", sum(len(v) for v in sweep["not_run"].values()))
for case, v in sorted(outcomes.items()):
    if v["outcome"] not in ("passed", "skipped", "xfailed"):
        print(f"{v['outcome']:8} device {v['device']}  {case}")
for device, t in sweep["timing"].items():
    print(f"shard on device {device}: {t['cases_run']} cases, {t['wall_s']:.1f} s wall, "
          f"{t['to_first_case_s']:.1f} s to the first case, {t['cases_s']:.1f} s in cases")
PY
