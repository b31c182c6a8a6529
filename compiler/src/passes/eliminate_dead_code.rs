//! The `eliminate-dead-code` pass: drops ops that compute values nothing
//! reads and have no other effect. Sema leaves some (a ternary's negated
//! condition, made for a guard its arm turned out not to need), and every
//! one that survives would be given a layout, perhaps a conversion through
//! shared memory with its barrier, at every iteration of a loop
//! (FlashAttention's `valid ? s : -inf`). Stores, atomics, returns, loops,
//! `if`s and cluster sums (which meet other programs) always stay.
use super::{Pass, PassOptions};
use crate::ir::walk::{regions_mut, DefUse};
use crate::ir::{Function, Op, OpKind, Region};

pub struct EliminateDeadCode;

impl Pass for EliminateDeadCode {
    fn name(&self) -> &'static str {
        "eliminate-dead-code"
    }

    fn summary(&self) -> &'static str {
        "drops ops without effects whose results nothing reads"
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let mut changed = false;
        // Dropping an op can leave its operands' producers unread.
        loop {
            let du = DefUse::compute(func);
            if !drop_unread(&mut func.body, &du) {
                return changed;
            }
            changed = true;
        }
    }
}

/// Removes the unread effect-free ops of `region` and below; whether any went.
fn drop_unread(region: &mut Region, du: &DefUse) -> bool {
    let before = region.ops.len();
    region
        .ops
        .retain(|op| !(effect_free(op) && op.results.iter().all(|r| du.uses_of(*r).is_empty())));
    let mut dropped = region.ops.len() != before;
    for op in &mut region.ops {
        for r in regions_mut(&mut op.kind) {
            dropped |= drop_unread(r, du);
        }
    }
    dropped
}

/// Ops whose only effect is their results.
fn effect_free(op: &Op) -> bool {
    !op.results.is_empty()
        && (op.kind.is_elementwise()
            || matches!(
                op.kind,
                OpKind::Trans { .. }
                    | OpKind::ConvertLayout { .. }
                    | OpKind::Load { .. }
                    | OpKind::Reduce { .. }
                    | OpKind::Dot { .. }
            ))
}
