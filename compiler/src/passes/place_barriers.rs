//! Decides which ops wait for every thread (`bar.sync`) before writing their
//! shared-memory buffer, like Triton's `Membar` analysis: an op must wait
//! when an access to overlapping bytes may have happened since the last
//! barrier on some path to it; otherwise it writes at once. Every op that
//! stages through shared memory waits between its writes and its reads, so
//! after it only its own reads are outstanding.
//!
//! Walks the regions with the byte ranges possibly accessed since the last
//! barrier: both arms of an `If` from the state before it, a `While` until
//! its header state stops growing. A pipelined loop has its own barriers
//! inside: the ops in it always wait first, and after it anything may be
//! outstanding. A prefetched loop's buffers are read through the loop (its
//! copies wait on barriers of their own). At the kernel's start nothing is: the first op to stage
//! does not wait. Writes the decision on the plan of
//! `allocate-shared-memory` (`SharedBuffer::barrier_first`, printed as
//! `after barrier`); codegen follows it. Skipped without a plan.
use super::{Pass, PassOptions};
use crate::ir::{Function, Op, OpKind, Region, SharedPlan};

pub struct PlaceBarriers;

impl Pass for PlaceBarriers {
    fn name(&self) -> &'static str {
        "place-barriers"
    }

    fn summary(&self) -> &'static str {
        "decides which shared-memory writers wait for earlier readers of the same bytes"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_target()
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let Some(mut plan) = func.shared.take() else {
            return false;
        };
        let before = plan.clone();
        for buffer in plan.buffers.values_mut() {
            buffer.barrier_first = false;
        }
        region(&func.body, Outstanding::default(), &mut plan, false);
        let changed = plan != before;
        func.shared = Some(plan);
        changed
    }
}

/// Byte ranges possibly accessed since the last barrier.
#[derive(Clone, Debug, Default, PartialEq)]
struct Outstanding(Vec<(usize, usize)>);

impl Outstanding {
    const EVERYTHING: (usize, usize) = (0, usize::MAX);

    fn overlaps(&self, start: usize, end: usize) -> bool {
        self.0.iter().any(|&(s, e)| s < end && start < e)
    }

    fn union(mut self, other: &Outstanding) -> Outstanding {
        for r in &other.0 {
            if !self.0.contains(r) {
                self.0.push(*r);
            }
        }
        self.0.sort_unstable();
        self
    }
}

/// The state after `region`, entered with `outstanding`; `in_pipeline`:
/// inside a pipelined loop (every buffer waits first).
fn region(
    region_: &Region,
    mut outstanding: Outstanding,
    plan: &mut SharedPlan,
    in_pipeline: bool,
) -> Outstanding {
    for op in &region_.ops {
        outstanding = step(op, outstanding, plan, in_pipeline);
    }
    outstanding
}

fn step(
    op: &Op,
    outstanding: Outstanding,
    plan: &mut SharedPlan,
    in_pipeline: bool,
) -> Outstanding {
    match &op.kind {
        OpKind::If {
            then_region,
            else_region,
            ..
        } => {
            let then_ = region(then_region, outstanding.clone(), plan, in_pipeline);
            let else_ = region(else_region, outstanding, plan, in_pipeline);
            then_.union(&else_)
        }
        OpKind::While {
            cond_region,
            body_region,
            pipeline,
            prefetch,
            ..
        } => {
            if pipeline.is_some() {
                // Its first barrier guards its buffers against earlier readers.
                mark(op, &outstanding, plan, in_pipeline);
                region(cond_region, Outstanding::default(), plan, true);
                region(body_region, Outstanding::default(), plan, true);
                return Outstanding(vec![Outstanding::EVERYTHING]);
            }
            // A prefetched loop's buffers (below every op inside it): its
            // barrier before the first copies guards them against earlier
            // readers; its dots read them through the loop and after it.
            let own = match prefetch {
                Some(_) => Outstanding(
                    mark(op, &outstanding, plan, in_pipeline)
                        .into_iter()
                        .collect(),
                ),
                None => Outstanding::default(),
            };
            // The header is reached from before the loop and from the body's end.
            let mut header = outstanding.union(&own);
            loop {
                let after_cond = region(cond_region, header.clone(), plan, in_pipeline);
                let after_body = region(body_region, after_cond.clone(), plan, in_pipeline);
                let next = header.clone().union(&after_body);
                if next == header {
                    return after_cond.union(&own);
                }
                header = next;
            }
        }
        _ => match mark(op, &outstanding, plan, in_pipeline) {
            // Its own barrier between writes and reads leaves only its reads.
            Some((start, end)) => Outstanding(vec![(start, end)]),
            None => outstanding,
        },
    }
}

/// Sets whether `op`'s buffer waits first; its byte range, when it has one.
fn mark(
    op: &Op,
    outstanding: &Outstanding,
    plan: &mut SharedPlan,
    always: bool,
) -> Option<(usize, usize)> {
    let buffer = plan.buffers.get_mut(op.results.first()?)?;
    let (start, end) = (buffer.offset, buffer.end());
    buffer.barrier_first |= always || outstanding.overlaps(start, end);
    Some((start, end))
}
