//! Lexer: token kinds, exact spans, line-start and spacing flags, errors.
use tritonc::front::lexer::lex;
use tritonc::front::token::{Punct, Token, TokenKind};
use tritonc::span::SourceMap;

fn tokens(text: &str) -> Vec<Token> {
    lex(0, text).unwrap_or_else(|d| panic!("{}", d.message))
}

fn kinds(text: &str) -> Vec<TokenKind> {
    tokens(text)
        .into_iter()
        .map(|t| t.kind)
        .filter(|k| *k != TokenKind::Eof)
        .collect()
}

fn p(p: Punct) -> TokenKind {
    TokenKind::Punct(p)
}

fn id(s: &str) -> TokenKind {
    TokenKind::Ident(s.into())
}

fn float(value: f64, is_f32: bool) -> TokenKind {
    TokenKind::Float { value, is_f32 }
}

#[test]
fn identifiers_and_integers() {
    assert_eq!(
        kinds("int8_t _x9 __global__"),
        [id("int8_t"), id("_x9"), id("__global__")]
    );
    assert_eq!(
        kinds("0 42 0x2A 0X2a 052 42u 42UL 42ll 9223372036854775807"),
        [0, 42, 42, 42, 42, 42, 42, 42, i64::MAX].map(TokenKind::Int)
    );
    assert_eq!(kinds("'a' '\\n'"), [TokenKind::Int(97), TokenKind::Int(10)]);
}

#[test]
fn floats() {
    assert_eq!(
        kinds("1.5 1e-3 .5 2.f 2.5F 1E3 2.71 0.5L 1.e2"),
        [
            float(1.5, false),
            float(1e-3, false),
            float(0.5, false),
            float(2.0, true),
            float(2.5, true),
            float(1000.0, false),
            float(2.71, false),
            float(0.5, false),
            float(100.0, false),
        ]
    );
    // a range between literals is not a float
    assert_eq!(
        kinds("0...32"),
        [TokenKind::Int(0), p(Punct::Ellipsis), TokenKind::Int(32)]
    );
}

#[test]
fn punctuators_longest_match() {
    use Punct::*;
    let text = "( ) [ ] { } , ; : ? . ... -> + - * / % ^ & | ~ ! @ < > <= >= == != && || << >> = += -= *= /= %= &= |= ^= <<= >>= ++ -- # ##";
    let want = [
        LParen,
        RParen,
        LBracket,
        RBracket,
        LBrace,
        RBrace,
        Comma,
        Semi,
        Colon,
        Question,
        Dot,
        Ellipsis,
        Arrow,
        Plus,
        Minus,
        Star,
        Slash,
        Percent,
        Caret,
        Amp,
        Pipe,
        Tilde,
        Bang,
        At,
        Lt,
        Gt,
        Le,
        Ge,
        EqEq,
        Ne,
        AndAnd,
        OrOr,
        Shl,
        Shr,
        Assign,
        PlusAssign,
        MinusAssign,
        StarAssign,
        SlashAssign,
        PercentAssign,
        AmpAssign,
        PipeAssign,
        CaretAssign,
        ShlAssign,
        ShrAssign,
        PlusPlus,
        MinusMinus,
        Hash,
        HashHash,
    ];
    assert_eq!(kinds(text), want.map(TokenKind::Punct));
    assert_eq!(kinds("a+++b"), [id("a"), p(PlusPlus), p(Plus), id("b")]);
    assert_eq!(
        kinds("*?(m)"),
        [p(Star), p(Question), p(LParen), id("m"), p(RParen)]
    );
    assert_eq!(kinds("x..y"), [id("x"), p(Dot), p(Dot), id("y")]);
}

#[test]
fn strings_and_comments() {
    assert_eq!(kinds(r#""a\"b\\c""#), [TokenKind::Str("a\"b\\c".into())]);
    assert_eq!(
        kinds("a // x y\nb /* c\n d */ e"),
        [id("a"), id("b"), id("e")]
    );
}

#[test]
fn spans_are_exact() {
    let text = "float c[TM, TN] = 1.5f; // done";
    let spans: Vec<&str> = tokens(text).iter().map(|t| &text[t.span.range()]).collect();
    assert_eq!(
        spans,
        ["float", "c", "[", "TM", ",", "TN", "]", "=", "1.5f", ";", ""]
    );
    let eof = tokens(text).pop().unwrap();
    assert_eq!(eof.span.range(), text.len()..text.len());
}

#[test]
fn line_start_and_space_flags() {
    let toks = tokens("#define F(x) x\n  a b\\\nc /* \n */ d\ne");
    let flags: Vec<(String, bool, bool)> = toks
        .iter()
        .filter(|t| t.kind != TokenKind::Eof)
        .map(|t| {
            (
                tritonc::front::lexer::spell(&t.kind),
                t.at_line_start,
                t.space_before,
            )
        })
        .collect();
    let want = [
        ("#", true, false),
        ("define", false, false),
        ("F", false, true),
        ("(", false, false), // touches `F`: a function-like macro
        ("x", false, false),
        (")", false, false),
        ("x", false, true),
        ("a", true, true),
        ("b", false, true),
        ("c", false, true), // a line continuation does not start a line
        ("d", false, true), // nor does a newline inside a comment
        ("e", true, true),
    ];
    let want: Vec<(String, bool, bool)> = want
        .iter()
        .map(|(s, a, b)| (s.to_string(), *a, *b))
        .collect();
    assert_eq!(flags, want);
}

#[test]
fn errors_point_at_the_offending_text() {
    let cases = [
        ("a $ b", "t.tc:1:3", "unexpected character `$`"),
        ("a\n  é", "t.tc:2:3", "unexpected character `\\u{e9}`"),
        ("x \\ y", "t.tc:1:3", "stray `\\` in program"),
        ("x = \"abc\ny", "t.tc:1:5", "unterminated string literal"),
        (
            "x = 'ab'",
            "t.tc:1:5",
            "character literal must hold exactly one character",
        ),
        (
            "a /* b",
            "t.tc:1:3",
            "unterminated comment: `/*` has no matching `*/`",
        ),
        ("0x", "t.tc:1:1", "hexadecimal literal has no digits"),
        (
            "1.5e+x",
            "t.tc:1:1",
            "exponent of floating literal has no digits",
        ),
        (
            "99999999999999999999",
            "t.tc:1:1",
            "integer literal is too large for a 64-bit integer",
        ),
        (
            "x = 3f;",
            "t.tc:1:5",
            "invalid suffix `f` on integer literal (write `3.f`)",
        ),
        (
            "x = 1.5q;",
            "t.tc:1:5",
            "invalid suffix `q` on numeric literal",
        ),
    ];
    for (text, location, message) in cases {
        let mut sources = SourceMap::new();
        let file = sources.add("t.tc", text);
        let d = lex(file, text).expect_err(text);
        assert_eq!(d.location(&sources), location, "{text:?}");
        assert_eq!(d.message, message, "{text:?}");
        assert!(d.render(&sources).contains('^'));
    }
}
