# Source on the GPU host, from the project root, after .gpu/activate.sh, once .quack-a/ and .quack-b/
# (benchmarks/stage_quack.sh) have both arrived: unpacks quack-kernels into .quack-site/ (once) and puts it on
# PYTHONPATH after the project's own paths.
if [ ! -f .quack-site/.complete ]; then
  if [ ! -f .quack-a/site.tar.xz.part ] || [ ! -f .quack-b/site.tar.xz.part ]; then
    echo "activate_quack: .quack-a/ and .quack-b/ must both be on this host (benchmarks/stage_quack.sh)" >&2
    return 1
  fi
  if [ "$(cat .quack-a/site.tar.xz.part .quack-b/site.tar.xz.part | sha256sum | cut -d' ' -f1)" \
       != "$(cat .quack-b/site.tar.xz.sha256)" ]; then
    echo "activate_quack: the two parts do not make the staged archive (re-stage, carry both again)" >&2
    return 1
  fi
  rm -rf .quack-site && mkdir -p .quack-site
  cat .quack-a/site.tar.xz.part .quack-b/site.tar.xz.part | xz -d | tar -C .quack-site -xf - && touch .quack-site/.complete
fi
# nvidia_cutlass_dsl_packages.pth (not read from PYTHONPATH entries) would add dsl_packages/: add it here.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD/.quack-site:$PWD/.quack-site/nvidia_cutlass_dsl/dsl_packages"
