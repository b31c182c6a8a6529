//! Tokens (after preprocessing) -> AST.
use super::ast::TranslationUnit;
use super::token::Token;
use crate::diagnostics::{Diagnostic, Result};
use crate::span::Span;

pub fn parse(tokens: &[Token]) -> Result<TranslationUnit> {
    let span = tokens.first().map(|t| t.span).unwrap_or_default();
    let _ = span;
    Err(Diagnostic::error(
        Span::default(),
        "parser not implemented yet",
    ))
}
