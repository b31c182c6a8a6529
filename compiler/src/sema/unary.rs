//! Unary operators: arithmetic, logical and bitwise negation, transpose,
//! dereference (in `memory`), increments (through `assign`).

use super::shapes::fmt_shape;
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::ir::{DType, OpKind, ScalarType, Type, UnOp};
use crate::span::Span;

impl Lowerer {
    pub(crate) fn lower_unary(&mut self, op: UnaryOp, operand: &Expr, span: Span) -> Result<Val> {
        match op {
            UnaryOp::Deref => return self.lower_load(operand, None, span),
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                return self.lower_increment(op, operand, span)
            }
            _ => {}
        }
        let v = self.lower_expr(operand)?;
        match (op, v.op) {
            (UnaryOp::Plus, Operand::Int(_) | Operand::Float(_)) => return Ok(Val { span, ..v }),
            (UnaryOp::Neg, Operand::Int(i)) => {
                return Ok(weak(Operand::Int(i.wrapping_neg()), span))
            }
            (UnaryOp::Neg, Operand::Float(f)) => return Ok(weak(Operand::Float(-f), span)),
            (UnaryOp::Not, Operand::Int(i)) => {
                return Ok(weak(Operand::Int((i == 0) as i64), span))
            }
            (UnaryOp::Not, Operand::Float(f)) => {
                return Ok(weak(Operand::Int((f == 0.0) as i64), span))
            }
            (UnaryOp::BitNot, Operand::Int(i)) => return Ok(weak(Operand::Int(!i), span)),
            _ => {}
        }
        let scalar = self.scalar_of(&v);
        if scalar.is_ptr() && op != UnaryOp::Trans {
            return Err(Diagnostic::error(
                span,
                format!("unary operator cannot be applied to {}", self.describe(&v)),
            ));
        }
        match op {
            UnaryOp::Plus => Ok(Val { span, ..v }),
            UnaryOp::Neg => {
                let x = self.promote_bool(v)?;
                self.emit_unary(UnOp::Neg, x, span)
            }
            UnaryOp::Not => {
                let x = self.truth_value(v)?;
                self.emit_unary(UnOp::Not, x, span)
            }
            UnaryOp::BitNot => {
                if scalar.dtype().is_float() {
                    return Err(Diagnostic::error(
                        span,
                        format!(
                            "operator `~` needs an integer operand, not {}",
                            self.describe(&v)
                        ),
                    ));
                }
                let x = self.promote_bool(v)?;
                self.emit_unary(UnOp::Not, x, span)
            }
            UnaryOp::Trans => self.transpose(v, span),
            _ => unreachable!("handled above"),
        }
    }

    /// `bool` operands of arithmetic are done in `int` (C).
    fn promote_bool(&mut self, v: Val) -> Result<crate::ir::ValueId> {
        let shape = self.shape_of(&v);
        let to = match self.scalar_of(&v) {
            ScalarType::Num(DType::I1) => ScalarType::Num(DType::I32),
            s => s,
        };
        self.materialize(v, to, &shape)
    }

    pub(crate) fn emit_unary(
        &mut self,
        op: UnOp,
        src: crate::ir::ValueId,
        span: Span,
    ) -> Result<Val> {
        Ok(Val::value(self.unary_value(op, src, span), span))
    }

    /// `op src`, of the type of `src`.
    pub(crate) fn unary_value(
        &mut self,
        op: UnOp,
        src: crate::ir::ValueId,
        span: Span,
    ) -> crate::ir::ValueId {
        let ty = self.b.ty(src).clone();
        self.b.push1(OpKind::Unary { op, src }, ty, span)
    }

    /// `^x`: transpose of a 2-D tile.
    pub(crate) fn transpose(&mut self, v: Val, span: Span) -> Result<Val> {
        let shape = self.shape_of(&v);
        let Operand::Value(src) = v.op else {
            return Err(Diagnostic::error(
                span,
                "`^` transposes 2-D tiles, not literals",
            ));
        };
        if shape.len() != 2 {
            return Err(Diagnostic::error(
                span,
                format!(
                    "`^` transposes 2-D tiles, but this has shape {}",
                    fmt_shape(&shape)
                ),
            )
            .with_label(v.span, format!("shape {}", fmt_shape(&shape))));
        }
        let ty = Type::tile(self.scalar_of(&v), vec![shape[1], shape[0]]);
        let out = self.b.push1(OpKind::Trans { src }, ty, span);
        Ok(Val::value(out, span))
    }

    /// `++x`, `x--`, ...: `x += 1` (or `-= 1`); the post forms give the old value.
    fn lower_increment(&mut self, op: UnaryOp, target: &Expr, span: Span) -> Result<Val> {
        let one = Expr {
            kind: ExprKind::IntLit(1),
            span,
        };
        let bin = match op {
            UnaryOp::PreInc | UnaryOp::PostInc => BinaryOp::Add,
            _ => BinaryOp::Sub,
        };
        let post = matches!(op, UnaryOp::PostInc | UnaryOp::PostDec);
        let old = if post {
            Some(self.lower_expr(target)?)
        } else {
            None
        };
        let new = self.lower_assign(Some(bin), target, &one, span)?;
        Ok(old.map(|o| Val { span, ..o }).unwrap_or(new))
    }
}

fn weak(op: Operand, span: Span) -> Val {
    Val { op, span }
}
