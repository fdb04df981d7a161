#!/usr/bin/env bash
# Stage quack-kernels (and the CUTLASS Python DSL it runs on) for the offline GPU host.
#
# The unpacked site (its MLIR library alone is 188 MB) travels as one xz-compressed tar stream cut into git-ignored
# pieces of PIECE_MB (default 36) each, .quack-1/, .quack-2/, ...: a device call carries the working tree and its
# carried paths within 64 MiB, so each piece goes in a call of its own (without .gpu), while the host stays warm.
# `source benchmarks/activate_quack.sh` keeps whichever pieces a call carries in /tmp/quack-site on the host and,
# once all are there, unpacks them and puts quack on PYTHONPATH.
# Run on the development machine from the project root.
set -euo pipefail
WHEELS=(quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
        nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2
        torch-c-dlpack-ext==0.1.5 einops==0.8.2 cuda-bindings==13.0.3 cuda-pathfinder==1.9.0 protobuf==7.36.2)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64 \
  -d "$TMP/wheels" "${WHEELS[@]}"
mkdir -p "$TMP/site"
for w in "$TMP"/wheels/*.whl; do python3 -m zipfile -e "$w" "$TMP/site"; done
# cuda-bindings ships its C++ and Cython sources (90 MB): the compiled modules are all that run.
find "$TMP/site/cuda" \( -name '*.cpp' -o -name '*.pyx' -o -name '*.pxd' \) -delete
rm -rf .quack-[0-9]*
tar -C "$TMP/site" -cf - . | xz -T0 -9 >"$TMP/site.tar.xz"
split -b "${PIECE_MB:-36}M" -d "$TMP/site.tar.xz" "$TMP/site.tar.xz."
pieces=("$TMP"/site.tar.xz.[0-9]*)
for i in "${!pieces[@]}"; do
  d=".quack-$(( i + 1 ))"
  mkdir -p "$d" && mv "${pieces[$i]}" "$d/" && echo "${#pieces[@]}" >"$d/count"
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >>.git/info/exclude
done
du -sh .quack-[0-9]*
