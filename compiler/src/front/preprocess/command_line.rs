//! `-D` definitions: each `-DNAME=VALUE` becomes a line of the pseudo-file
//! [`COMMAND_LINE_FILE`], and VALUE is lexed there, so it may be any code and
//! errors in it point into that file.
use super::macros;
use super::{Preprocessor, COMMAND_LINE_FILE};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::lexer::{describe, Lexer};
use crate::front::token::{Punct, Token, TokenKind};
use crate::span::Span;
use std::rc::Rc;

impl Preprocessor<'_> {
    /// `-DNAME=VALUE` lines go to a pseudo-file, so errors can point into them.
    pub(super) fn define_command_line(&mut self) -> Result<()> {
        if self.options.defines.is_empty() {
            return Ok(());
        }
        let mut text = String::new();
        let mut ranges = Vec::new();
        for (name, value) in &self.options.defines {
            let head = text.len() + 2;
            text.push_str(&format!("-D{name}={value}\n"));
            let eq = head + name.len();
            ranges.push((head, eq, eq + 1 + value.len()));
        }
        let file = self.sources.add(COMMAND_LINE_FILE, text.clone());
        let text: Rc<str> = Rc::from(text);
        for (head, eq, end) in ranges {
            let name_span = Span::new(file, head, eq);
            let bad_name = || {
                Diagnostic::error(
                    name_span,
                    format!(
                        "macro name must be an identifier, found `{}`",
                        &text[head..eq]
                    ),
                )
            };
            let mut head_lexer = Lexer::with_range(file, text.clone(), head, eq);
            let head_tokens = lex_all(&mut head_lexer).map_err(|_| bad_name())?;
            if !matches!(
                head_tokens.first().map(|t| &t.kind),
                Some(TokenKind::Ident(_))
            ) {
                return Err(bad_name());
            }
            let Some((name_tok, params)) = head_tokens.split_first() else {
                return Err(Diagnostic::error(
                    Span::new(file, head - 2, eq),
                    "`-D` needs a macro name",
                ));
            };
            let mut value_lexer = Lexer::with_range(file, text.clone(), eq + 1, end);
            let mut rest = params.to_vec();
            let mut value = lex_all(&mut value_lexer)?;
            if let Some(first) = value.first_mut() {
                first.space_before = true;
            }
            rest.extend(value);
            if let Some(extra) = params
                .first()
                .filter(|t| !t.is_punct(Punct::LParen) || t.space_before)
            {
                return Err(Diagnostic::error(
                    extra.span,
                    format!("unexpected {} in `-D` macro name", describe(&extra.kind)),
                ));
            }
            let (name, mac) = macros::parse_definition(name_tok, &rest)?;
            self.macros.insert(name, mac);
        }
        Ok(())
    }
}

pub(super) fn lex_all(lexer: &mut Lexer) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    loop {
        let tok = lexer.next_token()?;
        if tok.kind == TokenKind::Eof {
            return Ok(tokens);
        }
        tokens.push(tok);
    }
}
