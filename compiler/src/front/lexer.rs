//! Source text -> tokens.
//!
//! [`Lexer`] is a cursor over one file: the preprocessor drives it line by line
//! (it must skip the raw text of `#if 0` groups and `#pragma` lines without
//! tokenizing them), while [`lex`] simply collects every token of a file.
use super::token::{Punct, Token, TokenKind};
use crate::diagnostics::{Diagnostic, Result};
use crate::span::{FileId, Span};
use std::rc::Rc;

/// Lexes one whole file; the last token is `Eof`.
pub fn lex(file: FileId, text: &str) -> Result<Vec<Token>> {
    let mut lexer = Lexer::new(file, text);
    let mut tokens = Vec::new();
    loop {
        let token = lexer.next_token()?;
        let done = token.kind == TokenKind::Eof;
        tokens.push(token);
        if done {
            return Ok(tokens);
        }
    }
}

/// A cursor over the text of one file (or a byte range of it).
pub struct Lexer {
    file: FileId,
    text: Rc<str>,
    pos: usize,
    end: usize,
    /// No token has been produced since the last newline.
    line_start: bool,
}

impl Lexer {
    pub fn new(file: FileId, text: &str) -> Self {
        Self::with_range(file, Rc::from(text), 0, text.len())
    }

    /// Lexes only `text[start..end]`, with spans relative to the whole text.
    pub fn with_range(file: FileId, text: Rc<str>, start: usize, end: usize) -> Self {
        let end = end.min(text.len());
        Lexer {
            file,
            text,
            pos: start.min(end),
            end,
            line_start: true,
        }
    }

    pub fn file(&self) -> FileId {
        self.file
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        let i = self.pos + ahead;
        if i < self.end {
            Some(self.text.as_bytes()[i])
        } else {
            None
        }
    }

    fn span(&self, start: usize) -> Span {
        Span::new(self.file, start, self.pos)
    }

    /// Skips blanks, line continuations and comments. Stops before a newline when
    /// `stop_at_newline`; otherwise consumes it and marks the next token as first on
    /// its line. Returns whether anything was skipped.
    fn skip_trivia(&mut self, stop_at_newline: bool) -> Result<bool> {
        let start = self.pos;
        while let Some(c) = self.peek_byte(0) {
            match c {
                b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => self.pos += 1,
                b'\n' => {
                    if stop_at_newline {
                        break;
                    }
                    self.pos += 1;
                    self.line_start = true;
                }
                b'\\' if self.continuation_len() > 0 => self.pos += self.continuation_len(),
                b'/' if self.peek_byte(1) == Some(b'/') => self.skip_line_comment(),
                b'/' if self.peek_byte(1) == Some(b'*') => self.skip_block_comment()?,
                _ => break,
            }
        }
        Ok(self.pos > start)
    }

    /// Length of a `\` + newline at the cursor (0 when there is none).
    fn continuation_len(&self) -> usize {
        match (self.peek_byte(1), self.peek_byte(2)) {
            (Some(b'\n'), _) => 2,
            (Some(b'\r'), Some(b'\n')) => 3,
            _ => 0,
        }
    }

    fn skip_line_comment(&mut self) {
        while let Some(c) = self.peek_byte(0) {
            if c == b'\n' {
                break;
            }
            if c == b'\\' && self.continuation_len() > 0 {
                self.pos += self.continuation_len();
            } else {
                self.pos += 1;
            }
        }
    }

