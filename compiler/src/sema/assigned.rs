//! Which variables a loop assigns: a syntactic scan that respects shadowing, so
//! the loop can carry exactly those values before its body is lowered.

use crate::front::ast::{Expr, ExprKind, Stmt, StmtKind, UnaryOp};
use crate::span::Span;

/// Names assigned somewhere in `stmts`/`exprs` and not declared inside them,
/// in order of first assignment.
pub fn assigned_outer_names(stmts: &[&Stmt], exprs: &[&Expr]) -> Vec<String> {
    let mut scan = Scan {
        locals: vec![Vec::new()],
        out: Vec::new(),
    };
    for e in exprs {
        scan.expr(e);
    }
    for s in stmts {
        scan.scoped(s);
    }
    scan.out
}

struct Scan {
    locals: Vec<Vec<String>>,
    out: Vec<String>,
}

impl Scan {
    fn note(&mut self, name: &str) {
        let local = self.locals.iter().any(|f| f.iter().any(|n| n == name));
        if !local && !self.out.iter().any(|n| n == name) {
            self.out.push(name.to_string());
        }
    }

    fn scoped(&mut self, s: &Stmt) {
        self.locals.push(Vec::new());
        self.stmt(s);
        self.locals.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Decl(decls) => {
                for d in decls {
                    if let Some(init) = &d.init {
                        self.expr(init);
                    }
                    self.locals
                        .last_mut()
                        .expect("a frame")
                        .push(d.name.name.clone());
                }
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Block(b) => {
                self.locals.push(Vec::new());
                for s in &b.stmts {
                    self.stmt(s);
                }
                self.locals.pop();
            }
            StmtKind::If {
                cond,
                then_branch,
                else_branch,
            } => {
                self.expr(cond);
                self.scoped(then_branch);
                if let Some(e) = else_branch {
                    self.scoped(e);
                }
            }
            StmtKind::For {
                init,
                cond,
                step,
                body,
            } => {
                self.locals.push(Vec::new());
                if let Some(i) = init {
                    self.stmt(i);
                }
                cond.iter().chain(step.iter()).for_each(|e| self.expr(e));
                self.scoped(body);
                self.locals.pop();
            }
            StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
                self.expr(cond);
                self.scoped(body);
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Empty => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Assign { target, value, .. } => {
                match &target.kind {
                    ExprKind::Ident(n) => self.note(n),
                    _ => self.expr(target),
                }
                self.expr(value);
            }
            ExprKind::Unary { op, operand } => match (&operand.kind, op) {
                (
                    ExprKind::Ident(n),
                    UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec,
                ) => self.note(n),
                _ => self.expr(operand),
            },
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Range { start, end } => {
                self.expr(start);
                self.expr(end);
            }
            ExprKind::Ternary {
                cond,
                then_expr,
                else_expr,
            } => {
                self.expr(cond);
                self.expr(then_expr);
                self.expr(else_expr);
            }
            ExprKind::Call { args, .. } => args.iter().for_each(|a| self.expr(a)),
            ExprKind::Cast { expr, .. } => self.expr(expr),
            ExprKind::Subscript { base, .. } => self.expr(base),
            ExprKind::MaskedDeref { mask, ptr } => {
                self.expr(mask);
                self.expr(ptr);
            }
            ExprKind::IntLit(_)
            | ExprKind::FloatLit { .. }
            | ExprKind::BoolLit(_)
            | ExprKind::Ident(_) => {}
        }
    }
}

/// `break`/`continue` statements that leave or restart the loop around `s`
/// (those inside nested loops belong to those loops), in source order.
pub fn loop_jumps(s: &Stmt) -> Vec<(Span, bool)> {
    let mut out = Vec::new();
    collect_jumps(s, &mut out);
    out
}

/// `(span, is_break)` of each jump.
fn collect_jumps(s: &Stmt, out: &mut Vec<(Span, bool)>) {
    match &s.kind {
        StmtKind::Break => out.push((s.span, true)),
        StmtKind::Continue => out.push((s.span, false)),
        StmtKind::Block(b) => b.stmts.iter().for_each(|s| collect_jumps(s, out)),
        StmtKind::If {
            then_branch,
            else_branch,
            ..
        } => {
            collect_jumps(then_branch, out);
            if let Some(e) = else_branch {
                collect_jumps(e, out);
            }
        }
        _ => {}
    }
}
