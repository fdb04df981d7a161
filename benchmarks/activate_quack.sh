# Source on the GPU host, from the project root, after .gpu/activate.sh: unpacks quack-kernels (staged by
# benchmarks/stage_quack.sh) into .quack-site/ and puts it on PYTHONPATH after the project's own paths.
# The host drops ignored paths a call does not carry, so the first call copies .quack-a's part out of the
# tree (mkdir -p /tmp/quack-a && cp .quack-a/site.tar.xz.part /tmp/quack-a/) and the second, carrying .gpu
# and .quack-b, names it: QUACK_PART_A=/tmp/quack-a/site.tar.xz.part source benchmarks/activate_quack.sh
QUACK_PART_A="${QUACK_PART_A:-.quack-a/site.tar.xz.part}"
if [ ! -f .quack-site/.complete ]; then
  if [ ! -f "$QUACK_PART_A" ] || [ ! -f .quack-b/site.tar.xz.part ]; then
    echo "activate_quack: need $QUACK_PART_A and .quack-b/site.tar.xz.part (benchmarks/stage_quack.sh)" >&2
    return 1
  fi
  if [ "$(cat "$QUACK_PART_A" .quack-b/site.tar.xz.part | sha256sum | cut -d' ' -f1)" \
       != "$(cat .quack-b/site.tar.xz.sha256)" ]; then
    echo "activate_quack: the two parts do not make the staged archive (re-stage, carry both again)" >&2
    return 1
  fi
  rm -rf .quack-site && mkdir -p .quack-site
  cat "$QUACK_PART_A" .quack-b/site.tar.xz.part | xz -d | tar -C .quack-site -xf - && touch .quack-site/.complete
fi
# nvidia_cutlass_dsl_packages.pth (not read from PYTHONPATH entries) would add dsl_packages/: add it here.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD/.quack-site:$PWD/.quack-site/nvidia_cutlass_dsl/dsl_packages"
