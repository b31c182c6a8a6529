//! Generic traversal of Triton-IR: the operands and nested regions of an op,
//! a pre-order visit of every op of a function, and def-use chains.
//!
//! Ops are numbered in pre-order (an op, then the ops of its regions in the
//! order of [`regions`]); [`walk_ops`], [`DefUse`] and
//! `analysis::liveness::Liveness::ops` all use these numbers.

use super::function::{Function, Op, OpKind, Region};
use super::ValueId;

/// The values an op reads directly, in a fixed order (the order of the
/// fields in [`OpKind`]). Values yielded by nested regions are not operands
/// of the op; they are reached through [`regions`] and [`Region::yields`].
pub fn operands(kind: &OpKind) -> Vec<ValueId> {
    use OpKind::*;
    match kind {
        Constant { .. } | ProgramId { .. } | NumPrograms { .. } | MakeRange { .. } | Return => {
            Vec::new()
        }
        Splat { src }
        | Broadcast { src }
        | Reshape { src }
        | Unary { src, .. }
        | Cast { src }
        | Trans { src }
        | ConvertLayout { src }
        | ClusterSum { src, .. }
        | Reduce { src, .. } => vec![*src],
        Binary { lhs, rhs, .. } | Cmp { lhs, rhs, .. } => vec![*lhs, *rhs],
        AddPtr { ptr, offset } => vec![*ptr, *offset],
        Select {
            cond,
            on_true,
            on_false,
        } => vec![*cond, *on_true, *on_false],
        Load { ptr, mask, other } => {
            let mut v = vec![*ptr];
            v.extend(mask);
            v.extend(other);
            v
        }
        Store { ptr, value, mask } => {
            let mut v = vec![*ptr, *value];
            v.extend(mask);
            v
        }
        Dot { a, b, acc } => vec![*a, *b, *acc],
        AtomicRmw {
            ptr, value, mask, ..
        } => {
            let mut v = vec![*ptr, *value];
            v.extend(mask);
            v
        }
        AtomicCas { ptr, cmp, value } => vec![*ptr, *cmp, *value],
        If { cond, .. } => vec![*cond],
        While { inits, .. } => inits.clone(),
    }
}

/// The regions nested directly in an op: `[then, else]` for `If`,
/// `[cond, body]` for `While`, none for the others.
/// Which carried value of a `While` (with these regions) `v` is, as an
/// argument of its condition or its body.
pub fn carried_position(cond: &Region, body: &Region, v: ValueId) -> Option<usize> {
    cond.args
        .iter()
        .position(|&a| a == v)
        .or_else(|| body.args.iter().position(|&a| a == v))
}

pub fn regions(kind: &OpKind) -> Vec<&Region> {
    match kind {
        OpKind::If {
            then_region,
            else_region,
            ..
        } => vec![then_region, else_region],
        OpKind::While {
            cond_region,
            body_region,
            ..
        } => vec![cond_region, body_region],
        _ => Vec::new(),
    }
}

/// Mutable references to the operands of an op, in the order of
/// [`operands`]: for passes that replace values.
pub fn operands_mut(kind: &mut OpKind) -> Vec<&mut ValueId> {
    use OpKind::*;
    match kind {
        Constant { .. } | ProgramId { .. } | NumPrograms { .. } | MakeRange { .. } | Return => {
            Vec::new()
        }
        Splat { src }
        | Broadcast { src }
        | Reshape { src }
        | Unary { src, .. }
        | Cast { src }
        | Trans { src }
        | ConvertLayout { src }
        | ClusterSum { src, .. }
        | Reduce { src, .. } => vec![src],
        Binary { lhs, rhs, .. } | Cmp { lhs, rhs, .. } => vec![lhs, rhs],
        AddPtr { ptr, offset } => vec![ptr, offset],
        Select {
            cond,
            on_true,
            on_false,
        } => vec![cond, on_true, on_false],
        Load { ptr, mask, other } => {
            let mut v = vec![ptr];
            v.extend(mask.as_mut());
            v.extend(other.as_mut());
            v
        }
        Store { ptr, value, mask }
        | AtomicRmw {
            ptr, value, mask, ..
        } => {
            let mut v = vec![ptr, value];
            v.extend(mask.as_mut());
            v
        }
        Dot { a, b, acc } => vec![a, b, acc],
        AtomicCas { ptr, cmp, value } => vec![ptr, cmp, value],
        If { cond, .. } => vec![cond],
        While { inits, .. } => inits.iter_mut().collect(),
    }
}

