# Source on the GPU host, from the project root: keeps the quack pieces this call carries (benchmarks/stage_quack.sh:
# .quack-1, .quack-2, ...) in $QUACK_SITE (default /tmp/quack-site, which outlives the call while the host stays
# warm) and, once every piece is there, unpacks them and puts quack on PYTHONPATH. Carry one piece per call
# (without .gpu: a call's tree and carried paths fit 64 MiB) and source this in each; later calls on the same
# host need no piece. Returns 1, naming the pieces still missing, until quack is unpacked.
QUACK_SITE="${QUACK_SITE:-/tmp/quack-site}"
mkdir -p "$QUACK_SITE/pieces"
for _piece in .quack-[0-9]*/site.tar.xz.[0-9]*; do
  [ -f "$_piece" ] && cp "$_piece" "$(dirname "$_piece")/count" "$QUACK_SITE/pieces/" 2>/dev/null
  [ -f "$_piece" ] && echo "activate_quack: kept $(basename "$_piece")" >&2
done
if [ ! -f "$QUACK_SITE/.unpacked" ]; then
  _count="$(cat "$QUACK_SITE/pieces/count" 2>/dev/null || echo '?')"
  _have="$(ls "$QUACK_SITE"/pieces/site.tar.xz.[0-9]* 2>/dev/null | wc -l)"
  if [ "$_have" != "$_count" ]; then
    echo "activate_quack: $_have of $_count pieces on this host (carry the others, .quack-N, one per call)" >&2
    unset _piece _count _have
    return 1
  fi
  cat "$QUACK_SITE"/pieces/site.tar.xz.[0-9]* | xz -d | tar -C "$QUACK_SITE" -xf - \
    && touch "$QUACK_SITE/.unpacked" && rm -rf "$QUACK_SITE/pieces"
fi
unset _piece _count _have
# nvidia_cutlass_dsl_packages.pth (not read from PYTHONPATH entries) would add dsl_packages/: add it here.
export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$QUACK_SITE:$QUACK_SITE/nvidia_cutlass_dsl/dsl_packages"
