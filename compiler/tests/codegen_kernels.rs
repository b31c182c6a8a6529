//! Compiles hand-built kernels for sm_80 and sm_90, assembles the PTX with
//! ptxas, and checks the PTX for the instructions each kernel must use.
mod common;

use common::check_ptxas;
use common::kernels::*;
use tritonc::codegen::{compile, Arch, CodegenOptions, CompiledKernel};
use tritonc::ir::{DType, Function};

fn build(func: &Function, name: &str, num_warps: u32) -> Vec<CompiledKernel> {
    // The hand-built kernels must be valid IR first.
    tritonc::ir::verifier::verify_function(func)
        .unwrap_or_else(|e| panic!("{name} is not valid IR: {e:?}"));
    [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")]
        .into_iter()
        .map(|(arch, arch_name)| {
            let k = compile(
                func,
                &CodegenOptions {
                    arch,
                    num_warps,
                    num_stages: None,
                    split_k: None,
                    tma: false,
                    tma_multicast: false,
                    warp_specialize: false,
                    misaligned_runs: false,
                },
            )
            .unwrap_or_else(|e| panic!("{name} for {arch_name}: {e}"));
            check_ptxas(&k.ptx, arch_name, name);
            k
        })
        .collect()
}

#[test]
fn add_f32_1024_uses_128_bit_accesses() {
    let ks = build(&vector_add(DType::F32, 1024, false, None), "add_f32", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("ld.global.v4"), "{ptx}");
    assert!(ptx.contains("st.global.v4"), "{ptx}");
    assert!(ptx.contains(".target sm_80"));
    assert!(ks[1].ptx.contains(".target sm_90"));
    assert!(ptx.contains(".maxntid 128"), "{ptx}");
    assert_eq!(ks[0].shared_bytes, 0);
}

#[test]
fn add_f16_128() {
    let ks = build(&vector_add(DType::F16, 128, false, None), "add_f16", 4);
    assert!(ks[0].ptx.contains("ld.global"), "{}", ks[0].ptx);
}

#[test]
fn add_masked_tail_predicates_loads_and_stores() {
    let ks = build(&vector_add(DType::F32, 1024, true, None), "add_masked", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("@%p"), "{ptx}");
    // With n a multiple of 16 the mask is constant over 4 elements: vectorized.
    let ks = build(
        &vector_add(DType::F32, 1024, true, Some(16)),
        "add_masked16",
        4,
    );
    assert!(ks[0].ptx.contains("ld.global.v4.b32"), "{}", ks[0].ptx);
    assert!(ks[0].ptx.contains("st.global.v4.b32"), "{}", ks[0].ptx);
    build(
        &vector_add(DType::F16, 128, true, None),
        "add_f16_masked",
        4,
    );
}

#[test]
fn small_tile_add_stores_from_owners_only() {
    // 64 elements over 128 threads: replicas must not store.
    let ks = build(&vector_add(DType::F32, 64, false, None), "add_small", 4);
    assert!(ks[0].ptx.contains("st.global"), "{}", ks[0].ptx);
}

#[test]
fn transpose_stages_through_shared_memory() {
    let ks = build(&transpose(DType::F32, 32), "transpose", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("st.shared"), "{ptx}");
    assert!(ptx.contains("ld.shared"), "{ptx}");
    assert!(ptx.contains("bar.sync"), "{ptx}");
    // The whole tile (swizzled, not padded).
    assert!(ks[0].shared_bytes >= 32 * 32 * 4);
    build(&transpose(DType::F16, 32), "transpose_f16", 4);
}

#[test]
fn softmax_reduces_with_shuffles() {
    let ks = build(&softmax(4, 256), "softmax", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("shfl.sync.bfly"), "{ptx}");
    assert!(ptx.contains("ex2.approx"), "{ptx}");
}

#[test]
fn row_and_column_sums() {
    let rows = build(&tile_sum(1, 32, 32), "row_sum", 4);
    assert!(rows[0].ptx.contains("shfl.sync.bfly"), "{}", rows[0].ptx);
    let cols = build(&tile_sum(0, 32, 32), "col_sum", 4);
    let ptx = &cols[0].ptx;
    // Rows are spread over warps: the column sums cross warps through shared memory.
    assert!(ptx.contains("bar.sync"), "{ptx}");
    assert!(ptx.contains("st.shared"), "{ptx}");
    assert!(ptx.contains("shfl.sync.bfly"), "{ptx}");
}

#[test]
fn while_loop_carries_a_tile() {
    let ks = build(&while_accumulate(256), "while_acc", 4);
    assert!(ks[0].ptx.contains("ld.global.v4"), "{}", ks[0].ptx);
}

#[test]
fn dot_32x32x32() {
    let ks = build(&dot(DType::F32, 32, 32, 32), "dot_f32", 4);
    assert!(ks[0].ptx.contains("fma.rn.f32"), "{}", ks[0].ptx);
    assert!(ks[0].shared_bytes > 0);
    build(&dot(DType::F16, 32, 32, 32), "dot_f16", 4);
}

/// With `TRITONC_PTX_DUMP=<dir>`, writes every test kernel's sm_90 PTX and a
/// `manifest.json` there, for `common/gpu_codegen_check.py` on the GPU machine.
#[test]
fn dump_ptx_for_gpu_check() {
    use tritonc::ir::ReduceKind;
    let Ok(dir) = std::env::var("TRITONC_PTX_DUMP") else {
        return;
    };
    let kernels: Vec<(&str, Function)> = vec![
        ("add_f32", vector_add(DType::F32, 1024, false, None)),
        ("add_masked", vector_add(DType::F32, 1024, true, None)),
        ("add_masked16", vector_add(DType::F32, 1024, true, Some(16))),
        ("add_f16_masked", vector_add(DType::F16, 128, true, None)),
        ("add_small", vector_add(DType::F32, 64, false, None)),
        ("transpose_f32", transpose(DType::F32, 32)),
        ("transpose_f16", transpose(DType::F16, 32)),
        ("softmax", softmax(4, 256)),
        ("row_sum", tile_sum(1, 32, 32)),
        ("col_sum", tile_sum(0, 32, 32)),
        ("while_acc", while_accumulate(256)),
        ("dot_f32", dot(DType::F32, 32, 32, 32)),
        ("dot_f16", dot(DType::F16, 32, 32, 32)),
        ("matmul_f16", matmul(DType::F16, 32, 32, 16)),
        ("misc", misc()),
        ("scalar_atomic", scalar_atomic()),
        (
            "rbt_64x1_0",
            reduce_broadcast_trans(DType::F32, 64, 1, 0, ReduceKind::Sum),
        ),
        (
            "rbt_2x2_1",
            reduce_broadcast_trans(DType::F32, 2, 2, 1, ReduceKind::Max),
        ),
        (
            "rbt_8x128_0",
            reduce_broadcast_trans(DType::F32, 8, 128, 0, ReduceKind::Sum),
        ),
        (
            "rbt_64x128_1",
            reduce_broadcast_trans(DType::F32, 64, 128, 1, ReduceKind::Min),
        ),
        ("reduce3d", reduce_3d(4, 8, 16)),
        ("types_mix", types_mix()),
    ];
    std::fs::create_dir_all(&dir).expect("dump dir");
    let mut entries = Vec::new();
    for (name, func) in &kernels {
        let k = compile(
            func,
            &CodegenOptions {
                arch: Arch::Sm90,
                num_warps: 4,
                num_stages: None,
                split_k: None,
                tma: false,
                tma_multicast: false,
                warp_specialize: false,
                misaligned_runs: false,
            },
        )
        .expect("compile");
        let file = format!("{name}.ptx");
        std::fs::write(std::path::Path::new(&dir).join(&file), &k.ptx).expect("write");
        let params: Vec<_> = func
            .params
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "type": func.ty(p.value).to_string()}))
            .collect();
        entries.push(serde_json::json!({
            "name": name, "file": file, "kernel": k.name, "params": params,
            "shared_bytes": k.shared_bytes, "num_warps": k.num_warps,
        }));
    }
    std::fs::write(
        std::path::Path::new(&dir).join("manifest.json"),
        serde_json::to_string_pretty(&entries).expect("json"),
    )
    .expect("write manifest");
}

