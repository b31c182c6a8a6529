//! Preprocessor: macros (object, function, nested, hide sets, `#`, `##`,
//! variadic), conditionals, `#include`, `-D` values that are code.
mod front_support;
use front_support::options;
use tritonc::front::lexer::spell;
use tritonc::front::preprocess::preprocess;
use tritonc::front::token::{Token, TokenKind};
use tritonc::front::FrontOptions;
use tritonc::span::SourceMap;

fn run(text: &str, opts: &FrontOptions) -> (SourceMap, Vec<Token>) {
    let mut sources = SourceMap::new();
    let file = sources.add("test.tc", text);
    match preprocess(&mut sources, file, opts) {
        Ok(tokens) => (sources, tokens),
        Err(d) => panic!("unexpected error:\n{}", d.render(&sources)),
    }
}

/// The output spelled with one space between tokens (no `Eof`).
fn pp(text: &str, defines: &[(&str, &str)]) -> String {
    let (_, tokens) = run(text, &options(defines));
    let words: Vec<String> = tokens
        .iter()
        .filter(|t| t.kind != TokenKind::Eof)
        .map(|t| spell(&t.kind))
        .collect();
    words.join(" ")
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

#[test]
fn object_and_function_macros() {
    assert_eq!(pp("#define N 4\nint x[N];", &[]), "int x [ 4 ] ;");
    assert_eq!(
        pp("#define SQ(x) ((x) * (x))\nSQ(a + 1)", &[]),
        "( ( a + 1 ) * ( a + 1 ) )"
    );
    assert_eq!(pp("#define F(a, b) b a\nF(1, (2, 3))", &[]), "( 2 , 3 ) 1");
    assert_eq!(pp("#define Z() 7\nZ()", &[]), "7");
    // object-like although followed by `(`: a space separates the name
    assert_eq!(pp("#define G (x)\nG(1)", &[]), "( x ) ( 1 )");
    // a function-like macro name without `(` is left alone
    assert_eq!(
        pp("#define max(a, b) a\nx[:, max] = max;", &[]),
        "x [ : , max ] = max ;"
    );
    // multi-line definition and invocation
    assert_eq!(
        pp("#define ADD(a, \\\n b) a + b\nADD(1,\n 2)", &[]),
        "1 + 2"
    );
    assert_eq!(pp("#define A 1\n#undef A\nA", &[]), "A");
}

#[test]
fn nested_macros_and_argument_pre_expansion() {
    let text = "#define TM 32\n#define TN TM * 2\n#define SQ(x) x * x\n#define TWICE(x) SQ(x) + SQ(x)\nTN; SQ(TM); TWICE(TN)";
    assert_eq!(
        pp(text, &[]),
        "32 * 2 ; 32 * 32 ; 32 * 2 * 32 * 2 + 32 * 2 * 32 * 2"
    );
}

#[test]
fn hide_sets_stop_recursion() {
    assert_eq!(pp("#define A A\nA", &[]), "A");
    assert_eq!(pp("#define A B\n#define B A\nA B", &[]), "A B");
    assert_eq!(
        pp("#define f(x) f(x + 1)\nf(f(0))", &[]),
        "f ( f ( 0 + 1 ) + 1 )"
    );
    assert_eq!(pp("#define foo foo a\nfoo", &[]), "foo a");
}

#[test]
fn c_standard_example_of_macro_replacement() {
    // C11 6.10.3.5 EXAMPLE 3.
    let text = "#define x 3
#define f(a) f(x * (a))
#undef x
#define x 2
#define g f
#define z z[0]
#define h g(~
#define m(a) a(w)
#define w 0,1
#define t(a) a
#define p() int
#define q(x) x
#define r(x,y) x ## y
f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);
g(x+(3,4)-w) | h 5) & m
(f)^m(m);
p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };
";
    let want = "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);
f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))^m(0,1);
int i[] = { 1, 23, 4, 5, };";
    assert_eq!(squeeze(&pp(text, &[])), squeeze(want));
}

