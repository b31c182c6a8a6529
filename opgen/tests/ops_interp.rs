//! The bundled op specs run on tritonc's CPU interpreter with the macros the
//! spec gives (float32 group, first tuning point) and arguments laid out as
//! the spec says: the masked matmuls (dot, dot_nt, dot_tn) give A B, A B^T
//! and A^T B for shapes that are not multiples of the tiles. For dot, every
//! config its `require` lines admit for a shape (as the generated op picks its
//! candidates) computes A B, and the `ALIGN = 8` configs are admitted only
//! when N, K and the leading strides are multiples of 8 (M may be anything). The bfloat16
//! group of the dots reads and writes bf16 (inputs rounded to it, C rounded
//! once from the f32 accumulator).

mod dot_support;

use dot_support::{candidates, eval_with_strides, macro_value, op_path};
use half::bf16;
use triton_opgen::read_spec;
use triton_opgen::spec::OpSpec;
use tritonc::driver::lower;
use tritonc::interp::{run, ArgValue, Memory};

/// The macros of one dtype of the spec's dtype line (`float32`, `bfloat16`).
fn dtype_macros(spec: &OpSpec, dtype: &str) -> Vec<(String, String)> {
    spec.dtypes[0]
        .choices
        .iter()
        .find(|c| c.dtype == dtype)
        .unwrap_or_else(|| panic!("{} has no {dtype}", spec.name))
        .macros
        .clone()
}

/// The float32 variant at the first point of the tuning space.
fn lower_float32(name: &str) -> (tritonc::ir::Function, Vec<(String, String)>) {
    lower_first_point(name, "float32")
}

/// The `dtype` variant at the first point of the tuning space.
fn lower_first_point(name: &str, dtype: &str) -> (tritonc::ir::Function, Vec<(String, String)>) {
    let (spec, source) = read_spec(&op_path(name)).unwrap();
    let mut defines = dtype_macros(&spec, dtype);
    for m in spec.defines.iter().chain(spec.tune.iter()) {
        defines.push((m.name.clone(), m.values[0].clone()));
    }
    let lowered = lower(&source, &defines, &[]).unwrap_or_else(|e| panic!("{e}"));
    (lowered.module.functions[0].clone(), defines)
}

/// What a dot config reads and writes (its `TYPE` macro).
#[derive(Clone, Copy, Debug)]
enum Elem {
    F32,
    Bf16,
}

impl Elem {
    fn of(defines: &[(String, String)]) -> Elem {
        match defines
            .iter()
            .find(|(n, _)| n == "TYPE")
            .map(|(_, v)| v.as_str())
        {
            Some("float") => Elem::F32,
            Some("bf16") => Elem::Bf16,
            other => panic!("no test element type for TYPE = {other:?}"),
        }
    }

    fn round(self, x: f32) -> f32 {
        match self {
            Elem::F32 => x,
            Elem::Bf16 => bf16::from_f32(x).to_f32(),
        }
    }

    fn alloc(self, mem: &mut Memory, data: &[f32]) -> u64 {
        match self {
            Elem::F32 => mem.alloc_slice(data),
            Elem::Bf16 => {
                mem.alloc_bf16(&data.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>())
            }
        }
    }

    fn read(self, mem: &Memory, addr: u64, len: usize) -> Vec<f32> {
        match self {
            Elem::F32 => mem.read(addr, len).unwrap(),
            Elem::Bf16 => mem
                .read_bf16(addr, len)
                .unwrap()
                .iter()
                .map(|x| x.to_f32())
                .collect(),
        }
    }

    /// Sums in another order round differently: one ulp of bf16 (2^-8
    /// relative) either way, a little for f32.
    fn tolerance(self, want: f32) -> f32 {
        match self {
            Elem::F32 => 1e-4 * (1.0 + want.abs()),
            Elem::Bf16 => (1.0 + want.abs()) / 128.0,
        }
    }
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| {
            (((i as u32).wrapping_mul(2654435761).wrapping_add(seed) >> 16) % 200) as f32 / 50.0
                - 2.0
        })
        .collect()
}

/// Runs one of the dot ops: `a_t`/`b_t` say whether the op reads A/B
/// transposed (A is [K, M], B is [N, K]).
fn check_dot(name: &str, a_t: bool, b_t: bool) {
    check_dot_dtype(name, "float32", a_t, b_t);
}

fn check_dot_dtype(name: &str, dtype: &str, a_t: bool, b_t: bool) {
    let (func, defines) = lower_first_point(name, dtype);
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
        run_dot(name, &func, None, &defines, a_t, b_t, (m, n, k), (lda, ldb));
    }
}

