# Sourced by the GPU scripts that check a launch over the device's shared
# memory (scripts/gpu/fault_check.py smem_one / smem_all):
#   smem_fault_folders W [LOG_DIR]
# copies the built-from-source folder W/add to W/add_smem_one and
# W/add_smem_all, edits their variant descriptions (C strings in kernels.cpp:
# ...shared_bytes\":0...) to claim 300,000 bytes — the first variant, or
# every one — and builds both in parallel (build logs in LOG_DIR, else
# discarded; BRIDGE_LIB, when set, is the archive they link).
smem_fault_folders() {
  local w=$1 logs=${2:-} which
  for which in one all; do
    rm -rf "$w/add_smem_$which" && cp -r "$w/add" "$w/add_smem_$which"
  done
  sed -i '0,/shared_bytes\\":0/s//shared_bytes\\":300000/' "$w/add_smem_one/kernels.cpp"
  sed -i 's/shared_bytes\\":0/shared_bytes\\":300000/g' "$w/add_smem_all/kernels.cpp"
  [ "$(grep -c 'shared_bytes\\":300000' "$w/add_smem_one/kernels.cpp")" = 1 ]
  for which in one all; do
    local log=/dev/null
    [ -n "$logs" ] && log=$logs/add_smem_$which.build.log
    (cd "$w/add_smem_$which" && bash build.sh >"$log" 2>&1) &
  done
  wait
}
