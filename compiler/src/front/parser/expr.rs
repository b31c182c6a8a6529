//! Expressions: C precedence plus `@` (with `*`), `a ... b` (between `*` and `+`),
//! prefix `^` (transpose), `*?(mask) p`, casts and tile subscripts `x[:, newaxis]`.
use super::{is_reserved, Parser, MAX_EXPRESSION_DEPTH};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind, ReduceOp, SliceItem, UnaryOp};
use crate::front::lexer::describe;
use crate::front::token::{Punct, Token, TokenKind};

/// What a binary operator token means, and how tightly it binds.
enum Infix {
    Binary(BinaryOp),
    Range,
}

const RANGE_PRECEDENCE: u8 = 10;

fn infix(p: Punct) -> Option<(u8, Infix)> {
    use BinaryOp::*;
    let (prec, op) = match p {
        Punct::OrOr => (1, LogicalOr),
        Punct::AndAnd => (2, LogicalAnd),
        Punct::Pipe => (3, BitOr),
        Punct::Caret => (4, BitXor),
        Punct::Amp => (5, BitAnd),
        Punct::EqEq => (6, Eq),
        Punct::Ne => (6, Ne),
        Punct::Lt => (7, Lt),
        Punct::Gt => (7, Gt),
        Punct::Le => (7, Le),
        Punct::Ge => (7, Ge),
        Punct::Shl => (8, Shl),
        Punct::Shr => (8, Shr),
        Punct::Plus => (9, Add),
        Punct::Minus => (9, Sub),
        Punct::Ellipsis => return Some((RANGE_PRECEDENCE, Infix::Range)),
        Punct::Star => (11, Mul),
        Punct::Slash => (11, Div),
        Punct::Percent => (11, Rem),
        Punct::At => (11, MatMul),
        _ => return None,
    };
    Some((prec, Infix::Binary(op)))
}

fn assign_op(p: Punct) -> Option<Option<BinaryOp>> {
    use BinaryOp::*;
    Some(match p {
        Punct::Assign => None,
        Punct::PlusAssign => Some(Add),
        Punct::MinusAssign => Some(Sub),
        Punct::StarAssign => Some(Mul),
        Punct::SlashAssign => Some(Div),
        Punct::PercentAssign => Some(Rem),
        Punct::AmpAssign => Some(BitAnd),
        Punct::PipeAssign => Some(BitOr),
        Punct::CaretAssign => Some(BitXor),
        Punct::ShlAssign => Some(Shl),
        Punct::ShrAssign => Some(Shr),
        _ => return None,
    })
}

fn punct_of(tok: &Token) -> Option<Punct> {
    match tok.kind {
        TokenKind::Punct(p) => Some(p),
        _ => None,
    }
}

const SUBSCRIPT_HELP: &str =
    "tile subscripts take `:`, `newaxis`, or a reduction (`+`, `max`, `min`)";

