//! Assignments: to variables (rebinding the SSA name), through pointers
//! (stores, masked with `*?(m) p = v`), compound forms, and the fused
//! `c += a @ b` that accumulates into `c` directly.

use super::convert::Target;
use super::value::Val;
use super::{quiet_error, Lowerer};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::span::Span;

impl Lowerer {
    pub(crate) fn lower_assign(
        &mut self,
        op: Option<BinaryOp>,
        target: &Expr,
        value: &Expr,
        span: Span,
    ) -> Result<Val> {
        match &target.kind {
            ExprKind::Ident(name) => self.assign_var(name, target, op, value, span),
            ExprKind::Unary {
                op: UnaryOp::Deref,
                operand,
            } => self.assign_through(operand, None, op, value, span),
            ExprKind::MaskedDeref { mask, ptr } => {
                self.assign_through(ptr, Some(mask), op, value, span)
            }
            _ => Err(Diagnostic::error(
                target.span,
                "cannot assign to this expression: only variables and dereferenced pointers \
                 (`*p`, `*?(mask) p`) are assignable",
            )),
        }
    }

    fn assign_var(
        &mut self,
        name: &str,
        target: &Expr,
        op: Option<BinaryOp>,
        value: &Expr,
        span: Span,
    ) -> Result<Val> {
        let Some(r) = self.scopes.lookup(name) else {
            return Err(Diagnostic::error(
                target.span,
                format!("assignment to undeclared identifier `{name}`"),
            ));
        };
        if self.scopes.get(r).poisoned {
            return Err(quiet_error(target.span));
        }
        let new = match op {
            None => self.lower_expr(value)?,
            Some(op) => {
                if let Some(v) = self.try_fused_dot(r, op, target, value, span)? {
                    v
                } else {
                    let old = self.read_var(name, target.span)?;
                    let rhs = self.lower_expr(value)?;
                    self.binary_vals(op, old, rhs, span)?
                }
            }
        };
        let ty = self.scopes.get(r).ty.clone();
        let v = self.convert_to_declared(new, &ty, Target::Assign(name))?;
        self.scopes.set(r, v);
        self.name_value(v, name);
        Ok(Val::value(v, span))
    }

    /// `*p = v`, `*?(m) p = v`, and their compound forms (load, op, store).
    fn assign_through(
        &mut self,
        ptr: &Expr,
        mask: Option<&Expr>,
        op: Option<BinaryOp>,
        value: &Expr,
        span: Span,
    ) -> Result<Val> {
        let (p, _) = self.lower_pointer(ptr, "a store")?;
        let m = self.lower_mask(mask, span)?;
        let new = match op {
            None => self.lower_expr(value)?,
            Some(op) => {
                let mut vals = vec![p];
                vals.extend(m);
                let shape = self.common_shape("*?()", &vals, span)?;
                let old = self.emit_load(p, m, None, &shape, ptr.span)?;
                let rhs = self.lower_expr(value)?;
                self.binary_vals(op, old, rhs, span)?
            }
        };
        self.emit_store(p, m, new, span)
    }
}
