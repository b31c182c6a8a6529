# TensorFlow ops on the GPU, the `pad` line included (scripts/gpu/tf_ops_check.py: values, pad,
# gradient, tf.function, errors, stream order, timings), results packed into one file.
# Prepare here: bash scripts/gpu/tf_ops_prepare.sh (out/tf.tar.xz) and
# bash ../shared/tools/tf-gpu-bundle.sh, then re-split the wheel to fit beside the tree (the
# tracked tree is ~32 MB of the 64 MiB a call carries, so 60 MB chunks no longer fit):
#   cd .carry && cat $(ls t*/tfpart* | sort -t/ -k2) > /tmp/w && rm -rf t[0-9]* &&
#   split -b 33000000 -d -a 2 /tmp/w tfpart && i=0 && for p in tfpart*; do mkdir c$i; mv $p c$i/; i=$((i+1)); done
# Then one device call per chunk but the last, back to back (a machine goes back 30 s after a call):
#   carry [".carry/cK"], command: mkdir -p /tmp/tw && cp .carry/cK/* /tmp/tw/
# and this script with the last chunk: carry [".carry/cLAST", ".carry/tx", "out/tf.tar.xz"].
set -x
last=$(ls -d .carry/c* | sort -V | tail -1)
mkdir -p /tmp/tw && cp $last/* /tmp/tw/
bash .carry/tx/assemble.sh && source /tmp/tf-env.sh
nvidia-smi --query-gpu=name --format=csv,noheader; date
tar -C out -xJf out/tf.tar.xz
mkdir -p /tmp/tfres
PYTHONUNBUFFERED=1 timeout 480 python3 scripts/gpu/tf_ops_check.py out/tf /tmp/tfres > /tmp/tfres/tf_ops_check.log 2>&1
echo "tf_ops_check rc=$?"
grep -E "FAIL|\] pad|passed|perf dot" /tmp/tfres/tf_ops_check.log | tail -30
tar czf $OUT/tf.tgz -C /tmp tfres
