#!/usr/bin/env bash
# The `triton::dot` torch op (or, with OP=dot_nt / OP=dot_tn, its gradient
# ops) with other tile widths in its tuning space, for
# checking on a GPU tiles the bundled space leaves out (TN a multiple of 8
# but not of 16: wgmma's unswizzled `b`; keep a power of two among them:
# float32 runs no other width). From the repository root:
#     bash scripts/gpu/dot_tile_widths.sh out/narrow "24, 40, 64, 136, 248"
# writes out/narrow/dot (--no-build) and out/narrow.tar.xz; on the device:
#     tar -C out -xJf out/narrow.tar.xz
#     python3 scripts/gpu/tma_check.py out/narrow --all --variants "TN=(24|40|136|248) " --out DIR
# A third argument sets the 16-bit types' K step of the aligned variants
# (TK_DIV, 64 in the bundled op; 32 or 16: `a` in the 64- or 32-byte
# swizzle, and stages of a narrow `b` padded to 1024 bytes). With OP set the
# op folder is OUT/$OP, and tma_check.py takes --op $OP.
set -euo pipefail
op=${OP:-dot}
case "$op" in dot | dot_nt | dot_tn) ;; *) echo "OP must be dot, dot_nt or dot_tn" >&2; exit 1 ;; esac
usage='usage: dot_tile_widths.sh OUT "W1, W2, ..." [TK_DIV]'
out=${1:?$usage}
widths=${2:?$usage}
tk_div=${3:-64}
cargo build --release -q -p opgen-bridge -p triton-opgen
rm -rf "$out"
mkdir -p "$out/lib" "$out/spec"
sed -e "s/^#pragma opgen tune TN = .*/#pragma opgen tune TN = [$widths]/" \
  -e "s/TK=16 TK_DIV=64/TK=16 TK_DIV=$tk_div/g" tests/ops/$op.tc > "$out/spec/$op.tc"
cp tests/ops/*.tci "$out/spec/" 2>/dev/null || true   # the includes the spec names
grep -q "tune TN = \[$widths\]" "$out/spec/$op.tc" || { echo "no TN line replaced" >&2; exit 1; }
[ "$(grep -c "TK_DIV=$tk_div" "$out/spec/$op.tc")" -ge 1 ] || { echo "no TK_DIV replaced" >&2; exit 1; }
cp target/release/libopgen_bridge.a "$out/lib/"
strip -g "$out/lib/libopgen_bridge.a" 2>/dev/null || true
target/release/triton-opgen "$out/spec/$op.tc" --framework torch --arch sm_90a --no-build -o "$out/$op"
rm -rf "$out/spec"
tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
du -sh "$out" "$out.tar.xz"
