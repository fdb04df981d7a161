#!/usr/bin/env bash
# Issue 21 on the GPU host (< 8 minutes on an H100): the tuning GPU tests, `segkit tune` on the 576000 x 384 norm
# backward (and the RoPE backward formulations), the norm backward benchmark there (segkit default vs two-stage vs
# torch.compile, bf16, cold-L2 kernel time), the CUDA-graph bookend table and the manual-schedule host-cost repro.
# Writes $OUT/perf/perf.log and $OUT/perf/results.json (its "machine" block: GPU, driver, versions, copy bandwidth,
# commit; its "tuning_table" merges into the committed table with `segkit tune --merge`; `python -m
# benchmarks.summarize results.json DIR` reads its "norm_bwd" records), then prints a summary.
# Skip parts with PERF_SKIP_TESTS=1, PERF_SKIP_TUNE=1, PERF_SKIP_ROPE=1, PERF_SKIP_BENCH=1, PERF_SKIP_GRAPH=1,
# PERF_SKIP_MANUAL=1. The 576000 x 384 search: PERF_TUNE_S seconds per norm (default 80), PERF_TUNE_FLAGS (e.g.
# --full for the whole grid of heuristic overrides: vectorize 2/4/8 x register cap x blocks per SM x batch);
# PERF_TUNE_GPUS=all (or N) splits each search over the GPUs, one `segkit tune --shard i/n` per GPU through
# `python -m sweep --each`, merged by least kernel time. Candidates rank by kernel time (CUPTI, cold
# L2); the call time between CUDA events is shown beside it. Run the tune alone on the host (nothing else on
# the CPUs): event times and compile times move with the CPUs' load.
set -uo pipefail
source .gpu/activate.sh
DIR="${OUT:-out}/perf"
mkdir -p "$DIR"
LOG="$DIR/perf.log"
TMP="$(mktemp -d)"
: > "$LOG"
exec > >(tee -a "$LOG") 2>&1
part() { echo; echo "=== $1 ($(date -u +%H:%M:%S), ${SECONDS}s)"; }
BUDGET="${PERF_BUDGET:-470}"  # seconds for the whole script: each part's limit is cut to what is left
cap() { local left=$(( BUDGET - SECONDS - 15 )); (( left < $1 )) && echo $(( left > 5 ? left : 5 )) || echo "$1"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python -c "import torch, nvfuser_direct; print('torch', torch.__version__, 'nvfuser_direct', nvfuser_direct.version())"

if [ -z "${PERF_SKIP_TESTS:-}" ]; then
  part "GPU tests: tuning state, two-stage, tune, CUDA graphs"
  # test_tuning_gpu's one-kernel checks (a child process each) are left out: they do not change here. Both files
  # take about 150 s on an H100 (2026-11-25)
  SEGKIT_RECORD="$TMP/record.jsonl" timeout -s INT $(cap 170) python -m pytest -m gpu -q -p no:cacheprovider -rxXf \
    tests/gpu/test_perf_gpu.py tests/gpu/test_tuning_gpu.py -k "not one_kernel" 2>&1 | tail -25
  echo "tests exit ${PIPESTATUS[0]}"
fi

if [ -z "${PERF_SKIP_TUNE:-}" ]; then
  for spec in rmsnorm_bwd layernorm_bwd; do
    part "segkit tune $spec:mixorder_576000x384${PERF_TUNE_GPUS:+ over GPUs: $PERF_TUNE_GPUS}"
    limit=$(cap ${PERF_TUNE_S:-80})
    if [ -n "${PERF_TUNE_GPUS:-}" ]; then
      timeout $limit python -m sweep --gpus "$PERF_TUNE_GPUS" --workdir "$TMP/sweep_$spec" --each \
        "python -m segkit_cli tune $spec:mixorder_576000x384 ${PERF_TUNE_FLAGS:-} --shard {shard}/{n} --budget $(( limit - 40 )) --out $TMP/tune_${spec}_{shard}.json" 2>&1 | tail -5
      tail -n 25 "$TMP/sweep_$spec"/shard*.log
      python -m segkit_cli tune --merge "$TMP"/tune_${spec}_*.json --out "$TMP/tunings.json" 2>&1 | tail -5
    else
      timeout $limit python -m segkit_cli tune "$spec:mixorder_576000x384" ${PERF_TUNE_FLAGS:-} \
        --budget $(( limit - 40 )) --out "$TMP/tunings.json" 2>&1 | tail -60
    fi
  done
fi

if [ -z "${PERF_SKIP_BENCH:-}" ]; then
  part "norm backward 576000 x 384 bf16: segkit, segkit two-stage, torch.compile (cold-L2 kernel time)"
  # the builders read this run's tune winners (when the tune part ran), not only the committed table
  [ -f "$TMP/tunings.json" ] && export SEGKIT_TUNING_TABLE="$TMP/tunings.json"
  SEGKIT_BENCH_LOG="$TMP/bench.jsonl" timeout -s INT $(cap 150) python -m pytest -q -p no:cacheprovider benchmarks/test_norm_bwd.py \
    -k "mixorder_576000x384 and bfloat16 and (segkit or compile) and not thunder" --benchmark-columns=median \
    2>&1 | tail -15
  unset SEGKIT_TUNING_TABLE
fi

if [ -z "${PERF_SKIP_ROPE:-}" ]; then
  part "segkit tune qkv_split_rope_bwd:Llama-3-70B_bs2 (the builder and its formulations x bookend)"
  timeout $(cap 50) python -m segkit_cli tune qkv_split_rope_bwd:Llama-3-70B_bs2 --budget $(( $(cap 50) - 30 )) --out "$TMP/tunings.json" 2>&1 | tail -20
fi

if [ -z "${PERF_SKIP_GRAPH:-}" ]; then
  part "CUDA-graph bookend table"
  timeout $(cap 75) python -m lab.explore.graph_bookend --json "$TMP/graph.json" --reps 30 2>&1 | tail -70
fi

if [ -z "${PERF_SKIP_MANUAL:-}" ]; then
  part "host cost of a manual schedule, smallest repro (fd.execute vs fd.manual_execute, same kernel)"
  timeout $(cap 30) python lab/explore/manual_host_repro.py 2>&1 | tee "$TMP/manual.txt" | tail -6
fi

part "summary"
python - "$TMP" "$DIR/results.json" <<'EOF'
import json, sys
from pathlib import Path

from tabulate import tabulate

from sweep.machine import KEY, machine_block

tmp, out = Path(sys.argv[1]), Path(sys.argv[2])
bench = [json.loads(line) for line in (tmp / "bench.jsonl").read_text().splitlines()] if (tmp / "bench.jsonl").exists() else []
res = {KEY: machine_block(bench[0]["extra_info"].get("copy_gbs") if bench else None)}
if (tmp / "tunings.json").exists():
    res["tuning_table"] = json.loads((tmp / "tunings.json").read_text())
    print(tabulate([[e["spec"], e["formulation"], e["chunk"] or "-", (e["tuning"] or {}).get("scheduler")
                     or ",".join((e["tuning"] or {}).get("enable_options", [])) or "defaults", e["bookend"],
                     e["default_us"], e["rule_us"], e["us"], e.get("call_us"), e.get("metric")]
                    for e in res["tuning_table"]["entries"]],
                   headers=["tune winner", "formulation", "chunk", "schedule", "bookend", "default us", "hand rule us",
                            "winner us", "winner call us", "metric"]))
if bench:
    rows = res["norm_bwd"] = bench
    print()
    print(tabulate([[r["params"]["kind"], r["params"]["executor"], round(r["extra_info"]["kernel_us_median"], 1),
                     r["extra_info"]["kernels"], round(r["extra_info"]["pct_of_copy_bw"], 1),
                     r["extra_info"].get("two_stage_chunk") or r["extra_info"].get("formulation", "")] for r in rows],
                   headers=["norm bwd 576000x384", "executor", "kernel us", "kernels", "% copy bw", "two-stage chunk / formulation"]))
if (tmp / "graph.json").exists():
    g = json.loads((tmp / "graph.json").read_text())
    res["graph_bookend"] = g
    rows = []
    for name, ms in g["workloads"].items():
        for m in ms:
            rows.append([name[:40], m["variant"], "ok" if m["ok"] else "WRONG", m["kernels"],
                         round(m["wall_us"], 1), m["async_us"] and round(m["async_us"], 1),
                         m["graph_us"] and round(m["graph_us"], 1) or m["graph_note"]])
    print()
    print(tabulate(rows, headers=["workload", "variant", "check", "kernels", "sync wall us", "async host us",
                                  "graph replay us"]))
if (tmp / "manual.txt").exists():
    res["manual_host_repro"] = (tmp / "manual.txt").read_text().splitlines()
    print("\n" + "\n".join(res["manual_host_repro"]))
if (tmp / "record.jsonl").exists():
    res["gpu_test_records"] = [json.loads(line) for line in (tmp / "record.jsonl").read_text().splitlines()]
    for r in res["gpu_test_records"]:
        print(r)
out.write_text(json.dumps(res, indent=1, default=str) + "\n")
print(f"\nwrote {out}")
EOF
rm -rf "$TMP"
