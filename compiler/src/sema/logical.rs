//! Short-circuit `&&` and `||`: when the left operand is a scalar and the right
//! one reads memory or writes anything, the right one is evaluated only when
//! needed (`i < n && *(p + i) > 0` must not load past `n`). Otherwise both
//! sides are evaluated element-wise, which is what tiles need.

use super::scope::Var;
use super::stmt::Flow;
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::ir::{DType, Type, UnOp};
use crate::span::Span;

/// Name of the hidden result variable; an operator, so never a user name.
const RESULT_VAR: &str = "&&";

/// Whether evaluating `e` may touch memory or change a variable.
pub fn has_effects(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::MaskedDeref { .. } | ExprKind::Assign { .. } => true,
        ExprKind::Unary { op, operand } => {
            matches!(
                op,
                UnaryOp::Deref
                    | UnaryOp::PreInc
                    | UnaryOp::PreDec
                    | UnaryOp::PostInc
                    | UnaryOp::PostDec
            ) || has_effects(operand)
        }
        ExprKind::Call { callee, args } => {
            callee.name.starts_with("atomic_") || args.iter().any(has_effects)
        }
        ExprKind::Binary { lhs, rhs, .. } => has_effects(lhs) || has_effects(rhs),
        ExprKind::Range { start, end } => has_effects(start) || has_effects(end),
        ExprKind::Ternary {
            cond,
            then_expr,
            else_expr,
        } => has_effects(cond) || has_effects(then_expr) || has_effects(else_expr),
        ExprKind::Cast { expr, .. } => has_effects(expr),
        ExprKind::Subscript { base, .. } => has_effects(base),
        ExprKind::IntLit(_)
        | ExprKind::FloatLit { .. }
        | ExprKind::BoolLit(_)
        | ExprKind::Ident(_) => false,
    }
}

impl Lowerer {
    /// `lhs && rhs` / `lhs || rhs`, short-circuiting when it matters.
    pub(crate) fn lower_logical(
        &mut self,
        op: BinaryOp,
        lhs: &Expr,
        rhs: &Expr,
        span: Span,
    ) -> Result<Val> {
        let a = self.lower_expr(lhs)?;
        if !has_effects(rhs) {
            let b = self.lower_expr(rhs)?;
            return self.binary_vals(op, a, b, span);
        }
        let is_and = op == BinaryOp::LogicalAnd;
        let decided = match a.op {
            Operand::Int(i) => Some(i != 0),
            Operand::Float(f) => Some(f != 0.0),
            Operand::Value(_) if self.shape_of(&a).is_empty() => None,
            // A tile on the left: element-wise; the right side's memory
            // accesses touch only the lanes where it decides the result.
            Operand::Value(_) => {
                let lhs_true = Val::value(self.truth_value(a)?, a.span);
                let guard = match is_and {
                    true => lhs_true,
                    false => {
                        let Operand::Value(v) = lhs_true.op else {
                            unreachable!()
                        };
                        let not = self.unary_value(UnOp::Not, v, span);
                        Val::value(not, a.span)
                    }
                };
                let b = self.with_guard(guard, |cx| cx.lower_expr(rhs))?;
                return self.binary_vals(op, a, b, span);
            }
        };
        match decided {
            // `0 && x` and `1 || x` never evaluate `x`.
            Some(lhs_true) if lhs_true != is_and => Ok(Val {
                op: Operand::Int(lhs_true as i64),
                span,
            }),
            Some(_) => {
                let b = self.lower_expr(rhs)?;
                let t = self.truth_value(b)?;
                Ok(Val::value(t, span))
            }
            None => self.short_circuit(is_and, a, rhs, span),
        }
    }

    /// `c && rhs` is `c ? bool(rhs) : c`; `c || rhs` is `c ? c : bool(rhs)`.
    fn short_circuit(&mut self, is_and: bool, a: Val, rhs: &Expr, span: Span) -> Result<Val> {
        let c = self.truth_value(a)?;
        self.scopes.push();
        let result = self.scopes.declare(Var {
            name: RESULT_VAR.into(),
            ty: Type::num(DType::I1),
            value: Some(c),
            decl_span: span,
            poisoned: false,
        });
        let result = result.unwrap_or_else(|_| unreachable!("fresh scope"));
        let evaluate_rhs = |cx: &mut Self| {
            let b = cx.lower_expr(rhs)?;
            if !cx.shape_of(&b).is_empty() {
                return Err(Diagnostic::error(
                    rhs.span,
                    format!(
                        "`{}` with a scalar left operand is evaluated lazily, so its right operand \
                         must be a scalar too, not {}",
                        if is_and { "&&" } else { "||" },
                        cx.describe(&b)
                    ),
                ));
            }
            let t = cx.truth_value(b)?;
            cx.scopes.set(result, t);
            Ok(Flow::Next)
        };
        let run_rhs_if = if is_and {
            c
        } else {
            self.unary_value(UnOp::Not, c, span)
        };
        self.lower_branches(run_rhs_if, span, evaluate_rhs, |_| Ok(Flow::Next))?;
        let v = self.scopes.get(result).value.expect("set above");
        self.scopes.pop();
        Ok(Val::value(v, span))
    }
}