#[test]
fn bytes_bools_math_ifs_atomics_and_scalars() {
    let ks = build(&misc(), "misc", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("atom.global"), "{ptx}");
    assert!(ptx.contains("lg2.approx"), "{ptx}");
    assert!(ptx.contains("sin.approx"), "{ptx}");
}

#[test]
fn unsupported_inputs_are_errors_not_panics() {
    use tritonc::codegen::CodegenError;
    let f = vector_add(DType::F32, 100, false, None);
    let opts = CodegenOptions {
        arch: Arch::Sm80,
        num_warps: 4,
        num_stages: None,
        split_k: None,
        tma: false,
        tma_multicast: false,
        warp_specialize: false,
        misaligned_runs: false,
    };
    assert!(matches!(
        compile(&f, &opts),
        Err(CodegenError::Unsupported { .. })
    ));
    let f = vector_add(DType::F32, 128, false, None);
    let bad = CodegenOptions {
        arch: Arch::Sm80,
        num_warps: 3,
        num_stages: None,
        split_k: None,
        tma: false,
        tma_multicast: false,
        warp_specialize: false,
        misaligned_runs: false,
    };
    assert!(matches!(
        compile(&f, &bad),
        Err(CodegenError::Unsupported { .. })
    ));
    // f64 sin and cos are not lowered yet (exp, exp2, log are).
    let mut k = K::new("sin64");
    let x = k.ptr("x", DType::F64);
    let v = k.load(x, None, None);
    let e = k.unary(tritonc::ir::UnOp::Sin, v);
    k.store(x, e, None);
    assert!(matches!(
        compile(&k.finish(), &opts),
        Err(CodegenError::Unsupported { .. })
    ));
}

