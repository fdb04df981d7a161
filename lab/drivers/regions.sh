#!/usr/bin/env bash
# Issue 37 item 3 on the GPU host (about 3 minutes): the Llama-3-8B step (litgpt x1, T=4096, bf16) under stock
# Thunder and Thunder + segkit_ex, timed and its traces saved, and 3 segkit_ex steps profiled with each call in a
# range (lab/drivers/regions_step.py); then `segkit regions` with the measured segkit_ex step: each cut with its
# bytes and gain, and the estimated fused step. --host-us 0: this step is GPU-bound, so a cut's host call hides
# under the kernels; the profiled run shows each cut's measured kernels and host time (counted in its gain).
# Writes $OUT/regions/{regions.log, segkit_ex.html, segkit_ex.json, profiled.html, thunder.html, steps.json,
# thunder/, segkit_ex/, segkit_ex_profiled/ (traces, profile.json)}.
set -uo pipefail
source .gpu/activate.sh
D="${OUT:-out}/regions"; mkdir -p "$D"
exec > >(tee "$D/regions.log") 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 480 python lab/drivers/regions_step.py "$D" || exit 1
GPU=$(python -c "import json; print(json.load(open('$D/steps.json'))['gpu'])")
MS=$(python -c "import json; print(json.load(open('$D/steps.json'))['segkit_ex'])")
echo "== segkit regions: Thunder + segkit_ex (measured step $MS ms)"
python -m segkit_cli regions "$D"/segkit_ex/step.fwd.py "$D"/segkit_ex/step.bwd.py --gpu "$GPU" --host-us 0 \
  --step-ms "$MS" --html "$D/segkit_ex.html"
python -m segkit_cli regions "$D"/segkit_ex/step.fwd.py "$D"/segkit_ex/step.bwd.py --gpu "$GPU" --host-us 0 \
  --step-ms "$MS" --format json > "$D/segkit_ex.json"
echo "== segkit regions --profile: Thunder + segkit_ex jitted with CallRanges (measured kernels and host time)"
python -m segkit_cli regions "$D"/segkit_ex_profiled/step.fwd.py "$D"/segkit_ex_profiled/step.bwd.py --gpu "$GPU" \
  --profile "$D/segkit_ex_profiled/profile.json" --step-ms "$MS" --html "$D/profiled.html"
echo "== measured: segkit_ex fused $(python -c "import json; print(json.load(open('$D/steps.json'))['segkit_fused'])") ms (the bar: the estimates above within 20%)"
echo "== segkit regions: stock Thunder ($(python -c "import json; print(json.load(open('$D/steps.json'))['thunder'])") ms)"
python -m segkit_cli regions "$D"/thunder/step.fwd.py "$D"/thunder/step.bwd.py --gpu "$GPU" --host-us 0 \
  --html "$D/thunder.html" | tail -8
