//! Evaluation of `#if` / `#elif` conditions: a C integer constant expression over
//! 64-bit integers, after `defined` and macro expansion; other names are 0.
use super::macros::{Expander, MacroTable, PpToken};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::lexer::describe;
use crate::front::token::{Punct, Token, TokenKind};
use crate::span::Span;

const MAX_DEPTH: usize = 256;

/// Evaluates the tokens of an `#if` line (`directive` spans the `#if` itself).
pub fn evaluate(tokens: &[Token], macros: &MacroTable, directive: Span) -> Result<bool> {
    let resolved = resolve_defined(tokens, macros)?;
    let expanded = Expander::new(macros).expand(resolved)?;
    let tokens: Vec<Token> = expanded.into_iter().map(|t| t.tok).collect();
    let Some(last) = tokens.last() else {
        return Err(Diagnostic::error(
            directive,
            "expected an expression after this directive",
        ));
    };
    let end = Span::new(
        last.span.file,
        last.span.end as usize,
        last.span.end as usize,
    );
    let mut eval = Evaluator {
        tokens: &tokens,
        pos: 0,
        depth: 0,
        end,
    };
    let value = eval.ternary(true)?;
    if let Some(extra) = eval.tokens.get(eval.pos) {
        return Err(Diagnostic::error(
            extra.span,
            format!(
                "unexpected {} in preprocessor expression",
                describe(&extra.kind)
            ),
        ));
    }
    Ok(value != 0)
}

/// Replaces `defined X` and `defined(X)` by 1 or 0 before any expansion.
fn resolve_defined(tokens: &[Token], macros: &MacroTable) -> Result<Vec<PpToken>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        let tok = &tokens[i];
        if !tok.is_ident("defined") {
            out.push(PpToken::new(tok.clone()));
            i += 1;
            continue;
        }
        let parenthesised = tokens.get(i + 1).is_some_and(|t| t.is_punct(Punct::LParen));
        let name_at = if parenthesised { i + 2 } else { i + 1 };
        let name = match tokens.get(name_at).map(|t| &t.kind) {
            Some(TokenKind::Ident(name)) => name,
            _ => {
                let at = tokens.get(name_at).map_or(tok.span, |t| t.span);
                return Err(Diagnostic::error(at, "`defined` needs a macro name"));
            }
        };
        let mut end = name_at;
        if parenthesised {
            end += 1;
            if !tokens.get(end).is_some_and(|t| t.is_punct(Punct::RParen)) {
                let at = tokens.get(end).map_or(tokens[name_at].span, |t| t.span);
                return Err(Diagnostic::error(at, "expected `)` after `defined(NAME`")
                    .with_label(tokens[i + 1].span, "to close this `(`"));
            }
        }
        out.push(PpToken::new(Token {
            kind: TokenKind::Int(i64::from(macros.contains_key(name))),
            span: tok.span.to(tokens[end].span),
            ..tok.clone()
        }));
        i = end + 1;
    }
    Ok(out)
}

struct Evaluator<'t> {
    tokens: &'t [Token],
    pos: usize,
    depth: usize,
    /// Where "expected ..." points when the line ends early.
    end: Span,
}

type BinFn = fn(i64, i64) -> i64;

