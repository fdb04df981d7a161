# Source on the GPU host, from the project root, after .gpu/activate.sh: unpacks the carried cudnn-frontend wheel
# (benchmarks/stage_cudnn_frontend.sh) into $CUDNN_FRONTEND_SITE (default /tmp/cudnn-frontend-site) and puts it on
# PYTHONPATH, so that Thunder registers its cuDNN executor (the step table's thunder-cudnn rival; every other
# Thunder variant runs without it). Returns 1 when no wheel was carried.
CUDNN_FRONTEND_SITE="${CUDNN_FRONTEND_SITE:-/tmp/cudnn-frontend-site}"
_wheel="$(ls .cudnn-frontend/nvidia_cudnn_frontend-*.whl 2>/dev/null | head -1)"
if [ -z "$_wheel" ]; then
  echo "activate_cudnn_frontend: no wheel in .cudnn-frontend/ (run benchmarks/stage_cudnn_frontend.sh; carry it)" >&2
  unset _wheel
  return 1
fi
[ -d "$CUDNN_FRONTEND_SITE/cudnn" ] || python -m zipfile -e "$_wheel" "$CUDNN_FRONTEND_SITE"
export PYTHONPATH="$CUDNN_FRONTEND_SITE${PYTHONPATH:+:$PYTHONPATH}"
unset _wheel
