# Sourced by the scripts/gpu/*build.sh scripts: compiles one kernel's tuning
# space into "$O/NAME" (PTX files + manifest.json) with tritonc "$T", printing
# tritonc's summary line. ARCH (default sm_90) and KDIR (the kernel's folder,
# default tests/kernels) and STAGES (tritonc --num-stages) may be set for one
# call: `ARCH=sm_90a build ...`.
build() { # name warps file defines...
  local name=$1 warps=$2 file=$3
  shift 3
  $T "${KDIR:-tests/kernels}/$file" "$@" --num-warps "$warps" --arch "${ARCH:-sm_90}" \
    ${STAGES:+--num-stages "$STAGES"} --all-configs -o "$O/$name" 2>&1 | tail -1
}
