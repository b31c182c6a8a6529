//! Matrix products: `a @ b` (with a zero accumulator) and `c += a @ b`, which
//! accumulates into `c` inside the `Dot` op itself.

use super::scope::VarRef;
use super::shapes::fmt_shape;
use super::types::{common_dtype, dot_acc_dtype};
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind};
use crate::ir::{Const, OpKind, ScalarType, Type, ValueId};
use crate::span::Span;

/// Checked operands of a product: both converted to one element type.
struct DotOperands {
    a: ValueId,
    b: ValueId,
    result: Type,
}

impl Lowerer {
    /// `a @ b` with a zero accumulator.
    pub(crate) fn matmul(&mut self, a: Val, b: Val, span: Span) -> Result<Val> {
        let ops = self.dot_operands(a, b, span)?;
        let acc = self.zero(ops.result.clone(), span);
        Ok(self.emit_dot(ops, acc, span))
    }

    /// `c += a @ b`: when `c` has the product's type, the product accumulates
    /// into `c` (one `Dot`); otherwise it is `c = c + (a @ b)`. `None` when the
    /// statement is not of that form.
    pub(crate) fn try_fused_dot(
        &mut self,
        var: VarRef,
        op: BinaryOp,
        target: &Expr,
        value: &Expr,
        span: Span,
    ) -> Result<Option<Val>> {
        let ExprKind::Binary {
            op: BinaryOp::MatMul,
            lhs,
            rhs,
        } = &value.kind
        else {
            return Ok(None);
        };
        if op != BinaryOp::Add {
            return Ok(None);
        }
        let name = self.scopes.get(var).name.clone();
        let old = self.read_var(&name, target.span)?;
        let (a, b) = (self.lower_expr(lhs)?, self.lower_expr(rhs)?);
        let ops = self.dot_operands(a, b, value.span)?;
        let Operand::Value(acc) = old.op else {
            unreachable!("variables hold values")
        };
        if *self.b.ty(acc) == ops.result {
            return Ok(Some(self.emit_dot(ops, acc, span)));
        }
        let acc_ty = ops.result.clone();
        let zero = self.zero(acc_ty, value.span);
        let product = self.emit_dot(ops, zero, value.span);
        self.binary_vals(BinaryOp::Add, old, product, span)
            .map(Some)
    }

    /// A zero accumulator of type `ty`.
    fn zero(&mut self, ty: Type, span: Span) -> ValueId {
        let value = match ty.scalar.dtype().is_float() {
            true => Const::Float(0.0),
            false => Const::Int(0),
        };
        self.constant(value, ty, span)
    }

    fn emit_dot(&mut self, ops: DotOperands, acc: ValueId, span: Span) -> Val {
        let v = self.b.push1(
            OpKind::Dot {
                a: ops.a,
                b: ops.b,
                acc,
            },
            ops.result,
            span,
        );
        Val::value(v, span)
    }

    fn dot_operands(&mut self, a: Val, b: Val, span: Span) -> Result<DotOperands> {
        for v in [&a, &b] {
            let shape = self.shape_of(v);
            if v.is_weak() || shape.len() != 2 || self.scalar_of(v).is_ptr() {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "`@` multiplies 2-D tiles of numbers, but one operand is {}",
                        self.describe(v)
                    ),
                )
                .with_label(v.span, format!("this is {}", self.describe(v))));
            }
        }
        let (sa, sb) = (self.shape_of(&a), self.shape_of(&b));
        if sa[1] != sb[0] {
            return Err(Diagnostic::error(
                span,
                format!(
                    "`@` needs [M, K] @ [K, N], but the shapes are {} @ {}",
                    fmt_shape(&sa),
                    fmt_shape(&sb)
                ),
            )
            .with_label(a.span, format!("this has shape {}", fmt_shape(&sa)))
            .with_label(b.span, format!("this has shape {}", fmt_shape(&sb))));
        }
        let input = common_dtype(self.scalar_of(&a).dtype(), self.scalar_of(&b).dtype());
        let Some(acc) = dot_acc_dtype(input) else {
            return Err(Diagnostic::error(
                span,
                format!(
                    "`@` supports f16, bf16, f32, f64 and i8 tiles, not `{}`",
                    input.name()
                ),
            ));
        };
        let x = self.materialize(a, ScalarType::Num(input), &sa)?;
        let y = self.materialize(b, ScalarType::Num(input), &sb)?;
        Ok(DotOperands {
            a: x,
            b: y,
            result: Type::tile(ScalarType::Num(acc), vec![sa[0], sb[1]]),
        })
    }
}
