//! Tokens (after preprocessing) -> AST, by recursive descent.
//!
//! Every error is a [`Diagnostic`] at the offending token naming what was expected.
//! Nesting is capped at [`MAX_NESTING`] so hostile input cannot overflow the stack.
mod expr;
mod stmt;
mod types;

use super::ast::{FunctionDef, Ident, TranslationUnit};
use super::lexer::describe;
use super::token::{Punct, Token, TokenKind};
use crate::diagnostics::{Diagnostic, Result};
use crate::span::Span;

/// Deepest nesting of expressions and statements accepted.
pub const MAX_NESTING: usize = 256;

/// Deepest expression tree: parenthesized levels plus the links of operator
/// chains (`a + b + c` is a tree one level deeper a `+`). The parser reads a
/// chain in a loop, but sema, the IR and codegen recurse a level a link; the
/// compile runs on a large private stack where this depth fits (tested).
pub const MAX_EXPRESSION_DEPTH: usize = 16_384;

/// Longest `else if` chain: the parser reads one in a loop, but sema, the
/// IR and codegen still nest a level a link; at this length the whole compile
/// fits a 2 MiB thread stack (tested).
pub const MAX_ELSE_IF_LINKS: usize = 512;

pub fn parse(tokens: &[Token]) -> Result<TranslationUnit> {
    super::stack::on_large_stack(|| parse_here(tokens))
}

fn parse_here(tokens: &[Token]) -> Result<TranslationUnit> {
    let eof = Token {
        kind: TokenKind::Eof,
        span: tokens.last().map(|t| t.span).unwrap_or_default(),
        at_line_start: true,
        space_before: false,
    };
    let mut parser = Parser {
        tokens,
        pos: 0,
        depth: 0,
        chain_links: 0,
        eof,
    };
    parser.translation_unit()
}

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
    depth: usize,
    /// Links of the operator chains being read around the current token.
    chain_links: usize,
    /// Returned when reading past the end (input without a final `Eof`).
    eof: Token,
}

impl<'t> Parser<'t> {
    fn peek(&self) -> &Token {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &Token {
        self.tokens.get(self.pos + ahead).unwrap_or(&self.eof)
    }

    fn bump(&mut self) -> Token {
        let tok = self.peek().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        tok
    }

    /// End of the token just consumed, for node spans.
    fn prev_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map_or(self.eof.span, |t| t.span)
    }

    fn at_punct(&self, p: Punct) -> bool {
        self.peek().is_punct(p)
    }

    fn at_ident(&self, name: &str) -> bool {
        self.peek().is_ident(name)
    }

    fn eat_punct(&mut self, p: Punct) -> bool {
        if self.at_punct(p) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// `expected X, found Y` at the current token.
    fn error_expected(&self, what: &str) -> Diagnostic {
        let tok = self.peek();
        Diagnostic::error(
            tok.span,
            format!("expected {what}, found {}", describe(&tok.kind)),
        )
    }

    fn expect_punct(&mut self, p: Punct, what: &str) -> Result<Token> {
        if self.at_punct(p) {
            Ok(self.bump())
        } else {
            Err(self.error_expected(what))
        }
    }

    /// Expects the `closing` token of a pair, pointing back at the `opening` one.
    fn expect_closing(&mut self, closing: Punct, open: &Token) -> Result<Token> {
        let (close_text, open_text) = match closing {
            Punct::RParen => ("`)`", "`(`"),
            Punct::RBracket => ("`]`", "`[`"),
            _ => ("`}`", "`{`"),
        };
        self.expect_punct(closing, &format!("{close_text} to close {open_text}"))
            .map_err(|d| d.with_label(open.span, format!("to match this {open_text}")))
    }

    fn expect_ident(&mut self, what: &str) -> Result<Ident> {
        match &self.peek().kind {
            TokenKind::Ident(name) if !is_reserved(name) => {
                let tok = self.bump();
                Ok(Ident {
                    name: name_of(&tok),
                    span: tok.span,
                })
            }
            _ => Err(self.error_expected(what)),
        }
    }

    /// Guards recursion; pair with [`Parser::leave`].
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::error(
                self.peek().span,
                format!("nesting is too deep (more than {MAX_NESTING} levels)"),
            ));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Runs `parse` one nesting level deeper.
    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.enter()?;
        let result = parse(self);
        self.leave();
        result
    }

    fn translation_unit(&mut self) -> Result<TranslationUnit> {
        let mut functions = Vec::new();
        loop {
            if self.peek().kind == TokenKind::Eof {
                return Ok(TranslationUnit { functions });
            }
            if self.eat_punct(Punct::Semi) {
                continue;
            }
            functions.push(self.function()?);
        }
    }

    /// `[__global__] TYPE name(params) { body }`
    fn function(&mut self) -> Result<FunctionDef> {
        let start = self.peek().span;
        let mut is_global = false;
        while let TokenKind::Ident(word) = &self.peek().kind {
            match word.as_str() {
                "__global__" => is_global = true,
                "__device__" | "static" | "inline" | "extern" => {}
                _ => break,
            }
            self.bump();
        }
        if !self.at_type_start() {
            return Err(self.error_expected("a function definition (a return type)"));
        }
        let mut return_type = self.type_spec()?;
        self.pointer_stars(&mut return_type)?;
        let name = self.expect_ident("a function name")?;
        let open = self.expect_punct(Punct::LParen, "`(` after the function name")?;
        let params = self.params(&open)?;
        if !self.at_punct(Punct::LBrace) {
            return Err(self.error_expected("`{` to begin the function body"));
        }
        let body = self.block()?;
        Ok(FunctionDef {
            name,
            is_global,
            return_type,
            params,
            span: start.to(body.span),
            body,
        })
    }
}

fn name_of(tok: &Token) -> String {
    match &tok.kind {
        TokenKind::Ident(name) => name.clone(),
        _ => String::new(),
    }
}

/// Words that cannot name a variable or function.
fn is_reserved(name: &str) -> bool {
    types::is_type_word(name)
        || matches!(
            name,
            "if" | "else"
                | "for"
                | "while"
                | "do"
                | "return"
                | "break"
                | "continue"
                | "true"
                | "false"
                | "__global__"
        )
}
