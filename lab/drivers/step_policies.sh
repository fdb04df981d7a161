#!/usr/bin/env bash
# Issue 37 on a multi-GPU host: which of segkit_ex's fuse policies makes which model's step fastest, and why. The
# step table (scripts/gpu/models.sh) over the policy variants, one model per GPU side by side, each variant
# profiled; then per model `segkit trace compare --by kernel` of torch.compile against each segkit variant (the
# kernels that disappeared, appeared or got slower); and, on the last GPU at the same time, `segkit regions` on the
# Llama-3-8B step (lab/drivers/regions.sh: each cut's bytes and cost, its estimated fused step against the measured).
#
#   POLICY_CASES     default llama3-8b-x1,qwen3-8b-x1,pythia-1b-x2 (one GPU each; the regions run takes one more)
#   POLICY_VARIANTS  default compile, thunder and every segkit fuse variant (python benchmarks/model_step.py --list
#                    --variants-from lab/campaigns/step_controls.json: the controls come from that table)
#   POLICY_BUDGET_S  seconds per model process (default 330)
# Writes $OUT/policies.tgz (models/: the table, logs, profiles, comparisons; regions/) and prints the table.
set -uo pipefail
source .gpu/activate.sh
OUT="${OUT:-/tmp/segkit-out}"
CASES="${POLICY_CASES:-llama3-8b-x1,qwen3-8b-x1,pythia-1b-x2}"
VARIANTS="${POLICY_VARIANTS:-compile,thunder,segkit-opaque,segkit-fused,segkit-fwd-fused,segkit-rope-fused,segkit-norms-fused,segkit-auto}"
N_CASES=$(tr ',' '\n' <<< "$CASES" | wc -l)
GPUS=$(nvidia-smi -L | wc -l)
if (( GPUS > N_CASES )); then
  CUDA_VISIBLE_DEVICES=$N_CASES bash lab/drivers/regions.sh > "$OUT/regions.out" 2>&1 &
fi
MODELS_CASES="$CASES" MODELS_VARIANTS="$VARIANTS" MODELS_VARIANTS_FROM=lab/campaigns/step_controls.json MODELS_GPUS=$(( N_CASES < GPUS ? N_CASES : GPUS )) \
  MODELS_BUDGET_S="${POLICY_BUDGET_S:-330}" MODELS_PROFILE=1 bash scripts/gpu/models.sh > "$OUT/models.out" 2>&1
wait
P="$OUT/models/profiles"
for c in ${CASES//,/ }; do
  for v in ${VARIANTS//,/ }; do
    [ "$v" = compile ] || [ ! -f "$P/$c-$v.json.gz" ] || [ ! -f "$P/$c-compile.json.gz" ] && continue
    python -m segkit_cli trace compare "$P/$c-compile.json.gz" "$P/$c-$v.json.gz" --by kernel \
      > "$OUT/models/compare-$c-compile-vs-$v.txt" 2>&1
  done
done
tar czf "$OUT/policies.tgz" -C "$OUT" models regions regions.out models.out 2>/dev/null
rm -rf "$OUT/models" "$OUT/regions"
echo "== regions (GPU $N_CASES)"; grep -E "estimated fused step|measured:|^segkit_ex|^thunder|^segkit_fused" "$OUT/regions.out"
echo "== step table"; cat "$OUT/models.out" | tail -40
