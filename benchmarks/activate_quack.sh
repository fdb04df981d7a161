# Source on the GPU host, from the project root, after .gpu/activate.sh: unpacks the quack archive(s) this
# call carries (benchmarks/stage_quack.sh: .quack-a, .quack-b) into $QUACK_SITE (default /tmp/quack-site,
# which outlives the call while the host stays warm) and, once both parts are there, puts quack on PYTHONPATH.
# First call: carry .quack-a alone and source this (it says part b is still missing); next call, while the
# host is warm: carry .gpu and .quack-b and source it again. Later calls on the same host need neither.
QUACK_SITE="${QUACK_SITE:-/tmp/quack-site}"
mkdir -p "$QUACK_SITE"
for _part in a b; do
  if [ ! -f "$QUACK_SITE/.part-$_part" ] && [ -f ".quack-$_part/site-$_part.tar.xz" ]; then
    xz -d <".quack-$_part/site-$_part.tar.xz" | tar -C "$QUACK_SITE" -xf - && touch "$QUACK_SITE/.part-$_part"
  fi
done
_missing=""
for _part in a b; do [ -f "$QUACK_SITE/.part-$_part" ] || _missing="$_missing .quack-$_part"; done
if [ -n "$_missing" ]; then
  echo "activate_quack: not yet unpacked on this host:$_missing (carry it in a call that sources this file)" >&2
  unset _part _missing
  return 1
fi
unset _part _missing
# nvidia_cutlass_dsl_packages.pth (not read from PYTHONPATH entries) would add dsl_packages/: add it here.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$QUACK_SITE:$QUACK_SITE/nvidia_cutlass_dsl/dsl_packages"
