//! Expression lowering: the dispatcher, names, ranges and casts. Operators live
//! in `unary`, `binary`, `ternary`, `subscript`, `dot`, `memory`, `assign`.

use super::consteval::const_int;
use super::types;
use super::value::{Operand, Val};
use super::{quiet_error, Lowerer};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, ExprKind, TypeSpec};
use crate::ir::{Const, DType, OpKind, ScalarType, Type};
use crate::span::Span;

impl Lowerer {
    pub(crate) fn lower_expr(&mut self, e: &Expr) -> Result<Val> {
        let span = e.span;
        match &e.kind {
            ExprKind::IntLit(v) => Ok(Val {
                op: Operand::Int(*v),
                span,
            }),
            ExprKind::FloatLit { value, .. } => Ok(Val {
                op: Operand::Float(*value),
                span,
            }),
            ExprKind::BoolLit(b) => {
                let v = self.constant(Const::Bool(*b), Type::num(DType::I1), span);
                Ok(Val::value(v, span))
            }
            ExprKind::Ident(name) => self.read_var(name, span),
            ExprKind::Unary { op, operand } => self.lower_unary(*op, operand, span),
            ExprKind::Binary { op, lhs, rhs } => self.lower_binary(*op, lhs, rhs, span),
            ExprKind::Range { start, end } => self.lower_range(start, end, span),
            ExprKind::Assign { op, target, value } => self.lower_assign(*op, target, value, span),
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => self.lower_ternary(cond, then_expr, else_expr, span),
            ExprKind::Call { callee, args } => self.lower_call(callee, args, span),
            ExprKind::Cast { ty, expr } => self.lower_cast(ty, expr, span),
            ExprKind::Subscript { base, items } => self.lower_subscript(base, items, span),
            ExprKind::MaskedDeref { mask, ptr } => self.lower_load(ptr, Some(mask), span),
        }
    }

    /// The current value of a variable.
    pub(crate) fn read_var(&mut self, name: &str, span: Span) -> Result<Val> {
        let Some(r) = self.scopes.lookup(name) else {
            let hint = if name == "newaxis" {
                " (`newaxis` is only meaningful inside a subscript like `x[:, newaxis]`)"
            } else {
                ""
            };
            return Err(Diagnostic::error(
                span,
                format!("use of undeclared identifier `{name}`{hint}"),
            ));
        };
        let var = self.scopes.get(r);
        if var.poisoned {
            return Err(quiet_error(span));
        }
        match var.value {
            Some(v) => Ok(Val::value(v, span)),
            None => Err(Diagnostic::error(
                span,
                format!("`{name}` is used before it is given a value"),
            )
            .with_label(var.decl_span, "declared here without an initializer")),
        }
    }

    /// `a ... b` with constant bounds: `i32[b - a]`.
    fn lower_range(&mut self, start: &Expr, end: &Expr, span: Span) -> Result<Val> {
        let lo = const_int(start, "a range bound")?;
        let hi = const_int(end, "a range bound")?;
        if hi <= lo {
            return Err(Diagnostic::error(
                span,
                format!("empty range `{lo} ... {hi}`: the end must be greater than the start"),
            ));
        }
        if i32::try_from(lo).is_err() || i32::try_from(hi).is_err() {
            return Err(Diagnostic::error(span, "range bounds must fit in `int`"));
        }
        let ty = Type::tile(ScalarType::Num(DType::I32), vec![(hi - lo) as usize]);
        let v = self
            .b
            .push1(OpKind::MakeRange { start: lo, end: hi }, ty, span);
        Ok(Val::value(v, span))
    }

    /// `(T) x`: element conversion, same shape.
    fn lower_cast(&mut self, ty: &TypeSpec, e: &Expr, span: Span) -> Result<Val> {
        let to = types::scalar_of(ty)?;
        let v = self.lower_expr(e)?;
        let shape = self.shape_of(&v);
        let from = self.scalar_of(&v);
        if from.is_ptr() != to.is_ptr() {
            return Err(Diagnostic::error(
                span,
                format!("cannot cast {} to `{to}`", self.describe(&v)),
            ));
        }
        let out = self.materialize(v, to, &shape)?;
        Ok(Val::value(out, span))
    }
}