#[test]
fn matmul_loop_with_carried_pointer_tiles() {
    let ks = build(&matmul(DType::F16, 64, 64, 32), "matmul_f16", 4);
    // f16 dots run on tensor cores (see codegen_mma.rs).
    assert!(
        ks[0].ptx.contains("mma.sync.aligned.m16n8k16"),
        "{}",
        ks[0].ptx
    );
    build(&matmul(DType::F32, 32, 32, 8), "matmul_f32", 4);
    build(&matmul(DType::F16, 128, 128, 16), "matmul_f16_big", 8);
}

#[test]
fn other_warp_counts() {
    for warps in [1, 2, 8] {
        build(&vector_add(DType::F32, 256, true, Some(4)), "add_w", warps);
        build(&softmax(2, 128), "softmax_w", warps);
        build(&tile_sum(0, 64, 16), "col_sum_w", warps);
        build(&transpose(DType::F32, 16), "transpose_w", warps);
    }
}

#[test]
fn scalar_atomic_result_reaches_every_thread() {
    let ks = build(&scalar_atomic(), "scalar_atomic", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains("atom.global.add"), "{ptx}");
    assert!(ptx.contains("atom.global.exch"), "{ptx}");
    assert!(ptx.contains("bar.sync"), "{ptx}");
}

#[test]
fn reductions_transposes_and_broadcasts_over_many_shapes() {
    use tritonc::ir::ReduceKind;
    let shapes = [
        (8, 128),
        (128, 8),
        (1, 64),
        (64, 1),
        (16, 16),
        (2, 2),
        (64, 128),
    ];
    let kinds = [
        (DType::F32, ReduceKind::Sum),
        (DType::F16, ReduceKind::Max),
        (DType::I32, ReduceKind::Min),
    ];
    for (i, (m, n)) in shapes.into_iter().enumerate() {
        for axis in 0..2 {
            let (dtype, kind) = kinds[(i + axis) % kinds.len()];
            let f = reduce_broadcast_trans(dtype, m, n, axis, kind);
            let name = format!("rbt_{m}x{n}_{axis}_{}", dtype.name());
            build(&f, &name, 4);
        }
    }
    build(&reduce_3d(4, 8, 16), "reduce3d", 4);
    build(&reduce_3d(2, 32, 4), "reduce3d_b", 2);
}

