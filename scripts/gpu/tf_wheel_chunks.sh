#!/usr/bin/env bash
# TensorFlow's GPU wheel in chunks that fit one device call each beside the working tree:
# runs ../shared/tools/tf-gpu-bundle.sh (60 MB chunks .carry/t*, .carry/tx), then splits the
# wheel again into .carry/c0 .. .carry/cN, each small enough that the tracked tree plus one chunk
# stays under the 64 MiB a call carries (the tree alone is ~35 MB of disk blocks since
# bench/results grew). A session short of device time can instead move bench/results (not needed
# on the device) out of the working tree for the chunk calls and carry the ten 60 MB .carry/t*
# chunks (cp .carry/tK/* /tmp/tw/), then put it back: 10 calls of ~8 s instead of ~19.
# Prints the chunk count. Then, back to back (a machine goes back 30 s after a call):
#   carry [".carry/cK"], command: mkdir -p /tmp/tw && cp .carry/cK/* /tmp/tw/     (every K)
# and the call that tests carries .carry/tx and out/tf.tar.xz (see
# bench/results/2026-12-07i-h100-pad-tf/run_tf.sh). The 60 MB chunks stay, so a rerun re-splits
# without downloading again.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
[ -d .carry/tx ] && ls .carry/t[0-9]*/tfpart* > /dev/null 2>&1 || bash ../shared/tools/tf-gpu-bundle.sh
# Sized by disk blocks, not bytes: the device tool refused a 34 MB chunk beside a tree of 31.8 MB
# of bytes (34.9 MB of blocks) on 2026-12-07, so it counts more than the bytes.
tree=$(git ls-files -z | xargs -0 du -c -B1 | tail -1 | cut -f1)
limit=$((64 * 1024 * 1024 - 1024 * 1024))   # a MiB of slack for what else travels
chunk=$((limit - tree))
if [ "$chunk" -lt $((8 * 1000 * 1000)) ]; then
  echo "the tracked tree ($tree bytes) leaves too little of a call for wheel chunks" >&2
  exit 1
fi
whole=$(mktemp)
trap 'rm -f "$whole"' EXIT
# The chunks in name order (tfpart00, tfpart01, ...), whatever folder holds each.
cat $(ls .carry/t[0-9]*/tfpart* | awk -F/ '{print $NF, $0}' | sort | cut -d' ' -f2) > "$whole"
rm -rf .carry/c[0-9]*
(cd .carry && split -b "$chunk" -d -a 2 "$whole" tfpart)
i=0
for p in .carry/tfpart*; do mkdir -p ".carry/c$i"; mv "$p" ".carry/c$i/"; i=$((i + 1)); done
echo "$i chunks of at most $chunk bytes: .carry/c0 .. .carry/c$((i - 1)), one call each; then .carry/tx and out/tf.tar.xz with the test"
