//! Malformed inputs: each must give one diagnostic at the exact file:line:col,
//! with a message naming the problem and a caret in the rendering.
mod front_support;
use front_support::*;

struct Case {
    text: &'static str,
    defines: &'static [(&'static str, &'static str)],
    location: &'static str,
    message: &'static str,
}

const fn case(text: &'static str, location: &'static str, message: &'static str) -> Case {
    Case {
        text,
        defines: &[],
        location,
        message,
    }
}

const CASES: &[Case] = &[
    // lexer
    case(
        "void f() { int $x; }",
        "test.tc:1:16",
        "unexpected character `$`",
    ),
    case(
        "void f() {\n  /* never closed\n}",
        "test.tc:2:3",
        "unterminated comment",
    ),
    case(
        "#include \"a.h\nvoid f() {}",
        "test.tc:1:10",
        "unterminated string literal",
    ),
    case(
        "void f() { int x = 12abc; }",
        "test.tc:1:20",
        "invalid suffix `abc` on numeric literal",
    ),
    case(
        "void f() { float x = 1e+; }",
        "test.tc:1:22",
        "exponent of floating literal has no digits",
    ),
    case(
        "void f() { int x = 09; }",
        "test.tc:1:21",
        "invalid digit in octal literal",
    ),
    // parser
    case(
        "void f() {\n  int a = 1\n  int b = 2;\n}",
        "test.tc:3:3",
        "expected `;` after declaration, found `int`",
    ),
    case(
        "void f() { x = (a + b; }",
        "test.tc:1:22",
        "expected `)` to close `(`, found `;`",
    ),
    case(
        "void f() { y = x[i]; }",
        "test.tc:1:18",
        "tile subscripts take `:`, `newaxis`, or a reduction (`+`, `max`, `min`), found `i`",
    ),
    case(
        "void f() { y = x[]; }",
        "test.tc:1:18",
        "tile subscripts take",
    ),
    case(
        "void f(unsigned int n) {}",
        "test.tc:1:8",
        "unsigned types are not supported",
    ),
    case(
        "void f() { int float x; }",
        "test.tc:1:16",
        "conflicting type specifiers `float` and `int`",
    ),
    case(
        "void f() { y = ]; }",
        "test.tc:1:16",
        "expected an expression, found `]`",
    ),
    case(
        "void f() { y = a.b; }",
        "test.tc:1:17",
        "member access is not supported",
    ),
    case(
        "void f() { else x; }",
        "test.tc:1:12",
        "`else` without a matching `if`",
    ),
    case(
        "void f() {\n  x = 1;\n",
        "test.tc:3:1",
        "expected `}` to close `{`, found end of file",
    ),
    case(
        "void f(int lda __multipleof(x)) {}",
        "test.tc:1:29",
        "expected a positive integer in `__multipleof`",
    ),
    case(
        "int x = 3;",
        "test.tc:1:7",
        "expected `(` after the function name, found `=`",
    ),
    case(
        "foo();",
        "test.tc:1:1",
        "expected a function definition (a return type), found `foo`",
    ),
    case(
        "void f() { for (int i = 0; i < 4 i++) {} }",
        "test.tc:1:34",
        "expected `;` after the `for` condition, found `i`",
    ),
    case(
        "void f() { c = a ? b; }",
        "test.tc:1:21",
        "expected `:` in the conditional expression, found `;`",
    ),
    case(
        "void f() { y = *?x; }",
        "test.tc:1:18",
        "expected `(` after `*?` (the mask), found `x`",
    ),
    case(
        "void f() { y = &x; }",
        "test.tc:1:16",
        "the address-of operator `&` is not supported",
    ),
    case(
        "void f() {\n  TYPE* pa[TM] = A;\n}",
        "test.tc:2:3",
        "unknown type name `TYPE`",
    ),
    case(
        "void f() { T x = 1; }",
        "test.tc:1:12",
        "unknown type name `T`",
    ),
    case(
        "void f() { T * x = 1; }",
        "test.tc:1:12",
        "unknown type name `T`",
    ),
    // preprocessor
    case(
        "#if 1\nx\n#else\ny\n#else\nz\n#endif",
        "test.tc:5:1",
        "`#else` after `#else`",
    ),
    case(
        "x\n#else\ny",
        "test.tc:2:1",
        "`#else` without a matching `#if`",
    ),
    case("#endif", "test.tc:1:1", "`#endif` without a matching `#if`"),
    case(
        "\n#ifdef X\nvoid f() {}\n",
        "test.tc:2:1",
        "unterminated conditional",
    ),
    case(
        "#if 1\n#elif 1\n#else\n#elif 0\n#endif",
        "test.tc:4:1",
        "`#elif` after `#else`",
    ),
    case(
        "#foo bar\n",
        "test.tc:1:2",
        "unknown preprocessor directive `#foo`",
    ),
    case(
        "#if 0\n#else\n#error TM must be a power of two\n#endif",
        "test.tc:3:1",
        "#error TM must be a power of two",
    ),
    case(
        "#define F(a, b) a\nvoid f() { x = F(1); }",
        "test.tc:2:16",
        "macro `F` takes 2 argument(s), but 1 were given",
    ),
    case(
        "#define F(a) a\nvoid f() { x = F(1 ; }",
        "test.tc:2:16",
        "unterminated invocation of macro `F`",
    ),
    case("#if 4 / (2 - 2)\n#endif", "test.tc:1:7", "division by zero"),
    case(
        "#if 1 +\n#endif",
        "test.tc:1:8",
        "expected a value in preprocessor expression",
    ),
    case(
        "#if (1\n#endif",
        "test.tc:1:7",
        "expected `)` in preprocessor expression",
    ),
    case(
        "#define 3 x",
        "test.tc:1:9",
        "macro name must be an identifier",
    ),
    case(
        "#define F(a, a) a",
        "test.tc:1:14",
        "duplicate macro parameter `a`",
    ),
    case(
        "#define S(a) #b",
        "test.tc:1:14",
        "`#` in a function-like macro must be followed by a parameter name",
    ),
    case(
        "#define P(a, b) a ## b\nvoid f() { x = P(+, /); }",
        "test.tc:2:16",
        "pasting `+` and `/` does not give a valid token",
    ),
    case(
        "#include <nothere.h>",
        "test.tc:1:10",
        "cannot find include file `nothere.h`",
    ),
    // errors inside expansions point at the macro use
    case(
        "#define BAD )\nvoid f() {\n  x = BAD;\n}",
        "test.tc:3:7",
        "expected an expression, found `)`",
    ),
    Case {
        text: "void f() { TYPE x = 1; }",
        defines: &[("TYPE", "unsigned")],
        location: "test.tc:1:12",
        message: "unsigned types are not supported",
    },
    Case {
        text: "void f() { x = y; }",
        defines: &[("TM", "32"), ("BAD", "1 $ 2")],
        location: "<command-line>:2:9",
        message: "unexpected character `$`",
    },
    Case {
        text: "void f() { }",
        defines: &[("1X", "3")],
        location: "<command-line>:1:3",
        message: "macro name must be an identifier",
    },
];