/// Runs one compiled dot config on `(m, n, k)` with leading strides
/// `(lda, ldb)` (A and B padded to them) and checks C against a CPU matmul
/// of the inputs as the config's element type holds them.
#[allow(clippy::too_many_arguments)]
fn run_dot(
    name: &str,
    func: &tritonc::ir::Function,
    unsplit: Option<&tritonc::ir::Function>,
    defines: &[(String, String)],
    a_t: bool,
    b_t: bool,
    (m, n, k): (usize, usize, usize),
    (lda, ldb): (usize, usize),
) {
    let elem = Elem::of(defines);
    {
        let a_rows = if a_t { k } else { m };
        let b_rows = if b_t { n } else { k };
        let rounded = |v: Vec<f32>| -> Vec<f32> { v.into_iter().map(|x| elem.round(x)).collect() };
        let (a, b) = (
            rounded(data(a_rows * lda, 5)),
            rounded(data(b_rows * ldb, 6)),
        );
        // Row-major as torch lays them out: A [M, K] or [K, M], B [K, N] or [N, K].
        let at = |i: usize, l: usize| if a_t { a[l * lda + i] } else { a[i * lda + l] };
        let bt = |l: usize, j: usize| if b_t { b[j * ldb + l] } else { b[l * ldb + j] };
        let tiles = spec_grid(name, defines, (m, n, k), (lda, ldb));
        for launches in split_schedules(func.cluster_splits(), tiles, unsplit.is_some()) {
            let mut mem = Memory::new();
            let (pa, pb, pc) = (
                elem.alloc(&mut mem, &a),
                elem.alloc(&mut mem, &b),
                elem.alloc(&mut mem, &vec![f32::NAN; m * n]),
            );
            for (split, grid, extra) in &launches {
                let args: Vec<ArgValue> = [pa, pb, pc]
                    .into_iter()
                    .map(ArgValue::Ptr)
                    .chain(
                        [m, n, k, lda, ldb, n]
                            .into_iter()
                            .map(|v| ArgValue::Int(v as i64)),
                    )
                    .chain(extra.iter().map(|&v| ArgValue::Int(v)))
                    .collect();
                let kernel = match (split, unsplit) {
                    (false, Some(whole)) => whole,
                    _ => func,
                };
                run(kernel, *grid, &args, &mut mem)
                    .unwrap_or_else(|e| panic!("{name} {m}x{n}x{k} launches {launches:?}: {e:?}"));
            }
            let c = elem.read(&mem, pc, m * n);
            for i in 0..m {
                for j in 0..n {
                    let want = elem.round((0..k).map(|l| at(i, l) * bt(l, j)).sum());
                    let got = c[i * n + j];
                    assert!(
                        (got - want).abs() <= elem.tolerance(want),
                        "{name} {m}x{n}x{k} lda={lda} ldb={ldb} launches {launches:?} \
                         {defines:?} ({i}, {j}): {got} vs {want}"
                    );
                }
            }
        }
    }
}

#[test]
fn dot_multiplies_any_shape() {
    check_dot("dot", false, false);
}

