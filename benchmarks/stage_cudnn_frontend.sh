#!/usr/bin/env bash
# Stage nvidia-cudnn-frontend for the offline GPU host: the step table's thunder-cudnn rival (stock Thunder with its
# cuDNN executor, which Thunder 0.2.6 turns on whenever cudnn-frontend imports). 1.15.0: the newest, 1.32.0, fails
# in Thunder 0.2.6's SDPA. The wheel (about 2 MB) goes to the git-ignored .cudnn-frontend/; carry that path with
# .gpu and `source benchmarks/activate_cudnn_frontend.sh` on the host. Run on the development machine from the
# project root.
set -euo pipefail
VERSION="${CUDNN_FRONTEND:-1.15.0}"
rm -rf .cudnn-frontend && mkdir -p .cudnn-frontend
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d .cudnn-frontend \
  "nvidia-cudnn-frontend==$VERSION"
ls -la .cudnn-frontend
