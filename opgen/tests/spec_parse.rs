//! The `#pragma opgen` spec: the bundled ops parse to what they say, and
//! mistakes are diagnostics with file:line:col and a caret.

use triton_opgen::spec::{parse_spec, Dim, GradExpr, LaunchOption, OpSpec};
use tritonc::span::SourceMap;

fn parse(text: &str) -> Result<Option<OpSpec>, String> {
    let mut sources = SourceMap::new();
    let file = sources.add("k.tc", text);
    parse_spec(file, text).map_err(|d| d.render(&sources))
}

fn ok(text: &str) -> OpSpec {
    parse(text)
        .unwrap_or_else(|e| panic!("spec failed:\n{e}"))
        .expect("a spec")
}

fn err(text: &str) -> String {
    match parse(text) {
        Err(e) => e,
        Ok(s) => panic!("expected an error, got {s:?}"),
    }
}

const BASE: &str = "#pragma opgen op t::add
#pragma opgen dtype T in {float32: TYPE=float, float16: TYPE=half}
#pragma opgen input x: T[N]
#pragma opgen input y: T[N]
#pragma opgen output z: T[N]
#pragma opgen args N, x, y, z
#pragma opgen grid cdiv(N, SIZE)
#pragma opgen tune SIZE = [128, 256]
";

