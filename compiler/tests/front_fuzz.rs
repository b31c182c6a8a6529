//! Random input never panics the front end: `parse_file` returns Ok or a
//! diagnostic whose span lies inside its file and renders with a caret.
mod front_support;
use front_support::{kernel_path, options, parse_text};
use proptest::prelude::*;

fn check(text: &str, defines: &[(&str, &str)]) {
    let (sources, _, parsed) = parse_text("fuzz.tc", text, &options(defines));
    if let Err(d) = parsed {
        let len = sources.text(d.span.file).len() as u32;
        assert!(
            d.span.start <= d.span.end && d.span.end <= len,
            "span {:?} outside file of {len} bytes: {}",
            d.span,
            d.message
        );
        let rendered = d.render(&sources);
        assert!(rendered.contains(&d.message), "{rendered}");
        let _ = d.location(&sources);
    }
}

const WORDS: &[&str] = &[
    "void",
    "int",
    "float",
    "half",
    "bool",
    "long",
    "unsigned",
    "const",
    "__global__",
    "f",
    "x",
    "y",
    "TM",
    "newaxis",
    "max",
    "min",
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "break",
    "true",
    "get_program_id",
    "__multipleof",
    "__aligned",
    "__noalias",
    "0",
    "1",
    "32",
    "0x1f",
    "1.5f",
    ".5",
    "1e",
    "\"s\"",
    "'c'",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ";",
    ":",
    "?",
    "...",
    "..",
    ".",
    "->",
    "+",
    "-",
    "*",
    "/",
    "%",
    "^",
    "&",
    "|",
    "~",
    "!",
    "@",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "&&",
    "||",
    "<<",
    ">>",
    "=",
    "+=",
    "-=",
    "*=",
    "^=",
    "<<=",
    "++",
    "--",
    "*?(",
    "#",
    "##",
    "\n#define ",
    "\n#define F(a) ",
    "\n#define G(a, ...) a ## __VA_ARGS__ #a ",
    "F(",
    "G(",
    "\n#undef ",
    "\n#if ",
    "\n#ifdef ",
    "\n#elif ",
    "\n#else\n",
    "\n#endif\n",
    "\n#pragma x\n",
    "\n#error e\n",
    "\n#include \"q\"\n",
    "defined",
    "\n",
    "/*",
    "*/",
    "//",
    "\\\n",
    "$",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..80).prop_map(|w| w.join(" "))
}

/// A seed kernel with a few random edits.
fn mutated_kernel() -> impl Strategy<Value = String> {
    let names = [
        "dot.tc",
        "transpose_masked.tc",
        "softmax.tc",
        "dot_trans.tc",
    ];
    (
        prop::sample::select(names.to_vec()),
        prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                prop::sample::select(WORDS),
                0..3u8,
            ),
            1..6,
        ),
    )
        .prop_map(|(name, edits)| {
            let mut text = std::fs::read_to_string(kernel_path(name)).unwrap_or_default();
            for (at, word, how) in edits {
                if text.is_empty() {
                    break;
                }
                let mut i = at.index(text.len());
                while !text.is_char_boundary(i) {
                    i -= 1;
                }
                let end = text[i..]
                    .char_indices()
                    .nth(1)
                    .map_or(text.len(), |(j, _)| i + j);
                match how {
                    0 => text.insert_str(i, word),
                    1 => text.replace_range(i..end, word),
                    _ => text.replace_range(i..end, ""),
                }
            }
            text
        })
}

const TRANS_DEFS: &[(&str, &str)] = &[
    ("TYPE", "half"),
    ("TM", "64"),
    ("TN", "64"),
    ("TK", "16"),
    ("USE_A", "^a"),
    ("USE_B", "b"),
    ("STRIDE_AK", "lda"),
    ("STRIDE_AM", "1"),
    ("STRIDE_BK", "ldb"),
    ("STRIDE_BN", "1"),
    ("BROADCAST_AK", ":,newaxis"),
    ("BROADCAST_AM", "newaxis,:"),
    ("BROADCAST_BK", ":,newaxis"),
    ("BROADCAST_BN", "newaxis,:"),
    ("SHAPE_A", "TK,TM"),
    ("SHAPE_B", "TK,TN"),
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        check(&String::from_utf8_lossy(&bytes), &[]);
    }

    #[test]
    fn random_ascii_never_panics(text in "[ -~\n\t]{0,200}") {
        check(&text, &[]);
    }

    #[test]
    fn token_soup_never_panics(text in soup()) {
        check(&text, &[]);
    }

    #[test]
    fn token_soup_in_a_function_never_panics(text in soup()) {
        check(&format!("void f(int a) {{ {text} }}"), &[("TM", "32")]);
    }

    #[test]
    fn mutated_kernels_never_panic(text in mutated_kernel()) {
        check(&text, TRANS_DEFS);
    }

    #[test]
    fn random_define_values_never_panic(value in "[ -~]{0,30}", name in "[A-Za-z_(),. 0-9]{0,8}") {
        check("void f() { TYPE x = V; }", &[("TYPE", "float"), (name.as_str(), value.as_str()), ("V", value.as_str())]);
    }
}
