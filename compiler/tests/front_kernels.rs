//! Every seed kernel (tests/kernels/*.tc) goes through lexer, preprocessor and
//! parser; statements are checked structurally (see `front_support::sexpr`).
mod front_support;
use front_support::*;
use tritonc::front::ast::{BaseType, ParamAttr};

const MATMUL_DEFS: [(&str, &str); 4] = [("TYPE", "half"), ("TM", "64"), ("TN", "64"), ("TK", "16")];

fn body_lines(name: &str, defines: &[(&str, &str)]) -> Vec<String> {
    let tu = parse_kernel(name, defines);
    assert_eq!(tu.functions.len(), 1, "{name}: one function");
    stmt_lines(&tu.functions[0].body.stmts)
}

#[test]
fn vector_add_with_type_and_size_macros() {
    let tu = parse_kernel("add.tc", &[("TYPE", "half"), ("SIZE", "256")]);
    let f = &tu.functions[0];
    assert_eq!(f.name.name, "add");
    assert!(f.is_global);
    assert_eq!(f.return_type.base, BaseType::Void);
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("{} {}", type_str(&p.ty), p.name.name))
        .collect();
    assert_eq!(params, ["int N", "half* a", "half* b", "half* c"]);
    assert_eq!(
        stmt_lines(&f.body.stmts),
        [
            "decl int id = (get_program_id 0)",
            "decl int off[256] = (+ (* id 256) (range 0 256))",
            "(= (load (+ c off)) (+ (load (+ a off)) (load (+ b off))))",
        ]
    );
}

#[test]
fn vector_add_as_printed_in_the_seed_misses_semicolons() {
    // Seed 000 prints the first kernel without `;` after two statements: the next
    // line's `*` continues the expression, and the error lands at the `}`.
    let text = "// launched on a grid of (N / 32) programs of 1 thread each
__global__ void add(int N, float *a, float *b, float* c) {
int id = get_program_id(0);
int off[32] = id * 32 + (0 ... 32)
*(c + off) = *(a + off) + *(b + off)
}
";
    let (sources, diag) = parse_err(text, &[]);
    assert_eq!(diag.location(&sources), "test.tc:6:1");
    assert_eq!(diag.message, "expected `;` after declaration, found `}`");
}

#[test]
fn transpose_plain() {
    let lines = body_lines(
        "transpose.tc",
        &[("TYPE", "float"), ("TM", "32"), ("TN", "16")],
    );
    assert_eq!(lines[2], "decl int rm[32] = (+ (* pidm 32) (range 0 32))");
    assert_eq!(
        lines[4],
        "decl float* px[32,16] = (+ (+ X rm[:,newaxis]) (* rn[newaxis,:] ldx))"
    );
    assert_eq!(
        lines[5],
        "decl float* py[16,32] = (+ (+ Y (* rm[newaxis,:] ldy)) rn[:,newaxis])"
    );
    assert_eq!(lines[6], "(= (load py) (trans (load px)))");
    assert_eq!(lines.len(), 7);
}

#[test]
fn transpose_with_masks() {
    let lines = body_lines(
        "transpose_masked.tc",
        &[("TYPE", "half"), ("TM", "32"), ("TN", "64")],
    );
    assert_eq!(
        lines[6],
        "decl bool checkx[32,64] = (&& (< rm[:,newaxis] M) (< rn[newaxis,:] N))"
    );
    // A masked dereference as assignment target is the masked store.
    assert_eq!(lines[8], "(= (load? checky py) (trans (load? checkx px)))");
}

#[test]
fn matrix_add_reduce_broadcast_snippet() {
    let lines = body_lines("matrix_ops.tc", &[]);
    assert_eq!(
        &lines[..5],
        [
            "decl float x[16,8] = 3.14",
            "decl float y[16,8] = 5.17",
            "decl float z[16,8] = (+ x y)",
            "decl float u[16] = z[:,+]",
            "decl float v[16,32] = u[:,newaxis]",
        ]
    );
}

#[test]
fn softmax_row_kernel() {
    let lines = body_lines("softmax.tc", &[("TYPE", "float"), ("TN", "1024")]);
    assert_eq!(
        lines,
        [
            "decl int cols[1024] = (range 0 1024)",
            "decl bool check[1024] = (< cols N)",
            "for decl int row = (get_program_id 0) ; (< row M) ; (+= row (get_num_programs 0))",
            "  {",
            "    decl float* px[1024] = (+ (+ X (* row ldx)) cols)",
            "    decl float x[1024] = (? check (cast float (load? check px)) (neg 1000000000000000000000000000000f))",
            "    decl float x_max = x[max]",
            "    decl float num[1024] = (exp (- x x_max))",
            "    decl float den = num[+]",
            "    decl float* py[1024] = (+ (+ Y (* row ldy)) cols)",
            "    (= (load? check py) (cast float (/ num den)))",
            "  }",
        ]
    );
}