#[test]
fn stringize_paste_and_variadic() {
    let (_, tokens) = run("#define S(x) #x\nS(a + b)", &FrontOptions::default());
    assert_eq!(tokens[0].kind, TokenKind::Str("a + b".into()));
    assert_eq!(
        pp(
            "#define CAT(a, b) a ## b\nCAT(x, 1) CAT(1, 2) CAT(pa, _A)",
            &[]
        ),
        "x1 12 pa_A"
    );
    let (_, tokens) = run(
        "#define CAT(a, b) a ## b\nCAT(1, 2)",
        &FrontOptions::default(),
    );
    assert_eq!(tokens[0].kind, TokenKind::Int(12));
    assert_eq!(
        pp("#define F(a, ...) g(a, __VA_ARGS__)\nF(1, 2, 3) F(1)", &[]),
        "g ( 1 , 2 , 3 ) g ( 1 , )"
    );
}

#[test]
fn expanded_tokens_carry_the_span_of_the_use() {
    let text = "#define PTR(p) *p + ONE\n#define ONE 1\nx = PTR(q);";
    let (_, tokens) = run(text, &FrontOptions::default());
    let use_start = text.find("PTR(q)").unwrap();
    let use_span = use_start..use_start + "PTR(q)".len();
    let q_at = text.rfind('q').unwrap();
    let got: Vec<(String, std::ops::Range<usize>)> = tokens
        .iter()
        .map(|t| (spell(&t.kind), t.span.range()))
        .collect();
    assert_eq!(got[2], ("*".to_string(), use_span.clone()));
    // argument tokens keep their own place in the source
    assert_eq!(got[3], ("q".to_string(), q_at..q_at + 1));
    assert_eq!(got[4], ("+".to_string(), use_span.clone()));
    assert_eq!(got[5], ("1".to_string(), use_span));
}

#[test]
fn conditional_arithmetic() {
    let cases = [
        ("1 + 2 * 3 == 7", true),
        ("(1 + 2) * 3 == 9 && 10 / 3 == 3 && 10 % 3 == 1", true),
        (
            "-1 < 0 && ~0 == -1 && !0 && 1 << 4 == 16 && 256 >> 4 == 16",
            true,
        ),
        ("(3 & 1) | (4 ^ 4)", true),
        ("0 ? 1 : 0", false),
        ("1 ? 2 ? 0 : 1 : 1", false),
        ("UNKNOWN", false),
        ("UNKNOWN == 0", true),
        ("defined(N) && N >= 4", true),
        ("defined N && !defined M", true),
        ("defined(M) || N / 2 == 2", true),
        ("0 && 1 / 0", false),
        ("1 || 1 % 0", true),
        ("0x10 == 16 && 010 == 8", true),
        ("N > 8", false),
        ("true", true),
    ];
    for (cond, want) in cases {
        let text = format!("#define N 4\n#if {cond}\nyes\n#else\nno\n#endif");
        assert_eq!(
            pp(&text, &[]),
            if want { "yes" } else { "no" },
            "#if {cond}"
        );
    }
}

#[test]
fn conditional_branches_and_skipped_groups() {
    let text = "#ifdef A\na\n#elif B == 2\nb\n#elif 1\nc\n#else\nd\n#endif";
    assert_eq!(pp(text, &[("A", "")]), "a");
    assert_eq!(pp(text, &[("B", "2")]), "b");
    assert_eq!(pp(text, &[]), "c");
    assert_eq!(pp("#ifndef A\nx\n#else\ny\n#endif", &[("A", "1")]), "y");
    // skipped groups may hold anything lexable or not, and unknown directives
    let text = "#if 0\n  it's $ junk \"unterminated\n#foo bar\n#if 1\n#error no\n#endif\n#else\nok\n#endif\nend";
    assert_eq!(pp(text, &[]), "ok end");
    // a comment that spans lines inside a skipped group
    assert_eq!(pp("#if 0\n/* #endif\n*/\n#endif\nz", &[]), "z");
}

#[test]
fn pragmas_and_null_directives_are_dropped() {
    let text = "#pragma triton grid(cdiv(M, TM), 1) 'anything' $ here\n#\nx\n#  pragma once\n";
    assert_eq!(pp(text, &[]), "x");
}

