//! Makes every layout conversion an op: wherever an op reads a tile in a
//! layout other than the one its producer left it in
//! ([`crate::analysis::operand_layouts`]), a `convert_layout` goes right
//! before the op (before a region's yields, for the values an `If` or a
//! `While` carries) and the op reads its result. A tile read in the same
//! layout again later in the same region reuses that conversion.
//!
//! A tile computed cheaply from scalars and lazy tiles (an index range
//! offset by a loop counter, a mask comparing it with a bound, a pointer
//! tile built from them) is computed again in the wanted layout instead
//! of crossing shared memory ([`MAX_REMATERIALIZED_OPS`] ops at most):
//! a conversion costs a barrier, a few integer ops do not.
//!
//! Lowering then never converts on its own: it finds each operand in the
//! layout it reads it in. Runs after `pipeline-dot-loops` (a pipelined loop
//! reads its loads and accumulator its own way). Needs the layouts: skipped
//! without a target.
use super::{Pass, PassOptions};
use crate::analysis::operand_layouts::{OperandLayouts, Read};
use crate::ir::layout::{reshape_src_layout, Layout, LayoutMap};
use crate::ir::walk::{operands_mut, regions_mut, walk_ops};
use crate::ir::{Function, LoopPipeline, Op, OpKind, Region, ValueId};
use crate::span::Span;
use std::collections::HashMap;

pub struct InsertLayoutConversions;

impl Pass for InsertLayoutConversions {
    fn name(&self) -> &'static str {
        "insert-layout-conversions"
    }

    fn summary(&self) -> &'static str {
        "puts a convert_layout wherever an op reads a tile in another layout than its producer's"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_target()
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let Some(mut layouts) = func.layouts.take() else {
            return false;
        };
        let reads = OperandLayouts::new(func);
        let cheap = cheap_definitions(func);
        let mut body = std::mem::take(&mut func.body);
        let mut cx = Rewriter {
            func,
            layouts: &mut layouts,
            reads: &reads,
            cheap: &cheap,
            inserted: 0,
        };
        cx.region(&mut body, None, None);
        let changed = cx.inserted > 0;
        func.body = body;
        func.layouts = Some(layouts);
        changed
    }
}

struct Rewriter<'a> {
    func: &'a mut Function,
    layouts: &'a mut LayoutMap,
    reads: &'a OperandLayouts,
    cheap: &'a HashMap<ValueId, Op>,
    inserted: usize,
}

/// Most ops computed again to make one tile in another layout.
pub const MAX_REMATERIALIZED_OPS: usize = 8;

/// The ops cheap to compute again, by result: integer and pointer
/// arithmetic, comparisons, selects, casts, broadcasts and reshapes.
fn cheap_definitions(func: &Function) -> HashMap<ValueId, Op> {
    walk_ops(func)
        .iter()
        .filter(|v| {
            matches!(
                v.op.kind,
                OpKind::Binary { .. }
                    | OpKind::Cmp { .. }
                    | OpKind::Select { .. }
                    | OpKind::Cast { .. }
                    | OpKind::AddPtr { .. }
                    | OpKind::Broadcast { .. }
                    | OpKind::Reshape { .. }
            ) && v.op.results.len() == 1
        })
        .map(|v| (v.op.results[0], v.op.clone()))
        .collect()
}

/// Conversions already made in a region, by value and layout.
type Made = HashMap<(ValueId, Layout), ValueId>;