/// dot's `ALIGN = align` config after the `split-k` pass (sm_90, `splits`
/// programs per tile), and before it (its unsplit sibling).
fn split_dot(
    dtype: &str,
    splits: u32,
    align: &str,
) -> (
    tritonc::ir::Function,
    tritonc::ir::Function,
    Vec<(String, String)>,
) {
    use tritonc::passes::manager::PassManager;
    use tritonc::passes::options::{PassOptions, Target};
    let (spec, source) = read_spec(&op_path("dot")).unwrap();
    let mut defines = dtype_macros(&spec, dtype);
    for m in spec.defines.iter().chain(spec.tune.iter()) {
        defines.push((m.name.clone(), m.values[0].clone()));
    }
    let defines = with_macro(&defines, "ALIGN", align);
    let defines = with_macro(&defines, "SPLIT_K", &splits.to_string());
    let plain = lower(&source, &defines, &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .module
        .functions[0]
        .clone();
    let mut func = plain.clone();
    let target = Target {
        arch: tritonc::codegen::Arch::Sm90,
        num_warps: 4,
        num_stages: None,
        split_k: Some(splits),
        tma: false,
        tma_multicast: false,
        warp_specialize: false,
        misaligned_runs: false,
    };
    let options = PassOptions::all().with_target(target);
    PassManager::only("split-k", options)
        .unwrap()
        .run(&mut func, &mut |_| {})
        .unwrap();
    assert_eq!(func.cluster_splits(), splits, "split-k did not split dot");
    (func, plain, defines)
}

/// Each split of `cases` (dtype, programs) of dot's `ALIGN = align` config
/// sums its programs to the product on every shape.
fn check_split_dot(align: &str, cases: &[(&str, u32)], shapes: &[(usize, usize, usize)]) {
    for &(dtype, splits) in cases {
        let (func, plain, defines) = split_dot(dtype, splits, align);
        for &(m, n, k) in shapes {
            run_dot(
                "dot",
                &func,
                Some(&plain),
                &defines,
                false,
                false,
                (m, n, k),
                (k, n),
            );
        }
    }
}

/// The unaligned variants split too (their loop without the register
/// pre-fetch): odd N and K, which only they take.
#[test]
fn unaligned_split_k_dot_sums_its_programs_on_odd_shapes() {
    check_split_dot(
        "1",
        &[("bfloat16", 2), ("float32", 4)],
        &[(37, 45, 41), (1, 17, 9), (70, 23, 203), (3, 130, 67)],
    );
}

#[test]
fn split_k_dot_sums_its_programs_on_any_shape() {
    // K from one step (most programs get no iteration) to many (every
    // program several, the last ones one fewer); M and N off the tiles.
    check_split_dot(
        "8",
        &[
            ("float32", 4),
            ("float32", 3),
            ("bfloat16", 2),
            ("float32", 8),
        ],
        &[
            (37, 48, 40),
            (1, 16, 8),
            (70, 24, 200),
            (130, 8, 64),
            (200, 100, 72),
        ],
    );
}

#[test]
fn split_k_dot_needs_its_programs_along_z() {
    let (func, _, defines) = split_dot("float32", 4, "8");
    let (m, n, k) = (8, 8, 16);
    let mut mem = Memory::new();
    let elem = Elem::of(&defines);
    let ptrs: Vec<ArgValue> = [m * k, k * n, m * n]
        .into_iter()
        .map(|len| ArgValue::Ptr(elem.alloc(&mut mem, &vec![1.0; len])))
        .collect();
    let args: Vec<ArgValue> = ptrs
        .into_iter()
        .chain(
            [m, n, k, k, n, n, 0]
                .into_iter()
                .map(|v| ArgValue::Int(v as i64)),
        )
        .collect();
    let grid = spec_grid("dot", &defines, (m, n, k), (k, n));
    let err = run(&func, grid, &args, &mut mem).unwrap_err();
    assert!(
        err.message.contains("needs a grid of 4 along axis 2"),
        "{}",
        err.message
    );
}

/// The launches (split or not, grid, added arguments) a kernel of
/// `splits` programs per tile is checked with for the op's grid `tiles`
/// (x tiles), as the runtime launches it: the unsplit sibling over the
/// first `W` tiles, then the split kernel over the rest (`split_tile =
/// W`); for W = 0 (every tile split) and, with a sibling, about half the
/// tiles and all but one. A kernel without splits: its grid.
fn split_schedules(
    splits: u32,
    tiles: [u32; 3],
    sibling: bool,
) -> Vec<Vec<(bool, [u32; 3], Vec<i64>)>> {
    if splits == 1 {
        return vec![vec![(false, tiles, Vec::new())]];
    }
    let mut wholes = vec![0];
    if sibling {
        wholes.extend([tiles[0] / 2, tiles[0] - 1]);
    }
    wholes.dedup();
    wholes
        .into_iter()
        .map(|whole| {
            let mut launches = Vec::new();
            if whole > 0 {
                launches.push((false, [whole, tiles[1], 1], Vec::new()));
            }
            launches.push((
                true,
                [tiles[0] - whole, tiles[1], splits],
                vec![whole as i64],
            ));
            launches
        })
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
            run_dot("dot", func, None, &d, false, false, (m, n, k), (lda, ldb));
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
fn dot_deep_unaligned_k_step_multiplies_odd_shapes() {
    // KX = 4: the square unaligned tile steps 4 TK along K (float32: 32;
    // the generated op offers it on 64x64 tiles), its loads masked past K,
    // in float32 and bfloat16 (64 deep), K shorter than, equal to, and past
    // one step.
    let (spec, source) = read_spec(&op_path("dot")).unwrap();
    for dtype in ["float32", "bfloat16"] {
        for (shape, strides) in [
            ((37, 45, 29), (29, 45)),
            ((65, 63, 64), (64, 63)),
            ((70, 65, 131), (131, 65)),
        ] {
            let deep: Vec<_> = candidates(&spec, shape, strides)
                .into_iter()
                .filter(|d| {
                    [
                        ("KX", 4),
                        ("TM", 64),
                        ("TN", 64),
                        ("SPLIT_K", 1),
                        ("TMA", 0),
                    ]
                    .iter()
                    .all(|&(name, v)| macro_value(d, name) == v)
                })
                .collect();
            assert_eq!(deep.len(), 1, "{shape:?}: {deep:?}");
            let mut defines = deep[0].clone();
            for (name, value) in dtype_macros(&spec, dtype) {
                defines = with_macro(&defines, &name, &value);
            }
            let lowered = lower(&source, &defines, &[]).unwrap_or_else(|e| panic!("{e}"));
            let func = &lowered.module.functions[0];
            run_dot("dot", func, None, &defines, false, false, shape, strides);
        }
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
fn dots_multiply_in_bfloat16() {
    check_dot_dtype("dot", "bfloat16", false, false);
    check_dot_dtype("dot_nt", "bfloat16", false, true);
    check_dot_dtype("dot_tn", "bfloat16", true, false);
}

#[test]
fn dot_bfloat16_aligned_configs_multiply() {
    // The ALIGN = 8 candidates with the bfloat16 macros (the K tile of 64
    // that runs on wgmma on sm_90a), K a multiple of the tile or not.
    let (spec, source) = read_spec(&op_path("dot")).unwrap();
    let bf = dtype_macros(&spec, "bfloat16");
    for (shape, strides) in [((48, 80, 48), (48, 80)), ((32, 64, 128), (128, 64))] {
        let aligned: Vec<_> = candidates(&spec, shape, strides)
            .into_iter()
            .filter(|d| macro_value(d, "ALIGN") == 8)
            .collect();
        assert!(!aligned.is_empty(), "{shape:?}");
        for defines in aligned {
            let d = bf.iter().fold(defines, |d, (n, v)| with_macro(&d, n, v));
            assert_eq!(macro_value(&d, "TK_DIV"), 64);
            let lowered = lower(&source, &d, &[]).unwrap_or_else(|e| panic!("{e}"));
            let func = &lowered.module.functions[0];
            run_dot("dot", func, None, &d, false, false, shape, strides);
        }
    }
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

/// examples/scale_shift.tc: y = max(alpha x + beta, 0 if relu), its float
/// and bool attributes passed as the kernel's float and int parameters.
#[test]
fn scale_shift_takes_its_attributes() {
    let path = op_path("add").with_file_name("../../examples/scale_shift.tc");
    let (spec, source) = read_spec(&path).unwrap();
    let names: Vec<(&str, &str)> = spec
        .attrs
        .iter()
        .map(|a| (a.name.as_str(), a.ty.name()))
        .collect();
    assert_eq!(
        names,
        [("alpha", "float"), ("beta", "float"), ("relu", "bool")]
    );
    let mut defines = dtype_macros(&spec, "float32");
    defines.push(("SIZE".into(), spec.tune[0].values[0].clone()));
    let func = lower(&source, &defines, &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .module
        .functions[0]
        .clone();
    let n = 1000usize;
    let x = data(n, 3);
    for relu in [0i64, 1] {
        let mut mem = Memory::new();
        let (px, py) = (mem.alloc_slice(&x), mem.alloc_slice(&vec![7f32; n]));
        let args = [
            ArgValue::Int(n as i64),
            ArgValue::Ptr(px),
            ArgValue::Ptr(py),
            ArgValue::Float(2.0),
            ArgValue::Float(-0.5),
            ArgValue::Int(relu),
        ];
        let size = macro_value(&defines, "SIZE");
        run(&func, [(n as u32).div_ceil(size), 1, 1], &args, &mut mem).unwrap();
        let y: Vec<f32> = mem.read(py, n).unwrap();
        for i in 0..n {
            let want = 2.0 * x[i] - 0.5;
            let want = if relu == 1 { want.max(0.0) } else { want };
            assert!(
                (y[i] - want).abs() <= 1e-6,
                "relu={relu} {i}: {} vs {want}",
                y[i]
            );
        }
    }
}

/// examples/row_center.tc: y = x - mean(x) + shift per row and the means,
/// in float32 (float16 x) and float64: the statistics in the dtype S gives.
#[test]
fn row_center_keeps_its_statistics_in_the_derived_dtype() {
    let path = op_path("add").with_file_name("../../examples/row_center.tc");
    let (spec, source) = read_spec(&path).unwrap();
    let (m, n) = (3usize, 300usize);
    let lower_as = |dtype: &str| {
        let mut defines = dtype_macros(&spec, dtype);
        defines.push(("TN".into(), "1024".into()));
        lower(&source, &defines, &[])
            .unwrap_or_else(|e| panic!("{e}"))
            .module
            .functions[0]
            .clone()
    };
    let x: Vec<f64> = data(m * n, 31).iter().map(|&v| v as f64 + 1e-9).collect();
    let shift = [0.5f64, -1.25, 3.0];
    let mean: Vec<f64> = (0..m)
        .map(|i| x[i * n..(i + 1) * n].iter().sum::<f64>() / n as f64)
        .collect();
    let args = |py, pmean, px, pshift| {
        [py, pmean, px, pshift]
            .map(ArgValue::Ptr)
            .into_iter()
            .chain([ArgValue::Int(m as i64), ArgValue::Int(n as i64)])
            .collect::<Vec<_>>()
    };
    // float64: everything in double precision.
    let mut mem = Memory::new();
    let (px, pshift) = (mem.alloc_slice(&x), mem.alloc_slice(&shift));
    let (py, pmean) = (
        mem.alloc_slice(&vec![0f64; m * n]),
        mem.alloc_slice(&vec![0f64; m]),
    );
    run(
        &lower_as("float64"),
        [2, 1, 1],
        &args(py, pmean, px, pshift),
        &mut mem,
    )
    .unwrap();
    let (y, got_mean): (Vec<f64>, Vec<f64>) =
        (mem.read(py, m * n).unwrap(), mem.read(pmean, m).unwrap());
    for i in 0..m {
        assert!(
            (got_mean[i] - mean[i]).abs() <= 1e-15,
            "mean {i}: {} vs {}",
            got_mean[i],
            mean[i]
        );
        for j in 0..n {
            let want = x[i * n + j] - mean[i] + shift[i];
            assert!(
                (y[i * n + j] - want).abs() <= 1e-14,
                "y[{i}, {j}]: {} vs {want}",
                y[i * n + j]
            );
        }
    }
    // float16 x: float32 means and shift.
    let x16: Vec<half::f16> = x.iter().map(|&v| half::f16::from_f64(v)).collect();
    let shift32: Vec<f32> = shift.iter().map(|&v| v as f32).collect();
    let mut mem = Memory::new();
    let (px, pshift) = (mem.alloc_slice(&x16), mem.alloc_slice(&shift32));
    let (py, pmean) = (
        mem.alloc_slice(&vec![half::f16::ZERO; m * n]),
        mem.alloc_slice(&vec![0f32; m]),
    );
    run(
        &lower_as("float16"),
        [2, 1, 1],
        &args(py, pmean, px, pshift),
        &mut mem,
    )
    .unwrap();
    let got_mean: Vec<f32> = mem.read(pmean, m).unwrap();
    for i in 0..m {
        let want = x16[i * n..(i + 1) * n]
            .iter()
            .map(|v| v.to_f64())
            .sum::<f64>()
            / n as f64;
        assert!(
            (got_mean[i] as f64 - want).abs() <= 1e-6,
            "mean {i}: {} vs {want}",
            got_mean[i]
        );
    }
}

/// Softmax rows of `n` columns with the float32 variant at TN, LOOP.
fn run_softmax(tn: &str, looped: bool, m: usize, n: usize) -> (Vec<f32>, Vec<f32>) {
    let (spec, source) = read_spec(&op_path("softmax")).unwrap();
    let mut defines = dtype_macros(&spec, "float32");
    defines.push(("TN".into(), tn.into()));
    defines.push(("LOOP".into(), if looped { "1" } else { "0" }.into()));
    defines.push(("ALIGN".into(), "1".into()));
    let func = lower(&source, &defines, &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .module
        .functions[0]
        .clone();
    // Rows far apart in magnitude: the running max must rescale the sum.
    let x: Vec<f32> = data(m * n, 5)
        .iter()
        .enumerate()
        .map(|(i, v)| v * 30.0 + (i % n) as f32 * 0.01)
        .collect();
    let mut mem = Memory::new();
    let (px, py) = (mem.alloc_slice(&x), mem.alloc_slice(&vec![0f32; m * n]));
    let args = [
        ArgValue::Ptr(py),
        ArgValue::Ptr(px),
        ArgValue::Int(n as i64),
        ArgValue::Int(n as i64),
        ArgValue::Int(m as i64),
        ArgValue::Int(n as i64),
    ];
    // Two persistent programs for three rows: one walks two rows.
    run(&func, [2, 1, 1], &args, &mut mem).unwrap();
    (x, mem.read(py, m * n).unwrap())
}

fn softmax_reference(x: &[f32], n: usize) -> Vec<f32> {
    x.chunks(n)
        .flat_map(|row| {
            let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            let sum: f64 = row.iter().map(|v| ((v - max) as f64).exp()).sum();
            row.iter()
                .map(move |v| (((v - max) as f64).exp() / sum) as f32)
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn softmax_takes_rows_of_any_length() {
    // One tile (LOOP=0) for a row that fits; blocks (LOOP=1) for rows longer
    // than the tile, with a partial last block.
    for (tn, looped, n) in [
        ("1024", false, 1000),
        ("1024", true, 2500),
        ("1024", true, 1024),
        ("4096", true, 5),
    ] {
        let (x, y) = run_softmax(tn, looped, 3, n);
        let want = softmax_reference(&x, n);
        for (i, (g, w)) in y.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-6 + 1e-5 * w,
                "TN={tn} LOOP={looped} N={n} [{i}]: {g} vs {w}"
            );
        }
        for row in y.chunks(n) {
            let total: f32 = row.iter().sum();
            assert!((total - 1.0).abs() < 1e-4, "row sum {total}");
        }
    }
}

/// The float32 variant of a bundled op at the given macros.
fn lower_with(name: &str, macros: &[(&str, &str)]) -> tritonc::ir::Function {
    lower_dtype_with(name, "float32", macros)
}

fn lower_dtype_with(name: &str, dtype: &str, macros: &[(&str, &str)]) -> tritonc::ir::Function {
    let (spec, source) = read_spec(&op_path(name)).unwrap();
    let mut defines = dtype_macros(&spec, dtype);
    defines.extend(macros.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    lower(&source, &defines, &[])
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .module
        .functions[0]
        .clone()
}

fn assert_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (*g as f64 - w).abs() <= tol * (1.0 + w.abs()),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

/// Layer norm forward and its three backward ops (dx, dw, db = col_sum) on
/// the interpreter against the closed forms in f64, on a ragged shape.
#[test]
fn layer_norm_forward_and_backward() {
    let (m, n) = (37usize, 300usize);
    let x = data(m * n, 7)
        .iter()
        .map(|v| v * 3.0 + 1.0)
        .collect::<Vec<f32>>();
    let w = data(n, 8);
    let b = data(n, 9);
    let dy = data(m * n, 10);
    let eps = 1e-5f64;
    // Reference.
    let mut mean = vec![0f64; m];
    let mut rstd = vec![0f64; m];
    let (mut y_ref, mut dx_ref) = (vec![0f64; m * n], vec![0f64; m * n]);
    let (mut dw_ref, mut db_ref) = (vec![0f64; n], vec![0f64; n]);
    for i in 0..m {
        let row = &x[i * n..(i + 1) * n];
        let mu = row.iter().map(|&v| v as f64).sum::<f64>() / n as f64;
        let var = row.iter().map(|&v| (v as f64 - mu).powi(2)).sum::<f64>() / n as f64;
        let r = 1.0 / (var + eps).sqrt();
        mean[i] = mu;
        rstd[i] = r;
        let xhat: Vec<f64> = row.iter().map(|&v| (v as f64 - mu) * r).collect();
        let g: Vec<f64> = (0..n).map(|j| w[j] as f64 * dy[i * n + j] as f64).collect();
        let c1 = xhat.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        let c2 = g.iter().sum::<f64>() / n as f64;
        for j in 0..n {
            y_ref[i * n + j] = xhat[j] * w[j] as f64 + b[j] as f64;
            dx_ref[i * n + j] = (g[j] - (xhat[j] * c1 + c2)) * r;
            dw_ref[j] += dy[i * n + j] as f64 * xhat[j];
            db_ref[j] += dy[i * n + j] as f64;
        }
    }
    // Forward: two persistent programs for 37 rows.
    let fwd = lower_with("layer_norm", &[("TN", "1024"), ("ALIGN", "1")]);
    let mut mem = Memory::new();
    let (px, pw, pb) = (
        mem.alloc_slice(&x),
        mem.alloc_slice(&w),
        mem.alloc_slice(&b),
    );
    let (py, pmean, prstd) = (
        mem.alloc_slice(&vec![0f32; m * n]),
        mem.alloc_slice(&vec![0f32; m]),
        mem.alloc_slice(&vec![0f32; m]),
    );
    let (mi, ni) = (ArgValue::Int(m as i64), ArgValue::Int(n as i64));
    let args = [
        ArgValue::Ptr(py),
        ArgValue::Ptr(pmean),
        ArgValue::Ptr(prstd),
        ArgValue::Ptr(px),
        ArgValue::Ptr(pw),
        ArgValue::Ptr(pb),
        ni.clone(),
        ni.clone(),
        mi.clone(),
        ni.clone(),
        ArgValue::Float(eps),
    ];
    run(&fwd, [2, 1, 1], &args, &mut mem).unwrap();
    assert_close("y", &mem.read(py, m * n).unwrap(), &y_ref, 1e-5);
    assert_close("mean", &mem.read(pmean, m).unwrap(), &mean, 1e-5);
    assert_close("rstd", &mem.read(prstd, m).unwrap(), &rstd, 1e-4);
    // dx.
    let pdy = mem.alloc_slice(&dy);
    let pdx = mem.alloc_slice(&vec![0f32; m * n]);
    let dx_fn = lower_with("layer_norm_dx", &[("TN", "1024"), ("ALIGN", "1")]);
    let args = [
        ArgValue::Ptr(pdx),
        ArgValue::Ptr(pdy),
        ArgValue::Ptr(px),
        ArgValue::Ptr(pw),
        ArgValue::Ptr(pmean),
        ArgValue::Ptr(prstd),
        ni.clone(),
        ni.clone(),
        ni.clone(),
        mi.clone(),
        ni.clone(),
    ];
    run(&dx_fn, [3, 1, 1], &args, &mut mem).unwrap();
    assert_close("dx", &mem.read(pdx, m * n).unwrap(), &dx_ref, 1e-4);
    // dw and db: column programs of TN = 64 over TM = 32 rows at a time.
    let dw_fn = lower_with("layer_norm_dw", &[("TM", "32"), ("TN", "64")]);
    let pdw = mem.alloc_slice(&vec![0f32; n]);
    let args = [
        ArgValue::Ptr(pdw),
        ArgValue::Ptr(pdy),
        ArgValue::Ptr(px),
        ArgValue::Ptr(pmean),
        ArgValue::Ptr(prstd),
        ni.clone(),
        ni.clone(),
        mi.clone(),
        ni.clone(),
    ];
    run(&dw_fn, [(n as u32).div_ceil(64), 1, 1], &args, &mut mem).unwrap();
    assert_close("dw", &mem.read(pdw, n).unwrap(), &dw_ref, 1e-4);
    let db_fn = lower_with("col_sum", &[("TM", "32"), ("TN", "64")]);
    let pdb = mem.alloc_slice(&vec![0f32; n]);
    let args = [ArgValue::Ptr(pdb), ArgValue::Ptr(pdy), ni.clone(), mi, ni];
    run(&db_fn, [(n as u32).div_ceil(64), 1, 1], &args, &mut mem).unwrap();
    assert_close("db", &mem.read(pdb, n).unwrap(), &db_ref, 1e-5);
}

/// Cross-entropy per row and its logits gradient on the interpreter, one
/// tile and looping over a row longer than the tile, with an ignored row
/// (target -100: loss 0, gradient 0) and an out-of-range target (NaN loss).
#[test]
fn cross_entropy_forward_and_backward() {
    for (tn, looped, n) in [("1024", false, 1000usize), ("1024", true, 2500)] {
        let m = 5usize;
        let x: Vec<f32> = data(m * n, 11).iter().map(|v| v * 6.0).collect();
        let target: Vec<i64> = vec![3, (n - 1) as i64, -100, 0, n as i64 + 5];
        let dloss: Vec<f32> = vec![1.0, 0.5, 2.0, -1.0, 1.0];
        let macros = [
            ("TN", tn),
            ("LOOP", if looped { "1" } else { "0" }),
            ("ALIGN", "1"),
        ];
        let fwd = lower_with("cross_entropy", &macros);
        let bwd = lower_with("cross_entropy_dx", &macros);
        let mut mem = Memory::new();
        let (px, pt, pd) = (
            mem.alloc_slice(&x),
            mem.alloc_slice(&target),
            mem.alloc_slice(&dloss),
        );
        let ploss = mem.alloc_slice(&vec![7f32; m]);
        let pdx = mem.alloc_slice(&vec![7f32; m * n]);
        let (mi, ni) = (ArgValue::Int(m as i64), ArgValue::Int(n as i64));
        let args = [
            ArgValue::Ptr(ploss),
            ArgValue::Ptr(px),
            ArgValue::Ptr(pt),
            ni.clone(),
            mi.clone(),
            ni.clone(),
        ];
        run(&fwd, [2, 1, 1], &args, &mut mem).unwrap();
        let args = [
            ArgValue::Ptr(pdx),
            ArgValue::Ptr(pd),
            ArgValue::Ptr(px),
            ArgValue::Ptr(pt),
            ni.clone(),
            ni.clone(),
            mi,
            ni,
        ];
        run(&bwd, [2, 1, 1], &args, &mut mem).unwrap();
        let loss: Vec<f32> = mem.read(ploss, m).unwrap();
        let dx: Vec<f32> = mem.read(pdx, m * n).unwrap();
        for i in 0..m {
            let row = &x[i * n..(i + 1) * n];
            let max = row.iter().cloned().fold(f32::NEG_INFINITY, f32::max) as f64;
            let sum: f64 = row.iter().map(|&v| (v as f64 - max).exp()).sum();
            let t = target[i];
            let what = format!("TN={tn} LOOP={looped} row {i} target {t}");
            if t == -100 {
                assert_eq!(loss[i], 0.0, "{what}");
                assert!(dx[i * n..(i + 1) * n].iter().all(|&g| g == 0.0), "{what}");
                continue;
            }
            if t < 0 || t >= n as i64 {
                assert!(loss[i].is_nan(), "{what}: {}", loss[i]);
                continue;
            }
            let want = sum.ln() + max - row[t as usize] as f64;
            assert!(
                (loss[i] as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()),
                "{what}: {} vs {want}",
                loss[i]
            );
            for j in 0..n {
                let p = (row[j] as f64 - max).exp() / sum;
                let g = (p - if j as i64 == t { 1.0 } else { 0.0 }) * dloss[i] as f64;
                assert!(
                    (dx[i * n + j] as f64 - g).abs() <= 1e-5,
                    "{what} [{j}]: {} vs {g}",
                    dx[i * n + j]
                );
            }
        }
    }
}

/// Fused attention on the interpreter (small tiles, fp16 data) against
/// softmax(scale q k^T) v in f64, causal and not, on an odd sequence length
/// that leaves partial query and key blocks: the unmasked loop over whole
/// key blocks, then the masked one (the last partial block; causal, the
/// diagonal blocks, two of them where TM = 2 TN).
#[test]
fn attention_matches_softmax_qk_v() {
    for (tm, tn) in [("16", "16"), ("32", "16")] {
        attention_case(tm, tn);
    }
}

fn attention_case(tm: &str, tn: &str) {
    let (spec, source) = read_spec(&op_path("attention")).unwrap();
    let mut defines = dtype_macros(&spec, "float16");
    for (n, v) in [("TM", tm), ("TN", tn), ("HEAD", "16")] {
        defines.push((n.into(), v.into()));
    }
    let func = lower(&source, &defines, &[])
        .unwrap_or_else(|e| panic!("{e}"))
        .module
        .functions[0]
        .clone();
    let (z, s, d) = (2usize, 37usize, 16usize);
    let round = |v: f32| half::f16::from_f32(v).to_f32();
    let q: Vec<f32> = data(z * s * d, 21).iter().map(|&v| round(v)).collect();
    let k: Vec<f32> = data(z * s * d, 22).iter().map(|&v| round(v)).collect();
    let v: Vec<f32> = data(z * s * d, 23).iter().map(|&v| round(v)).collect();
    let scale = 0.25f64;
    for causal in [0i64, 1] {
        let mut mem = Memory::new();
        let as_half = |x: &[f32]| {
            x.iter()
                .map(|&v| half::f16::from_f32(v))
                .collect::<Vec<_>>()
        };
        let (pq, pk, pv) = (
            mem.alloc_slice(&as_half(&q)),
            mem.alloc_slice(&as_half(&k)),
            mem.alloc_slice(&as_half(&v)),
        );
        let po = mem.alloc_slice(&vec![half::f16::ZERO; z * s * d]);
        let args = [
            ArgValue::Ptr(pq),
            ArgValue::Ptr(pk),
            ArgValue::Ptr(pv),
            ArgValue::Ptr(po),
            ArgValue::Int(s as i64),
            ArgValue::Float(scale),
            ArgValue::Int(causal),
        ];
        run(
            &func,
            [(s as u32).div_ceil(tm.parse().unwrap()), z as u32, 1],
            &args,
            &mut mem,
        )
        .unwrap();
        let o: Vec<half::f16> = mem.read(po, z * s * d).unwrap();
        for h in 0..z {
            for i in 0..s {
                let keys = if causal == 1 { i + 1 } else { s };
                let at = |t: &[f32], r: usize, c: usize| t[(h * s + r) * d + c] as f64;
                let scores: Vec<f64> = (0..keys)
                    .map(|j| scale * (0..d).map(|c| at(&q, i, c) * at(&k, j, c)).sum::<f64>())
                    .collect();
                let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
                let total: f64 = w.iter().sum();
                for c in 0..d {
                    let want = (0..keys).map(|j| w[j] * at(&v, j, c)).sum::<f64>() / total;
                    let got = o[(h * s + i) * d + c].to_f64();
                    assert!(
                        (got - want).abs() <= 1e-2,
                        "TM={tm} TN={tn} causal={causal} z={h} row {i} col {c}: {got} vs {want}"
                    );
                }
            }
        }
    }
}

/// The float64 variants of layer norm (forward and dx) and cross-entropy
/// (forward and dx, one tile and looping) keep everything in double
/// precision, statistics and loss included (`dtype S from T`): agreement to
/// 1e-12 with an f64 reference, where a float32 computation is off by ~1e-7.
#[test]
fn layer_norm_and_cross_entropy_run_in_float64() {
    let (m, n) = (5usize, 300usize);
    let x: Vec<f64> = data(m * n, 21)
        .iter()
        .map(|&v| v as f64 * 3.0 + 1.0 + 1e-9)
        .collect();
    let w: Vec<f64> = data(n, 22).iter().map(|&v| v as f64 + 1e-10).collect();
    let b: Vec<f64> = data(n, 23).iter().map(|&v| v as f64).collect();
    let dy: Vec<f64> = data(m * n, 24).iter().map(|&v| v as f64 / 3.0).collect();
    let eps = 1e-5f64;
    let close = |what: &str, got: &[f64], want: &[f64]| {
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(
                (g - w).abs() <= 1e-12 * (1.0 + w.abs()),
                "{what}[{i}]: {g} vs {w}"
            );
        }
    };
    let (mut y_ref, mut mean_ref, mut rstd_ref, mut dx_ref) = (
        vec![0f64; m * n],
        vec![0f64; m],
        vec![0f64; m],
        vec![0f64; m * n],
    );
    for i in 0..m {
        let row = &x[i * n..(i + 1) * n];
        let mu = row.iter().sum::<f64>() / n as f64;
        let var = row.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / n as f64;
        let r = 1.0 / (var + eps).sqrt();
        (mean_ref[i], rstd_ref[i]) = (mu, r);
        let xhat: Vec<f64> = row.iter().map(|v| (v - mu) * r).collect();
        let g: Vec<f64> = (0..n).map(|j| w[j] * dy[i * n + j]).collect();
        let c1 = xhat.iter().zip(&g).map(|(a, b)| a * b).sum::<f64>() / n as f64;
        let c2 = g.iter().sum::<f64>() / n as f64;
        for j in 0..n {
            y_ref[i * n + j] = xhat[j] * w[j] + b[j];
            dx_ref[i * n + j] = (g[j] - (xhat[j] * c1 + c2)) * r;
        }
    }
    let macros = [("TN", "1024"), ("ALIGN", "1")];
    let mut mem = Memory::new();
    let (px, pw, pb, pdy) = (
        mem.alloc_slice(&x),
        mem.alloc_slice(&w),
        mem.alloc_slice(&b),
        mem.alloc_slice(&dy),
    );
    let (py, pmean, prstd, pdx) = (
        mem.alloc_slice(&vec![0f64; m * n]),
        mem.alloc_slice(&vec![0f64; m]),
        mem.alloc_slice(&vec![0f64; m]),
        mem.alloc_slice(&vec![0f64; m * n]),
    );
    let (mi, ni) = (ArgValue::Int(m as i64), ArgValue::Int(n as i64));
    let fwd = lower_dtype_with("layer_norm", "float64", &macros);
    let args = [py, pmean, prstd, px, pw, pb].map(ArgValue::Ptr);
    let args: Vec<ArgValue> = args
        .into_iter()
        .chain([
            ni.clone(),
            ni.clone(),
            mi.clone(),
            ni.clone(),
            ArgValue::Float(eps),
        ])
        .collect();
    run(&fwd, [2, 1, 1], &args, &mut mem).unwrap();
    close("y", &mem.read(py, m * n).unwrap(), &y_ref);
    close("mean", &mem.read(pmean, m).unwrap(), &mean_ref);
    close("rstd", &mem.read(prstd, m).unwrap(), &rstd_ref);
    let dx_fn = lower_dtype_with("layer_norm_dx", "float64", &macros);
    let args: Vec<ArgValue> = [pdx, pdy, px, pw, pmean, prstd]
        .map(ArgValue::Ptr)
        .into_iter()
        .chain([ni.clone(), ni.clone(), ni.clone(), mi.clone(), ni.clone()])
        .collect();
    run(&dx_fn, [3, 1, 1], &args, &mut mem).unwrap();
    close("dx", &mem.read(pdx, m * n).unwrap(), &dx_ref);

    for (looped, cols) in [(false, 1000usize), (true, 2500)] {
        let logits: Vec<f64> = data(m * cols, 25)
            .iter()
            .map(|&v| v as f64 * 6.0 + 1e-9)
            .collect();
        let target: Vec<i64> = vec![3, (cols - 1) as i64, -100, 0, 17];
        let dloss: Vec<f64> = vec![1.0, 0.5, 2.0, -1.0, 0.25];
        let macros = [
            ("TN", "1024"),
            ("LOOP", if looped { "1" } else { "0" }),
            ("ALIGN", "1"),
        ];
        let (pl, pt, pd) = (
            mem.alloc_slice(&logits),
            mem.alloc_slice(&target),
            mem.alloc_slice(&dloss),
        );
        let (ploss, pg) = (
            mem.alloc_slice(&vec![7f64; m]),
            mem.alloc_slice(&vec![7f64; m * cols]),
        );
        let ci = ArgValue::Int(cols as i64);
        let fwd = lower_dtype_with("cross_entropy", "float64", &macros);
        let args = [
            ArgValue::Ptr(ploss),
            ArgValue::Ptr(pl),
            ArgValue::Ptr(pt),
            ci.clone(),
            mi.clone(),
            ci.clone(),
        ];
        run(&fwd, [2, 1, 1], &args, &mut mem).unwrap();
        let bwd = lower_dtype_with("cross_entropy_dx", "float64", &macros);
        let args = [pg, pd, pl, pt]
            .map(ArgValue::Ptr)
            .into_iter()
            .chain([ci.clone(), ci.clone(), mi.clone(), ci.clone()])
            .collect::<Vec<_>>();
        run(&bwd, [2, 1, 1], &args, &mut mem).unwrap();
        let loss: Vec<f64> = mem.read(ploss, m).unwrap();
        let grad: Vec<f64> = mem.read(pg, m * cols).unwrap();
        for i in 0..m {
            let row = &logits[i * cols..(i + 1) * cols];
            let max = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            let t = target[i];
            let (want_loss, scale) = if t == -100 {
                (0.0, 0.0)
            } else {
                (sum.ln() + max - row[t as usize], dloss[i])
            };
            let want_grad: Vec<f64> = (0..cols)
                .map(|j| {
                    ((row[j] - max).exp() / sum - if j as i64 == t { 1.0 } else { 0.0 }) * scale
                })
                .collect();
            let what = format!("LOOP={looped} row {i}");
            close(&format!("{what} loss"), &loss[i..i + 1], &[want_loss]);
            close(
                &format!("{what} dlogits"),
                &grad[i * cols..(i + 1) * cols],
                &want_grad,
            );
        }
    }
}
