//! Decides which loads of a loop that `pipeline-dot-loops` did not take are
//! copied one iteration ahead into double buffers: writes a
//! [`LoopPrefetch`] on the `While` (codegen follows it:
//! `codegen::ops::prefetch`).
//!
//! Pattern (FlashAttention's K/V loop: `s = q @ k^T`, then the online
//! softmax reads `s`, then `acc += p @ v`, so no dot can be delayed as a
//! pipeline delays it): a `While` whose body (no nested regions, no
//! `return`, no store or atomic: an early copy must read what the load
//! would have) has `mma.sync` dots whose `b` is a load of the body that only
//! the dot reads, zero-filled where masked, copied at least 2 elements at a
//! time along either axis, and whose pointers and mask the body computes
//! from the loop's counters alone ([`lookahead`]: so the next iteration's
//! can be computed in this one). The copies of the next iteration's tile
//! then fly while this iteration's softmax and other dot run, instead of
//! every thread waiting on its loads at the top of each iteration.
//!
//! Skipped without a target and under `TRITONC_NO_PIPELINE=1`; runs after
//! the layout conversions are in place (the lookahead must see every op
//! the next iteration's pointers need).
use super::pipeline_dot_loops::{copy_run, is_zero_constant, MAX_PIPELINE_BYTES};
use super::{Pass, PassOptions};
use crate::analysis::axis_info::{self, AxisInfoMap};
use crate::analysis::lookahead::lookahead;
use crate::analysis::mma::planned_config;
use crate::analysis::smem::PIPELINE_BUFFER_ALIGN;
use crate::ir::layout::LayoutMap;
use crate::ir::walk::{memory_free, regions, regions_mut, walk_ops, DefUse};
use crate::ir::{DType, Function, LoopPrefetch, Op, OpKind, PrefetchedOperand, Region, ValueId};

pub struct PrefetchDotOperands;

impl Pass for PrefetchDotOperands {
    fn name(&self) -> &'static str {
        "prefetch-dot-operands"
    }

    fn summary(&self) -> &'static str {
        "copies the loaded b of dots in unpipelined loops an iteration ahead (double buffers)"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_pipelining_target()
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let Some(layouts) = &func.layouts else {
            return false;
        };
        let widths = axis_info::analyze(func);
        let du = DefUse::compute(func);
        let decided: Vec<(Vec<ValueId>, LoopPrefetch)> = walk_ops(func)
            .into_iter()
            .filter_map(|visit| {
                let p = plan(func, layouts, &widths, &du, visit.op)?;
                Some((visit.op.results.clone(), p))
            })
            .collect();
        let changed = !decided.is_empty();
        annotate(&mut func.body, &decided);
        changed
    }
}

/// Writes each decision on its loop (found by its results, which are unique).
fn annotate(region: &mut Region, decided: &[(Vec<ValueId>, LoopPrefetch)]) {
    for op in &mut region.ops {
        if let Some((_, p)) = decided.iter().find(|(results, _)| *results == op.results) {
            if let OpKind::While { prefetch, .. } = &mut op.kind {
                *prefetch = Some(Box::new(p.clone()));
            }
        }
        for nested in regions_mut(&mut op.kind) {
            annotate(nested, decided);
        }
    }
}

/// The prefetch for `op` when it is a loop of the pattern with at least
/// one such operand.
fn plan(
    func: &Function,
    layouts: &LayoutMap,
    widths: &AxisInfoMap,
    du: &DefUse,
    op: &Op,
) -> Option<LoopPrefetch> {
    let OpKind::While {
        cond_region,
        body_region,
        pipeline: None,
        ..
    } = &op.kind
    else {
        return None;
    };
    // Copies are counted in groups per iteration: nothing nested may issue
    // its own, and every dot runs once an iteration. And the loop writes no
    // memory: a load copied an iteration early must read what it would
    // have read then.
    let flat = body_region.ops.iter().all(|o| regions(&o.kind).is_empty());
    if !flat || !memory_free(&body_region.ops) || !memory_free(&cond_region.ops) {
        return None;
    }
    let defined = |v: ValueId| body_region.defining_op(v);
    let mut operands_ = Vec::new();
    let mut end = 0;
    for dot in &body_region.ops {
        let OpKind::Dot { a, b, .. } = dot.kind else {
            continue;
        };
        let Some(cfg) = planned_config(func, dot) else {
            continue;
        };
        let Some(load) = defined(b) else { continue };
        let OpKind::Load { ptr, mask, other } = load.kind else {
            continue;
        };
        let half = matches!(func.dtype(b), DType::F16 | DType::BF16);
        let zero_fill = other.is_none_or(|o| is_zero_constant(func, o));
        if !half || !zero_fill || a == b || du.uses_of(b).len() != 1 {
            continue;
        }
        let Some((axis, copy_width)) = copy_run(func, widths, layouts, ptr, mask) else {
            continue;
        };
        let roots = [ptr]
            .into_iter()
            .chain(mask)
            .chain(cond_region.yields.clone());
        if lookahead(func, layouts, op, roots).is_none() {
            continue;
        }
        let stage_bytes = (cfg.k * cfg.n * 2).next_multiple_of(PIPELINE_BUFFER_ALIGN);
        let offset = end;
        if offset + 2 * stage_bytes > MAX_PIPELINE_BYTES {
            break;
        }
        end = offset + 2 * stage_bytes;
        operands_.push(PrefetchedOperand {
            load: b,
            dot: dot.results[0],
            k_major: axis == 0,
            copy_width,
            offset,
            stage_bytes,
        });
    }
    (!operands_.is_empty()).then_some(LoopPrefetch {
        operands: operands_,
        shared_bytes: end,
    })
}
