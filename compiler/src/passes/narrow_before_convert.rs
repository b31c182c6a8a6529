//! Narrows before converting: a cast to a smaller element type (a matmul's
//! f32 accumulator to its f16/bf16 output) takes the layout of its operand,
//! so the layout conversion that follows moves the narrow tile through
//! shared memory instead of the wide one (half the bytes written and read
//! for f32 -> f16). Triton's layout-conversion removal moves conversions
//! past elementwise ops to the cheap side the same way.
//!
//! Before `insert-layout-conversions`, which then puts the conversion after
//! the cast (before its readers) instead of before it. Only casts whose
//! result is read by ops of its own region (not yielded: a carried value
//! keeps one layout across a loop or `if`), and only where the operand's
//! layout is another one. On sm_90a (wgmma accumulators) every such cast,
//! as measured on the H100; elsewhere (mma.sync, not measured on a GPU
//! here) only tiles of at most [`MAX_ELEMENTS_A_THREAD`] elements a thread:
//! ptxas spilled the 128x128 accumulator of 4 warps (128 floats a thread)
//! once its f16 copy came before the conversion. Needs the layouts:
//! skipped without a target.
use super::{Pass, PassOptions};
use crate::arch::Arch;
use crate::ir::walk::{visit_region, DefUse};
use crate::ir::{Function, OpKind, Region, ValueId};

/// Off sm_90a, the most elements a thread may hold of a tile whose cast
/// moves before its conversion.
pub const MAX_ELEMENTS_A_THREAD: usize = 64;

pub struct NarrowBeforeConvert;

impl Pass for NarrowBeforeConvert {
    fn name(&self) -> &'static str {
        "narrow-before-convert"
    }

    fn summary(&self) -> &'static str {
        "gives narrowing casts their operand's layout, so conversions move the narrow tile"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_target()
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        let Some(layouts) = &func.layouts else {
            return false;
        };
        let any_size = options.target.is_some_and(|t| t.arch == Arch::Sm90a);
        let yielded = yielded_values(&func.body);
        let du = DefUse::compute(func);
        let mut moved = Vec::new();
        for visit in crate::ir::walk::walk_ops(func) {
            let OpKind::Cast { src } = visit.op.kind else {
                continue;
            };
            let Some(&result) = visit.op.results.first() else {
                continue;
            };
            let (from, to) = (func.ty(src), func.ty(result));
            let narrows = !from.is_scalar()
                && !from.scalar.is_ptr()
                && !to.scalar.is_ptr()
                && to.scalar.dtype().size_bytes() < from.scalar.dtype().size_bytes();
            if !narrows || yielded.contains(&result) || du.uses_of(result).is_empty() {
                continue;
            }
            let src_layout = layouts.get(func, src);
            let per_thread = src_layout.tile_map(&from.shape).regs();
            if !any_size && per_thread > MAX_ELEMENTS_A_THREAD {
                continue;
            }
            if src_layout != layouts.get(func, result) {
                moved.push((result, src_layout));
            }
        }
        let changed = !moved.is_empty();
        if let Some(layouts) = &mut func.layouts {
            layouts.layouts.extend(moved);
        }
        changed
    }
}

/// Every value some region yields (a loop's or an `if`'s carried values).
fn yielded_values(body: &Region) -> Vec<ValueId> {
    let mut out = body.yields.clone();
    visit_region(body, 0, &mut |op, _| {
        for r in crate::ir::walk::regions(&op.kind) {
            out.extend(r.yields.iter().copied());
        }
    });
    out
}