#[test]
fn malformed_inputs_point_at_the_right_place() {
    let mut failures = Vec::new();
    for case in CASES {
        let (sources, diag) = parse_err(case.text, case.defines);
        let location = diag.location(&sources);
        let rendered = diag.render(&sources);
        if location != case.location
            || !diag.message.contains(case.message)
            || !rendered.contains('^')
        {
            failures.push(format!(
                "input {:?}\n  want {} {:?}\n  got  {} {:?}\n{rendered}",
                case.text, case.location, case.message, location, diag.message
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases wrong:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn unclosed_paren_names_the_opening_one() {
    let (sources, diag) = parse_err("void f() {\n  x = g(a,\n        b;\n}", &[]);
    assert_eq!(diag.location(&sources), "test.tc:3:10");
    assert_eq!(diag.message, "expected `)` to close `(`, found `;`");
    let (span, label) = &diag.secondary[0];
    assert_eq!(span.range(), 18..19);
    assert_eq!(label, "to match this `(`");
    let rendered = diag.render(&sources);
    assert!(rendered.contains("test.tc:3:10"), "{rendered}");
    assert!(rendered.contains("to match this `(`"), "{rendered}");
}

#[test]
fn wrong_argument_count_shows_the_definition() {
    let (sources, diag) = parse_err("#define F(a, b) a\nvoid f() { x = F(1); }", &[]);
    assert_eq!(diag.secondary[0].1, "macro defined here");
    assert_eq!(&sources.text(0)[diag.secondary[0].0.range()], "F");
    assert_eq!(&sources.text(0)[diag.span.range()], "F(1)");
}

#[test]
fn too_deep_nesting_is_a_diagnostic_not_a_crash() {
    let run = |text: String| {
        let (sources, diag) = parse_err(&text, &[]);
        assert!(
            diag.message.contains("nesting is too deep"),
            "{}",
            diag.render(&sources)
        );
    };
    // Run where the stack is small, as in a worker thread.
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            run(format!(
                "void f() {{ x = {}1{}; }}",
                "(".repeat(5000),
                ")".repeat(5000)
            ));
            run(format!("void f() {{ x = {}1; }}", "-".repeat(5000)));
            run(format!(
                "void f() {{ {}x;{} }}",
                "{".repeat(5000),
                "}".repeat(5000)
            ));
            run(format!("void f() {{ {} x = 1; }}", "if (a) ".repeat(5000)));
            run(format!("void f() {{ x{} = 1; }}", " = y".repeat(5000)));
            run(format!("void f() {{ x = {} 1; }}", "c ? 1 :".repeat(5000)));
        })
        .unwrap()
        .join()
        .unwrap();
    // 200 levels are fine.
    parse_ok(
        &format!(
            "void f() {{ x = {}1{}; }}",
            "(".repeat(200),
            ")".repeat(200)
        ),
        &[],
    );
}

#[test]
fn runaway_macros_end_in_a_diagnostic() {
    let mut text = String::from("#define M0 x x\n");
    for i in 1..40 {
        text.push_str(&format!("#define M{i} M{} M{}\n", i - 1, i - 1));
    }
    text.push_str("void f() { M39; }");
    let (sources, diag) = parse_err(&text, &[]);
    assert!(
        diag.message.contains("macro expansion is too large"),
        "{}",
        diag.render(&sources)
    );
    assert_eq!(diag.location(&sources), "test.tc:41:12");
}
