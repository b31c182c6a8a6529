//! Statements and declarations.

use super::assigned::loop_jumps;
use super::consteval::const_int;
use super::convert::Target;
use super::scope::Var;
use super::types;
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{Declarator, Stmt, StmtKind};
use crate::ir::{Const, OpKind, ScalarType, Type};

/// Tiles larger than this are surely a mistake (and would not fit a GPU program).
const MAX_TILE_ELEMENTS: usize = 1 << 24;

/// Whether control can reach the next statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Next,
    Returned,
    /// Left by `break` or `continue`.
    Jumped,
}

impl Flow {
    /// The flow after a branch between `a` and `b`.
    pub(crate) fn join(a: Flow, b: Flow) -> Flow {
        match (a, b) {
            (Flow::Returned, Flow::Returned) => Flow::Returned,
            (Flow::Next, _) | (_, Flow::Next) => Flow::Next,
            _ => Flow::Jumped,
        }
    }
}

impl Lowerer {
    /// Lowers statements in the current scope; those after a `return`,
    /// `break` or `continue` are dead and skipped, and those after a statement
    /// that may `break`/`continue` run only if it did not.
    pub(crate) fn lower_stmts(&mut self, stmts: &[Stmt]) -> Result<Flow> {
        for (i, s) in stmts.iter().enumerate() {
            let flow = self.lower_stmt(s)?;
            if flow != Flow::Next {
                return Ok(flow);
            }
            let rest = &stmts[i + 1..];
            if !rest.is_empty() && !self.loops.is_empty() && !loop_jumps(s).is_empty() {
                let go_on = self.still_iterating(s.span);
                return self.lower_branches(
                    go_on,
                    s.span,
                    |cx| {
                        cx.scopes.push();
                        let flow = cx.lower_stmts(rest);
                        cx.scopes.pop();
                        flow
                    },
                    |_| Ok(Flow::Next),
                );
            }
        }
        Ok(Flow::Next)
    }

    /// Lowers `s` in a scope of its own.
    pub(crate) fn lower_scoped(&mut self, s: &Stmt) -> Result<Flow> {
        self.scopes.push();
        let flow = self.lower_stmt(s);
        self.scopes.pop();
        flow
    }

    pub(crate) fn lower_stmt(&mut self, s: &Stmt) -> Result<Flow> {
        match &s.kind {
            StmtKind::Decl(decls) => {
                for d in decls {
                    self.lower_decl(d)?;
                }
            }
            StmtKind::Expr(e) => {
                self.lower_expr(e)?;
            }
            StmtKind::Block(b) => {
                self.scopes.push();
                let flow = self.lower_stmts(&b.stmts);
                self.scopes.pop();
                return flow;
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => return self.lower_if(cond, then_branch, else_branch.as_deref(), s.span),
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.scopes.push();
                let r = self.lower_for(init.as_deref(), cond.as_ref(), step.as_ref(), body, s.span);
                self.scopes.pop();
                return r;
            }
            StmtKind::While { cond, body } => {
                self.lower_while(Some(cond), body, None, s.span)?;
            }
            StmtKind::DoWhile { body, cond } => {
                if let Some(&(span, is_break)) = loop_jumps(body).first() {
                    let word = if is_break { "break" } else { "continue" };
                    return Err(Diagnostic::error(
                        span,
                        format!("`{word}` inside `do ... while` is not supported yet; use `while`"),
                    ));
                }
                // `do B while (c)` is `B; while (c) B`.
                if self.lower_scoped(body)? == Flow::Returned {
                    return Ok(Flow::Returned);
                }
                self.lower_while(Some(cond), body, None, s.span)?;
            }
            StmtKind::Return(value) => {
                if let Some(v) = value {
                    return Err(Diagnostic::error(
                        v.span,
                        "kernels return nothing: `return` takes no value",
                    ));
                }
                self.b.push(OpKind::Return, vec![], s.span);
                return Ok(Flow::Returned);
            }
            StmtKind::Break | StmtKind::Continue => {
                self.lower_jump(s.kind == StmtKind::Break, s.span)?;
                return Ok(Flow::Jumped);
            }
            StmtKind::Empty => {}
        }
        Ok(Flow::Next)
    }

    fn lower_decl(&mut self, d: &Declarator) -> Result<()> {
        let scalar = types::scalar_of(&d.ty)?;
        let mut shape = Vec::new();
        for dim in d.shape.iter().flatten() {
            let n = const_int(dim, "a tile dimension")?;
            if n <= 0 {
                return Err(Diagnostic::error(
                    dim.span,
                    format!("tile dimensions must be positive, but this one is {n}"),
                ));
            }
            shape.push(n as usize);
        }
        let elements = shape.iter().try_fold(1usize, |acc, &n| acc.checked_mul(n));
        if elements.is_none_or(|e| e > MAX_TILE_ELEMENTS) {
            return Err(Diagnostic::error(
                d.span,
                format!(
                    "tile `{}` is too large (more than {MAX_TILE_ELEMENTS} elements)",
                    d.name.name
                ),
            ));
        }
        let ty = Type::tile(scalar, shape);
        let value = match &d.init {
            Some(init) => {
                let v = self.lower_expr(init)?;
                Some(self.convert_to_declared(v, &ty, Target::Init(&d.name.name))?)
            }
            // Numbers start at zero; pointers must be assigned before use.
            None => match scalar {
                ScalarType::Num(dtype) => {
                    let zero = if dtype.is_float() {
                        Const::Float(0.0)
                    } else {
                        Const::Int(0)
                    };
                    let zero = if dtype == crate::ir::DType::I1 {
                        Const::Bool(false)
                    } else {
                        zero
                    };
                    Some(self.constant(zero, ty.clone(), d.span))
                }
                ScalarType::Ptr(_) => None,
            },
        };
        if let Some(v) = value {
            self.name_value(v, &d.name.name);
        }
        self.declare(Var {
            name: d.name.name.clone(),
            ty,
            value,
            decl_span: d.name.span,
            poisoned: false,
        })
    }
}