#[test]
fn matmul_plain() {
    let tu = parse_kernel("dot.tc", &MATMUL_DEFS);
    let f = &tu.functions[0];
    let attrs: Vec<(String, Vec<ParamAttr>)> = f
        .params
        .iter()
        .filter(|p| !p.attrs.is_empty())
        .map(|p| {
            (
                p.name.name.clone(),
                p.attrs.iter().map(|a| a.0.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        attrs,
        [
            ("lda".to_string(), vec![ParamAttr::MultipleOf(8)]),
            ("ldb".to_string(), vec![ParamAttr::MultipleOf(8)]),
            ("ldc".to_string(), vec![ParamAttr::MultipleOf(8)]),
        ]
    );
    assert_eq!(f.params.len(), 9);
    assert_eq!(
        stmt_lines(&f.body.stmts),
        [
            "decl int pm = (get_program_id 0)",
            "decl int pn = (get_program_id 1)",
            "decl int rm[64] = (+ (* pm 64) (range 0 64))",
            "decl int rn[64] = (+ (* pn 64) (range 0 64))",
            "decl int rk[16] = (range 0 16)",
            "decl float c[64,64] = 0",
            "decl half* pa[64,16] = (+ (+ A (* rk[newaxis,:] 1)) (* rm[:,newaxis] lda))",
            "decl half* pb[16,64] = (+ (+ B (* rk[:,newaxis] ldb)) (* rn[newaxis,:] 1))",
            "for decl int k = K ; (> k 0) ; (-= k 16)",
            "  {",
            "    decl half a[64,16] = (load pa)",
            "    decl half b[16,64] = (load pb)",
            "    (+= c (@ a b))",
            "    (= pa (+ pa (* 16 1)))",
            "    (= pb (+ pb (* 16 ldb)))",
            "  }",
            "decl half* pc[64,64] = (+ (+ C rn[newaxis,:]) (* rm[:,newaxis] ldc))",
            "(= (load pc) c)",
        ]
    );
}

#[test]
fn matmul_with_prefetch() {
    let lines = body_lines("dot_prefetch.tc", &MATMUL_DEFS);
    let loop_at = lines.iter().position(|l| l.starts_with("for ")).unwrap();
    assert_eq!(
        &lines[loop_at..loop_at + 9],
        [
            "for decl int k = K ; (> k 0) ; (-= k 16)",
            "  {",
            "    (+= c (@ a b))",
            "    (= pa (+ pa (* 16 1)))",
            "    (= pb (+ pb (* 16 ldb)))",
            "    decl bool check = (> k 16)",
            "    (= a (? check (load pa) 0))",
            "    (= b (? check (load pb) 0))",
            "  }",
        ]
    );
    assert_eq!(
        lines[loop_at + 10],
        "decl int rcn[64] = (+ (* pn 64) (range 0 64))"
    );
}

/// The four -D sets of seed 003 (with BROADCAST_AM, the name the kernel reads).
fn trans_defs(a_trans: bool, b_trans: bool) -> Vec<(&'static str, &'static str)> {
    let mut defs = MATMUL_DEFS.to_vec();
    defs.extend(dot_trans_defines(a_trans, b_trans));
    defs
}

#[test]
fn matmul_fused_transpositions_all_four_variants() {
    let cases = [
        (
            false,
            false,
            "(+= c (@ a b))",
            "decl half* pa[64,16] = (+ (+ A (* rk[newaxis,:] 1)) (* rm[:,newaxis] lda))",
            "decl half b[16,64] = (load pb)",
        ),
        (
            true,
            false,
            "(+= c (@ (trans a) b))",
            "decl half* pa[16,64] = (+ (+ A (* rk[:,newaxis] lda)) (* rm[newaxis,:] 1))",
            "decl half b[16,64] = (load pb)",
        ),
        (
            false,
            true,
            "(+= c (@ a (trans b)))",
            "decl half* pa[64,16] = (+ (+ A (* rk[newaxis,:] 1)) (* rm[:,newaxis] lda))",
            "decl half b[64,16] = (load pb)",
        ),
        (
            true,
            true,
            "(+= c (@ (trans a) (trans b)))",
            "decl half* pa[16,64] = (+ (+ A (* rk[:,newaxis] lda)) (* rm[newaxis,:] 1))",
            "decl half b[64,16] = (load pb)",
        ),
    ];
    for (a_trans, b_trans, update, pa, b) in cases {
        let tu = parse_kernel("dot_trans.tc", &trans_defs(a_trans, b_trans));
        assert!(!tu.functions[0].is_global, "written without __global__");
        let lines = stmt_lines(&tu.functions[0].body.stmts);
        assert_eq!(lines[6], pa, "A transposed: {a_trans}");
        assert_eq!(lines[9], b, "B transposed: {b_trans}");
        assert_eq!(lines[12].trim(), update);
    }
}

#[test]
fn every_seed_kernel_file_exists() {
    let mut names: Vec<String> = std::fs::read_dir(kernel_path(""))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tc"))
        .collect();
    names.sort();
    let known = [
        "add.tc",
        "dot.tc",
        "dot_prefetch.tc",
        "dot_trans.tc",
        "matrix_ops.tc",
        "softmax.tc",
        "transpose.tc",
        "transpose_masked.tc",
    ];
    for name in known {
        assert!(names.iter().any(|n| n == name), "missing kernel {name}");
    }
}