/// Mutable nested regions, in the order of [`regions`].
pub fn regions_mut(kind: &mut OpKind) -> Vec<&mut Region> {
    match kind {
        OpKind::If {
            then_region,
            else_region,
            ..
        } => vec![then_region, else_region],
        OpKind::While {
            cond_region,
            body_region,
            ..
        } => vec![cond_region, body_region],
        _ => Vec::new(),
    }
}

/// Whether `ops` (and their nested regions) neither write memory nor leave
/// the kernel: a load can move across them, and every program runs them to
/// the end.
pub fn memory_free(ops: &[Op]) -> bool {
    ops.iter().all(|o| {
        !matches!(
            o.kind,
            OpKind::Store { .. }
                | OpKind::AtomicRmw { .. }
                | OpKind::AtomicCas { .. }
                | OpKind::Return
        ) && regions(&o.kind).iter().all(|r| memory_free(&r.ops))
    })
}

/// Replaces every use of `from` by `to` in `region` and below (operands and yields).
pub fn replace_uses(region: &mut Region, from: ValueId, to: ValueId) {
    for op in &mut region.ops {
        for v in operands_mut(&mut op.kind) {
            if *v == from {
                *v = to;
            }
        }
        for r in regions_mut(&mut op.kind) {
            replace_uses(r, from, to);
        }
    }
    for y in &mut region.yields {
        if *y == from {
            *y = to;
        }
    }
}

/// Where a value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Def {
    /// `func.params[i]`.
    Param(usize),
    /// Argument `arg` of region `region` (index into [`regions`]) of the op
    /// with pre-order number `op`.
    RegionArg {
        op: usize,
        region: usize,
        arg: usize,
    },
    /// Result `result` of the op with pre-order number `op`.
    OpResult { op: usize, result: usize },
}

/// Where a value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// Operand `operand` (index into [`operands`]) of op number `op`.
    Operand { op: usize, operand: usize },
    /// Yielded by region `region` of op number `op` (`op` is `None` for the body).
    Yield { op: Option<usize>, region: usize },
}

/// Definitions and uses of every value, ops named by their pre-order number
/// (the index in [`walk_ops`]).
#[derive(Clone, Debug, Default)]
pub struct DefUse {
    pub defs: std::collections::HashMap<ValueId, Def>,
    pub uses: std::collections::HashMap<ValueId, Vec<Use>>,
}

impl DefUse {
    pub fn compute(func: &Function) -> DefUse {
        let mut du = DefUse::default();
        for (i, p) in func.params.iter().enumerate() {
            du.defs.insert(p.value, Def::Param(i));
        }
        let mut next = 0;
        du.region(&func.body, None, 0, &mut next);
        du
    }

    /// The uses of `v` (empty when unused).
    pub fn uses_of(&self, v: ValueId) -> &[Use] {
        self.uses.get(&v).map_or(&[], |u| u.as_slice())
    }

    fn region(&mut self, region: &Region, owner: Option<usize>, index: usize, next: &mut usize) {
        if let Some(op) = owner {
            for (arg, &a) in region.args.iter().enumerate() {
                self.defs.insert(
                    a,
                    Def::RegionArg {
                        op,
                        region: index,
                        arg,
                    },
                );
            }
        }
        for op in &region.ops {
            let at = *next;
            *next += 1;
            for (operand, v) in operands(&op.kind).into_iter().enumerate() {
                self.uses
                    .entry(v)
                    .or_default()
                    .push(Use::Operand { op: at, operand });
            }
            for (i, r) in regions(&op.kind).into_iter().enumerate() {
                self.region(r, Some(at), i, next);
            }
            for (result, &r) in op.results.iter().enumerate() {
                self.defs.insert(r, Def::OpResult { op: at, result });
            }
        }
        for &y in &region.yields {
            self.uses.entry(y).or_default().push(Use::Yield {
                op: owner,
                region: index,
            });
        }
    }
}

/// One op met by [`walk_ops`].
#[derive(Clone, Copy, Debug)]
pub struct OpVisit<'a> {
    pub op: &'a Op,
    /// 0 for ops of the function body, 1 inside one `If`/`While`, and so on.
    pub depth: usize,
    /// Position in pre-order (an op comes before the ops of its regions).
    pub index: usize,
}

