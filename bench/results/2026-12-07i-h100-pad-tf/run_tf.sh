# TensorFlow ops on the GPU, the `pad` line included (scripts/gpu/tf_ops_check.py: values, pad,
# gradient, tf.function, errors, stream order, timings), results packed into one file.
# Prepare here: bash scripts/gpu/tf_ops_prepare.sh (out/tf.tar.xz), then
# bash scripts/gpu/tf_wheel_chunks.sh (the wheel in chunks that fit beside the tree, one device
# call each, back to back: carry [".carry/cK"], command: mkdir -p /tmp/tw && cp .carry/cK/* /tmp/tw/).
# Then this script: carry [".carry/tx", "out/tf.tar.xz"].
set -x
bash .carry/tx/assemble.sh && source /tmp/tf-env.sh
nvidia-smi --query-gpu=name --format=csv,noheader; date
tar -C out -xJf out/tf.tar.xz
mkdir -p /tmp/tfres
PYTHONUNBUFFERED=1 timeout 480 python3 scripts/gpu/tf_ops_check.py out/tf /tmp/tfres > /tmp/tfres/tf_ops_check.log 2>&1
echo "tf_ops_check rc=$?"
grep -E "FAIL|\] pad|passed|perf dot" /tmp/tfres/tf_ops_check.log | tail -30
tar czf $OUT/tf.tgz -C /tmp tfres
