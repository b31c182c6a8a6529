//! Places every op's scratch shared memory ([`crate::analysis::scratch`]) in
//! the kernel's one dynamic shared array and sizes the array; the plan goes
//! on the function ([`SharedPlan`]) and codegen addresses with it.
//!
//! Rule: an op's buffer lives only while the op runs, so every buffer starts
//! at the bottom — above the operand buffers of the pipelined loop the op
//! sits in, which live through the whole loop (its condition, body and
//! drain). Reuse between ops is made safe by barriers (a barrier before an
//! op writes its buffer, one between its writes and its reads). Needs the
//! layouts: skipped without a target.
use super::{Pass, PassOptions};
use crate::analysis::scratch::scratch_bytes;
use crate::analysis::smem::BUFFER_ALIGN;
use crate::ir::layout::LayoutMap;
use crate::ir::walk::regions;
use crate::ir::{Function, OpKind, Region, SharedBuffer, SharedPlan, ValueId};

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
        let mut plan = SharedPlan::default();
        place(func, layouts, &func.body, 0, None, &mut plan);
        let changed = func.shared.as_ref() != Some(&plan);
        func.shared = Some(plan);
        changed
    }
}

/// Places the buffers of `region`'s ops from byte `floor` up.
fn place(
    func: &Function,
    layouts: &LayoutMap,
    region: &Region,
    floor: usize,
    pipelined_dot: Option<ValueId>,
    plan: &mut SharedPlan,
) {
    for op in &region.ops {
        let bytes = scratch_bytes(func, layouts, op, pipelined_dot);
        if bytes > 0 {
            // Every op waits first until `place-barriers` proves it need not.
            let buffer = SharedBuffer {
                offset: floor,
                bytes,
                barrier_first: true,
            };
            plan.total_bytes = plan
                .total_bytes
                .max(buffer.end().next_multiple_of(BUFFER_ALIGN));
            plan.buffers.insert(op.results[0], buffer);
        }
        // A pipelined loop's buffers stay below everything inside it.
        let (inner_floor, inner_dot) = match &op.kind {
            OpKind::While {
                pipeline: Some(p), ..
            } => (floor + p.shared_bytes, Some(p.dot)),
            _ => (floor, pipelined_dot),
        };
        for nested in regions(&op.kind) {
            place(func, layouts, nested, inner_floor, inner_dot, plan);
        }
    }
}
