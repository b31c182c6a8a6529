//! The generated kernels: a random template (element-wise over a 1-D tile,
//! a 2-D tile with broadcasting and a reduction, or a blocked `@` with a
//! K loop) filled with random types, tile sizes, sizes and expressions.

use crate::expr::{ExprGen, Leaf, Ty};
use crate::rng::Rng;

/// A kernel parameter and what the launch passes for it.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Param {
    /// A buffer of `len` elements; `seed`: its inputs (`None`: an output, zeroed).
    Buffer {
        name: String,
        dtype: &'static str,
        len: usize,
        seed: Option<u64>,
    },
    Int {
        name: String,
        value: i64,
    },
    Float {
        name: String,
        value: f64,
    },
}

/// One generated kernel with its launch.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Kernel {
    pub template: &'static str,
    pub source: String,
    pub params: Vec<Param>,
    pub grid: [u32; 3],
    pub num_warps: u32,
    pub num_stages: Option<u32>,
    pub arch: &'static str,
}

/// The kernel for `seed`: the same seed always gives the same kernel.
pub fn generate(seed: u64) -> Kernel {
    let mut rng = Rng::new(seed);
    let mut k = match rng.below(12) {
        0..=2 => elementwise(&mut rng, seed),
        3..=5 => rows(&mut rng, seed),
        6..=7 => dot(&mut rng, seed),
        _ => dot_pipelined(&mut rng, seed),
    };
    k.num_warps = *rng.pick(&[1, 2, 4, 8]);
    k.arch = *rng.pick(&["sm_80", "sm_90", "sm_90a"]);
    if k.template.starts_with("dot") {
        k.num_warps = *rng.pick(&[4, 8]);
        k.num_stages = Some(*rng.pick(&[2, 3, 4, 5]));
    }
    if k.template == "dot_pipelined" && rng.chance(60) {
        // Hopper's paths (wgmma, its pipeline) need sm_90a.
        k.arch = "sm_90a";
    }
    k
}

struct Builder {
    params: Vec<Param>,
    decls: Vec<String>,
    body: Vec<String>,
    leaves: Vec<Leaf>,
    next_seed: u64,
}

impl Builder {
    fn new(seed: u64) -> Builder {
        Builder {
            params: Vec::new(),
            decls: Vec::new(),
            body: Vec::new(),
            leaves: Vec::new(),
            next_seed: seed.wrapping_mul(1000),
        }
    }

    fn input(&mut self, name: &str, ty: Ty, len: usize) {
        self.next_seed += 1;
        self.buffer_of(name, ty.c_name(), ty.dtype(), len, Some(self.next_seed));
    }

    /// An input of a type expressions do not use (`bf16` dot operands).
    fn input_of(&mut self, name: &str, c_name: &str, dtype: &'static str, len: usize) {
        self.next_seed += 1;
        self.buffer_of(name, c_name, dtype, len, Some(self.next_seed));
    }

    fn buffer(&mut self, name: &str, ty: Ty, len: usize, seed: Option<u64>) {
        self.buffer_of(name, ty.c_name(), ty.dtype(), len, seed);
    }

    fn buffer_of(
        &mut self,
        name: &str,
        c_name: &str,
        dtype: &'static str,
        len: usize,
        seed: Option<u64>,
    ) {
        self.decls.push(format!("{c_name}* {name}"));
        self.params.push(Param::Buffer {
            name: name.into(),
            dtype,
            len,
            seed,
        });
    }

    fn int(&mut self, name: &str, value: i64) {
        self.int_with(name, value, "");
    }

    /// An int parameter declared with `attr` (`__multipleof(8)`).
    fn int_with(&mut self, name: &str, value: i64, attr: &str) {
        self.decls.push(format!("int {name}{attr}"));
        self.params.push(Param::Int {
            name: name.into(),
            value,
        });
    }

    /// Random scalar parameters, usable as leaves.
    fn scalars(&mut self, rng: &mut Rng) {
        if rng.chance(50) {
            let v = rng.range(-9, 9);
            self.int("s0", v);
            self.leaf("s0", Ty::I32);
        }
        if rng.chance(50) {
            let v = *rng.pick(&[0.5, -1.25, 2.0, 3.5]);
            self.decls.push("float f0".into());
            self.params.push(Param::Float {
                name: "f0".into(),
                value: v,
            });
            self.leaf("f0", Ty::F32);
        }
    }

    fn leaf(&mut self, text: &str, ty: Ty) {
        self.leaves.push(Leaf {
            text: text.into(),
            ty,
        });
    }

    fn line(&mut self, text: String) {
        self.body.push(format!("  {text}"));
    }