impl Parser<'_> {
    /// A full expression (Triton-C has no comma operator).
    pub(super) fn expression(&mut self) -> Result<Expr> {
        self.assignment()
    }

    /// `target = value`, `target op= value` (right-associative).
    pub(super) fn assignment(&mut self) -> Result<Expr> {
        self.nested(Self::assignment_inner)
    }

    fn assignment_inner(&mut self) -> Result<Expr> {
        let target = self.conditional()?;
        let Some(op) = punct_of(self.peek()).and_then(assign_op) else {
            return Ok(target);
        };
        self.bump();
        let value = self.assignment()?;
        Ok(Expr {
            span: target.span.to(value.span),
            kind: ExprKind::Assign {
                op,
                target: Box::new(target),
                value: Box::new(value),
            },
        })
    }

    /// `cond ? a : b`
    pub(super) fn conditional(&mut self) -> Result<Expr> {
        let cond = self.binary(0)?;
        if !self.at_punct(Punct::Question) {
            return Ok(cond);
        }
        let question = self.bump();
        let then_expr = self.expression()?;
        self.expect_punct(Punct::Colon, "`:` in the conditional expression")
            .map_err(|d| d.with_label(question.span, "for this `?`"))?;
        let else_expr = self.nested(Self::conditional)?;
        Ok(Expr {
            span: cond.span.to(else_expr.span),
            kind: ExprKind::Ternary {
                cond: Box::new(cond),
                then_expr: Box::new(then_expr),
                else_expr: Box::new(else_expr),
            },
        })
    }

    /// Precedence climbing over operators that bind tighter than `min`.
    fn binary(&mut self, min: u8) -> Result<Expr> {
        let outer_links = self.chain_links;
        let result = self.binary_chain(min);
        self.chain_links = outer_links;
        result
    }

    /// [`Parser::binary`]'s loop; each link deepens the tree by one level.
    fn binary_chain(&mut self, min: u8) -> Result<Expr> {
        let mut lhs = self.unary()?;
        while let Some((prec, op)) = punct_of(self.peek()).and_then(infix) {
            if prec <= min {
                break;
            }
            self.chain_links += 1;
            if self.chain_links + self.depth > MAX_EXPRESSION_DEPTH {
                return Err(Diagnostic::error(
                    self.peek().span,
                    format!("the expression is more than {MAX_EXPRESSION_DEPTH} operators deep"),
                )
                .with_note("each operator of a chain nests the tree one level; split it into partial results"));
            }
            self.bump();
            let rhs = self.binary(prec)?;
            let span = lhs.span.to(rhs.span);
            let kind = match op {
                Infix::Binary(op) => ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                Infix::Range => ExprKind::Range {
                    start: Box::new(lhs),
                    end: Box::new(rhs),
                },
            };
            lhs = Expr { kind, span };
        }
        Ok(lhs)
    }

    /// Prefix operators; each one nests its operand one level deeper.
    fn unary(&mut self) -> Result<Expr> {
        let op = match punct_of(self.peek()) {
            Some(Punct::Minus) => UnaryOp::Neg,
            Some(Punct::Plus) => UnaryOp::Plus,
            Some(Punct::Bang) => UnaryOp::Not,
            Some(Punct::Tilde) => UnaryOp::BitNot,
            Some(Punct::Caret) => UnaryOp::Trans,
            Some(Punct::PlusPlus) => UnaryOp::PreInc,
            Some(Punct::MinusMinus) => UnaryOp::PreDec,
            Some(Punct::Star) if self.peek_at(1).is_punct(Punct::Question) => {
                return self.masked_deref()
            }
            Some(Punct::Star) => UnaryOp::Deref,
            Some(Punct::LParen) if self.at_cast() => return self.cast(),
            Some(Punct::Amp) => {
                return Err(Diagnostic::error(
                    self.peek().span,
                    "the address-of operator `&` is not supported in Triton-C",
                ))
            }
            _ => return self.postfix(),
        };
        let op_tok = self.bump();
        let operand = self.nested(Self::unary)?;
        Ok(Expr {
            span: op_tok.span.to(operand.span),
            kind: ExprKind::Unary {
                op,
                operand: Box::new(operand),
            },
        })
    }

    /// `*?(mask) ptr`
    fn masked_deref(&mut self) -> Result<Expr> {
        let star = self.bump();
        self.bump(); // `?`
        let open = self.expect_punct(Punct::LParen, "`(` after `*?` (the mask)")?;
        let mask = self.expression()?;
        self.expect_closing(Punct::RParen, &open)?;
        let ptr = self.nested(Self::unary)?;
        Ok(Expr {
            span: star.span.to(ptr.span),
            kind: ExprKind::MaskedDeref {
                mask: Box::new(mask),
                ptr: Box::new(ptr),
            },
        })
    }

    /// A `(` that begins a type (`(float)x`, `(TYPE*)p`) rather than a group.
    fn at_cast(&self) -> bool {
        matches!(&self.peek_at(1).kind, TokenKind::Ident(name) if super::types::is_type_word(name))
    }

    fn cast(&mut self) -> Result<Expr> {
        let open = self.bump();
        let ty = self.type_name()?;
        self.expect_closing(Punct::RParen, &open)?;
        let expr = self.nested(Self::unary)?;
        Ok(Expr {
            span: open.span.to(expr.span),
            kind: ExprKind::Cast {
                ty,
                expr: Box::new(expr),
            },
        })
    }

    fn postfix(&mut self) -> Result<Expr> {
        let mut expr = self.primary()?;
        loop {
            match punct_of(self.peek()) {
                Some(Punct::LBracket) => expr = self.subscript(expr)?,
                Some(Punct::LParen) => expr = self.call(expr)?,
                Some(p @ (Punct::PlusPlus | Punct::MinusMinus)) => {
                    let tok = self.bump();
                    let op = if p == Punct::PlusPlus {
                        UnaryOp::PostInc
                    } else {
                        UnaryOp::PostDec
                    };
                    expr = Expr {
                        span: expr.span.to(tok.span),
                        kind: ExprKind::Unary {
                            op,
                            operand: Box::new(expr),
                        },
                    };
                }
                Some(Punct::Dot | Punct::Arrow) => {
                    return Err(Diagnostic::error(
                        self.peek().span,
                        "member access is not supported in Triton-C",
                    ))
                }
                _ => return Ok(expr),
            }
        }
    }

    /// `x[:, newaxis]`, `x[:, +]`
    fn subscript(&mut self, base: Expr) -> Result<Expr> {
        let open = self.bump();
        let mut items = Vec::new();
        loop {
            let tok = self.peek().clone();
            let item = match &tok.kind {
                TokenKind::Punct(Punct::Colon) => SliceItem::All,
                TokenKind::Punct(Punct::Plus) => SliceItem::Reduce(ReduceOp::Sum),
                TokenKind::Ident(n) if n == "newaxis" => SliceItem::NewAxis,
                TokenKind::Ident(n) if n == "max" => SliceItem::Reduce(ReduceOp::Max),
                TokenKind::Ident(n) if n == "min" => SliceItem::Reduce(ReduceOp::Min),
                other => {
                    return Err(Diagnostic::error(
                        tok.span,
                        format!("{SUBSCRIPT_HELP}, found {}", describe(other)),
                    ))
                }
            };
            self.bump();
            items.push((item, tok.span));
            if self.eat_punct(Punct::Comma) {
                continue;
            }
            let close = self.expect_closing(Punct::RBracket, &open)?;
            return Ok(Expr {
                span: base.span.to(close.span),
                kind: ExprKind::Subscript {
                    base: Box::new(base),
                    items,
                },
            });
        }
    }

    /// `name(args)`
    fn call(&mut self, callee: Expr) -> Result<Expr> {
        let ExprKind::Ident(name) = &callee.kind else {
            return Err(Diagnostic::error(
                self.peek().span,
                "only named functions can be called",
            ));
        };
        let callee_ident = crate::front::ast::Ident {
            name: name.clone(),
            span: callee.span,
        };
        let open = self.bump();
        let mut args = Vec::new();
        if !self.at_punct(Punct::RParen) {
            loop {
                args.push(self.assignment()?);
                if !self.eat_punct(Punct::Comma) {
                    break;
                }
            }
        }
        let close = self.expect_closing(Punct::RParen, &open)?;
        Ok(Expr {
            span: callee.span.to(close.span),
            kind: ExprKind::Call {
                callee: callee_ident,
                args,
            },
        })
    }

    fn primary(&mut self) -> Result<Expr> {
        let tok = self.peek().clone();
        let kind = match &tok.kind {
            TokenKind::Int(v) => ExprKind::IntLit(*v),
            TokenKind::Float { value, is_f32 } => ExprKind::FloatLit {
                value: *value,
                is_f32: *is_f32,
            },
            TokenKind::Ident(n) if n == "true" => ExprKind::BoolLit(true),
            TokenKind::Ident(n) if n == "false" => ExprKind::BoolLit(false),
            TokenKind::Ident(n) if !is_reserved(n) => ExprKind::Ident(n.clone()),
            TokenKind::Punct(Punct::LParen) => {
                let open = self.bump();
                let inner = self.expression()?;
                let close = self.expect_closing(Punct::RParen, &open)?;
                return Ok(Expr {
                    span: open.span.to(close.span),
                    kind: inner.kind,
                });
            }
            _ => return Err(self.error_expected("an expression")),
        };
        self.bump();
        Ok(Expr {
            kind,
            span: tok.span,
        })
    }
}
