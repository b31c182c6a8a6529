# The landed copy_fill build end to end (torch pad_check, odd_n_paths, the copy_fill probe; ONNX
# Runtime gpu_check and pad_timing): ../2026-12-07h-h100-copy-fill/final/run.sh, its results packed
# into one file ($OUT returns at most 8). Carry out/torch.tar.xz, out/padall.tar.xz,
# out/lrnew.tar.xz and out/ortgpu.tar.xz (made as that script says).
R=$OUT
export OUT=/tmp/res
mkdir -p $OUT
bash bench/results/2026-12-07h-h100-copy-fill/final/run.sh > $OUT/run.log 2>&1
tail -40 $OUT/run.log
tar czf $R/torch_ort.tgz -C /tmp res
