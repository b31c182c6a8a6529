# Sourced by scripts/gpu/{torch,tf}_ops_prepare.sh (from the repository root):
# `generate_ops FRAMEWORK OUT ARCH` writes the --no-build folders of the
# bundled ops (tests/ops/*.tc) for FRAMEWORK under OUT/<op>/, with one shared
# copy of the prebuilt runtime bridge in OUT/lib/ (the per-op copies go: the
# carried tree stays small; build.sh takes BRIDGE_LIB). `pack_folder OUT`
# packs OUT as OUT.tar.xz (the PTX packs ~10x; unpacked, the folders pass
# the device's 64 MiB carry limit): carry that, then `tar -C out -xJf
# OUT.tar.xz` there. Extra triton-opgen flags come from OPGEN_FLAGS (e.g.
# OPGEN_FLAGS=--misaligned-runs).
BUNDLED_OPS=(add softmax transpose dot dot_nt dot_tn)
generate_ops() {
  local framework=$1 out=$2 arch=$3 op
  cargo build --release -q -p opgen-bridge -p triton-opgen
  rm -rf "$out"
  mkdir -p "$out/lib"
  cp target/release/libopgen_bridge.a "$out/lib/"
  strip -g "$out/lib/libopgen_bridge.a" 2>/dev/null || true
  for op in "${BUNDLED_OPS[@]}"; do
    target/release/triton-opgen "tests/ops/$op.tc" --framework "$framework" --arch "$arch" --no-build ${OPGEN_FLAGS:-} -o "$out/$op"
    rm -f "$out/$op/lib/libopgen_bridge.a"
  done
}
pack_folder() {
  local out=$1
  tar -C "$(dirname "$out")" -cJf "$out.tar.xz" "$(basename "$out")"
  du -sh "$out" "$out.tar.xz"
}