    /// A block comment is one blank: newlines inside it do not end a directive line.
    fn skip_block_comment(&mut self) -> Result<()> {
        let start = self.pos;
        self.pos += 2;
        loop {
            match self.peek_byte(0) {
                None => {
                    return Err(Diagnostic::error(
                        Span::new(self.file, start, start + 2),
                        "unterminated comment: `/*` has no matching `*/`",
                    ))
                }
                Some(b'*') if self.peek_byte(1) == Some(b'/') => {
                    self.pos += 2;
                    return Ok(());
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    /// Whether the cursor, after trivia, is at a `#` that begins a line (a directive).
    pub fn at_directive(&mut self) -> Result<bool> {
        self.skip_trivia(false)?;
        Ok(self.line_start && self.peek_byte(0) == Some(b'#') && self.peek_byte(1) != Some(b'#'))
    }

    pub fn at_eof(&mut self) -> Result<bool> {
        self.skip_trivia(false)?;
        Ok(self.pos >= self.end)
    }

    /// The next token of the current line, or `None` at its end.
    pub fn next_on_line(&mut self) -> Result<Option<Token>> {
        let space = self.skip_trivia(true)?;
        match self.peek_byte(0) {
            None | Some(b'\n') => Ok(None),
            Some(_) => self.lex_token(space).map(Some),
        }
    }

    /// Skips the rest of the current line without tokenizing it (comments are still
    /// honoured, so a `/*` opened here is closed where C says). Returns the span of
    /// the skipped text, trimmed, for `#error` messages.
    pub fn rest_of_line(&mut self) -> Result<Span> {
        self.skip_trivia(true)?;
        let start = self.pos;
        let mut last_end = start;
        while let Some(c) = self.peek_byte(0) {
            match c {
                b'\n' => break,
                b'\\' if self.continuation_len() > 0 => self.pos += self.continuation_len(),
                b'/' if self.peek_byte(1) == Some(b'/') => self.skip_line_comment(),
                b'/' if self.peek_byte(1) == Some(b'*') => self.skip_block_comment()?,
                b' ' | b'\t' | b'\r' => self.pos += 1,
                _ => {
                    self.pos += 1;
                    last_end = self.pos;
                }
            }
        }
        // Never stop inside a UTF-8 sequence.
        while !self.text.is_char_boundary(last_end) {
            last_end += 1;
        }
        Ok(Span::new(self.file, start, last_end))
    }

    pub fn next_token(&mut self) -> Result<Token> {
        let space = self.skip_trivia(false)?;
        if self.pos >= self.end {
            return Ok(Token {
                kind: TokenKind::Eof,
                span: Span::new(self.file, self.end, self.end),
                at_line_start: self.line_start,
                space_before: space,
            });
        }
        self.lex_token(space)
    }

    /// Lexes the token at the cursor (there is one: not blank, not at the end).
    fn lex_token(&mut self, space_before: bool) -> Result<Token> {
        let start = self.pos;
        let at_line_start = self.line_start;
        let c = self.peek_byte(0).unwrap_or(b'\0');
        let kind = if c.is_ascii_alphabetic() || c == b'_' {
            self.lex_ident()
        } else if c.is_ascii_digit()
            || (c == b'.' && self.peek_byte(1).is_some_and(|d| d.is_ascii_digit()))
        {
            self.lex_number()?
        } else if c == b'"' {
            self.lex_string()?
        } else if c == b'\'' {
            self.lex_char()?
        } else if let Some((punct, len)) = self.match_punct() {
            self.pos += len;
            TokenKind::Punct(punct)
        } else {
            let ch = self.text[start..].chars().next().unwrap_or('\0');
            let span = Span::new(self.file, start, start + ch.len_utf8());
            let message = if ch == '\\' {
                "stray `\\` in program".to_string()
            } else {
                format!("unexpected character `{}`", ch.escape_default())
            };
            return Err(Diagnostic::error(span, message));
        };
        self.line_start = false;
        Ok(Token {
            kind,
            span: self.span(start),
            at_line_start,
            space_before,
        })
    }

    fn lex_ident(&mut self) -> TokenKind {
        let start = self.pos;
        while self
            .peek_byte(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
        TokenKind::Ident(self.text[start..self.pos].to_string())
    }

    fn eat_digits(&mut self, radix: u32) {
        while self
            .peek_byte(0)
            .is_some_and(|c| (c as char).is_digit(radix))
        {
            self.pos += 1;
        }
    }

    fn lex_number(&mut self) -> Result<TokenKind> {
        let start = self.pos;
        let is_hex =
            self.peek_byte(0) == Some(b'0') && matches!(self.peek_byte(1), Some(b'x') | Some(b'X'));
        if is_hex {
            self.pos += 2;
            let digits_start = self.pos;
            self.eat_digits(16);
            let digits = &self.text[digits_start..self.pos];
            if digits.is_empty() {
                return Err(Diagnostic::error(
                    self.span(start),
                    "hexadecimal literal has no digits",
                ));
            }
            let digits = digits.to_string();
            self.eat_int_suffix(start)?;
            return self.int_value(start, &digits, 16);
        }
        self.eat_digits(10);
        let mut is_float = false;
        // `0...TM` is `0 ... TM`, not `0.` followed by `..`.
        if self.peek_byte(0) == Some(b'.')
            && !(self.peek_byte(1) == Some(b'.') && self.peek_byte(2) == Some(b'.'))
        {
            is_float = true;
            self.pos += 1;
            self.eat_digits(10);
        }
        if matches!(self.peek_byte(0), Some(b'e') | Some(b'E')) {
            is_float = true;
            self.pos += 1;
            if matches!(self.peek_byte(0), Some(b'+') | Some(b'-')) {
                self.pos += 1;
            }
            let exp_start = self.pos;
            self.eat_digits(10);
            if self.pos == exp_start {
                self.eat_word();
                return Err(Diagnostic::error(
                    self.span(start),
                    "exponent of floating literal has no digits",
                ));
            }
        }
        let number = self.text[start..self.pos].to_string();
        if is_float {
            let mut is_f32 = false;
            match self.peek_byte(0) {
                Some(b'f') | Some(b'F') => {
                    is_f32 = true;
                    self.pos += 1;
                }
                Some(b'l') | Some(b'L') => self.pos += 1,
                _ => {}
            }
            self.reject_suffix(start)?;
            let value = number
                .parse::<f64>()
                .map_err(|_| Diagnostic::error(self.span(start), "invalid floating literal"))?;
            return Ok(TokenKind::Float { value, is_f32 });
        }
        // `2f` is not C, but a float written without a dot is what the user meant.
        if matches!(self.peek_byte(0), Some(b'f') | Some(b'F'))
            && !self
                .peek_byte(1)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            return Err(Diagnostic::error(
                Span::new(self.file, start, self.pos + 1),
                format!("invalid suffix `f` on integer literal (write `{number}.f`)"),
            ));
        }
        self.eat_int_suffix(start)?;
        if number.len() > 1 && number.starts_with('0') {
            if let Some(bad) = number.bytes().position(|c| c == b'8' || c == b'9') {
                return Err(Diagnostic::error(
                    Span::new(self.file, start + bad, start + bad + 1),
                    "invalid digit in octal literal",
                ));
            }
            return self.int_value(start, &number[1..], 8);
        }
        self.int_value(start, &number, 10)
    }

    fn eat_word(&mut self) {
        while self
            .peek_byte(0)
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_')
        {
            self.pos += 1;
        }
    }

    fn eat_int_suffix(&mut self, start: usize) -> Result<()> {
        while matches!(
            self.peek_byte(0),
            Some(b'u') | Some(b'U') | Some(b'l') | Some(b'L')
        ) {
            self.pos += 1;
        }
        self.reject_suffix(start)
    }

    /// A literal glued to letters (`12abc`) is an error, as in C.
    fn reject_suffix(&mut self, start: usize) -> Result<()> {
        let suffix_start = self.pos;
        self.eat_word();
        if self.pos > suffix_start {
            let suffix = &self.text[suffix_start..self.pos];
            return Err(Diagnostic::error(
                self.span(start),
                format!("invalid suffix `{suffix}` on numeric literal"),
            ));
        }
        Ok(())
    }

    fn int_value(&self, start: usize, digits: &str, radix: u32) -> Result<TokenKind> {
        if digits.is_empty() {
            return Ok(TokenKind::Int(0));
        }
        u64::from_str_radix(digits, radix)
            .ok()
            .and_then(|v| i64::try_from(v).ok())
            .map(TokenKind::Int)
            .ok_or_else(|| {
                Diagnostic::error(
                    self.span(start),
                    "integer literal is too large for a 64-bit integer",
                )
            })
    }

    /// Reads the body of a quoted literal; returns its unescaped characters.
    fn lex_quoted(&mut self, quote: u8, what: &str) -> Result<String> {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let rest = &self.text[self.pos..self.end];
            let Some(ch) = rest.chars().next() else {
                break;
            };
            if ch == '\n' {
                break;
            }
            self.pos += ch.len_utf8();
            if ch as u32 == quote as u32 {
                return Ok(value);
            }
            if ch == '\\' {
                let Some(esc) = self.text[self.pos..self.end].chars().next() else {
                    break;
                };
                if esc == '\n' {
                    break;
                }
                self.pos += esc.len_utf8();
                value.push(match esc {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    '0' => '\0',
                    other => other,
                });
            } else {
                value.push(ch);
            }
        }
        Err(Diagnostic::error(
            Span::new(self.file, start, start + 1),
            format!("unterminated {what} literal"),
        ))
    }

    fn lex_string(&mut self) -> Result<TokenKind> {
        self.lex_quoted(b'"', "string").map(TokenKind::Str)
    }

    /// `'a'` is the integer code of `a`, as in C.
    fn lex_char(&mut self) -> Result<TokenKind> {
        let start = self.pos;
        let value = self.lex_quoted(b'\'', "character")?;
        let mut chars = value.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Ok(TokenKind::Int(c as i64)),
            _ => Err(Diagnostic::error(
                self.span(start),
                "character literal must hold exactly one character",
            )),
        }
    }

    fn match_punct(&self) -> Option<(Punct, usize)> {
        use Punct::*;
        let b = |i| self.peek_byte(i).unwrap_or(b'\0');
        let (c0, c1, c2) = (b(0), b(1), b(2));
        let three = match (c0, c1, c2) {
            (b'.', b'.', b'.') => Some(Ellipsis),
            (b'<', b'<', b'=') => Some(ShlAssign),
            (b'>', b'>', b'=') => Some(ShrAssign),
            _ => None,
        };
        if let Some(p) = three {
            return Some((p, 3));
        }
        let two = match (c0, c1) {
            (b'-', b'>') => Some(Arrow),
            (b'+', b'+') => Some(PlusPlus),
            (b'-', b'-') => Some(MinusMinus),
            (b'+', b'=') => Some(PlusAssign),
            (b'-', b'=') => Some(MinusAssign),
            (b'*', b'=') => Some(StarAssign),
            (b'/', b'=') => Some(SlashAssign),
            (b'%', b'=') => Some(PercentAssign),
            (b'&', b'=') => Some(AmpAssign),
            (b'|', b'=') => Some(PipeAssign),
            (b'^', b'=') => Some(CaretAssign),
            (b'<', b'<') => Some(Shl),
            (b'>', b'>') => Some(Shr),
            (b'<', b'=') => Some(Le),
            (b'>', b'=') => Some(Ge),
            (b'=', b'=') => Some(EqEq),
            (b'!', b'=') => Some(Ne),
            (b'&', b'&') => Some(AndAnd),
            (b'|', b'|') => Some(OrOr),
            (b'#', b'#') => Some(HashHash),
            _ => None,
        };
        if let Some(p) = two {
            return Some((p, 2));
        }
        let one = match c0 {
            b'(' => LParen,
            b')' => RParen,
            b'[' => LBracket,
            b']' => RBracket,
            b'{' => LBrace,
            b'}' => RBrace,
            b',' => Comma,
            b';' => Semi,
            b':' => Colon,
            b'?' => Question,
            b'.' => Dot,
            b'+' => Plus,
            b'-' => Minus,
            b'*' => Star,
            b'/' => Slash,
            b'%' => Percent,
            b'^' => Caret,
            b'&' => Amp,
            b'|' => Pipe,
            b'~' => Tilde,
            b'!' => Bang,
            b'@' => At,
            b'<' => Lt,
            b'>' => Gt,
            b'=' => Assign,
            b'#' => Hash,
            _ => return None,
        };
        Some((one, 1))
    }
}

/// How a punctuator is written (for messages, stringizing and pasting).
pub fn punct_text(p: Punct) -> &'static str {
    use Punct::*;
    match p {
        LParen => "(",
        RParen => ")",
        LBracket => "[",
        RBracket => "]",
        LBrace => "{",
        RBrace => "}",
        Comma => ",",
        Semi => ";",
        Colon => ":",
        Question => "?",
        Dot => ".",
        Ellipsis => "...",
        Arrow => "->",
        Plus => "+",
        Minus => "-",
        Star => "*",
        Slash => "/",
        Percent => "%",
        Caret => "^",
        Amp => "&",
        Pipe => "|",
        Tilde => "~",
        Bang => "!",
        At => "@",
        Lt => "<",
        Gt => ">",
        Le => "<=",
        Ge => ">=",
        EqEq => "==",
        Ne => "!=",
        AndAnd => "&&",
        OrOr => "||",
        Shl => "<<",
        Shr => ">>",
        Assign => "=",
        PlusAssign => "+=",
        MinusAssign => "-=",
        StarAssign => "*=",
        SlashAssign => "/=",
        PercentAssign => "%=",
        AmpAssign => "&=",
        PipeAssign => "|=",
        CaretAssign => "^=",
        ShlAssign => "<<=",
        ShrAssign => ">>=",
        PlusPlus => "++",
        MinusMinus => "--",
        Hash => "#",
        HashHash => "##",
    }
}

/// Source-like spelling of a token kind.
pub fn spell(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Ident(name) => name.clone(),
        TokenKind::Int(v) => v.to_string(),
        TokenKind::Float { value, is_f32 } => {
            let mut s = format!("{value:?}");
            if *is_f32 {
                s.push('f');
            }
            s
        }
        TokenKind::Str(s) => format!("{s:?}"),
        TokenKind::Punct(p) => punct_text(*p).to_string(),
        TokenKind::Eof => String::new(),
    }
}

/// Names a token in an error message: "`foo`", "end of file".
pub fn describe(kind: &TokenKind) -> String {
    match kind {
        TokenKind::Eof => "end of file".to_string(),
        TokenKind::Str(_) => "a string literal".to_string(),
        other => format!("`{}`", spell(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(0, text).unwrap().into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn range_without_spaces_is_three_tokens() {
        assert_eq!(
            kinds("0...TM"),
            vec![
                TokenKind::Int(0),
                TokenKind::Punct(Punct::Ellipsis),
                TokenKind::Ident("TM".into()),
                TokenKind::Eof
            ]
        );
    }

    #[test]
    fn rest_of_line_skips_comments_and_continuations() {
        let mut lx = Lexer::new(0, "a b /* x\n y */ c \\\n d\ne");
        let span = lx.rest_of_line().unwrap();
        assert_eq!(&lx.text()[span.range()], "a b /* x\n y */ c \\\n d");
        let e = lx.next_token().unwrap();
        assert!(e.is_ident("e") && e.at_line_start);
    }
}
