#!/usr/bin/env bash
# Stage quack-kernels (and the CUTLASS Python DSL it runs on) for the offline GPU host.
#
# Its CUDA library wheel (nvidia-cutlass-dsl-libs-cu13, ~92 MB) does not fit one transfer beside the 40 MiB
# .gpu environment, so everything is unpacked, tarred, xz-compressed and split in two git-ignored parts:
#   .quack-a/  (about 56 MiB)  carry it alone in one call, which copies it out of the tree to /tmp/quack-a/
#   .quack-b/  (the rest)      carry it with .gpu in the next call, while the host is warm
# The host drops ignored paths a call does not carry (hence the copy to /tmp); in the second call
#   QUACK_PART_A=/tmp/quack-a/site.tar.xz.part source benchmarks/activate_quack.sh
# unpacks both into .quack-site/ and puts it on PYTHONPATH.
# Run on the development machine from the project root.
set -euo pipefail
WHEELS=(quack-kernels==0.6.5 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
        nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 apache-tvm-ffi==0.1.15.post2
        torch-c-dlpack-ext==0.1.5 einops==0.8.2 cuda-bindings==13.0.3 cuda-pathfinder==1.9.0 protobuf==7.36.2)
PART_A_BYTES=$((56 * 1024 * 1024))
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 --platform manylinux2014_x86_64 \
  -d "$TMP/wheels" "${WHEELS[@]}"
mkdir -p "$TMP/site"
for w in "$TMP"/wheels/*.whl; do python3 -m zipfile -e "$w" "$TMP/site"; done
tar -C "$TMP/site" -cf - . | xz -T0 -9 > "$TMP/site.tar.xz"
rm -rf .quack-a .quack-b && mkdir -p .quack-a .quack-b
head -c "$PART_A_BYTES" "$TMP/site.tar.xz" > .quack-a/site.tar.xz.part
tail -c +"$((PART_A_BYTES + 1))" "$TMP/site.tar.xz" > .quack-b/site.tar.xz.part
sha256sum "$TMP/site.tar.xz" | cut -d' ' -f1 > .quack-b/site.tar.xz.sha256
for d in .quack-a .quack-b .quack-site; do
  grep -qx "/$d/" .git/info/exclude 2>/dev/null || echo "/$d/" >> .git/info/exclude
done
du -sh .quack-a .quack-b