    fn expr(&mut self, rng: &mut Rng, ty: Ty, depth: u32) -> String {
        ExprGen {
            rng,
            leaves: &self.leaves,
        }
        .expr(ty, depth)
    }

    fn finish(self, template: &'static str, grid: [u32; 3]) -> Kernel {
        let source = format!(
            "// difftest: {template}\n__global__ void k({}) {{\n{}\n}}\n",
            self.decls.join(", "),
            self.body.join("\n")
        );
        Kernel {
            template,
            source,
            params: self.params,
            grid,
            num_warps: 4,
            num_stages: None,
            arch: "sm_90",
        }
    }
}

const VALUE_TYPES: [Ty; 3] = [Ty::F32, Ty::F16, Ty::I32];

fn zero(ty: Ty) -> String {
    format!("({})0", ty.c_name())
}

/// `y[i] = f(x0[i], x1[i], ...)` over a masked 1-D tile, sometimes through
/// a loop that folds an int accumulator.
fn elementwise(rng: &mut Rng, seed: u64) -> Kernel {
    let mut b = Builder::new(seed);
    let block = *rng.pick(&[32usize, 64, 128, 256, 512, 1024]);
    // Aligned: N a multiple of 8 and declared so, which lets loads vectorize.
    let aligned = rng.chance(50);
    let n = if aligned {
        8 * rng.range(1, 3 * block as i64 / 8) as usize
    } else {
        rng.range(1, 3 * block as i64) as usize
    };
    let inputs = rng.range(1, 3) as usize;
    let out_ty = *rng.pick(&VALUE_TYPES);
    let mut in_tys = Vec::new();
    for i in 0..inputs {
        let ty = *rng.pick(&VALUE_TYPES);
        b.input(&format!("X{i}"), ty, n);
        in_tys.push(ty);
    }
    b.buffer("Y", out_ty, n, None);
    b.int_with("N", n as i64, if aligned { " __multipleof(8)" } else { "" });
    b.scalars(rng);
    b.line("int pid = get_program_id(0);".into());
    b.line(format!(
        "int off[{block}] = pid * {block} + (0 ... {block});"
    ));
    b.line(format!("bool m[{block}] = off < N;"));
    b.leaf("off", Ty::I32);
    for (i, ty) in in_tys.iter().enumerate() {
        b.line(format!(
            "{t} x{i}[{block}] = m ? *?(m)(X{i} + off) : {z};",
            t = ty.c_name(),
            z = zero(*ty)
        ));
        b.leaf(&format!("x{i}"), *ty);
    }
    let depth = rng.range(1, 4) as u32;
    if rng.chance(30) {
        // A loop carrying an exact int tile.
        let init = b.expr(rng, Ty::I32, 2);
        b.line(format!("int acc[{block}] = {init};"));
        let trips = rng.range(0, 4);
        b.line(format!("for (int it = 0; it < {trips}; it++) {{"));
        b.leaf("acc", Ty::I32);
        let step = b.expr(rng, Ty::I32, 2);
        b.line(format!("  acc = (acc ^ {step}) + it;"));
        b.line("}".into());
    }
    let e = b.expr(rng, out_ty, depth);
    b.line(format!("{} r[{block}] = {e};", out_ty.c_name()));
    if rng.chance(25) {
        // A branch on a scalar: odd programs store a different value.
        let other = b.expr(rng, out_ty, 2);
        b.line("if (pid % 2 == 1) {".into());
        b.line(format!("  r = {other};"));
        b.line("}".into());
    }
    b.line("*?(m)(Y + off) = r;".into());
    let grid = n.div_ceil(block) as u32;
    b.finish("elementwise", [grid, 1, 1])
}

/// The identity of a reduction, as a constant of `ty`.
fn identity(op: &str, ty: Ty) -> String {
    match (op, ty) {
        ("+", _) => zero(ty),
        ("max", Ty::I32) => "(-2147483647 - 1)".into(),
        ("min", Ty::I32) => "2147483647".into(),
        ("max", Ty::F16) => "((half)-60000.0f)".into(),
        ("min", Ty::F16) => "((half)60000.0f)".into(),
        ("max", _) => "-3.0e38f".into(),
        _ => "3.0e38f".into(),
    }
}

