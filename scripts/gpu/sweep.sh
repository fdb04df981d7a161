#!/usr/bin/env bash
# benchmarks.sweep on the GPU host (segkit issue 23): the FULL norm backward bf16 sweep
# (benchmarks/test_norm_bwd.py -k bfloat16, 272 cases, a few seconds each), first sharded over every visible GPU,
# then on one GPU, each under --time-limit, each with its own empty Inductor / Triton compile cache (so the second
# run compiles as much as the first). Neither run is expected to finish all 272 cases at the defaults: the point is
# cases run per minute at N GPUs vs 1, and where each shard's time went (start-up, collection, cases).
#
# Defaults fit one 10-minute device call for both runs (worst case 2 x (LIMIT + 2 x GRACE) + a few seconds):
#   SWEEP_LIMIT_S=230  per run, from launch (collection included); no case starts after it
#   SWEEP_GRACE_S=20   a case may overrun the limit this long before SIGINT, and SIGINT this long before SIGKILL
#   SWEEP_ONLY=all|1   run only the all-GPU part, or only the one-GPU part (split over two calls, e.g.
#                      SWEEP_ONLY=all SWEEP_LIMIT_S=520 in one call, SWEEP_ONLY=1 SWEEP_LIMIT_S=520 in the next)
#   SWEEP_K=bfloat16   the -k expression; SWEEP_SUITE=benchmarks/test_norm_bwd.py
# Writes $OUT/sweep/sweep.log and $OUT/sweep/sweep.tar (each run's workdir: shard case lists, reports,
# pytest-benchmark JSON and logs, and the merged JSON), then prints a table: GPUs, wall, cases run / not run,
# per-shard time to the first case.
set -uo pipefail
source .gpu/activate.sh
export PYTHONUNBUFFERED=1
DEST="${OUT:-/tmp/segkit-out}/sweep"
mkdir -p "$DEST"
LOG="$DEST/sweep.log"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
LIMIT="${SWEEP_LIMIT_S:-230}"
GRACE="${SWEEP_GRACE_S:-20}"
ONLY="${SWEEP_ONLY:-}"
K="${SWEEP_K:-bfloat16}"
SUITE="${SWEEP_SUITE:-benchmarks/test_norm_bwd.py}"
ROWS="$(mktemp)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
NGPU="$(python -c 'import torch; print(torch.cuda.device_count())')"

run() {  # run LABEL GPUS: one sweep, its workdir under $DEST while it runs, then appended to sweep.tar
  local label="$1" gpus="$2" work="$DEST/w_$1" cache
  cache="$(mktemp -d)"
  echo; echo "=== sweep on $gpus GPU(s): $SUITE -k '$K', --time-limit $LIMIT --grace $GRACE ($(date -u +%H:%M:%S))"
  TORCHINDUCTOR_CACHE_DIR="$cache/inductor" TRITON_CACHE_DIR="$cache/triton" \
    timeout -k 10 $(( LIMIT + 2 * GRACE + 30 )) \
    python -m benchmarks.sweep --gpus "$gpus" --time-limit "$LIMIT" --grace "$GRACE" --workdir "$work" \
      -o "$work/merged.json" -- "$SUITE" -k "$K"
  local rc=$?
  echo "sweep on $gpus GPU(s) exit $rc (0 complete, 3 incomplete: see sweep.not_run, 1 a case failed)"
  python - "$work/merged.json" "$gpus" "$rc" >> "$ROWS" <<'PY'
import json, sys
path, gpus, rc = sys.argv[1:]
try:
    s = json.load(open(path))["sweep"]
except (OSError, ValueError, KeyError) as e:
    print(json.dumps({"gpus": gpus, "rc": rc, "error": f"no merged JSON ({e})"}))
    raise SystemExit
print(json.dumps({"gpus": len(s["devices"]), "rc": rc, "wall": s["launcher"]["wall_s"], "collect": s["launcher"]["collect_s"],
                  "run": sum(t["cases_run"] for t in s["timing"].values()),
                  "not_run": sum(len(v) for v in s["not_run"].values()),
                  "first": [t["to_first_case_s"] for t in s["timing"].values()],
                  "cases_s": [t["cases_s"] for t in s["timing"].values()]}))
PY
  tar rf "$DEST/sweep.tar" -C "$DEST" "w_$label" && rm -rf "$work"
  rm -rf "$cache"
}

[ "$ONLY" != 1 ] && run all all
if [ "$ONLY" != all ]; then
  if [ "$NGPU" -gt 1 ] || [ "$ONLY" = 1 ]; then run one 1; else echo "one GPU visible: the all-GPU run was the one-GPU run"; fi
fi

echo; echo "=== summary ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), limit $LIMIT s per run)"
python - "$ROWS" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
print(f"{'GPUs':>4} {'exit':>4} {'wall s':>7} {'collect s':>9} {'run':>4} {'not run':>7} {'cases/min':>9}  "
      "per shard: to first case s / in cases s")
for r in rows:
    if "error" in r:
        print(f"{r['gpus']:>4} {r['rc']:>4}  {r['error']}")
        continue
    shards = ", ".join(f"{f if f is None else round(f, 1)} / {round(c, 1)}" for f, c in zip(r["first"], r["cases_s"]))
    print(f"{r['gpus']:>4} {r['rc']:>4} {r['wall']:7.1f} {r['collect']:9.1f} {r['run']:4d} {r['not_run']:7d} "
          f"{60 * r['run'] / r['wall']:9.1f}  {shards}")
PY
