//! `#if` / `#ifdef` / `#ifndef` / `#elif` / `#else` / `#endif`: a stack of open
//! groups; a group inside a skipped one is skipped whatever its condition.
use super::{cond_expr, Preprocessor};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::lexer::describe;
use crate::front::token::{Token, TokenKind};
use crate::span::Span;

/// One open `#if` group.
pub(super) struct Cond {
    /// The directive that opened it, for "unterminated" errors.
    pub(super) span: Span,
    /// Lines are kept right now.
    pub(super) active: bool,
    /// A branch was already taken (or the enclosing group is skipped), so later
    /// `#elif`/`#else` branches are skipped.
    pub(super) done: bool,
    pub(super) else_span: Option<Span>,
}

impl Preprocessor<'_> {
    pub(super) fn open_cond(&mut self, kind: &str, span: Span) -> Result<()> {
        if !self.active() {
            self.lexer().rest_of_line()?;
            self.conds.push(Cond {
                span,
                active: false,
                done: true,
                else_span: None,
            });
            return Ok(());
        }
        let tokens = self.line_tokens()?;
        let value = match kind {
            "if" => cond_expr::evaluate(&tokens, &self.macros, span)?,
            _ => {
                let defined = self.macro_name_operand(&tokens, span)?;
                defined == (kind == "ifdef")
            }
        };
        self.conds.push(Cond {
            span,
            active: value,
            done: value,
            else_span: None,
        });
        Ok(())
    }

    /// Whether the single name after `#ifdef`/`#ifndef` is defined.
    fn macro_name_operand(&self, tokens: &[Token], span: Span) -> Result<bool> {
        match tokens.first().map(|t| &t.kind) {
            Some(TokenKind::Ident(name)) => Ok(self.macros.contains_key(name)),
            Some(other) => Err(Diagnostic::error(
                tokens[0].span,
                format!("expected a macro name, found {}", describe(other)),
            )),
            None => Err(Diagnostic::error(
                span,
                "expected a macro name after this directive",
            )),
        }
    }

    /// The innermost group, which must have been opened in the current file.
    fn current_cond(&mut self, span: Span, directive: &str) -> Result<&mut Cond> {
        let base = self.files.last().map_or(0, |f| f.cond_base);
        if self.conds.len() <= base {
            return Err(Diagnostic::error(
                span,
                format!("`#{directive}` without a matching `#if`"),
            ));
        }
        Ok(self.conds.last_mut().expect("checked above"))
    }

    pub(super) fn elif(&mut self, span: Span) -> Result<()> {
        let cond = self.current_cond(span, "elif")?;
        if let Some(else_span) = cond.else_span {
            return Err(Diagnostic::error(span, "`#elif` after `#else`")
                .with_label(else_span, "`#else` is here"));
        }
        if cond.done {
            cond.active = false;
            self.lexer().rest_of_line()?;
            return Ok(());
        }
        let tokens = self.line_tokens()?;
        let value = cond_expr::evaluate(&tokens, &self.macros, span)?;
        let cond = self.conds.last_mut().expect("checked above");
        cond.active = value;
        cond.done = value;
        Ok(())
    }

    pub(super) fn else_(&mut self, span: Span) -> Result<()> {
        let cond = self.current_cond(span, "else")?;
        if let Some(else_span) = cond.else_span {
            return Err(Diagnostic::error(span, "`#else` after `#else`")
                .with_label(else_span, "first `#else` is here"));
        }
        cond.else_span = Some(span);
        cond.active = !cond.done;
        cond.done = true;
        self.lexer().rest_of_line()?;
        Ok(())
    }

    pub(super) fn endif(&mut self, span: Span) -> Result<()> {
        self.current_cond(span, "endif")?;
        self.conds.pop();
        self.lexer().rest_of_line()?;
        Ok(())
    }
}