/// A [TM, TN] tile of a row-major matrix with a row and a column vector
/// broadcast into it: the element-wise result and its reduction along rows
/// (one program per TM rows) or columns (one program).
fn rows(rng: &mut Rng, seed: u64) -> Kernel {
    let mut b = Builder::new(seed);
    let tm = *rng.pick(&[1usize, 2, 4, 8, 16, 32, 64]);
    let tn = *rng.pick(&[8usize, 16, 32, 64, 128]);
    let along_rows = rng.chance(60);
    let m = if along_rows {
        rng.range(1, 3 * tm as i64) as usize
    } else {
        rng.range(1, tm as i64) as usize
    };
    let aligned = rng.chance(50);
    let (n, ld) = if aligned {
        let n = 8 * rng.range(1, tn as i64 / 8) as usize;
        (n, n + 8 * rng.range(0, 2) as usize)
    } else {
        let n = rng.range(1, tn as i64) as usize;
        (n, n + rng.range(0, 3) as usize)
    };
    let attr = if aligned { " __multipleof(8)" } else { "" };
    let x_ty = *rng.pick(&VALUE_TYPES);
    let v_ty = *rng.pick(&VALUE_TYPES);
    let w_ty = *rng.pick(&VALUE_TYPES);
    let out_ty = *rng.pick(&VALUE_TYPES);
    let op = *rng.pick(&["+", "max", "min"]);
    b.input("X", x_ty, m * ld);
    b.input("V", v_ty, m);
    b.input("W", w_ty, n);
    b.buffer("Z", out_ty, m * ld, None);
    b.buffer("Y", out_ty, if along_rows { m } else { n }, None);
    b.int("M", m as i64);
    b.int_with("N", n as i64, attr);
    b.int_with("ld", ld as i64, attr);
    b.scalars(rng);
    b.line(format!(
        "int rm[{tm}] = get_program_id(0) * {tm} + (0 ... {tm});"
    ));
    b.line(format!("int rn[{tn}] = 0 ... {tn};"));
    b.line(format!("bool mm[{tm}] = rm < M;"));
    b.line(format!("bool mn[{tn}] = rn < N;"));
    b.line(format!(
        "bool m[{tm}, {tn}] = mm[:, newaxis] && mn[newaxis, :];"
    ));
    b.line(format!(
        "{t} x[{tm}, {tn}] = m ? *?(m)(X + rm[:, newaxis] * ld + rn[newaxis, :]) : {z};",
        t = x_ty.c_name(),
        z = zero(x_ty)
    ));
    b.line(format!(
        "{t} v[{tm}] = mm ? *?(mm)(V + rm) : {z};",
        t = v_ty.c_name(),
        z = zero(v_ty)
    ));
    b.line(format!(
        "{t} w[{tn}] = mn ? *?(mn)(W + rn) : {z};",
        t = w_ty.c_name(),
        z = zero(w_ty)
    ));
    b.leaf("x", x_ty);
    b.leaf("v[:, newaxis]", v_ty);
    b.leaf("w[newaxis, :]", w_ty);
    b.leaf("rm[:, newaxis]", Ty::I32);
    b.leaf("rn[newaxis, :]", Ty::I32);
    let depth = rng.range(1, 4) as u32;
    let e = b.expr(rng, out_ty, depth);
    let t = out_ty.c_name();
    b.line(format!("{t} e[{tm}, {tn}] = {e};"));
    b.line("*?(m)(Z + rm[:, newaxis] * ld + rn[newaxis, :]) = e;".into());
    b.line(format!(
        "{t} em[{tm}, {tn}] = m ? e : {};",
        identity(op, out_ty)
    ));
    if along_rows {
        b.line(format!("{t} red[{tm}] = em[:, {op}];"));
        b.line("*?(mm)(Y + rm) = red;".into());
        b.finish("rows", [m.div_ceil(tm) as u32, 1, 1])
    } else {
        b.line(format!("{t} red[{tn}] = em[{op}, :];"));
        b.line("*?(mn)(Y + rn) = red;".into());
        b.finish("columns", [1, 1, 1])
    }
}

/// The buffer dtype of a dot operand type (`half`, `bf16`, `float`).
fn dot_input_dtype(c_name: &str) -> &'static str {
    match c_name {
        "half" => "f16",
        "bf16" => "bf16",
        _ => "f32",
    }
}

