//! The layout in which each op reads its tile operands, as its lowering does:
//! element-wise ops and loads read theirs in the result's layout, stores in
//! the pointers' layout, reductions in a blocked layout, tensor-core dots
//! their accumulator in the mma layout, and so on. The
//! `insert-layout-conversions` pass puts a `convert_layout` wherever a
//! producer left a tile in another layout, so that lowering finds every
//! operand where it reads it.
//!
//! Scalars (one layout) and lazy tiles (constants, ranges and splats, built
//! directly in whatever layout their reader asks for) never need one.
use super::mma::{accumulator_layout, planned_config};
use crate::ir::layout::{reshape_src_layout, Layout, LayoutMap};
use crate::ir::walk::walk_ops;
use crate::ir::{Function, LoopPipeline, Op, OpKind, ValueId};
use std::collections::HashSet;

/// One operand read: the value and the layout it is read in.
pub type Read = (ValueId, Layout);

/// Which values lowering must find in a given layout: tiles made by an op
/// that computes something (not scalars, not lazy tiles).
pub struct OperandLayouts {
    lazy: HashSet<ValueId>,
}

impl OperandLayouts {
    pub fn new(func: &Function) -> Self {
        let lazy = walk_ops(func)
            .iter()
            .filter(|visit| {
                matches!(
                    visit.op.kind,
                    OpKind::Constant { .. } | OpKind::MakeRange { .. } | OpKind::Splat { .. }
                )
            })
            .filter_map(|visit| visit.op.results.first().copied())
            .collect();
        OperandLayouts { lazy }
    }

    /// The tile operands `op` reads and their layouts, in the order its
    /// lowering reads them. `pipeline` is the loop's plan when `op` sits in
    /// the body of a pipelined loop (the pipeline lowers its operand loads
    /// and its dot, and reads them differently).
    pub fn reads(
        &self,
        func: &Function,
        layouts: &LayoutMap,
        op: &Op,
        pipeline: Option<&LoopPipeline>,
    ) -> Vec<Read> {
        self.keep_tiles(func, all_reads(func, layouts, op, pipeline))
    }

    /// The values a region yields and the layouts its op reads them in: the
    /// layouts of the op's `results` (an `If`'s arms, a `While`'s body).
    pub fn yield_reads(
        &self,
        func: &Function,
        layouts: &LayoutMap,
        results: &[ValueId],
        yields: &[ValueId],
    ) -> Vec<Read> {
        self.keep_tiles(func, carried(func, layouts, yields, results))
    }

    /// Whether `v` is a lazy tile (a constant, range or splat), built in
    /// whatever layout its reader asks for.
    pub fn is_lazy(&self, v: ValueId) -> bool {
        self.lazy.contains(&v)
    }

    fn keep_tiles(&self, func: &Function, reads: Vec<Read>) -> Vec<Read> {
        reads
            .into_iter()
            .filter(|(v, _)| !func.ty(*v).is_scalar() && !self.lazy.contains(v))
            .collect()
    }
}

