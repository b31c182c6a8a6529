//! Tokens of one `#pragma opgen` line, with byte offsets into the file.

use tritonc::diagnostics::Diagnostic;
use tritonc::span::{FileId, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    /// One punctuation character: `: [ ] , = ( ) { } + - * / ^`; `::` is its own.
    Punct(&'static str),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

const PUNCTS: &[&str] = &[
    "::", "&&", "<=", ">=", "==", "!=", "<", ">", ":", "[", "]", ",", "=", "(", ")", "{", "}", "+",
    "-", "*", "/", "^",
];

/// Splits `text` (which starts at byte `base` of `file`) into tokens.
pub fn lex(file: FileId, base: usize, text: &str) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            Tok::Ident(text[start..i].to_string())
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let span = Span::new(file, base + start, base + i);
            let value = text[start..i]
                .parse::<i64>()
                .map_err(|_| Diagnostic::error(span, "integer too large"))?;
            Tok::Int(value)
        } else if let Some(p) = PUNCTS.iter().find(|p| text[i..].starts_with(**p)) {
            i += p.len();
            Tok::Punct(p)
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            let span = Span::new(file, base + i, base + i + ch.len_utf8());
            return Err(Diagnostic::error(
                span,
                format!("unexpected character `{ch}` in an opgen spec"),
            ));
        };
        tokens.push(Token {
            tok,
            span: Span::new(file, base + start, base + i),
        });
    }
    Ok(tokens)
}

/// A cursor over one line's tokens; errors at the end point just past the line.
#[derive(Clone)]
pub struct Cursor<'a> {
    tokens: &'a [Token],
    pos: usize,
    end: Span,
}

impl<'a> Cursor<'a> {
    pub fn new(tokens: &'a [Token], end: Span) -> Self {
        Cursor {
            tokens,
            pos: 0,
            end,
        }
    }

    pub fn peek(&self) -> Option<&'a Token> {
        self.tokens.get(self.pos)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    pub fn next(&mut self) -> Option<&'a Token> {
        let t = self.tokens.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    /// Span of the next token, or the end of the line.
    pub fn here(&self) -> Span {
        self.peek().map(|t| t.span).unwrap_or(self.end)
    }

    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(q), .. }) if *q == p)
    }

    pub fn eat_punct(&mut self, p: &str) -> bool {
        if self.is_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect_punct(&mut self, p: &str, what: &str) -> Result<Span, Diagnostic> {
        let span = self.here();
        if self.eat_punct(p) {
            Ok(span)
        } else {
            Err(Diagnostic::error(
                span,
                format!("expected `{p}` {what}, found {}", self.describe()),
            ))
        }
    }

    pub fn expect_ident(&mut self, what: &str) -> Result<(String, Span), Diagnostic> {
        match self.peek() {
            Some(Token {
                tok: Tok::Ident(name),
                span,
            }) => {
                self.pos += 1;
                Ok((name.clone(), *span))
            }
            _ => Err(Diagnostic::error(
                self.here(),
                format!("expected {what}, found {}", self.describe()),
            )),
        }
    }

    pub fn expect_int(&mut self, what: &str) -> Result<(i64, Span), Diagnostic> {
        match self.peek() {
            Some(Token {
                tok: Tok::Int(v),
                span,
            }) => {
                self.pos += 1;
                Ok((*v, *span))
            }
            _ => Err(Diagnostic::error(
                self.here(),
                format!("expected {what}, found {}", self.describe()),
            )),
        }
    }

    pub fn expect_end(&self) -> Result<(), Diagnostic> {
        if self.at_end() {
            Ok(())
        } else {
            Err(Diagnostic::error(
                self.here(),
                format!("unexpected {} at the end of the line", self.describe()),
            ))
        }
    }

    /// What the next token is, for messages.
    pub fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the line".to_string(),
            Some(t) => match &t.tok {
                Tok::Ident(s) => format!("`{s}`"),
                Tok::Int(v) => format!("`{v}`"),
                Tok::Punct(p) => format!("`{p}`"),
            },
        }
    }
}
