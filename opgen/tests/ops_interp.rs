//! The bundled op specs run on tritonc's CPU interpreter with the macros the
//! spec gives (float32 group, first tuning point) and arguments laid out as
//! the spec says: the masked matmuls (dot, dot_nt, dot_tn) give A B, A B^T
//! and A^T B for shapes that are not multiples of the tiles.

use std::path::PathBuf;
use triton_opgen::read_spec;
use tritonc::driver::lower;
use tritonc::interp::{run, ArgValue, Memory};

fn op_path(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../tests/ops/{name}.tc",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// The float32 variant at the first point of the tuning space.
fn lower_float32(name: &str) -> (tritonc::ir::Function, Vec<(String, String)>) {
    let (spec, source) = read_spec(&op_path(name)).unwrap();
    let mut defines: Vec<(String, String)> = spec.dtypes[0].choices[0].macros.clone();
    for m in spec.defines.iter().chain(spec.tune.iter()) {
        defines.push((m.name.clone(), m.values[0].clone()));
    }
    let lowered = lower(&source, &defines, &[]).unwrap_or_else(|e| panic!("{e}"));
    (lowered.module.functions[0].clone(), defines)
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 200) as f32 / 50.0
                - 2.0
        })
        .collect()
}

fn macro_value(defines: &[(String, String)], name: &str) -> u32 {
    defines
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.parse().unwrap())
        .unwrap()
}

/// Runs one of the dot ops: `a_t`/`b_t` say whether the op reads A/B
/// transposed (A is [K, M], B is [N, K]).
fn check_dot(name: &str, a_t: bool, b_t: bool) {
    let (func, defines) = lower_float32(name);
    let (tm, tn) = (macro_value(&defines, "TM"), macro_value(&defines, "TN"));
    for (m, n, k) in [
        (37usize, 45usize, 29usize),
        (1, 1, 1),
        (64, 32, 8),
        (70, 3, 100),
    ] {
        let (a, b) = (data(m * k, 5), data(k * n, 6));
        // Row-major as torch lays them out: A [M, K] or [K, M], B [K, N] or [N, K].
        let at = |i: usize, l: usize| if a_t { a[l * m + i] } else { a[i * k + l] };
        let bt = |l: usize, j: usize| if b_t { b[j * k + l] } else { b[l * n + j] };
        let lda = if a_t { m } else { k };
        let ldb = if b_t { k } else { n };
        let mut mem = Memory::new();
        let (pa, pb, pc) = (
            mem.alloc_slice(&a),
            mem.alloc_slice(&b),
            mem.alloc_slice(&vec![f32::NAN; m * n]),
        );
        let args: Vec<ArgValue> = [pa, pb, pc]
            .into_iter()
            .map(ArgValue::Ptr)
            .chain(
                [m, n, k, lda, ldb, n]
                    .into_iter()
                    .map(|v| ArgValue::Int(v as i64)),
            )
            .collect();
        let grid = [(m as u32).div_ceil(tm), (n as u32).div_ceil(tn), 1];
        run(&func, grid, &args, &mut mem).unwrap_or_else(|e| panic!("{name} {m}x{n}x{k}: {e:?}"));
        let c: Vec<f32> = mem.read(pc, m * n).unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: f32 = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
                let got = c[i * n + j];
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "{name} {m}x{n}x{k} ({i}, {j}): {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn dot_multiplies_any_shape() {
    check_dot("dot", false, false);
}

#[test]
fn dot_nt_multiplies_by_b_transposed() {
    check_dot("dot_nt", false, true);
}

#[test]
fn dot_tn_multiplies_a_transposed() {
    check_dot("dot_tn", true, false);
}

#[test]
fn add_spec_masks_the_tail() {
    let (func, defines) = lower_float32("add");
    let size = macro_value(&defines, "SIZE");
    let n = 1000usize;
    let (x, y) = (data(n, 1), data(n, 2));
    let mut mem = Memory::new();
    let (px, py, pz) = (
        mem.alloc_slice(&x),
        mem.alloc_slice(&y),
        mem.alloc_slice(&vec![0f32; n]),
    );
    let args = [
        ArgValue::Int(n as i64),
        ArgValue::Ptr(px),
        ArgValue::Ptr(py),
        ArgValue::Ptr(pz),
    ];
    run(&func, [(n as u32).div_ceil(size), 1, 1], &args, &mut mem).unwrap();
    let z: Vec<f32> = mem.read(pz, n).unwrap();
    for i in 0..n {
        assert_eq!(z[i], x[i] + y[i], "{i}");
    }
}
