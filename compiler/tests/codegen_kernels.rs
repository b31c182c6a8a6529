//! Compiles hand-built kernels for sm_80 and sm_90, assembles the PTX with
//! ptxas, and checks the PTX for the instructions each kernel must use.
mod common;

use common::check_ptxas;
use common::kernels::*;
use tritonc::codegen::{compile, Arch, CodegenOptions, CompiledKernel};
use tritonc::ir::{DType, Function};

fn build(func: &Function, name: &str, num_warps: u32) -> Vec<CompiledKernel> {
    [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")]
        .into_iter()
        .map(|(arch, arch_name)| {
            let k = compile(func, &CodegenOptions { arch, num_warps })
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
    assert!(ks[0].shared_bytes >= 32 * 33 * 4);
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
