# Written on 2026-12-07 and not run that session (no device time left); it ran
# later the same day in ../../2026-12-07e-h100-bridge-pad/ (TUNED CHECK PASSED),
# through scripts/gpu/tuned_check.sh, where its steps now live:
#   warm a cache with the op, embed it in kernels.cpp as `--tuned` does, rebuild, check.
# Carry out/base.tar.xz (dot.tc, --no-build, bridge copy removed) and
# out/bridgex/libopgen_bridge.a.xz (the bridge of 94d5215 or later).
export PYTHONUNBUFFERED=1
cd out && tar xJf base.tar.xz && cd ..
mkdir -p out/lib && xz -dc out/bridgex/libopgen_bridge.a.xz > out/lib/libopgen_bridge.a
export BRIDGE_LIB=$PWD/out/lib/libopgen_bridge.a
nvidia-smi --query-gpu=name --format=csv,noheader
(cd out/base/dot && bash build.sh > build.log 2>&1; echo "base build rc=$?")
bash scripts/gpu/tuned_check.sh out/base/dot