/// `C = epilogue(A @ B)` with masks on every edge and a K loop.
fn dot(rng: &mut Rng, seed: u64) -> Kernel {
    let mut b = Builder::new(seed);
    let in_ty = *rng.pick(&["half", "half", "bf16", "float"]);
    let tm = *rng.pick(&[16usize, 32, 64, 128]);
    let tn = *rng.pick(&[16usize, 32, 64, 128]);
    let tk = *rng.pick(&[16usize, 32, 64]);
    let m = rng.range(1, 2 * tm as i64 + 3) as usize;
    let n = rng.range(1, 2 * tn as i64 + 3) as usize;
    let k = rng.range(1, 4 * tk as i64 + 5) as usize;
    let dtype = dot_input_dtype(in_ty);
    // B sometimes stored N-major, `[N][KP]` with a row length that is a
    // multiple of 8: `bt` is then read along its first axis in 16-byte
    // vectors (attention's `k^T`), and staged K-major for mma.sync.
    let b_rows = (rng.below(3) == 0).then(|| k.next_multiple_of(8));
    b.input_of("A", in_ty, dtype, m * k);
    b.input_of("B", in_ty, dtype, b_rows.map_or(k * n, |kp| n * kp));
    let out_ty = *rng.pick(&[Ty::F32, Ty::F16]);
    b.input("W", Ty::F32, n);
    b.buffer("C", out_ty, m * n, None);
    b.int("M", m as i64);
    b.int("N", n as i64);
    b.int("K", k as i64);
    b.scalars(rng);
    b.line(format!(
        "int rm[{tm}] = get_program_id(0) * {tm} + (0 ... {tm});"
    ));
    b.line(format!(
        "int rn[{tn}] = get_program_id(1) * {tn} + (0 ... {tn});"
    ));
    b.line(format!("int rk[{tk}] = 0 ... {tk};"));
    b.line(format!("bool mm[{tm}] = rm < M;"));
    b.line(format!("bool mn[{tn}] = rn < N;"));
    b.line(format!("float acc[{tm}, {tn}] = 0;"));
    b.line(format!("for (int k = 0; k < K; k += {tk}) {{"));
    b.line(format!("  int ks[{tk}] = k + rk;"));
    b.line(format!("  bool mk[{tk}] = ks < K;"));
    b.line(format!(
        "  bool ma[{tm}, {tk}] = mm[:, newaxis] && mk[newaxis, :];"
    ));
    b.line(format!(
        "  bool mb[{tk}, {tn}] = mk[:, newaxis] && mn[newaxis, :];"
    ));
    b.line(format!(
        "  {in_ty} a[{tm}, {tk}] = ma ? *?(ma)(A + rm[:, newaxis] * K + ks[newaxis, :]) : ({in_ty})0;"
    ));
    let b_at = match b_rows {
        Some(kp) => format!("B + ks[:, newaxis] + rn[newaxis, :] * {kp}"),
        None => "B + ks[:, newaxis] * N + rn[newaxis, :]".to_string(),
    };
    b.line(format!(
        "  {in_ty} bt[{tk}, {tn}] = mb ? *?(mb)({b_at}) : ({in_ty})0;"
    ));
    b.line("  acc += a @ bt;".into());
    b.line("}".into());
    b.line(format!("float w[{tn}] = mn ? *?(mn)(W + rn) : 0.0f;"));
    b.line(format!(
        "bool m[{tm}, {tn}] = mm[:, newaxis] && mn[newaxis, :];"
    ));
    let e = epilogue(&mut b, rng);
    b.line(format!("float e[{tm}, {tn}] = {e};"));
    b.line(format!(
        "*?(m)(C + rm[:, newaxis] * N + rn[newaxis, :]) = ({})e;",
        out_ty.c_name()
    ));
    let grid = [m.div_ceil(tm) as u32, n.div_ceil(tn) as u32, 1];
    b.finish("dot", grid)
}

/// A random epilogue over the f32 accumulator `acc` (exact: sums of
/// multiples of 1/256 below 2^16) with the bias `w` and index leaves.
fn epilogue(b: &mut Builder, rng: &mut Rng) -> String {
    b.leaf("w[newaxis, :]", Ty::F32);
    b.leaf("rn[newaxis, :]", Ty::I32);
    match rng.below(4) {
        0 => "acc".to_string(),
        1 => "max(acc + w[newaxis, :], 0.0f)".to_string(),
        _ => {
            let extra = b.expr(rng, Ty::F32, 2);
            format!("(acc * 0.5f + {extra})")
        }
    }
}

