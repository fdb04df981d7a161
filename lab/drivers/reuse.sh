#!/usr/bin/env bash
# Issue 24 on the GPU host (about 4 minutes on an H100; the benchmark is capped at 200 s): reduction-reuse GPU
# tests, `segkit reuse` (with and without --inner-outer) on fp8 4096 x 4096, optionally (REUSE_VARIANTS=1, about
# 1 more minute) the fp8 amax formulations side by side (segments, schedulers, exactness, event time), and
# the fp8 amax benchmark suite (segkit as written / +reuse / inner_outer / inner_outer_rows / two_stage, torch.compile with and
# without the reuse post-grad pass, Thunder with and without ReuseNvFusions; cold-L2 CUPTI kernel time, % of
# the bytes floor). Writes $OUT/reuse/reuse.log and $OUT/reuse/fp8_amax.json (pytest-benchmark JSON, for
# benchmarks/summarize.py), then prints a summary table. Skip parts with REUSE_SKIP_TESTS=1, REUSE_SKIP_BENCH=1.
# REUSE_TUNE_S=40 first runs `segkit tune` on the four fp8 shapes (40 s each: the tiled one-read schedules), for
# each amax set of REUSE_TUNE_AMAXES (default "row,col,all row,all"), and benchmarks "segkit" with the winners
# ($OUT/reuse/tunings.json: the committed table with the winners merged in).
set -uo pipefail
source .gpu/activate.sh
DIR="${OUT:-out}/reuse"
mkdir -p "$DIR"
LOG="$DIR/reuse.log"
TMP="$(mktemp -d)"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
part() { echo; echo "=== $1 ($(date -u +%H:%M:%S))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python -c "import torch, nvfuser_direct; print('torch', torch.__version__, 'nvfuser_direct', nvfuser_direct.version())"

if [ -z "${REUSE_SKIP_TESTS:-}" ]; then
  part "GPU tests: reuse on nvFuser, fp8 variants, Thunder regions, Inductor post-grad pass"
  SEGKIT_RECORD="$TMP/record.jsonl" timeout 120 python -m pytest -m gpu -q -p no:cacheprovider \
    tests/gpu/test_reuse_gpu.py 2>&1 | tail -15
  echo "tests exit ${PIPESTATUS[0]}"
  cat "$TMP/record.jsonl" 2>/dev/null
  for flag in "" "--inner-outer outer" "--inner-outer inner"; do
    part "segkit reuse $flag fp8_amax:4096x4096"
    timeout 60 python -m segkit_cli reuse $flag fp8_amax:4096x4096 2>&1 | grep -v "^  tv[0-9]*: \|^inputs:\|^ops:\|^outputs:"
  done
fi

if [ -n "${REUSE_VARIANTS:-}" ]; then
  part "fp8 amax formulations on nvFuser"
  timeout 90 python -m lab.explore.fp8_amax_variants 2>&1 | grep -E "^(RES|copy)|Error" | tail -40
fi

if [ -n "${REUSE_TUNE_S:-}" ]; then
  cp fusions/tunings.json "$DIR/tunings.json"  # the committed table, each winner below merged into it
  # x read once in tiles (fusions/fp8_amax_tiles.py): its schedule searched per shape on this GPU; the benchmark's
  # "segkit" then runs each winner (SEGKIT_TUNING_TABLE), and $DIR/tunings.json merges into fusions/tunings.json
  for amaxes in ${REUSE_TUNE_AMAXES:-row,col,all row,all}; do
    for shape in seed_12x34x56 4096x4096 16384x8192 8192x28672; do
      part "segkit tune fp8_amax:$shape --amaxes $amaxes"
      timeout $(( REUSE_TUNE_S + 40 )) python -m segkit_cli tune "fp8_amax:$shape" --amaxes "$amaxes" \
        --budget "$REUSE_TUNE_S" --out "$DIR/tunings.json" 2>&1 | tail -8
    done
  done
  export SEGKIT_TUNING_TABLE="$DIR/tunings.json"
fi

if [ -z "${REUSE_SKIP_BENCH:-}" ]; then
  part "fp8 amax benchmark suite (bf16, cold L2)"
  SEGKIT_BENCH_LOG="$TMP/bench.jsonl" timeout -s INT 200 python -m pytest -q -p no:cacheprovider \
    benchmarks/test_fp8_amax.py -k "not eager" --benchmark-json="$DIR/fp8_amax.json" \
    --benchmark-columns=median 2>&1 | grep -E "passed|failed|error|FAILED|Error" | tail -15
fi

part "summary"
python - "$TMP/bench.jsonl" <<'PY'
import json, sys
from pathlib import Path
from tabulate import tabulate

path = Path(sys.argv[1])
rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
table = {}
for r in rows:
    p, info = r["params"], r["extra_info"]
    key = (p["shape"], p["amaxes"])
    table.setdefault(key, {})[p["executor"]] = (info["kernel_us_median"], info["pct_of_copy_bw"], info["kernels"])
execs = ["segkit", "segkit+reuse", "segkit:inner_outer", "segkit:inner_outer_rows", "segkit:two_stage", "torch.compile",
         "torch.compile+reuse_fx", "thunder", "thunder+reuse"]
out = []
for (shape, amaxes), by in table.items():
    cells = [f"{by[e][0]:.1f} us {by[e][1]:.0f}% {by[e][2]:g}k" if e in by else "-" for e in execs]
    out.append([shape, amaxes, *cells])
print("kernel time, % of the bytes floor (x read once) at the measured copy bandwidth, kernels per call")
print(tabulate(out, headers=["shape", "amaxes", *execs]))
PY
[ -f "$DIR/fp8_amax.json" ] && python -m lab.campaigns.targets "$DIR/fp8_amax.json" | grep -E "target|---|fp8"