/// Every op of `func` in pre-order: an op, then the ops of its regions in
/// the order of [`regions`], then the next op.
pub fn walk_ops(func: &Function) -> Vec<OpVisit<'_>> {
    let mut out = Vec::new();
    visit_region(&func.body, 0, &mut |op, depth| {
        let index = out.len();
        out.push(OpVisit { op, depth, index });
    });
    out
}

/// Calls `f(op, depth)` on every op of `region` and its nested regions, pre-order.
pub fn visit_region<'a>(region: &'a Region, depth: usize, f: &mut impl FnMut(&'a Op, usize)) {
    for op in &region.ops {
        f(op, depth);
        for nested in regions(&op.kind) {
            visit_region(nested, depth + 1, f);
        }
    }
}

/// Number of ops in `region`, nested ones included.
pub fn count_ops(region: &Region) -> usize {
    let mut n = 0;
    visit_region(region, 0, &mut |_, _| n += 1);
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Const, DType, FunctionBuilder, Type};
    use crate::span::Span;

    #[test]
    fn operands_and_preorder() {
        let s = Span::default();
        let i32t = Type::num(DType::I32);
        let mut b = FunctionBuilder::new("k", s);
        let n = b.add_param("n", i32t.clone(), Default::default());
        let zero = b.push1(
            OpKind::Constant {
                value: Const::Int(0),
            },
            i32t.clone(),
            s,
        );
        let args = b.open_region(vec![i32t.clone()]);
        let c = b.push1(
            OpKind::Cmp {
                pred: crate::ir::CmpPred::Lt,
                lhs: args[0],
                rhs: n,
            },
            Type::num(DType::I1),
            s,
        );
        let cond = b.close_region(vec![c]);
        let body_arg = b.open_region(vec![i32t.clone()])[0];
        let one = b.push1(
            OpKind::Constant {
                value: Const::Int(1),
            },
            i32t.clone(),
            s,
        );
        let next = b.push1(
            OpKind::Binary {
                op: crate::ir::BinOp::Add,
                lhs: body_arg,
                rhs: one,
            },
            i32t.clone(),
            s,
        );
        let body = b.close_region(vec![next]);
        let kind = OpKind::While {
            inits: vec![zero],
            cond_region: cond,
            body_region: body,
            pipeline: None,
            prefetch: None,
        };
        assert_eq!(operands(&kind), vec![zero]);
        assert_eq!(regions(&kind).len(), 2);
        b.push(kind, vec![i32t.clone()], s);
        let f = b.finish();
        let visits = walk_ops(&f);
        let depths: Vec<usize> = visits.iter().map(|v| v.depth).collect();
        // constant, while, cmp (cond), constant, add (body)
        assert_eq!(depths, vec![0, 0, 1, 1, 1]);
        assert!(matches!(visits[2].op.kind, OpKind::Cmp { .. }));
        assert_eq!(visits[4].index, 4);
        assert_eq!(count_ops(&f.body), 5);
        assert_eq!(operands(&visits[4].op.kind), vec![body_arg, one]);

        let du = DefUse::compute(&f);
        assert_eq!(du.defs[&n], Def::Param(0));
        assert_eq!(
            du.defs[&body_arg],
            Def::RegionArg {
                op: 1,
                region: 1,
                arg: 0
            }
        );
        assert_eq!(du.defs[&next], Def::OpResult { op: 4, result: 0 });
        assert_eq!(
            du.uses_of(next),
            &[Use::Yield {
                op: Some(1),
                region: 1
            }]
        );
        assert_eq!(du.uses_of(n), &[Use::Operand { op: 2, operand: 1 }]);
        assert!(du.uses_of(f.body.ops[1].results[0]).is_empty());

        let mut g = f.clone();
        replace_uses(&mut g.body, n, zero);
        let OpKind::While { cond_region, .. } = &g.body.ops[1].kind else {
            unreachable!()
        };
        assert_eq!(operands(&cond_region.ops[0].kind)[1], zero);
        let mut kind = g.body.ops[1].kind.clone();
        for v in operands_mut(&mut kind) {
            *v = n;
        }
        assert_eq!(operands(&kind), vec![n]);
        assert_eq!(regions_mut(&mut kind).len(), 2);
    }
}
