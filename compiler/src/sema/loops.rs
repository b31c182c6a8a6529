//! Loops: `for`/`while`/`do` become `While` ops carrying every outer variable
//! the loop assigns (found by a syntactic scan first). `break`/`continue` set
//! hidden flags: the break flag is carried and ends the loop, the continue flag
//! lives for one iteration, and statements after a possible jump run under
//! `if (!flags)` (see `Lowerer::lower_stmts`).

use super::assigned::{assigned_outer_names, loop_jumps};
use super::control_flow::{literal_condition, CondKind};
use super::scope::{Var, VarRef};
use super::stmt::Flow;
use super::{quiet_error, Lowerer};
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Expr, Stmt};
use crate::ir::{BinOp, Const, DType, OpKind, Type, UnOp, ValueId};
use crate::span::Span;

/// Names of the hidden flags; keywords, so no user variable can clash.
const BREAK_FLAG: &str = "break";
const CONTINUE_FLAG: &str = "continue";

/// The flags of a loop being lowered (`None` when its body never jumps).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LoopFlags {
    brk: Option<VarRef>,
    cont: Option<VarRef>,
}

impl Lowerer {
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
    ///
    /// `break` and `continue` set flags: `break` a flag carried by the loop
    /// (the condition becomes `cond && !break`), `continue` a flag local to one
    /// iteration; statements after one that may jump run under `if (!flags)`.
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
        self.scopes.push();
        let flow = self.lower_loop(cond, body, step, span);
        self.scopes.pop();
        flow
    }

    fn lower_loop(
        &mut self,
        cond: Option<&Expr>,
        body: &Stmt,
        step: Option<&Expr>,
        span: Span,
    ) -> Result<Flow> {
        let jumps = loop_jumps(body);
        let brk = match jumps.iter().any(|&(_, is_break)| is_break) {
            true => Some(self.declare_flag(BREAK_FLAG, span)),
            false => None,
        };
        let has_continue = jumps.iter().any(|&(_, is_break)| !is_break);
        let exprs: Vec<&Expr> = cond.iter().chain(step.iter()).copied().collect();
        let names = assigned_outer_names(&[body], &exprs);
        let carried: Vec<VarRef> = brk
            .into_iter()
            .chain(names.iter().filter_map(|n| self.scopes.lookup(n)))
            .collect();
        let mut inits = Vec::new();
        let mut types: Vec<Type> = Vec::new();
        for &r in &carried {
            let var = self.scopes.get(r);
            let Some(v) = var.value else {
                if var.poisoned {
                    return Err(quiet_error(span));
                }
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

        let args = self.open_region(types.clone());
        self.bind(&carried, &args);
        let at_cond = self.scopes.snapshot();
        let mut c = match cond {
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
        if let Some(brk) = brk {
            let not_broken = self.flags_clear(&[brk], span);
            c = self.and_masks(c, not_broken, span);
        }
        let cond_region = self.close_region(vec![c]);

        let args = self.open_region(types.clone());
        self.bind(&carried, &args);
        let at_body = self.scopes.snapshot();
        self.scopes.push();
        let cont = has_continue.then(|| self.declare_flag(CONTINUE_FLAG, span));
        self.loops.push(LoopFlags { brk, cont });
        let flow = self.lower_scoped(body);
        self.loops.pop();
        self.scopes.pop();
        if flow? != Flow::Returned {
            if let Some(s) = step {
                match brk {
                    // After `break` the step must not run (C leaves `i` as it was).
                    Some(brk) => {
                        let go_on = self.flags_clear(&[brk], s.span);
                        self.lower_branches(
                            go_on,
                            s.span,
                            |cx| cx.lower_expr(s).map(|_| Flow::Next),
                            |_| Ok(Flow::Next),
                        )?;
                    }
                    None => {
                        self.lower_expr(s)?;
                    }
                }
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
        let body_region = self.close_region(yields);
        self.scopes.restore(&before);

        let results = self.b.push(
            OpKind::While {
                inits,
                cond_region,
                body_region,
                pipeline: None,
                prefetch: None,
            },
            types,
            span,
        );
        self.bind(&carried, &results);
        Ok(Flow::Next)
    }

    /// A hidden `i1` variable, false for now, in the innermost scope.
    fn declare_flag(&mut self, name: &str, span: Span) -> VarRef {
        let value = self.constant(Const::Bool(false), Type::num(DType::I1), span);
        self.scopes
            .declare(Var {
                name: name.to_string(),
                ty: Type::num(DType::I1),
                value: Some(value),
                decl_span: span,
                poisoned: false,
            })
            .unwrap_or_else(|_| unreachable!("keywords are never user variables"))
    }

    /// `!(f1 || f2 ...)` of the given flags' current values.
    fn flags_clear(&mut self, flags: &[VarRef], span: Span) -> ValueId {
        let i1 = Type::num(DType::I1);
        let mut any: Option<ValueId> = None;
        for &f in flags {
            let v = self.scopes.get(f).value.expect("flags always hold a value");
            any = Some(match any {
                None => v,
                Some(a) => self.b.push1(
                    OpKind::Binary {
                        op: BinOp::Or,
                        lhs: a,
                        rhs: v,
                    },
                    i1.clone(),
                    span,
                ),
            });
        }
        let Some(any) = any else {
            return self.constant(Const::Bool(true), i1, span);
        };
        // `any` is an i1 flag or an `or` of them: `not` keeps that type.
        self.unary_value(UnOp::Not, any, span)
    }

    /// Whether the innermost loop's iteration goes on (no `break`/`continue` yet).
    pub(crate) fn still_iterating(&mut self, span: Span) -> ValueId {
        let flags = *self.loops.last().expect("inside a loop");
        let set: Vec<VarRef> = flags.brk.into_iter().chain(flags.cont).collect();
        self.flags_clear(&set, span)
    }

    /// `break;` or `continue;`: sets the innermost loop's flag.
    pub(crate) fn lower_jump(&mut self, is_break: bool, span: Span) -> Result<()> {
        let word = if is_break { "break" } else { "continue" };
        let Some(flags) = self.loops.last().copied() else {
            return Err(Diagnostic::error(
                span,
                format!("`{word}` outside of a loop"),
            ));
        };
        let flag = if is_break { flags.brk } else { flags.cont };
        let Some(flag) = flag else {
            return Err(Diagnostic::error(
                span,
                format!("internal error: `{word}` was not found when its loop was scanned"),
            ));
        };
        let t = self.constant(Const::Bool(true), Type::num(DType::I1), span);
        self.scopes.set(flag, t);
        Ok(())
    }
}