#[test]
fn bf16_f64_i64_and_i8_dot() {
    let ks = build(&types_mix(), "types_mix", 4);
    let ptx = &ks[0].ptx;
    assert!(ptx.contains(".f64"), "{ptx}");
    assert!(
        ptx.contains("mad.lo.s32") || ptx.contains("mul.lo.s32"),
        "{ptx}"
    );
}

/// With `TRITONC_PTX_DUMP_BENCH=<dir>`, writes the sm_90 PTX of the benchmark
/// shapes (softmax of 16384-wide rows with 16 warps).
#[test]
fn dump_bench_ptx() {
    let Ok(dir) = std::env::var("TRITONC_PTX_DUMP_BENCH") else {
        return;
    };
    std::fs::create_dir_all(&dir).expect("dump dir");
    let k = compile(
        &softmax(1, 16384),
        &CodegenOptions {
            arch: Arch::Sm90,
            num_warps: 16,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    )
    .expect("compile");
    std::fs::write(std::path::Path::new(&dir).join("softmax_16384.ptx"), &k.ptx).expect("write");
    let k16 = compile(
        &softmax_with(1, 16384, Some(16)),
        &CodegenOptions {
            arch: Arch::Sm90,
            num_warps: 16,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    )
    .expect("compile");
    assert!(k16.ptx.contains("ld.global.v4.b32"), "{}", k16.ptx);
    std::fs::write(
        std::path::Path::new(&dir).join("softmax_16384_n16.ptx"),
        &k16.ptx,
    )
    .expect("write");
}

/// `exp2(x)` is the hardware's `ex2` alone, `exp(x)` the same after one
/// multiply by log2(e); both flush results below 2^-126 to zero (`.ftz`), so
/// ptxas adds no compare and multiplies around them for subnormals.
#[test]
fn exp2_is_one_ex2_and_exp_one_multiply_more() {
    for (op, multiplies) in [(tritonc::ir::UnOp::Exp2, 0), (tritonc::ir::UnOp::Exp, 1)] {
        let mut k = K::new("exp");
        let x = k.ptr("x", DType::F32);
        let v = k.load(x, None, None);
        let e = k.unary(op, v);
        k.store(x, e, None);
        let ks = build(&k.finish(), &format!("{op:?}"), 4);
        let ptx = &ks[0].ptx;
        assert_eq!(ptx.matches("ex2.approx.ftz.f32").count(), 1, "{ptx}");
        assert_eq!(ptx.matches("ex2.approx.f32").count(), 0, "{ptx}");
        assert_eq!(
            ptx.matches("mul.f32").count() + ptx.matches("mul.rn.f32").count(),
            multiplies,
            "{ptx}"
        );
    }
}

/// float64 `exp`, `exp2` and `log` are computed in double precision in
/// software (fused multiply-adds, no `.approx` instruction, which is f32);
/// scripts/gpu/f64_math_check.py measures them within 1 ulp on an H100.
#[test]
fn f64_transcendentals_run_in_double_precision() {
    for op in [
        tritonc::ir::UnOp::Exp,
        tritonc::ir::UnOp::Exp2,
        tritonc::ir::UnOp::Log,
    ] {
        let mut k = K::new("math64");
        let x = k.ptr("x", DType::F64);
        let v = k.load(x, None, None);
        let e = k.unary(op, v);
        k.store(x, e, None);
        let ks = build(&k.finish(), &format!("{op:?}_f64"), 4);
        let ptx = &ks[0].ptx;
        assert!(!ptx.contains(".approx"), "{op:?}: {ptx}");
        assert!(ptx.matches("fma.rn.f64").count() >= 9, "{op:?}: {ptx}");
    }
}
