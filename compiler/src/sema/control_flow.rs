//! Structured control flow. `if` becomes an `If` op whose regions yield every
//! outer variable either branch assigns; loops become `While` ops carrying
//! every outer variable the loop assigns (found by a syntactic scan first).

use super::assigned::assigned_outer_names;
use super::scope::VarRef;
use super::shapes::fmt_shape;
use super::stmt::Flow;
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, Stmt};
use crate::ir::{Const, DType, OpKind, Type, ValueId};
use crate::span::Span;

impl Lowerer {
    /// A scalar `i1` condition of `if`/`while`; tiles are rejected.
    fn scalar_condition(&mut self, cond: &Expr, what: &str) -> Result<ValueId> {
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
        let before = self.scopes.snapshot();

        self.b.open_region(vec![]);
        let then_flow = self.lower_scoped(then_s)?;
        let mut then_region = self.b.close_region(vec![]);
        let after_then = self.scopes.snapshot();
        self.scopes.restore(&before);

        self.b.open_region(vec![]);
        let else_flow = match else_s {
            Some(e) => self.lower_scoped(e)?,
            None => Flow::Next,
        };
        let mut else_region = self.b.close_region(vec![]);
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
        if then_flow == Flow::Returned && else_flow == Flow::Returned {
            return Ok(Flow::Returned);
        }
        Ok(Flow::Next)
    }

    pub(crate) fn lower_for(
        &mut self,
        init: Option<&Stmt>,
        cond: Option<&Expr>,
        step: Option<&Expr>,
        body: &Stmt,
        span: Span,
    ) -> Result<Flow> {
        if let Some(i) = init {
            if self.lower_stmt(i)? == Flow::Returned {
                return Ok(Flow::Returned);
            }
        }
        self.lower_while(cond, body, step, span)
    }

    /// `while (cond) { body; step; }` (no `cond` means forever).
    pub(crate) fn lower_while(
        &mut self,
        cond: Option<&Expr>,
        body: &Stmt,
        step: Option<&Expr>,
        span: Span,
    ) -> Result<Flow> {
        if let Some(e) = cond {
            if let CondKind::Literal(false) = literal_condition(self, e)? {
                return Ok(Flow::Next);
            }
        }
        let exprs: Vec<&Expr> = cond.iter().chain(step.iter()).copied().collect();
        let names = assigned_outer_names(&[body], &exprs);
        let carried: Vec<VarRef> = names.iter().filter_map(|n| self.scopes.lookup(n)).collect();
        let mut inits = Vec::new();
        let mut types: Vec<Type> = Vec::new();
        for &r in &carried {
            let var = self.scopes.get(r);
            let Some(v) = var.value else {
                return Err(Diagnostic::error(
                    span,
                    format!(
                        "`{}` is assigned in this loop, so it needs a value before it",
                        var.name
                    ),
                )
                .with_label(var.decl_span, "declared here without an initializer"));
            };
            inits.push(v);
            types.push(var.ty.clone());
        }
        let before = self.scopes.snapshot();

        let args = self.b.open_region(types.clone());
        self.bind(&carried, &args);
        let at_cond = self.scopes.snapshot();
        let c = match cond {
            Some(e) => match literal_condition(self, e)? {
                CondKind::Literal(b) => self.constant(Const::Bool(b), Type::num(DType::I1), e.span),
                CondKind::Value => self.scalar_condition(e, "while")?,
            },
            None => self.constant(Const::Bool(true), Type::num(DType::I1), span),
        };
        if let Some(&r) = self.scopes.changed_since(&at_cond).first() {
            return Err(Diagnostic::error(
                cond.map(|e| e.span).unwrap_or(span),
                format!(
                    "assigning `{}` in a loop condition is not supported; assign it in the body",
                    self.scopes.get(r).name
                ),
            ));
        }
        let cond_region = self.b.close_region(vec![c]);

        let args = self.b.open_region(types.clone());
        self.bind(&carried, &args);
        let at_body = self.scopes.snapshot();
        if self.lower_scoped(body)? == Flow::Next {
            if let Some(s) = step {
                self.lower_expr(s)?;
            }
        }
        let after = self.scopes.snapshot();
        if let Some(r) = self
            .scopes
            .changed_since(&at_body)
            .into_iter()
            .find(|r| !carried.contains(r))
        {
            return Err(Diagnostic::error(
                span,
                format!(
                    "internal error: `{}` changed in a loop without being carried",
                    self.scopes.get(r).name
                ),
            ));
        }
        let yields: Vec<ValueId> = carried
            .iter()
            .map(|&r| after.value(r).expect("carried values stay set"))
            .collect();
        let body_region = self.b.close_region(yields);
        self.scopes.restore(&before);

        let results = self.b.push(
            OpKind::While {
                inits,
                cond_region,
                body_region,
            },
            types,
            span,
        );
        self.bind(&carried, &results);
        Ok(Flow::Next)
    }

    fn bind(&mut self, vars: &[VarRef], values: &[ValueId]) {
        for (&r, &v) in vars.iter().zip(values) {
            self.scopes.set(r, v);
            let name = self.scopes.get(r).name.clone();
            self.b.set_name(v, &name);
        }
    }
}

/// A condition that is a literal (after folding) is decided at compile time.
enum CondKind {
    Literal(bool),
    Value,
}

/// Decides literal conditions without emitting ops for them; other conditions
/// are lowered again by the caller (lowering a literal emits nothing).
fn literal_condition(cx: &mut Lowerer, cond: &Expr) -> Result<CondKind> {
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