fn all_reads(
    func: &Function,
    layouts: &LayoutMap,
    op: &Op,
    pipeline: Option<&LoopPipeline>,
) -> Vec<Read> {
    let result = op.results.first().copied();
    let result_layout = || result.map_or(Layout::Scalar, |r| layouts.get(func, r));
    let pipelined = |v: Option<ValueId>| {
        pipeline.is_some_and(|p| v.is_some_and(|v| p.dot == v || p.loads.contains(&v)))
    };
    match &op.kind {
        // The pipeline copies the loads' tiles (reading the pointers and
        // masks in the pointers' layout) and keeps the accumulator in place.
        OpKind::Load { ptr, mask, .. } if pipelined(result) => {
            in_layout([Some(*ptr), *mask], &layouts.get(func, *ptr))
        }
        OpKind::Dot { .. } if pipelined(result) => Vec::new(),
        OpKind::Constant { .. }
        | OpKind::ProgramId { .. }
        | OpKind::NumPrograms { .. }
        | OpKind::MakeRange { .. }
        | OpKind::Splat { .. }
        | OpKind::Trans { .. }
        | OpKind::ConvertLayout { .. }
        | OpKind::Return
        | OpKind::If { .. } => Vec::new(),
        OpKind::Broadcast { src }
        | OpKind::Unary { src, .. }
        | OpKind::Cast { src }
        | OpKind::ClusterSum { src, .. } => in_layout([Some(*src)], &result_layout()),
        OpKind::Reshape { src } => {
            let shape = |v: ValueId| func.ty(v).shape.clone();
            result
                .and_then(|r| reshape_src_layout(&result_layout(), &shape(*src), &shape(r)))
                .map_or_else(Vec::new, |l| vec![(*src, l)])
        }
        OpKind::Binary { lhs, rhs, .. } | OpKind::Cmp { lhs, rhs, .. } => {
            in_layout([Some(*lhs), Some(*rhs)], &result_layout())
        }
        OpKind::AddPtr { ptr, offset } => in_layout([Some(*ptr), Some(*offset)], &result_layout()),
        OpKind::Select {
            cond,
            on_true,
            on_false,
        } => in_layout(
            [Some(*cond), Some(*on_true), Some(*on_false)],
            &result_layout(),
        ),
        OpKind::Load { ptr, mask, other } => {
            in_layout([Some(*ptr), *mask, *other], &result_layout())
        }
        OpKind::Store { ptr, value, mask } => {
            in_layout([Some(*ptr), Some(*value), *mask], &layouts.get(func, *ptr))
        }
        OpKind::AtomicRmw {
            ptr, value, mask, ..
        } => in_layout([Some(*ptr), *mask, Some(*value)], &result_layout()),
        OpKind::AtomicCas { ptr, cmp, value } => {
            in_layout([Some(*ptr), Some(*cmp), Some(*value)], &result_layout())
        }
        OpKind::Reduce { src, .. } => {
            super::layout_assign::reduction_source_layout(func, layouts, *src)
                .map_or_else(Vec::new, |l| vec![(*src, l)])
        }
        OpKind::Dot { a, b, acc } => dot_reads(func, layouts, op, *a, *b, *acc),
        // Carried values are read where they are yielded (`OperandLayouts::yield_reads`); the inits before the loop.
        OpKind::While { inits, .. } => carried(func, layouts, inits, &op.results),
    }
}

fn carried(
    func: &Function,
    layouts: &LayoutMap,
    values: &[ValueId],
    results: &[ValueId],
) -> Vec<Read> {
    values
        .iter()
        .zip(results)
        .map(|(v, r)| (*v, layouts.get(func, *r)))
        .collect()
}

/// A dot on tensor cores reads its accumulator in the mma layout and stages
/// `a` and `b` from any blocked layout (others are made canonical first); on
/// FMA units it reads the accumulator in the result's blocked layout.
fn dot_reads(
    func: &Function,
    layouts: &LayoutMap,
    op: &Op,
    a: ValueId,
    b: ValueId,
    acc: ValueId,
) -> Vec<Read> {
    let Some(cfg) = planned_config(func, op) else {
        let result = op.results[0];
        let layout = match layouts.get(func, result) {
            Layout::Blocked(b) => Layout::Blocked(b),
            _ => layouts.canonical(&func.ty(result).shape),
        };
        return vec![(acc, layout)];
    };
    let mut reads = vec![(acc, Layout::Blocked(accumulator_layout(&cfg)))];
    for v in [a, b] {
        if !matches!(layouts.get(func, v), Layout::Blocked(_)) {
            reads.push((v, layouts.canonical(&func.ty(v).shape)));
        }
    }
    reads
}

fn in_layout<const N: usize>(values: [Option<ValueId>; N], layout: &Layout) -> Vec<Read> {
    values
        .into_iter()
        .flatten()
        .map(|v| (v, layout.clone()))
        .collect()
}
