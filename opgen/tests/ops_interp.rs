//! The bundled op specs run on tritonc's CPU interpreter with the macros the
//! spec gives (float32 group, first tuning point) and arguments laid out as
//! the spec says: the masked matmuls (dot, dot_nt, dot_tn) give A B, A B^T
//! and A^T B for shapes that are not multiples of the tiles. For dot, every
//! config its `require` lines admit for a shape (as the generated op picks its
//! candidates) computes A B, and the `ALIGN = 8` configs are admitted only
//! when N, K and the leading strides are multiples of 8 (M may be anything).

use std::path::PathBuf;
use triton_opgen::read_spec;
use triton_opgen::spec::{BinOp, Expr, OpSpec};
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
    // 600 rows: more than GROUP_M (8) rows of 64-row tiles, so dot's grouped
    // program order covers a full and a partial group.
    let shapes = [
        (37, 45, 29),
        (1, 1, 1),
        (64, 32, 8),
        (70, 3, 100),
        (600, 130, 8),
    ];
    for (m, n, k) in shapes {
        let lda = if a_t { m } else { k };
        let ldb = if b_t { k } else { n };
        run_dot(name, &func, &defines, a_t, b_t, (m, n, k), (lda, ldb));
    }
}

/// Runs one compiled dot config on `(m, n, k)` with leading strides
/// `(lda, ldb)` (A and B padded to them) and checks C against a CPU matmul.
fn run_dot(
    name: &str,
    func: &tritonc::ir::Function,
    defines: &[(String, String)],
    a_t: bool,
    b_t: bool,
    (m, n, k): (usize, usize, usize),
    (lda, ldb): (usize, usize),
) {
    {
        let a_rows = if a_t { k } else { m };
        let b_rows = if b_t { n } else { k };
        let (a, b) = (data(a_rows * lda, 5), data(b_rows * ldb, 6));
        // Row-major as torch lays them out: A [M, K] or [K, M], B [K, N] or [N, K].
        let at = |i: usize, l: usize| if a_t { a[l * lda + i] } else { a[i * lda + l] };
        let bt = |l: usize, j: usize| if b_t { b[j * ldb + l] } else { b[l * ldb + j] };
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
        let grid = spec_grid(name, defines, (m, n, k), (lda, ldb));
        run(func, grid, &args, &mut mem).unwrap_or_else(|e| panic!("{name} {m}x{n}x{k}: {e:?}"));
        let c: Vec<f32> = mem.read(pc, m * n).unwrap();
        for i in 0..m {
            for j in 0..n {
                let want: f32 = (0..k).map(|l| at(i, l) * bt(l, j)).sum();
                let got = c[i * n + j];
                assert!(
                    (got - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "{name} {m}x{n}x{k} lda={lda} ldb={ldb} {defines:?} ({i}, {j}): {got} vs {want}"
                );
            }
        }
    }
}

#[test]
fn dot_multiplies_any_shape() {
    check_dot("dot", false, false);
}

/// The launch grid the op's spec gives for these inputs and macros.
fn spec_grid(
    name: &str,
    defines: &[(String, String)],
    (m, n, k): (usize, usize, usize),
    (lda, ldb): (usize, usize),
) -> [u32; 3] {
    let (spec, _) = read_spec(&op_path(name)).unwrap();
    let value = |v: &str| match v {
        "M" => m as i64,
        "N" => n as i64,
        "K" => k as i64,
        _ => macro_value(defines, v) as i64,
    };
    let mut grid = [1u32; 3];
    for (axis, dim) in spec.grid.iter().enumerate() {
        grid[axis] = eval_with_strides(&dim.value, &value, lda as i64, ldb as i64) as u32;
    }
    grid
}

/// The value of a `require` side or a grid axis for these inputs; `stride(a, 0)` and
/// `stride(b, 0)` are the leading strides (the op's output is dense).
fn eval_with_strides(e: &Expr, value: &dyn Fn(&str) -> i64, lda: i64, ldb: i64) -> i64 {
    let go = |e: &Expr| eval_with_strides(e, value, lda, ldb);
    match e {
        Expr::Int(v, _) => *v,
        Expr::Name(n, _) => value(n),
        Expr::Neg(inner, _) => -go(inner),
        Expr::Bin(op, l, r) => {
            let (l, r) = (go(l), go(r));
            match op {
                BinOp::Add => l + r,
                BinOp::Sub => l - r,
                BinOp::Mul => l * r,
                BinOp::Div => l / r,
            }
        }
        Expr::Call(f, args, _) => match (f.as_str(), &args[0]) {
            ("cdiv", x) => (go(x) + go(&args[1]) - 1) / go(&args[1]),
            ("stride", Expr::Name(t, _)) if t == "a" => lda,
            ("stride", Expr::Name(t, _)) if t == "b" => ldb,
            other => panic!("the test does not evaluate {other:?}"),
        },
    }
}

/// Every tuning point of the float32 group (dtype and fixed macros included)
/// whose `require` lines hold for these inputs: the op's candidates.
fn candidates(
    spec: &OpSpec,
    (m, n, k): (usize, usize, usize),
    (lda, ldb): (usize, usize),
) -> Vec<Vec<(String, String)>> {
    let mut points: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for t in &spec.tune {
        points = points
            .into_iter()
            .flat_map(|p| {
                t.values.iter().map(move |v| {
                    let mut next = p.clone();
                    next.push((t.name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    let mut fixed: Vec<(String, String)> = spec.dtypes[0].choices[0].macros.clone();
    for d in &spec.defines {
        fixed.push((d.name.clone(), d.values[0].clone()));
    }
    points
        .into_iter()
        .filter(|point| {
            let value = |name: &str| match name {
                "M" => m as i64,
                "N" => n as i64,
                "K" => k as i64,
                _ => macro_value(point, name) as i64,
            };
            spec.requires.iter().all(|r| {
                let l = eval_with_strides(&r.left, &value, lda as i64, ldb as i64);
                let rv = eval_with_strides(&r.right, &value, lda as i64, ldb as i64);
                match r.cmp {
                    "==" => l == rv,
                    "!=" => l != rv,
                    "<=" => l <= rv,
                    "<" => l < rv,
                    ">=" => l >= rv,
                    ">" => l > rv,
                    other => panic!("unknown comparison {other}"),
                }
            })
        })
        .map(|point| fixed.iter().cloned().chain(point).collect())
        .collect()
}

/// `defines` with `name` set to `value`.
fn with_macro(defines: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    defines
        .iter()
        .map(|(n, v)| {
            let v = if n == name { value } else { v };
            (n.clone(), v.to_string())
        })
        .collect()
}

/// Runs every candidate the requires admit for the shape; returns the ALIGN
/// values of the candidates. Candidates with ALIGN > 1 also run with the
/// float16 K tile (TK_DIV = 64), so the masks of the wgmma configs are checked.
fn check_dot_candidates((m, n, k): (usize, usize, usize), (lda, ldb): (usize, usize)) -> Vec<u32> {
    let (spec, source) = read_spec(&op_path("dot")).unwrap();
    let half_tk = spec.dtypes[0]
        .choices
        .iter()
        .find(|c| c.dtype == "float16")
        .and_then(|c| c.macros.iter().find(|(n, _)| n == "TK_DIV"))
        .map(|(_, v)| v.clone())
        .expect("float16 defines TK_DIV");
    let chosen = candidates(&spec, (m, n, k), (lda, ldb));
    assert!(!chosen.is_empty(), "no candidate for {m}x{n}x{k}");
    let mut aligns = Vec::new();
    for defines in chosen {
        let align = macro_value(&defines, "ALIGN");
        aligns.push(align);
        let mut runs = vec![defines.clone()];
        if align > 1 {
            runs.push(with_macro(&defines, "TK_DIV", &half_tk));
        }
        for d in runs {
            let lowered = lower(&source, &d, &[]).unwrap_or_else(|e| panic!("{e}"));
            let func = &lowered.module.functions[0];
            run_dot("dot", func, &d, false, false, (m, n, k), (lda, ldb));
        }
    }
    aligns
}

#[test]
fn dot_odd_shapes_run_only_unaligned_configs() {
    let aligns = check_dot_candidates((37, 45, 29), (29, 45));
    assert!(aligns.iter().all(|&a| a == 1), "{aligns:?}");
    // One thing off at a time: K, then A's leading stride (A is a column
    // slice), then B's, then N.
    for (shape, strides) in [
        ((32, 16, 20), (20, 16)),
        ((32, 16, 32), (36, 16)),
        ((32, 16, 32), (32, 20)),
        ((32, 12, 32), (32, 16)),
    ] {
        let aligns = check_dot_candidates(shape, strides);
        assert!(
            aligns.iter().all(|&a| a == 1),
            "{shape:?} {strides:?}: {aligns:?}"
        );
    }
}

#[test]
fn dot_aligned_shapes_also_run_aligned_configs() {
    // K = 40 is not a multiple of the float16 K tile (64): the K mask matters.
    let aligns = check_dot_candidates((48, 80, 40), (40, 80));
    assert!(aligns.contains(&8) && aligns.contains(&1), "{aligns:?}");
    // Leading strides wider than the rows (slices of wider tensors).
    let aligns = check_dot_candidates((16, 32, 16), (24, 48));
    assert!(aligns.contains(&8), "{aligns:?}");
    // M is free: 37 rows still take the aligned configs (the row mask).
    let aligns = check_dot_candidates((37, 24, 16), (16, 24));
    assert!(aligns.contains(&8), "{aligns:?}");
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
