//! Chooses how every tile value is spread over the threads of a program
//! ([`crate::ir::layout::Layout`], by `analysis::layout_assign`: coalesced
//! and vectorized memory accesses, tensor-core operands and accumulators, as
//! few conversions as possible) and keeps the choice in
//! [`Function::layouts`], where the IR printer shows it on every tile type
//! (`f16[128, 32] #L2`) and codegen lowers with it. It also records which
//! dots run on tensor cores (`Function::dot_engines`: `mma.sync` with its
//! warp split; the others run on FMA units). Needs the target's number of
//! warps: skipped without a target.
use super::{Pass, PassOptions};
use crate::analysis::{axis_info, layout_assign, mma};
use crate::ir::Function;

pub struct AssignLayouts;

impl Pass for AssignLayouts {
    fn name(&self) -> &'static str {
        "assign-layouts"
    }

    fn summary(&self) -> &'static str {
        "chooses the thread layout of every tile (coalesced, vectorized, tensor-core operands)"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_target()
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        let Some(target) = options.target else {
            return false;
        };
        if !layout_assign::applies(func, target.num_warps) {
            // Code generation refuses this function with its own error.
            return false;
        }
        let mut widths = axis_info::analyze(func);
        widths.misaligned_runs = target.misaligned_runs;
        let layouts = layout_assign::assign(func, target.num_warps, &widths);
        let engines = mma::dot_engines(func, target.num_warps);
        let changed = func.layouts.as_ref() != Some(&layouts) || func.dot_engines != engines;
        func.layouts = Some(layouts);
        func.dot_engines = engines;
        changed
    }
}
