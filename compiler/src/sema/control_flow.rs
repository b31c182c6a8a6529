//! Structured branches: `if` becomes an `If` op whose regions yield every
//! outer variable either branch assigns. Shared with loops: scalar and literal
//! conditions, rebinding variables to op results.

use super::scope::VarRef;
use super::shapes::fmt_shape;
use super::stmt::Flow;
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, Stmt};
use crate::ir::{OpKind, ValueId};
use crate::span::Span;

impl Lowerer {
    /// A scalar `i1` condition of `if`/`while`; tiles are rejected.
    pub(crate) fn scalar_condition(&mut self, cond: &Expr, what: &str) -> Result<ValueId> {
        let c = self.lower_expr(cond)?;
        let shape = self.shape_of(&c);
        if !shape.is_empty() {
            return Err(Diagnostic::error(
                cond.span,
                format!(
                    "the condition of `{what}` must be a scalar, but this is a tile of shape {}",
                    fmt_shape(&shape)
                ),
            )
            .with_note(
                "for element-wise choices use a masked dereference `*?(mask) p` or `mask ? x : y`",
            ));
        }
        self.truth_value(c)
    }

    pub(crate) fn lower_if(
        &mut self,
        cond: &Expr,
        then_s: &Stmt,
        else_s: Option<&Stmt>,
        span: Span,
    ) -> Result<Flow> {
        if let CondKind::Literal(taken) = literal_condition(self, cond)? {
            return match (taken, else_s) {
                (true, _) => self.lower_scoped(then_s),
                (false, Some(e)) => self.lower_scoped(e),
                (false, None) => Ok(Flow::Next),
            };
        }
        let c = self.scalar_condition(cond, "if")?;
        self.lower_branches(
            c,
            span,
            |cx| cx.lower_scoped(then_s),
            |cx| match else_s {
                Some(e) => cx.lower_scoped(e),
                None => Ok(Flow::Next),
            },
        )
    }

    /// An `If` on `c` whose branches are lowered by `then_f` and `else_f`; it
    /// yields every outer variable either branch assigns.
    pub(crate) fn lower_branches(
        &mut self,
        c: ValueId,
        span: Span,
        then_f: impl FnOnce(&mut Self) -> Result<Flow>,
        else_f: impl FnOnce(&mut Self) -> Result<Flow>,
    ) -> Result<Flow> {
        let before = self.scopes.snapshot();

        self.open_region(vec![]);
        let then_flow = then_f(self)?;
        let mut then_region = self.close_region(vec![]);
        let after_then = self.scopes.snapshot();
        self.scopes.restore(&before);

        self.open_region(vec![]);
        let else_flow = else_f(self)?;
        let mut else_region = self.close_region(vec![]);
        let after_else = self.scopes.snapshot();
        self.scopes.restore(&before);

        let mut changed = before.changed_in(&after_then);
        for r in before.changed_in(&after_else) {
            if !changed.contains(&r) {
                changed.push(r);
            }
        }
        let mut types = Vec::new();
        for &r in &changed {
            let var = self.scopes.get(r);
            let (Some(t), Some(e)) = (after_then.value(r), after_else.value(r)) else {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "`{}` must be given a value before this `if`, or in both branches",
                        var.name
                    ),
                )
                .with_label(var.decl_span, "declared here without an initializer"));
            };
            then_region.yields.push(t);
            else_region.yields.push(e);
            types.push(var.ty.clone());
        }
        if then_region.ops.is_empty() && else_region.ops.is_empty() && changed.is_empty() {
            // `if (c) ;` and branches that only declared unused names.
            return Ok(Flow::join(then_flow, else_flow));
        }
        let results = self.b.push(
            OpKind::If {
                cond: c,
                then_region,
                else_region,
            },
            types,
            span,
        );
        self.bind(&changed, &results);
        Ok(Flow::join(then_flow, else_flow))
    }

    pub(crate) fn bind(&mut self, vars: &[VarRef], values: &[ValueId]) {
        for (&r, &v) in vars.iter().zip(values) {
            self.scopes.set(r, v);
            let name = self.scopes.get(r).name.clone();
            self.name_value(v, &name);
        }
    }
}

/// A condition that is a literal (after folding) is decided at compile time.
pub(crate) enum CondKind {
    Literal(bool),
    Value,
}

/// Decides literal conditions without emitting ops for them; other conditions
/// are lowered again by the caller (lowering a literal emits nothing).
pub(crate) fn literal_condition(cx: &mut Lowerer, cond: &Expr) -> Result<CondKind> {
    if !is_pure_literal(cond) {
        return Ok(CondKind::Value);
    }
    let v: Val = cx.lower_expr(cond)?;
    Ok(match v.op {
        Operand::Int(i) => CondKind::Literal(i != 0),
        Operand::Float(f) => CondKind::Literal(f != 0.0),
        Operand::Value(_) => CondKind::Value,
    })
}

/// Literals and operators on them only (so lowering it twice is harmless).
fn is_pure_literal(e: &Expr) -> bool {
    use crate::front::ast::ExprKind as K;
    match &e.kind {
        K::IntLit(_) | K::FloatLit { .. } => true,
        K::Unary { operand, op } => {
            !matches!(op, crate::front::ast::UnaryOp::Deref) && is_pure_literal(operand)
        }
        K::Binary { lhs, rhs, .. } => is_pure_literal(lhs) && is_pure_literal(rhs),
        _ => false,
    }
}
