//! Values that are the same in every program of a launch (functions of the
//! kernel's parameters, constants and grid sizes, not of `program_id`), and
//! loops whose iterations are the same in every program: what lets the two
//! programs of a cluster meet at each iteration of a loop (TMA multicast,
//! [`crate::passes::tma_loads`]) without one waiting for a meeting the
//! other never reaches.
use crate::ir::index_poly::{Atom, Poly};
use crate::ir::walk::visit_region;
use crate::ir::{BinOp, Function, Op, OpKind, ValueId};
use std::collections::HashMap;

/// Uniformity questions over one function.
pub struct Uniformity<'f> {
    func: &'f Function,
    defs: HashMap<ValueId, &'f Op>,
}

/// How deep a value's definition is followed (kernels compute their
/// bounds in a few steps; past this a value counts as not uniform).
const MAX_DEPTH: usize = 32;

impl<'f> Uniformity<'f> {
    pub fn new(func: &'f Function) -> Self {
        let mut defs = HashMap::new();
        visit_region(&func.body, 0, &mut |op, _| {
            for &r in &op.results {
                defs.insert(r, op);
            }
        });
        Uniformity { func, defs }
    }

    /// Whether scalar `v` is the same in every program.
    pub fn value(&self, v: ValueId) -> bool {
        self.value_at(v, 0)
    }

    fn value_at(&self, v: ValueId, depth: usize) -> bool {
        if depth > MAX_DEPTH || !self.func.ty(v).is_scalar() {
            return false;
        }
        if self.func.params.iter().any(|p| p.value == v) {
            return true;
        }
        let Some(op) = self.defs.get(&v) else {
            return false;
        };
        let all = |vs: &[ValueId]| vs.iter().all(|&x| self.value_at(x, depth + 1));
        match &op.kind {
            OpKind::Constant { .. } | OpKind::NumPrograms { .. } => true,
            OpKind::Binary { lhs, rhs, .. } | OpKind::Cmp { lhs, rhs, .. } => all(&[*lhs, *rhs]),
            OpKind::Unary { src, .. } | OpKind::Cast { src } => all(&[*src]),
            OpKind::Select {
                cond,
                on_true,
                on_false,
            } => all(&[*cond, *on_true, *on_false]),
            _ => false,
        }
    }

    /// Whether the carried scalar at position `at` of `loop_op` takes the
    /// same values in every program: a uniform start, and each iteration
    /// adds or subtracts a uniform amount.
    fn carried(&self, loop_op: &Op, at: usize) -> bool {
        let OpKind::While {
            inits, body_region, ..
        } = &loop_op.kind
        else {
            return false;
        };
        let (Some(&init), Some(&arg), Some(&next)) = (
            inits.get(at),
            body_region.args.get(at),
            body_region.yields.get(at),
        ) else {
            return false;
        };
        if !self.value(init) {
            return false;
        }
        match self.defs.get(&next).map(|o| &o.kind) {
            Some(OpKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            }) => (*lhs == arg && self.value(*rhs)) || (*rhs == arg && self.value(*lhs)),
            Some(OpKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            }) => *lhs == arg && self.value(*rhs),
            _ => next == arg,
        }
    }

    /// Whether `loop_op` (a `while`) runs as many iterations in every
    /// program: its condition compares uniform values or uniformly carried
    /// ones.
    pub fn trip_count(&self, loop_op: &Op) -> bool {
        let OpKind::While { cond_region, .. } = &loop_op.kind else {
            return false;
        };
        let Some(&cond) = cond_region.yields.first() else {
            return false;
        };
        let Some(OpKind::Cmp { lhs, rhs, .. }) = self.defs.get(&cond).map(|o| &o.kind) else {
            return false;
        };
        let side = |v: ValueId| self.in_loop(loop_op, &cond_region.args, v);
        side(*lhs) && side(*rhs)
    }

    /// Whether `v`, read in a region of `loop_op` whose arguments (the
    /// carried values there) are `args`, is the same in every program at
    /// each iteration.
    fn in_loop(&self, loop_op: &Op, args: &[ValueId], v: ValueId) -> bool {
        match args.iter().position(|&a| a == v) {
            Some(at) => self.carried(loop_op, at),
            None => self.value(v),
        }
    }

    /// Whether `p` (over values of `loop_op`'s body) is the same in every
    /// program at each iteration: its values are uniform or uniformly
    /// carried, and it has no tile axes.
    pub fn poly(&self, loop_op: &Op, p: &Poly) -> bool {
        let OpKind::While { body_region, .. } = &loop_op.kind else {
            return false;
        };
        p.atoms().all(|a| match a {
            Atom::Axis(_) => false,
            Atom::Value(v) => self.in_loop(loop_op, &body_region.args, v),
        })
    }
}