impl Evaluator<'_> {
    fn peek_punct(&self) -> Option<Punct> {
        match self.tokens.get(self.pos).map(|t| &t.kind) {
            Some(TokenKind::Punct(p)) => Some(*p),
            _ => None,
        }
    }

    fn here(&self) -> Span {
        self.tokens.get(self.pos).map_or(self.end, |t| t.span)
    }

    fn expect(&mut self, p: Punct, what: &str) -> Result<()> {
        if self.peek_punct() == Some(p) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Diagnostic::error(
                self.here(),
                format!("expected {what} in preprocessor expression"),
            ))
        }
    }

    /// `live` is false inside the unevaluated side of `&&`, `||`, `?:`,
    /// where division by zero is not an error.
    fn ternary(&mut self, live: bool) -> Result<i64> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::error(
                self.here(),
                "preprocessor expression is nested too deeply",
            ));
        }
        let cond = self.binary(0, live)?;
        let value = if self.peek_punct() == Some(Punct::Question) {
            self.pos += 1;
            let a = self.ternary(live && cond != 0)?;
            self.expect(Punct::Colon, "`:`")?;
            let b = self.ternary(live && cond == 0)?;
            if cond != 0 {
                a
            } else {
                b
            }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(value)
    }

    fn binary_op(p: Punct) -> Option<(u8, BinFn)> {
        use Punct::*;
        let entry: (u8, BinFn) = match p {
            OrOr => (1, |a, b| i64::from(a != 0 || b != 0)),
            AndAnd => (2, |a, b| i64::from(a != 0 && b != 0)),
            Pipe => (3, |a, b| a | b),
            Caret => (4, |a, b| a ^ b),
            Amp => (5, |a, b| a & b),
            EqEq => (6, |a, b| i64::from(a == b)),
            Ne => (6, |a, b| i64::from(a != b)),
            Lt => (7, |a, b| i64::from(a < b)),
            Gt => (7, |a, b| i64::from(a > b)),
            Le => (7, |a, b| i64::from(a <= b)),
            Ge => (7, |a, b| i64::from(a >= b)),
            Shl => (8, |a, b| a.wrapping_shl(b as u32)),
            Shr => (8, |a, b| a.wrapping_shr(b as u32)),
            Plus => (9, |a, b| a.wrapping_add(b)),
            Minus => (9, |a, b| a.wrapping_sub(b)),
            Star => (10, |a, b| a.wrapping_mul(b)),
            Slash => (10, |a, b| a.checked_div(b).unwrap_or(0)),
            Percent => (10, |a, b| a.checked_rem(b).unwrap_or(0)),
            _ => return None,
        };
        Some(entry)
    }

    /// Precedence climbing over the binary operators at or above `min`.
    fn binary(&mut self, min: u8, live: bool) -> Result<i64> {
        let mut lhs = self.unary(live)?;
        while let Some((prec, apply)) = self.peek_punct().and_then(Self::binary_op) {
            if prec <= min {
                break;
            }
            let op = self.peek_punct();
            let op_span = self.here();
            self.pos += 1;
            let rhs_live = match op {
                Some(Punct::AndAnd) => live && lhs != 0,
                Some(Punct::OrOr) => live && lhs == 0,
                _ => live,
            };
            let rhs = self.binary(prec, rhs_live)?;
            if live && rhs == 0 && matches!(op, Some(Punct::Slash) | Some(Punct::Percent)) {
                return Err(Diagnostic::error(
                    op_span,
                    "division by zero in preprocessor expression",
                ));
            }
            lhs = apply(lhs, rhs);
        }
        Ok(lhs)
    }

    fn unary(&mut self, live: bool) -> Result<i64> {
        let op = self.peek_punct();
        let apply: Option<fn(i64) -> i64> = match op {
            Some(Punct::Minus) => Some(|v| v.wrapping_neg()),
            Some(Punct::Plus) => Some(|v| v),
            Some(Punct::Bang) => Some(|v| i64::from(v == 0)),
            Some(Punct::Tilde) => Some(|v| !v),
            _ => None,
        };
        if let Some(apply) = apply {
            self.pos += 1;
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(Diagnostic::error(
                    self.here(),
                    "preprocessor expression is nested too deeply",
                ));
            }
            let v = self.unary(live)?;
            self.depth -= 1;
            return Ok(apply(v));
        }
        self.primary(live)
    }

    fn primary(&mut self, live: bool) -> Result<i64> {
        let Some(tok) = self.tokens.get(self.pos) else {
            return Err(Diagnostic::error(
                self.end,
                "expected a value in preprocessor expression",
            ));
        };
        self.pos += 1;
        match &tok.kind {
            TokenKind::Int(v) => Ok(*v),
            TokenKind::Ident(name) => Ok(i64::from(name == "true")),
            TokenKind::Punct(Punct::LParen) => {
                let open = tok.span;
                let v = self.ternary(live)?;
                self.expect(Punct::RParen, "`)`")
                    .map_err(|d| d.with_label(open, "to close this `(`"))?;
                Ok(v)
            }
            TokenKind::Float { .. } => Err(Diagnostic::error(
                tok.span,
                "floating constant in preprocessor expression",
            )),
            other => Err(Diagnostic::error(
                tok.span,
                format!(
                    "expected a value in preprocessor expression, found {}",
                    describe(other)
                ),
            )),
        }
    }
}
