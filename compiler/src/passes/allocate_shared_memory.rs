//! Places every op's scratch shared memory ([`crate::analysis::scratch`]) in
//! the kernel's one dynamic shared array and sizes the array; the plan goes
//! on the function ([`SharedPlan`]) and codegen addresses with it.
//!
//! Rule: an op's buffer lives only while the op runs, so buffers start at the
//! bottom — above the operand buffers of the pipelined (or prefetched) loop the op sits in,
//! which live through the whole loop (its condition, body and drain). Reuse
//! between ops is made safe by barriers (a barrier before an op writes its
//! buffer, one between its writes and its reads). An op's buffer goes
//! beside the previous op's instead of over it when the kernel's shared
//! memory stays within what it needs anyway or a few KiB: then it need not
//! wait for that op's readers (`place-barriers` drops the barrier), as with
//! a row's two reductions in softmax. A warp-specialized pipeline
//! ([`crate::ir::TmaCopies::warp_specialized`]) is the exception: its
//! producer fills the buffers while the consumers run the rest of the
//! kernel (the epilogue of one tile while the next one's copies fly), so its
//! buffers and barriers take the bottom bytes for the whole kernel and
//! every other buffer goes above them. Needs the layouts: skipped without
//! a target.
use super::{Pass, PassOptions};
use crate::analysis::scratch::{scratch_bytes, InLoop};
use crate::analysis::smem::{BUFFER_ALIGN, PIPELINE_BUFFER_ALIGN};
use crate::ir::layout::LayoutMap;
use crate::ir::walk::regions;
use crate::ir::{Function, Region, SharedBuffer, SharedPlan, ValueId};

pub struct AllocateSharedMemory;

impl Pass for AllocateSharedMemory {
    fn name(&self) -> &'static str {
        "allocate-shared-memory"
    }

    fn summary(&self) -> &'static str {
        "places each op's scratch shared memory and sizes the kernel's shared array"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_target()
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let Some(layouts) = &func.layouts else {
            return false;
        };
        let reserved = producer_buffers(func, layouts);
        let floor = reserved.map_or(0, |(_, b)| b.end().next_multiple_of(BUFFER_ALIGN));
        // First every buffer at its floor: the least memory the kernel needs.
        let mut lowest = SharedPlan::default();
        Placer {
            func,
            layouts,
            stack_below: 0,
            reserved,
        }
        .region(&func.body, floor, InLoop::Plain, &mut lowest);
        // Then neighbours side by side where that costs no more than this.
        let mut plan = SharedPlan::default();
        Placer {
            func,
            layouts,
            stack_below: lowest.total_bytes.max(STACKING_ALLOWANCE),
            reserved,
        }
        .region(&func.body, floor, InLoop::Plain, &mut plan);
        let changed = func.shared.as_ref() != Some(&plan);
        func.shared = Some(plan);
        changed
    }
}

/// The warp-specialized loop of the top region and its buffer from byte 0.
fn producer_buffers(func: &Function, layouts: &LayoutMap) -> Option<(ValueId, SharedBuffer)> {
    let (op, ..) = func.warp_specialized_loop()?;
    let buffer = SharedBuffer {
        offset: 0,
        bytes: scratch_bytes(func, layouts, op, InLoop::Plain),
        barrier_first: true,
    };
    Some((op.results[0], buffer))
}

/// Shared memory a kernel may always take to put two neighbouring buffers
/// side by side (a few KiB cost no occupancy: threads limit it first).
const STACKING_ALLOWANCE: usize = 8 * 1024;

struct Placer<'a> {
    func: &'a Function,
    layouts: &'a LayoutMap,
    /// A buffer goes beside the previous op's when it then ends within
    /// this many bytes (0: never).
    stack_below: usize,
    /// A warp-specialized loop's buffer, below every other one.
    reserved: Option<(ValueId, SharedBuffer)>,
}

impl Placer<'_> {
    /// Places the buffers of `region`'s ops from byte `floor` up.
    fn region(&self, region: &Region, floor: usize, in_loop: InLoop<'_>, plan: &mut SharedPlan) {
        // The buffer of the op before, when nothing with regions came since.
        let mut previous: Option<SharedBuffer> = None;
        for op in &region.ops {
            let bytes = scratch_bytes(self.func, self.layouts, op, in_loop);
            // A pipelined or prefetched loop's buffers.
            let scheduled = op.is_scheduled_loop();
            let mut placed_end = floor;
            if let Some((_, buffer)) = self.reserved.filter(|(v, _)| op.results.first() == Some(v))
            {
                plan.total_bytes = plan
                    .total_bytes
                    .max(buffer.end().next_multiple_of(BUFFER_ALIGN));
                plan.buffers.insert(op.results[0], buffer);
                placed_end = floor.max(buffer.end());
            } else if bytes > 0 {
                let align = if scheduled {
                    PIPELINE_BUFFER_ALIGN
                } else {
                    BUFFER_ALIGN
                };
                let buffer = SharedBuffer {
                    offset: self.offset(floor, previous, bytes, align),
                    bytes,
                    // Every op waits first until `place-barriers` proves it need not.
                    barrier_first: true,
                };
                plan.total_bytes = plan
                    .total_bytes
                    .max(buffer.end().next_multiple_of(BUFFER_ALIGN));
                plan.buffers.insert(op.results[0], buffer);
                previous = Some(buffer);
                placed_end = buffer.end();
            }
            // A scheduled loop's operand buffers (its own buffer, wherever
            // it was placed) stay below everything inside it.
            let inner_floor = if scheduled {
                placed_end.next_multiple_of(BUFFER_ALIGN)
            } else {
                floor
            };
            for nested in regions(&op.kind) {
                previous = None;
                self.region(nested, inner_floor, in_loop.entering(op), plan);
            }
        }
    }

    /// The lowest place from the floor up (aligned to `align`) that does not
    /// overlap the previous op's buffer (then this op need not wait for that
    /// one's readers), when it ends within the allowance; else the floor.
    fn offset(
        &self,
        floor: usize,
        previous: Option<SharedBuffer>,
        bytes: usize,
        align: usize,
    ) -> usize {
        let floor = floor.next_multiple_of(align);
        let Some(p) = previous else {
            return floor;
        };
        if floor + bytes <= p.offset || p.end() <= floor {
            return floor;
        }
        let above = p.end().next_multiple_of(align);
        if above + bytes <= self.stack_below {
            above
        } else {
            floor
        }
    }
}