/// The matmul as the bundled op writes it (tests/ops/dot.tc): programs
/// grouped along M, pointer tiles advanced through the K loop, masked loads
/// without a fallback value, N, K and the leading dimensions declared
/// multiples of 8 (so loads vectorize and the loop pipelines: cp.async, and
/// wgmma on sm_90a), A sometimes stored K-major and transposed with `^`.
fn dot_pipelined(rng: &mut Rng, seed: u64) -> Kernel {
    let mut b = Builder::new(seed);
    let in_ty = *rng.pick(&["half", "half", "bf16", "float"]);
    let dtype = dot_input_dtype(in_ty);
    let tm = *rng.pick(&[16usize, 32, 64, 128]);
    let tn = *rng.pick(&[16usize, 32, 64, 128, 256]);
    let tk = *rng.pick(&[16usize, 32, 64, 128]);
    let group = *rng.pick(&[1usize, 4, 8]);
    let a_k_major = rng.chance(30);
    let m = rng.range(1, 2 * tm as i64 + 3) as usize;
    let n = 8 * rng.range(1, (2 * tn as i64 + 8) / 8) as usize;
    let k = 8 * rng.range(1, (4 * tk as i64 + 8) / 8) as usize;
    let pad = |rng: &mut Rng| 8 * rng.range(0, 2) as usize;
    let lda = if a_k_major { m.next_multiple_of(8) } else { k } + pad(rng);
    let ldb = n + pad(rng);
    let ldc = n + pad(rng);
    let a_len = if a_k_major { k * lda } else { m * lda };
    b.input_of("A", in_ty, dtype, a_len);
    b.input_of("B", in_ty, dtype, k * ldb);
    let out_ty = *rng.pick(&[Ty::F32, Ty::F16]);
    b.input("W", Ty::F32, n);
    b.buffer("C", out_ty, m * ldc, None);
    let eight = " __multipleof(8)";
    b.int("M", m as i64);
    b.int_with("N", n as i64, eight);
    b.int_with("K", k as i64, eight);
    b.int_with("lda", lda as i64, eight);
    b.int_with("ldb", ldb as i64, eight);
    b.int_with("ldc", ldc as i64, eight);
    b.scalars(rng);
    for line in [
        "int pid = get_program_id(0);".to_string(),
        format!("int grid_m = (M + {tm} - 1) / {tm};"),
        format!("int grid_n = (N + {tn} - 1) / {tn};"),
        format!("int width = {group} * grid_n;"),
        format!("int first_m = pid / width * {group};"),
        format!("int group_size = min(grid_m - first_m, {group});"),
        "int pm = first_m + pid % width % group_size;".to_string(),
        "int pn = pid % width / group_size;".to_string(),
        format!("int rm[{tm}] = pm * {tm} + 0 ... {tm};"),
        format!("int rn[{tn}] = pn * {tn} + 0 ... {tn};"),
        format!("int rk[{tk}] = 0 ... {tk};"),
        format!("float acc[{tm}, {tn}] = 0;"),
    ] {
        b.line(line);
    }
    let (a_shape, a_ptr, a_mask, use_a) = if a_k_major {
        (
            format!("{tk}, {tm}"),
            "A + rk[:, newaxis] * lda + rm[newaxis, :]",
            "(rk[:, newaxis] + k < K) && (rm[newaxis, :] < M)",
            "^a",
        )
    } else {
        (
            format!("{tm}, {tk}"),
            "A + rk[newaxis, :] + rm[:, newaxis] * lda",
            "(rk[newaxis, :] + k < K) && (rm[:, newaxis] < M)",
            "a",
        )
    };
    let a_step = if a_k_major {
        format!("{tk} * lda")
    } else {
        format!("{tk}")
    };
    for line in [
        format!("{in_ty}* pa[{a_shape}] = {a_ptr};"),
        format!("{in_ty}* pb[{tk}, {tn}] = B + rk[:, newaxis] * ldb + rn[newaxis, :];"),
        format!("for (int k = 0; k < K; k += {tk}) {{"),
        format!("  bool ma[{a_shape}] = {a_mask};"),
        format!("  bool mb[{tk}, {tn}] = (rk[:, newaxis] + k < K) && (rn[newaxis, :] < N);"),
        format!("  {in_ty} a[{a_shape}] = *?(ma)pa;"),
        format!("  {in_ty} bt[{tk}, {tn}] = *?(mb)pb;"),
        format!("  acc += {use_a} @ bt;"),
        format!("  pa = pa + {a_step};"),
        format!("  pb = pb + {tk} * ldb;"),
        "}".to_string(),
        format!("bool mn[{tn}] = rn < N;"),
        format!("float w[{tn}] = mn ? *?(mn)(W + rn) : 0.0f;"),
    ] {
        b.line(line);
    }
    let e = epilogue(&mut b, rng);
    for line in [
        format!("float e[{tm}, {tn}] = {e};"),
        format!(
            "{}* pc[{tm}, {tn}] = C + rn[newaxis, :] + rm[:, newaxis] * ldc;",
            out_ty.c_name()
        ),
        format!("bool mc[{tm}, {tn}] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);"),
        format!("*?(mc)pc = ({})e;", out_ty.c_name()),
    ] {
        b.line(line);
    }
    let grid = (m.div_ceil(tm) * n.div_ceil(tn)) as u32;
    b.finish("dot_pipelined", [grid, 1, 1])
}
