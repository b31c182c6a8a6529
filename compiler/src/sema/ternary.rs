//! `c ? x : y`. A dereference in an arm becomes a load masked by the condition
//! (so `check ? *p : 0` never reads memory it should not); other ternaries are
//! element-wise `Select`s; a literal condition picks its arm at compile time.

use super::binary::weak_lit;
use super::types::{common_dtype, weak_with};
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, ExprKind, UnaryOp};
use crate::ir::{DType, OpKind, ScalarType, Type, UnOp};
use crate::span::Span;

/// `*p` or `*?(m) p`: the pointer and the extra mask.
fn as_deref(e: &Expr) -> Option<(&Expr, Option<&Expr>)> {
    match &e.kind {
        ExprKind::Unary {
            op: UnaryOp::Deref,
            operand,
        } => Some((operand, None)),
        ExprKind::MaskedDeref { mask, ptr } => Some((ptr, Some(mask))),
        _ => None,
    }
}

impl Lowerer {
    pub(crate) fn lower_ternary(
        &mut self,
        cond: &Expr,
        then_e: &Expr,
        else_e: &Expr,
        span: Span,
    ) -> Result<Val> {
        let c = self.lower_expr(cond)?;
        match c.op {
            Operand::Int(i) => return self.lower_expr(if i != 0 { then_e } else { else_e }),
            Operand::Float(f) => return self.lower_expr(if f != 0.0 { then_e } else { else_e }),
            Operand::Value(_) => {}
        }
        let c = Val::value(self.truth_value(c)?, cond.span);
        match (as_deref(then_e), as_deref(else_e)) {
            (None, None) => {
                // Memory accesses inside an arm only touch the lanes it is chosen in.
                let a = self.with_guard(c, |cx| cx.lower_expr(then_e))?;
                let not_c = self.not(c, cond.span);
                let b = self.with_guard(not_c, |cx| cx.lower_expr(else_e))?;
                self.select_vals(c, a, b, span)
            }
            (Some((p, m)), else_deref) => {
                let other = match else_deref {
                    Some((q, m2)) => {
                        let not_c = self.not(c, cond.span);
                        self.guarded_load(q, m2, not_c, None, else_e.span)?
                    }
                    None => {
                        let not_c = self.not(c, cond.span);
                        self.with_guard(not_c, |cx| cx.lower_expr(else_e))?
                    }
                };
                self.guarded_load(p, m, c, Some(other), span)
            }
            (None, Some((q, m2))) => {
                let other = self.with_guard(c, |cx| cx.lower_expr(then_e))?;
                let not_c = self.not(c, cond.span);
                self.guarded_load(q, m2, not_c, Some(other), span)
            }
        }
    }

    fn not(&mut self, c: Val, span: Span) -> Val {
        let Operand::Value(v) = c.op else {
            unreachable!("conditions are values")
        };
        Val::value(self.unary_value(UnOp::Not, v, span), span)
    }

    /// Loads `*ptr` only where `guard` (and the written mask `extra`) hold;
    /// elsewhere the result is `other` (zero when absent).
    fn guarded_load(
        &mut self,
        ptr: &Expr,
        extra: Option<&Expr>,
        guard: Val,
        other: Option<Val>,
        span: Span,
    ) -> Result<Val> {
        let (p, pointee) = self.lower_pointer(ptr, "`*` (dereference)")?;
        let guard = self.guard_mask(Some(guard), span)?.expect("a guard");
        let extra = match extra {
            Some(m) => {
                let mv = self.lower_expr(m)?;
                Some(Val::value(self.truth_value(mv)?, m.span))
            }
            None => None,
        };
        let mut vals = vec![p, guard];
        vals.extend(extra);
        vals.extend(other);
        let shape = self.common_shape("?:", &vals, span)?;
        let g = self.materialize(guard, ScalarType::Num(DType::I1), &shape)?;
        let mask = match extra {
            Some(m) => {
                let m = self.materialize(m, ScalarType::Num(DType::I1), &shape)?;
                self.and_masks(g, m, span)
            }
            None => g,
        };
        let mask = Val::value(mask, guard.span);
        let Some(other) = other else {
            return self.emit_load(p, Some(mask), None, &shape, span);
        };
        if self.scalar_of(&other).is_ptr() {
            return Err(Diagnostic::error(
                other.span,
                format!(
                    "the arms of `?:` must both be numbers, but this is {}",
                    self.describe(&other)
                ),
            ));
        }
        let result = match other.op {
            Operand::Value(_) => common_dtype(pointee, self.scalar_of(&other).dtype()),
            lit => weak_with(weak_lit(lit), pointee),
        };
        if result == pointee {
            return self.emit_load(p, Some(mask), Some(other), &shape, span);
        }
        // `other` does not fit the pointee type: load, then select in the wider type.
        let load = self.emit_load(p, Some(mask), None, &shape, span)?;
        self.select_vals(mask, load, other, span)
    }

    /// Element-wise `c ? a : b` with broadcasting and the usual conversions.
    pub(crate) fn select_vals(&mut self, c: Val, a: Val, b: Val, span: Span) -> Result<Val> {
        let shape = self.common_shape("?:", &[c, a, b], span)?;
        let (sa, sb) = (self.scalar_of(&a), self.scalar_of(&b));
        let scalar = match (sa, sb) {
            (ScalarType::Ptr(x), ScalarType::Ptr(y)) if x == y && !a.is_weak() && !b.is_weak() => {
                sa
            }
            (ScalarType::Num(_), ScalarType::Num(_)) => ScalarType::Num(self.operand_dtype(&a, &b)),
            _ => {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "the arms of `?:` have incompatible types: {} and {}",
                        self.describe(&a),
                        self.describe(&b)
                    ),
                )
                .with_label(a.span, format!("this is {}", self.describe(&a)))
                .with_label(b.span, format!("this is {}", self.describe(&b))))
            }
        };
        let cond = self.materialize(c, ScalarType::Num(DType::I1), &shape)?;
        let x = self.materialize(a, scalar, &shape)?;
        let y = self.materialize(b, scalar, &shape)?;
        let ty = Type::tile(scalar, shape);
        let v = self.b.push1(
            OpKind::Select {
                cond,
                on_true: x,
                on_false: y,
            },
            ty,
            span,
        );
        Ok(Val::value(v, span))
    }
}
