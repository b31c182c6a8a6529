//! Generic traversal of Triton-IR: the operands and nested regions of an op,
//! and a pre-order visit of every op of a function.

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
    }
}
