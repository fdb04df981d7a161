#!/usr/bin/env bash
# benchmarks.sweep on the GPU host: a small norm backward subset sharded over every visible GPU (one shard on a
# one-GPU host), merged, and read back by summarize. Logs under $OUT/sweep/.
source .gpu/activate.sh
mkdir -p "$OUT/sweep"
set -o pipefail
python -m benchmarks.sweep --gpus all -o /tmp/sweep/norm_bwd.json -- benchmarks/test_norm_bwd.py \
    -k "rmsnorm and (sweep_4096x4096 or sweep_16384x1024) and bfloat16 and (segkit or compile) and not thunder" 2>&1 | tee "$OUT/sweep/sweep.log"
python - <<'PY' 2>&1 | tee -a "$OUT/sweep/sweep.log"
import json
doc = json.load(open("/tmp/sweep/norm_bwd.json"))
print("records", len(doc["benchmarks"]), "devices", doc["sweep"]["devices"], "exit codes",
      [s["exit_code"] for s in doc["sweep"]["shards"]])
for b in doc["benchmarks"]:
    e = b["extra_info"]
    print(f"{b['name']:70s} {e['sweep_device']} {e['sweep_gpu']} {e.get('kernel_us_median', float('nan')):8.1f} us "
          f"{e.get('pct_of_copy_bw', float('nan')):5.1f}% of {e['sweep_copy_gbs']:.0f} GB/s")
PY
