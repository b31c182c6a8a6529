//! Tokens shared by the lexer, the preprocessor and the parser.
//! Keywords and type names are plain identifiers: the parser recognises them,
//! so that macros can be named like anything (`TYPE`, `TM`, ...).

use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    Ident(String),
    /// Integer literal (decimal, hex `0x..`, octal `0..`; suffixes u/l ignored).
    Int(i64),
    /// Floating literal; `is_f32` when written with an `f`/`F` suffix.
    Float {
        value: f64,
        is_f32: bool,
    },
    /// String literal, only meaningful to `#include "file"`.
    Str(String),
    Punct(Punct),
    Eof,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
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
    /// `#` (directives, stringize) and `##` (token pasting).
    Hash,
    HashHash,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    /// Where the user should look: for tokens that come from a macro expansion
    /// this is the span of the macro use (the invocation), not of the definition.
    pub span: Span,
    /// First token on its source line (the preprocessor needs this for `#`).
    pub at_line_start: bool,
    /// Whitespace came right before this token (tells `#define F(x)` from `#define F (x)`).
    pub space_before: bool,
}

impl Token {
    pub fn is_punct(&self, p: Punct) -> bool {
        self.kind == TokenKind::Punct(p)
    }

    pub fn is_ident(&self, name: &str) -> bool {
        matches!(&self.kind, TokenKind::Ident(s) if s == name)
    }
}