impl Rewriter<'_> {
    /// Rewrites `region`'s ops; `carried`: the results and span of the op
    /// that reads the region's yields (an `If`, or a `While` for its body),
    /// `pipeline` the plan of the loop whose body this is.
    fn region(
        &mut self,
        region: &mut Region,
        carried: Option<(&[ValueId], Span)>,
        pipeline: Option<&LoopPipeline>,
    ) {
        let mut made = Made::new();
        let mut ops = Vec::with_capacity(region.ops.len());
        for mut op in std::mem::take(&mut region.ops) {
            let wanted = self.reads.reads(self.func, self.layouts, &op, pipeline);
            let renames = self.convert(&wanted, op.span, &mut made, &mut ops);
            for operand in operands_mut(&mut op.kind) {
                if let Some(to) = renames.get(operand) {
                    *operand = *to;
                }
            }
            self.nested(&mut op);
            ops.push(op);
        }
        if let Some((results, carrier_span)) = carried {
            let wanted = self
                .reads
                .yield_reads(self.func, self.layouts, results, &region.yields);
            let span = ops.last().map_or(carrier_span, |o: &Op| o.span);
            let renames = self.convert(&wanted, span, &mut made, &mut ops);
            for y in &mut region.yields {
                if let Some(to) = renames.get(y) {
                    *y = *to;
                }
            }
        }
        region.ops = ops;
    }

    /// The regions of `op`, each with what reads its yields.
    fn nested(&mut self, op: &mut Op) {
        let (results, span) = (op.results.clone(), op.span);
        match &mut op.kind {
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                self.region(then_region, Some((&results, span)), None);
                self.region(else_region, Some((&results, span)), None);
            }
            OpKind::While {
                cond_region,
                body_region,
                pipeline,
                ..
            } => {
                self.region(cond_region, None, None);
                self.region(body_region, Some((&results, span)), pipeline.as_deref());
            }
            other => {
                for r in regions_mut(other) {
                    self.region(r, None, None);
                }
            }
        }
    }

    /// Emits into `ops` a conversion for every read whose value is in
    /// another layout (reusing those `made` earlier in the region); returns
    /// the renaming the reader applies.
    fn convert(
        &mut self,
        wanted: &[Read],
        span: Span,
        made: &mut Made,
        ops: &mut Vec<Op>,
    ) -> HashMap<ValueId, ValueId> {
        let mut renames = HashMap::new();
        for (v, layout) in wanted {
            if self.layouts.get(self.func, *v) == *layout || renames.contains_key(v) {
                continue;
            }
            let key = (*v, layout.clone());
            let converted = match made.get(&key) {
                Some(c) => *c,
                None => {
                    // Tried on copies: a failure leaves nothing behind.
                    let mut budget = MAX_REMATERIALIZED_OPS;
                    let (mut again, mut trial) = (Vec::new(), made.clone());
                    if let Some(c) =
                        self.rematerialize(*v, layout, span, &mut trial, &mut again, &mut budget)
                    {
                        ops.extend(again);
                        *made = trial;
                        renames.insert(*v, c);
                        continue;
                    }
                    let c = self.new_value_like(*v);
                    self.layouts.layouts.insert(c, layout.clone());
                    ops.push(Op {
                        kind: OpKind::ConvertLayout { src: *v },
                        results: vec![c],
                        span,
                    });
                    self.inserted += 1;
                    made.insert(key, c);
                    c
                }
            };
            renames.insert(*v, converted);
        }
        renames
    }

    /// `v` computed again in `layout` by ops pushed on `ops` (and noted in
    /// `made`), when its definition and every operand not already in the
    /// layout it is read in are cheap, within `budget` ops; on `None` the
    /// caller drops `ops` and `made`.
    fn rematerialize(
        &mut self,
        v: ValueId,
        layout: &Layout,
        span: Span,
        made: &mut Made,
        ops: &mut Vec<Op>,
        budget: &mut usize,
    ) -> Option<ValueId> {
        if let Some(c) = made.get(&(v, layout.clone())) {
            return Some(*c);
        }
        let op = self.cheap.get(&v)?;
        *budget = budget.checked_sub(1)?;
        let mut kind = op.kind.clone();
        let shape = |x: ValueId| self.func.ty(x).shape.clone();
        let operand_layout = match &kind {
            OpKind::Reshape { src } => reshape_src_layout(layout, &shape(*src), &shape(v))?,
            _ => layout.clone(),
        };
        for operand in operands_mut(&mut kind) {
            let o = *operand;
            let in_place = self.func.ty(o).is_scalar()
                || self.reads.is_lazy(o)
                || self.layouts.get(self.func, o) == operand_layout;
            if !in_place {
                *operand = self.rematerialize(o, &operand_layout, span, made, ops, budget)?;
            }
        }
        let c = self.new_value_like(v);
        self.layouts.layouts.insert(c, layout.clone());
        ops.push(Op {
            kind,
            results: vec![c],
            span,
        });
        made.insert((v, layout.clone()), c);
        Some(c)
    }

    fn new_value_like(&mut self, v: ValueId) -> ValueId {
        let info = self.func.values[v.0 as usize].clone();
        self.func.new_value(info.ty, info.name)
    }
}
