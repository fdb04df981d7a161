#!/usr/bin/env bash
# Stage quack-kernels (and the CUTLASS Python DSL it runs on) for the offline GPU host.
#
# Its MLIR library alone (_cutlass_ir, 188 MB, 50 MB xz-compressed) does not fit one transfer beside the
# 40 MiB .gpu environment, so quack travels as two self-contained, git-ignored archives:
#   .quack-a/site-a.tar.xz  the MLIR library and the CuTe DSL runtime   carry it alone in one call
#   .quack-b/site-b.tar.xz  everything else (8.3 MiB)   carry it with .gpu in the next call, while warm
# `source benchmarks/activate_quack.sh` unpacks whichever archive a call carries into /tmp/quack-site on the
# host (kept there while the host stays warm) and, once both are there, puts quack on PYTHONPATH.
# Run on the development machine from the project root.
set -euo pipefail
WHEELS=(quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
        nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2
        torch-c-dlpack-ext==0.1.5 einops==0.8.2 cuda-bindings==13.0.3 cuda-pathfinder==1.9.0 protobuf==7.36.2)
BIG=nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir/_mlir_libs
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64 \
  -d "$TMP/wheels" "${WHEELS[@]}"
mkdir -p "$TMP/site"
for w in "$TMP"/wheels/*.whl; do python3 -m zipfile -e "$w" "$TMP/site"; done
# cuda-bindings ships its C++ and Cython sources (90 MB): the compiled modules are all that run.
find "$TMP/site/cuda" \( -name '*.cpp' -o -name '*.pyx' -o -name '*.pxd' \) -delete
rm -rf .quack-a .quack-b && mkdir -p .quack-a .quack-b
( cd "$TMP/site" && ls $BIG/_cutlass_ir*.so nvidia_cutlass_dsl/cu13/lib/libcute_dsl_runtime.so >"$TMP/part-a" )
tar -C "$TMP/site" -cf - -T "$TMP/part-a" | xz -T0 -9 >.quack-a/site-a.tar.xz
tar -C "$TMP/site" -cf - -X "$TMP/part-a" . | xz -T0 -9 >.quack-b/site-b.tar.xz
for d in .quack-a .quack-b; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
done
du -sh .quack-a .quack-b