fn ops_file(name: &str) -> String {
    let path = format!("{}/../tests/ops/{name}.tc", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn add_spec_reads_every_directive() {
    let spec = ok(&ops_file("add"));
    assert_eq!(spec.qualified_name(), "triton::add");
    assert_eq!(spec.dtypes.len(), 1);
    let t = &spec.dtypes[0];
    assert_eq!(t.var, "T");
    assert_eq!(t.choices[0].dtype, "float32");
    assert_eq!(
        t.choices[0].macros,
        vec![("TYPE".to_string(), "float".to_string())]
    );
    assert_eq!(
        t.choices[1].macros,
        vec![("TYPE".to_string(), "half".to_string())]
    );
    assert_eq!(spec.inputs.len(), 2);
    assert!(spec.inputs[0].contiguous);
    assert_eq!(spec.inputs[0].dims, vec![Dim::Sym("N".into())]);
    assert_eq!(spec.outputs[0].name, "z");
    assert_eq!(spec.args.len(), 4);
    assert_eq!(spec.grid.len(), 1);
    assert!(!spec.grid[0].persistent);
    assert_eq!(spec.tune[0].name, "SIZE");
    assert_eq!(spec.tune[0].values, vec!["256", "1024", "4096"]);
    assert_eq!(spec.num_warps, vec![4]);
    let bw = spec.backward.as_ref().unwrap();
    assert_eq!(bw.grads.len(), 2);
    assert_eq!(bw.grads[0].input, "x");
    assert_eq!(bw.grads[0].value, GradExpr::Tensor("dz".into()));
    assert_eq!(
        spec.dim_bindings(),
        vec![("N".to_string(), "x".to_string(), 0)]
    );
}

#[test]
fn softmax_and_transpose_specs_parse() {
    let sm = ok(&ops_file("softmax"));
    assert!(sm.grid[0].persistent);
    // Persistent only where the variant's PERSIST is nonzero.
    assert!(
        matches!(&sm.grid[0].persistent_if, Some(on) if on.names().iter().any(|(n, _)| *n == "PERSIST"))
    );
    // Looping configs persistent only, one-tile rows, looping only past the
    // block, and the ALIGN promises.
    let cmps: Vec<&str> = sm.requires.iter().map(|r| r.cmp).collect();
    assert_eq!(cmps, ["==", "<=", "<", "==", "==", "=="]);
    assert_eq!(sm.args[2].param.as_deref(), Some("ldx"));
    let tr = ok(&ops_file("transpose"));
    assert_eq!(tr.grid.len(), 2);
    assert_eq!(
        tr.outputs[0].dims,
        vec![Dim::Sym("C".into()), Dim::Sym("R".into())]
    );
    assert_eq!(
        tr.dim_bindings(),
        vec![
            ("R".to_string(), "x".to_string(), 0),
            ("C".to_string(), "x".to_string(), 1)
        ]
    );
}

#[test]
fn a_file_without_pragmas_has_no_spec() {
    assert_eq!(
        parse("__global__ void k(int N) {}\n#pragma once\n").unwrap(),
        None
    );
    // `#pragma opgenx` is not ours either.
    assert_eq!(parse("#pragma opgenx op a::b\n").unwrap(), None);
}

#[test]
fn backward_through_other_ops_parses() {
    let text = "#pragma opgen op t::dot
#pragma opgen dtype T in {float16: TYPE=half}
#pragma opgen input a: T[M, K]
#pragma opgen input b: T[K, N]
#pragma opgen output c: T[M, N]
#pragma opgen args a, b, c, M, N, K
#pragma opgen grid cdiv(M, TM), cdiv(N, TN)
#pragma opgen tune TM = [64, 128]
#pragma opgen tune TN = [64]
#pragma opgen num_warps [4, 8]
#pragma opgen backward da = t::dot_nt(dc, b), db = t::dot_tn(a, dc)
";
    let spec = ok(text);
    assert_eq!(spec.num_warps, vec![4, 8]);
    assert!(spec.num_stages.is_empty());
    assert_eq!(launches(&spec), vec![(4, None), (8, None)]);
    let bw = spec.backward.unwrap();
    assert_eq!(
        bw.grads[0].value,
        GradExpr::Call {
            namespace: "t".into(),
            op: "dot_nt".into(),
            args: vec![GradExpr::Tensor("dc".into()), GradExpr::Tensor("b".into())],
        }
    );
    assert_eq!(bw.grads[1].input, "b");
}

#[test]
fn unknown_directive_points_at_it() {
    let e = err(&format!("{BASE}#pragma opgen inputs w: T[N]\n"));
    assert!(e.contains("unknown opgen directive `inputs`"), "{e}");
    assert!(e.contains("k.tc:9:15"), "{e}");
    assert!(e.contains("^^^^^^"), "{e}");
}

#[test]
fn syntax_errors_carry_line_column_and_caret() {
    let e = err(&BASE.replace("input y: T[N]", "input y T[N]"));
    assert!(e.contains("expected `:` after the tensor's name"), "{e}");
    assert!(e.contains("k.tc:4:23"), "{e}");
    let e = err(&BASE.replace("cdiv(N, SIZE)", "cdiv(N SIZE)"));
    assert!(e.contains("k.tc:7:27"), "{e}");
    let e = err(&BASE.replace("cdiv(N, SIZE)", "ceil(N, SIZE)"));
    assert!(e.contains("unknown function `ceil`"), "{e}");
    let e = err(&BASE.replace("cdiv(N, SIZE)", "cdiv(N)"));
    assert!(e.contains("`cdiv` takes 2 arguments, got 1"), "{e}");
}

#[test]
fn names_must_resolve() {
    let e = err(&BASE.replace("output z: T[N]", "output z: T[N, K]"));
    assert!(
        e.contains("dimension `K` of output `z` is not a dimension of any input"),
        "{e}"
    );
    let e = err(&BASE.replace("args N, x, y, z", "args N, x, w, z"));
    assert!(
        e.contains("unknown name `w` in the kernel arguments"),
        "{e}"
    );
    let e = err(&BASE.replace("args N, x, y, z", "args SIZE, x, y, z"));
    assert!(
        e.contains("tuning macros are compile-time constants"),
        "{e}"
    );
    let e = err(&BASE.replace("cdiv(N, SIZE)", "cdiv(N, TILE)"));
    assert!(e.contains("unknown name `TILE` in the grid"), "{e}");
    let e = err(&BASE.replace("input y: T[N]", "input y: U[N]"));
    assert!(e.contains("neither a dtype variable"), "{e}");
    let e = err(&BASE.replace("args N, x, y, z", "args N, x, y, stride(z, 1)"));
    assert!(e.contains("axis 1 is out of range for `z`"), "{e}");
    let e = err(&BASE.replace("args N, x, y, z", "args N, x + 1, y, z"));
    assert!(e.contains("can only be passed whole"), "{e}");
}

#[test]
fn duplicates_and_missing_lines_are_errors() {
    let e = err(&format!("{BASE}#pragma opgen input x: T[N]\n"));
    assert!(e.contains("tensor `x` is declared twice"), "{e}");
    assert!(e.contains("first declared here"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen op t::sub\n"));
    assert!(e.contains("the op is named twice"), "{e}");
    let e = err(&BASE.replace("#pragma opgen grid cdiv(N, SIZE)\n", ""));
    assert!(e.contains("no `grid` line"), "{e}");
    let e = err(&BASE.replace("#pragma opgen op t::add\n", ""));
    assert!(e.contains("does not name its op"), "{e}");
    let e = err(&BASE.replace("tune SIZE = [128, 256]", "tune SIZE = 128"));
    assert!(e.contains("needs a list of values"), "{e}");
}

#[test]
fn num_stages_widen_the_launch_options() {
    let spec = ok(&format!(
        "{BASE}#pragma opgen num_warps [4, 8]\n#pragma opgen num_stages [3, 8]\n"
    ));
    assert_eq!(spec.num_stages, vec![3, 8]);
    assert_eq!(
        launches(&spec),
        vec![(4, Some(3)), (4, Some(8)), (8, Some(3)), (8, Some(8))]
    );
}

/// `(num_warps, num_stages)` of each launch option.
fn launches(spec: &OpSpec) -> Vec<(u32, Option<u32>)> {
    spec.launch_options()
        .iter()
        .map(
            |&LaunchOption {
                 num_warps,
                 num_stages,
             }| (num_warps, num_stages),
        )
        .collect()
}

#[test]
fn split_k_is_the_last_tuning_macro_and_requires_may_read_it() {
    let spec = ok(&format!(
        "{BASE}#pragma opgen split_k [1, 4]\n#pragma opgen require (SPLIT_K - 1) * 64 <= N\n"
    ));
    assert_eq!(spec.split_k, vec![1, 4]);
    let last = spec.tune.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.values.clone()),
        ("SPLIT_K", vec!["1".into(), "4".into()])
    );
    let point = |s: &str| {
        vec![
            ("SIZE".to_string(), "128".to_string()),
            ("SPLIT_K".to_string(), s.to_string()),
        ]
    };
    assert_eq!(spec.split_k_of(&point("4")), Some(4));
    assert_eq!(spec.split_k_of(&point("1")), Some(1));
    // Without the line there is no split, whatever the macros say.
    assert_eq!(ok(BASE).split_k_of(&point("4")), None);
    let one = ok(&format!("{BASE}#pragma opgen split_k 2\n"));
    assert_eq!(one.tune.last().unwrap().values, vec!["2".to_string()]);
}

#[test]
fn split_k_macro_is_reserved() {
    let e = err(&format!(
        "{BASE}#pragma opgen tune SPLIT_K = [2, 3]\n#pragma opgen split_k [1, 4]\n"
    ));
    assert!(
        e.contains("`SPLIT_K` is the macro of the `split_k` line"),
        "{e}"
    );
    assert!(e.contains("the `split_k` line"), "{e}");
}

#[test]
fn split_k_out_of_range_or_twice_is_an_error() {
    let e = err(&format!("{BASE}#pragma opgen split_k [1, 9]\n"));
    assert!(e.contains("split_k must be from 1 to 8, got 9"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen split_k 0\n"));
    assert!(e.contains("split_k must be from 1 to 8, got 0"), "{e}");
    let e = err(&format!(
        "{BASE}#pragma opgen split_k 2\n#pragma opgen split_k 4\n"
    ));
    assert!(e.contains("split_k"), "{e}");
}

#[test]
fn bad_dtypes_warps_and_grids() {
    let e = err(&BASE.replace("float16: TYPE=half", "float12: TYPE=half"));
    assert!(e.contains("unknown dtype `float12`"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen num_warps 3\n"));
    assert!(e.contains("power of two"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen num_stages [3, 9]\n"));
    assert!(e.contains("num_stages must be from 2 to 8, got 9"), "{e}");
    let e = err(&format!(
        "{BASE}#pragma opgen num_stages 3\n#pragma opgen num_stages 4\n"
    ));
    assert!(e.contains("num_stages"), "{e}");
    let e = err(&BASE.replace("grid cdiv(N, SIZE)", "grid 1, persistent(N)"));
    assert!(e.contains("only the first grid dimension"), "{e}");
    // `persistent(W, on)`: `on` may read the macros and dims, nothing else.
    let e = err(&BASE.replace("grid cdiv(N, SIZE)", "grid persistent(N, WHO)"));
    assert!(e.contains("WHO"), "{e}");
    let on = ok(&BASE.replace("grid cdiv(N, SIZE)", "grid persistent(N, SIZE / 1024)"));
    assert!(on.grid[0].persistent && on.grid[0].persistent_if.is_some());
    let e = err(&BASE.replace("grid cdiv(N, SIZE)", "grid 1, 1, 1, 1"));
    assert!(e.contains("at most 3 dimensions"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen require N = SIZE\n"));
    assert!(e.contains("expected a comparison"), "{e}");
}

#[test]
fn backward_mistakes_are_errors() {
    let e = err(&format!("{BASE}#pragma opgen backward dw = dz\n"));
    assert!(e.contains("the op has no input `w`"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen backward dx = dq\n"));
    assert!(e.contains("`dq` in the backward is not an input"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen backward x = dz\n"));
    assert!(e.contains("does not name an input's gradient"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen backward dx = t::neg(dz\n"));
    assert!(e.contains("to close the op's arguments"), "{e}");
}

#[test]
fn directives_in_comments_and_if_0_blocks_say_nothing() {
    for hidden in [
        "/*\n#pragma opgen num_warps 8\n*/\n",
        "/* a comment */ int x; /* another\n#pragma opgen num_warps 8\n */\n",
        "#if 0\n#pragma opgen num_warps 8\n#endif\n",
        "#if 1\n#else\n#pragma opgen num_warps 8\n#endif\n",
    ] {
        let spec = ok(&format!("{BASE}{hidden}"));
        assert_ne!(spec.num_warps, vec![8], "{hidden:?}");
    }
    // `#if 1` and the `#else` of `#if 0` are live.
    let spec = ok(&format!(
        "{BASE}#if 0\n#else\n#pragma opgen num_warps 8\n#endif\n"
    ));
    assert_eq!(spec.num_warps, vec![8]);
    // A `//` comment does not open a block comment, and neither does a string.
    let spec = ok(&format!(
        "{BASE}// see /* here\nchar* s = \"/*\";\n#pragma opgen num_warps 8\n"
    ));
    assert_eq!(spec.num_warps, vec![8]);
}

#[test]
fn a_directive_under_a_macro_condition_is_an_error_at_its_line() {
    let e = err(&format!(
        "{BASE}#if ALIGN > 1\n#pragma opgen num_warps 8\n#endif\n"
    ));
    assert!(e.contains("under a preprocessor condition"), "{e}");
    assert!(e.contains("k.tc:10:1"), "{e}");
    assert!(e.contains("the condition"), "{e}");
    let e = err(&format!(
        "{BASE}#ifdef FAST\n#else\n#pragma opgen num_warps 8\n#endif\n"
    ));
    assert!(e.contains("under a preprocessor condition"), "{e}");
}

#[test]
fn a_macro_is_declared_once_and_never_shadows_a_dim_or_tensor() {
    let e = err(&format!("{BASE}#pragma opgen tune SIZE = [128]\n"));
    assert!(
        e.contains("`SIZE` is declared twice (`tune`, then `tune`)"),
        "{e}"
    );
    assert!(e.contains("k.tc:9:"), "{e}");
    assert!(e.contains("first declared here"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen define SIZE = 64\n"));
    assert!(e.contains("(`tune`, then `define`)"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen define N = 64\n"));
    assert!(
        e.contains("`N` names both a `define` macro and a dim of `x`"),
        "{e}"
    );
    let e = err(&format!("{BASE}#pragma opgen define x = 1\n"));
    assert!(
        e.contains("`x` names both a `define` macro and a tensor of `x`"),
        "{e}"
    );
    let e = err(&format!("{BASE}#pragma opgen define TYPE = float\n"));
    assert!(
        e.contains("`TYPE` is also set by the dtype choices of `T`"),
        "{e}"
    );
}

#[test]
fn a_divisor_that_can_be_zero_is_an_error_at_the_divisor() {
    let base = BASE.replace("#pragma opgen grid cdiv(N, SIZE)\n", "");
    let e = err(&format!("{base}#pragma opgen grid cdiv(N, 0)\n"));
    assert!(e.contains("this divisor is 0"), "{e}");
    assert!(e.contains("k.tc:8:"), "{e}");
    let e = err(&format!("{base}#pragma opgen grid N / (2 - 2)\n"));
    assert!(e.contains("this divisor is 0"), "{e}");
    let e = err(&format!(
        "{base}#pragma opgen grid cdiv(N, SIZE)\n#pragma opgen tune BLOCK = [0, 4]\n#pragma opgen require N / BLOCK >= 1\n"
    ));
    assert!(e.contains("this divisor is 0"), "{e}");
    let args = BASE.replace("args N, x, y, z", "args N / 0, x, y, z");
    let e = err(&args);
    assert!(e.contains("this divisor is 0"), "{e}");
    // Nonzero divisors, literal or macro, are fine.
    ok(&format!("{base}#pragma opgen grid cdiv(N, SIZE * 2)\n"));
}

#[test]
fn a_constant_that_overflows_64_bits_is_an_error_naming_the_macro_values() {
    let base = BASE.replace("#pragma opgen grid cdiv(N, SIZE)\n", "");
    // SIZE = 256 makes SIZE * 2^62 * 4 overflow; SIZE = 128 too.
    let e = err(&format!(
        "{base}#pragma opgen grid cdiv(N, SIZE * 4611686018427387904 * 4)\n"
    ));
    assert!(
        e.contains("overflows a 64-bit integer (for SIZE = 128)"),
        "{e}"
    );
    assert!(e.contains("k.tc:8:"), "{e}");
    let e = err(&format!(
        "{base}#pragma opgen grid cdiv(N, SIZE)\n#pragma opgen require N <= 9223372036854775807 + 1\n"
    ));
    assert!(e.contains("overflows a 64-bit integer:"), "{e}");
    let e = err(&BASE.replace(
        "args N, x, y, z",
        "args N - (-9223372036854775807 - 1) * -1, x, y, z",
    ));
    assert!(e.contains("overflows a 64-bit integer"), "{e}");
    // Large but representable constants are fine, and so are expressions over dims.
    ok(&format!(
        "{base}#pragma opgen grid cdiv(N, SIZE * 1099511627776 / 1099511627776)\n"
    ));
    ok(&format!(
        "{base}#pragma opgen grid cdiv(N * 4611686018427387904, SIZE)\n"
    ));
}

/// BASE with `attrs` added and `args` replaced.
fn with_attrs(attrs: &str, args: &str) -> String {
    BASE.replace(
        "#pragma opgen args N, x, y, z\n",
        &format!("{attrs}#pragma opgen args {args}\n"),
    )
}

#[test]
fn attributes_parse_with_types_and_defaults() {
    use triton_opgen::spec::{AttrType, AttrValue};
    let spec = ok(&with_attrs(
        "#pragma opgen attr n: int\n#pragma opgen attr alpha: float = 1.5\n#pragma opgen attr flip: bool = true\n#pragma opgen attr k: int = -3\n",
        "N, x, y, z",
    ));
    let got: Vec<(&str, AttrType, Option<AttrValue>)> = spec
        .attrs
        .iter()
        .map(|a| (a.name.as_str(), a.ty, a.default))
        .collect();
    assert_eq!(
        got,
        [
            ("n", AttrType::Int, None),
            ("alpha", AttrType::Float, Some(AttrValue::Float(1.5))),
            ("flip", AttrType::Bool, Some(AttrValue::Bool(true))),
            ("k", AttrType::Int, Some(AttrValue::Int(-3))),
        ]
    );
    assert_eq!(AttrValue::Float(2.0).literal(("True", "False")), "2.0");
    assert_eq!(AttrValue::Bool(false).literal(("True", "False")), "False");
    // int and bool attributes are integers in the grid and requirements.
    ok(&with_attrs("#pragma opgen attr n: int = 2\n", "N, x, y, z")
        .replace("grid cdiv(N, SIZE)", "grid cdiv(N, SIZE) * n"));
}

#[test]
fn attribute_mistakes_are_errors_at_the_line() {
    let cases = [
        (
            "#pragma opgen attr alpha: double\n",
            "N, x, y, z",
            "attributes are `float`, `int` or `bool`",
        ),
        (
            "#pragma opgen attr alpha: float = fast\n",
            "N, x, y, z",
            "the default `fast` is not a finite float",
        ),
        (
            "#pragma opgen attr n: int = 1.5\n",
            "N, x, y, z",
            "the default `1.5` is not a 64-bit integer",
        ),
        (
            "#pragma opgen attr b: bool = 1\n",
            "N, x, y, z",
            "is not `true` or `false`",
        ),
        (
            "#pragma opgen attr alpha\n",
            "N, x, y, z",
            "expected `attr NAME: float|int|bool`",
        ),
        (
            "#pragma opgen attr a: int\n#pragma opgen attr a: float\n",
            "N, x, y, z",
            "attribute `a` is declared twice",
        ),
        (
            "#pragma opgen attr a: int = 1\n#pragma opgen attr b: int\n",
            "N, x, y, z",
            "attribute `b` has no default but follows one that has",
        ),
        (
            "#pragma opgen attr N: int\n",
            "N, x, y, z",
            "attribute `N` has the name of a dim",
        ),
        (
            "#pragma opgen attr class: int\n",
            "N, x, y, z",
            "is a C++ keyword",
        ),
        (
            "#pragma opgen attr _a: int\n",
            "N, x, y, z",
            "must start with a letter",
        ),
        (
            "#pragma opgen attr alpha: float\n",
            "N * alpha, x, y, z",
            "float attribute `alpha` can only be passed whole",
        ),
    ];
    for (attrs, args, needle) in cases {
        let e = err(&with_attrs(attrs, args));
        assert!(e.contains(needle), "`{attrs}`: missing `{needle}` in:\n{e}");
        assert!(e.contains("k.tc:"), "{e}");
    }
    let e = err(
        &with_attrs("#pragma opgen attr alpha: float\n", "N, x, y, z")
            .replace("grid cdiv(N, SIZE)", "grid cdiv(N, SIZE) * alpha"),
    );
    assert!(
        e.contains("float attribute `alpha` cannot be used in the grid"),
        "{e}"
    );
}

/// Found by the op_spec fuzz target: 8,000 nested parentheses in a `grid`
/// overflowed the stack. Every expression and gradient nests at most 200
/// deep, and deeper input is a diagnostic at the line.
#[test]
fn deeply_nested_expressions_are_diagnostics() {
    let deep = format!("{}N{}", "(".repeat(8000), ")".repeat(8000));
    let e = err(&BASE.replace("grid cdiv(N, SIZE)", &format!("grid {deep}")));
    assert!(
        e.contains("the expression nests deeper than 200 levels"),
        "{e}"
    );
    assert!(e.contains("k.tc:7:"), "{e}");
    let e = err(&format!("{BASE}#pragma opgen require {deep} > 0\n"));
    assert!(e.contains("nests deeper than 200 levels"), "{e}");
    let calls = format!("{}dz{}", "t::f(".repeat(5000), ")".repeat(5000));
    let e = err(&format!("{BASE}#pragma opgen backward dx = {calls}\n"));
    assert!(
        e.contains("the gradient nests calls deeper than 200 levels"),
        "{e}"
    );
}

#[test]
fn tma_line_is_a_tuning_macro_of_its_own() {
    let spec = ok(&format!("{BASE}#pragma opgen tma [0, 1]\n"));
    assert_eq!(spec.tma, vec![0, 1]);
    let last = spec.tune.last().unwrap();
    assert_eq!(last.name, "TMA");
    assert_eq!(last.values, vec!["0".to_string(), "1".to_string()]);
    let point = |v: &str| vec![("TMA".to_string(), v.to_string())];
    assert!(spec.tma_of(&point("1")));
    assert!(!spec.tma_of(&point("0")));
    // Without the line nothing asks for TMA, whatever the macros say.
    assert!(!ok(BASE).tma_of(&point("1")));
    // 2: TMA with b shared by a cluster's pair.
    let spec = ok(&format!("{BASE}#pragma opgen tma [0, 1, 2]\n"));
    assert_eq!(spec.tma, vec![0, 1, 2]);
    assert!(spec.tma_of(&point("2")) && spec.tma_multicast_of(&point("2")));
    assert!(spec.tma_of(&point("1")) && !spec.tma_multicast_of(&point("1")));
    assert!(!ok(BASE).tma_multicast_of(&point("2")));
    // 3: TMA issued by a producer warpgroup (neither multicast nor plain).
    let spec = ok(&format!("{BASE}#pragma opgen tma [0, 3]\n"));
    assert!(spec.tma_of(&point("3")) && spec.warp_specialize_of(&point("3")));
    assert!(!spec.tma_multicast_of(&point("3")) && !spec.warp_specialize_of(&point("2")));
    assert!(!ok(BASE).warp_specialize_of(&point("3")));
    // 4: both (a producer warpgroup copying b into a cluster's pair).
    let spec = ok(&format!("{BASE}#pragma opgen tma [0, 3, 4]\n"));
    assert!(spec.tma_of(&point("4")) && spec.warp_specialize_of(&point("4")));
    assert!(spec.tma_multicast_of(&point("4")));
}

#[test]
fn tma_values_macro_and_repeats_are_checked() {
    let e = err(&format!("{BASE}#pragma opgen tma [0, 5]\n"));
    assert!(
        e.contains(
            "tma takes 0 (off), 1 (on), 2 (on, `b` shared by the two programs of a cluster), \
             3 (on, issued by a producer warpgroup) and 4 (both), got 5"
        ),
        "{e}"
    );
    let e = err(&format!("{BASE}#pragma opgen tma 1\n#pragma opgen tma 0\n"));
    assert!(e.contains("tma"), "{e}");
    let e = err(&format!(
        "{BASE}#pragma opgen define TMA = 1\n#pragma opgen tma [0, 1]\n"
    ));
    assert!(e.contains("`TMA` is the macro of the `tma` line"), "{e}");
}

/// `dtype S from T {...}`: a variable another one's choice sets, usable by
/// inputs and outputs; the bundled layer norm and cross-entropy declare
/// their statistics and loss with it.
#[test]
fn derived_dtypes_follow_their_source() {
    let text = BASE
        .replace(
            "#pragma opgen output z: T[N]\n",
            "#pragma opgen dtype S from T {float32: float32, float16: float32}\n\
             #pragma opgen output z: T[N]\n#pragma opgen output total: S[1]\n",
        )
        .replace("args N, x, y, z", "args N, x, y, z, total");
    let spec = ok(&text);
    assert_eq!(
        spec.dtypes.len(),
        1,
        "a derived variable is no tuning dimension"
    );
    let s = spec.derived_dtype("S").expect("S");
    assert_eq!(s.source, "T");
    assert_eq!(s.of("float16"), Some("float32"));
    assert_eq!(s.targets(), vec!["float32"]);
    assert!(spec.is_dtype_var("S") && spec.is_dtype_var("T") && !spec.is_dtype_var("float32"));
    for op in [
        "layer_norm",
        "layer_norm_dx",
        "cross_entropy",
        "cross_entropy_dx",
    ] {
        let spec = ok(&ops_file(op));
        let s = spec
            .derived_dtype("S")
            .unwrap_or_else(|| panic!("{op} has no S"));
        assert_eq!(
            (
                s.of("float16"),
                s.of("bfloat16"),
                s.of("float32"),
                s.of("float64")
            ),
            (
                Some("float32"),
                Some("float32"),
                Some("float32"),
                Some("float64")
            ),
            "{op}"
        );
    }

    let with = |line: &str| {
        BASE.replace(
            "#pragma opgen output z: T[N]\n",
            &format!("{line}\n#pragma opgen output z: T[N]\n"),
        )
    };
    let e = err(&with("#pragma opgen dtype S from U {float32: float32}"));
    assert!(
        e.contains("`S` follows `U`, which is not a dtype variable"),
        "{e}"
    );
    assert!(e.contains("k.tc:"), "{e}");
    let e = err(&with("#pragma opgen dtype S from T {float32: float32}"));
    assert!(
        e.contains("`S` gives no dtype for `T` = float16; map every choice of `T`"),
        "{e}"
    );
    let e = err(&with(
        "#pragma opgen dtype S from T {float32: float32, float16: float32, bfloat16: float32}",
    ));
    assert!(e.contains("`bfloat16` is not a choice of `T`"), "{e}");
    let e = err(&with(
        "#pragma opgen dtype S from T {float32: float32, float32: float64, float16: float32}",
    ));
    assert!(e.contains("`float32` is mapped twice for `S`"), "{e}");
    let e = err(&with(
        "#pragma opgen dtype T from T {float32: float32, float16: float32}",
    ));
    assert!(e.contains("dtype variable `T` is declared twice"), "{e}");
    let e = err(&with(
        "#pragma opgen dtype S from T {float32: float99, float16: float32}",
    ));
    assert!(e.contains("unknown dtype `float99`"), "{e}");
    let e = err(&with("#pragma opgen dtype S of T {float32: float32}"));
    assert!(e.contains("expected `in` or `from`, found `of`"), "{e}");
}

#[test]
fn pad_lists_dims_a_multiple_and_a_condition() {
    let dot = ok(&ops_file("dot"));
    let pad = dot.pad.as_ref().expect("dot pads");
    let dims: Vec<&str> = pad.dims.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!((dims, pad.multiple), (vec!["N", "K"], 8));
    assert_eq!(
        pad.conditions.len(),
        3,
        "M >= 192 && N >= 192 && M * N * K >= 2e9"
    );
    let dims_of = |m: i64, n: i64, k: i64| {
        move |name: &str| match name {
            "M" => Some(m),
            "N" => Some(n),
            "K" => Some(k),
            _ => None,
        }
    };
    let holds = |m, n, k| pad.holds(&dims_of(m, n, k)).expect("dims known");
    assert!(holds(1537, 1537, 1537) && holds(2049, 2049, 2049) && holds(733, 2049, 2049));
    assert!(!holds(1000, 777, 1531) && !holds(16, 4097, 4096));
    // Past 3e9 multiply-adds, M or N under 192 still runs as is: padding a
    // 50257-column `b` costs more than 16 or 128 rows of work save. A small
    // odd K pads (its copies are small).
    assert!(holds(256, 50257, 4096) && holds(192, 50257, 4096));
    assert!(!holds(16, 50257, 4096) && !holds(191, 50257, 4096));
    assert!(!holds(4096, 100, 16384) && !holds(100, 16384, 4096));
    assert!(holds(16384, 4096, 100) && holds(8192, 8192, 100));
    // From 2e9 multiply-adds: 1301^3 and 4096x4096x129 pad, 1201^3 does not.
    assert!(holds(1301, 1301, 1301) && holds(4096, 4096, 129));
    assert!(!holds(1201, 1201, 1201) && !holds(2048, 2048, 257));
    // Per axis of a tensor, the multiple it is padded to.
    let b = dot.inputs.iter().find(|t| t.name == "b").unwrap();
    assert_eq!(pad.multiples(&b.dims), vec![8, 8]);
    let a = dot.inputs.iter().find(|t| t.name == "a").unwrap();
    assert_eq!(pad.multiples(&a.dims), vec![1, 8]);
    // Without a condition, and absent.
    let plain = ok(&format!("{BASE}#pragma opgen pad N to 4\n"));
    let p = plain.pad.unwrap();
    assert_eq!((p.multiple, p.conditions.is_empty()), (4, true));
    assert!(ok(BASE).pad.is_none());
}

#[test]
fn pad_mistakes_are_errors() {
    let cases = [
        ("pad Q to 8", "`Q` is not a dimension of an input"),
        ("pad N, N to 8", "`N` is listed twice"),
        (
            "pad N to 1",
            "the multiple to pad to must be from 2 to 1024, got 1",
        ),
        (
            "pad N 8",
            "expected `to` and the multiple, as in `pad N, K to 8`, found `8`",
        ),
        ("pad N up 8", "expected `to`, found `up`"),
        (
            "pad N to 8 when N > 4",
            "expected `if` or the line's end, found `when`",
        ),
        (
            "pad N to 8 if N * SIZE > 4",
            "unknown name `SIZE` in the `pad` condition",
        ),
        ("pad N to 8 if N / 0 > 4", "this divisor is 0"),
        (
            "pad N to 8 if N > 9223372036854775807 + 1",
            "this expression overflows a 64-bit integer",
        ),
        ("pad N to 8 if N", "expected a comparison"),
        (
            "pad N to 8 if N > 4 &&",
            "expected an expression, found the end of the line",
        ),
        (
            "pad N to 8 if N > 4 && SIZE > 1",
            "unknown name `SIZE` in the `pad` condition",
        ),
        ("pad N to 8 if N > 4 && N", "expected a comparison"),
        (
            "pad N to 8 if N > 4 & N < 9",
            "unexpected character `&` in an opgen spec",
        ),
        (
            "pad N to 8 if N > 4 || N < 2",
            "unexpected character `|` in an opgen spec",
        ),
        (
            "require N > 4 && N < 9",
            "a `require` line takes one comparison: give each its own `require` line",
        ),
    ];
    for (line, message) in cases {
        let e = err(&format!("{BASE}#pragma opgen {line}\n"));
        assert!(e.contains(message), "{line}: {e}");
        assert!(e.contains("k.tc:9:"), "{line}: {e}");
    }
    let e = err(&format!(
        "{BASE}#pragma opgen pad N to 8\n#pragma opgen pad N to 4\n"
    ));
    assert!(e.contains("`pad` is given twice"), "{e}");
}

#[test]
fn a_require_on_num_warps_is_decided_for_each_launch() {
    let spec = ok(&format!(
        "{BASE}#pragma opgen num_warps [4, 8]\n#pragma opgen require (SIZE - 128) * (8 - num_warps) == 0\n#pragma opgen require N >= SIZE\n"
    ));
    // The line on `num_warps` leaves the launcher's requirements.
    assert_eq!(spec.launch_requires.len(), 1);
    assert_eq!(spec.requires.len(), 1);
    let point = |size: &str| vec![("SIZE".to_string(), size.to_string())];
    assert!(spec.launch_admitted(&point("128"), 4));
    assert!(spec.launch_admitted(&point("128"), 8));
    assert!(!spec.launch_admitted(&point("256"), 4));
    assert!(spec.launch_admitted(&point("256"), 8));
    // 2 dtypes x 2 sizes x 2 warps, less 256 on 4 warps in each dtype.
    assert_eq!(triton_opgen::variants::count_points(&spec), 6);
}

#[test]
fn a_require_on_num_warps_reads_macros_only() {
    let e = err(&format!(
        "{BASE}#pragma opgen num_warps [4, 8]\n#pragma opgen require N * num_warps > 0\n"
    ));
    assert!(
        e.contains("`N` in a `require` that reads `num_warps`"),
        "{e}"
    );
    assert!(e.contains("k.tc:10:"), "{e}");
}