#[test]
fn command_line_values_are_code() {
    assert_eq!(pp("c += USE_A @ B;", &[("USE_A", "^a")]), "c += ^ a @ B ;");
    assert_eq!(
        pp(
            "x[SHAPE]",
            &[("SHAPE", "TM, TK"), ("TM", "64"), ("TK", "8")]
        ),
        "x [ 64 , 8 ]"
    );
    assert_eq!(pp("rm[BC]", &[("BC", ":, newaxis")]), "rm [ : , newaxis ]");
    assert_eq!(
        pp("y = X;", &[("X", "a[:, newaxis]")]),
        "y = a [ : , newaxis ] ;"
    );
    assert_eq!(pp("TYPE* p;", &[("TYPE", "float")]), "float * p ;");
    assert_eq!(pp("a E b", &[("E", "")]), "a b");
    assert_eq!(pp("#ifdef E\nyes\n#endif", &[("E", "")]), "yes");
    assert_eq!(pp("F(2)", &[("F(x)", "x + 1")]), "2 + 1");
    assert_eq!(pp("P", &[("P", "(1)")]), "( 1 )");
    // a token from a -D value carries the span of its use
    let (sources, tokens) = run("x = V;", &options(&[("V", "7")]));
    assert_eq!(sources.name(tokens[2].span.file), "test.tc");
    assert_eq!(tokens[2].span.range(), 4..5);
}

struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tritonc-front-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("inc")).unwrap();
        std::fs::create_dir_all(dir.join("src")).unwrap();
        TempDir(dir)
    }
    fn write(&self, rel: &str, text: &str) -> std::path::PathBuf {
        let path = self.0.join(rel);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn pp_file(
    main: &std::path::Path,
    include_dirs: Vec<std::path::PathBuf>,
) -> tritonc::diagnostics::Result<(SourceMap, Vec<Token>)> {
    let mut sources = SourceMap::new();
    let text = std::fs::read_to_string(main).unwrap();
    let file = sources.add(main.display().to_string(), text);
    let opts = FrontOptions {
        defines: vec![],
        include_dirs,
    };
    preprocess(&mut sources, file, &opts).map(|t| (sources, t))
}

#[test]
fn include_relative_then_search_dirs() {
    let dir = TempDir::new("include");
    dir.write("src/local.h", "#define LOCAL 1\nlocal_token");
    dir.write(
        "inc/common.h",
        "#ifndef COMMON_H\n#define COMMON_H\n#include \"common.h\"\n#define TM 64\n#endif",
    );
    let main = dir.write(
        "src/main.tc",
        "#include \"local.h\"\n#include \"common.h\"\n#include <common.h>\nLOCAL TM",
    );
    let (sources, tokens) = pp_file(&main, vec![dir.0.join("inc")]).unwrap();
    let words: Vec<String> = tokens.iter().map(|t| spell(&t.kind)).collect();
    assert_eq!(words, ["local_token", "1", "64", ""]);
    // tokens from the included file point into it
    assert!(sources.name(tokens[0].span.file).ends_with("local.h"));
}

#[test]
fn pragma_once_includes_a_file_once() {
    let dir = TempDir::new("once");
    dir.write("src/once.h", "#pragma once\nonce_token");
    let main = dir.write(
        "src/main.tc",
        "#include \"once.h\"\n#include \"once.h\"\n#include \"../src/once.h\"\nend",
    );
    let (_, tokens) = pp_file(&main, vec![]).unwrap();
    let words: Vec<String> = tokens.iter().map(|t| spell(&t.kind)).collect();
    assert_eq!(words, ["once_token", "end", ""]);
}

#[test]
fn include_errors() {
    let dir = TempDir::new("include-err");
    let main = dir.write("src/main.tc", "#include \"missing.h\"\n");
    let d = pp_file(&main, vec![]).err().unwrap();
    assert!(
        d.message.contains("cannot find include file `missing.h`"),
        "{}",
        d.message
    );
    let cyc = dir.write("src/cycle.tc", "#include \"cycle.tc\"\n");
    let d = pp_file(&cyc, vec![]).err().unwrap();
    assert!(d.message.contains("nested more than 64"), "{}", d.message);
    // a conditional may not close in another file
    dir.write("src/open.h", "#if 1\n");
    let main = dir.write("src/main2.tc", "#include \"open.h\"\n#endif\n");
    let d = pp_file(&main, vec![]).err().unwrap();
    assert!(d.message.contains("no matching `#endif`"), "{}", d.message);
}
