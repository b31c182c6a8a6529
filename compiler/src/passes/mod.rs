//! Triton-IR -> Triton-IR passes, run between sema and code generation.
//!
//! The driver verifies sema's IR, runs [`PassManager::standard`] over each
//! kernel (the verifier runs after every pass), and hands the result to
//! [`codegen`](crate::codegen). The order is fixed and printable
//! (`tritonc --print-passes`); `tritonc --print-after PASS|all` prints the IR
//! after the named passes. Target-aware passes read [`PassOptions::target`]
//! (arch, warps, buffers) and write GPU-level facts on the IR
//! ([`crate::ir::schedule`], `convert_layout` ops, the shared-memory plan
//! and its barriers) that codegen follows without deciding again.
//!
//! Passes, in order:
//! 1. [`fold_dot_accumulator`]: `x + a @ b` becomes one dot accumulating
//!    into `x` (as `c += a @ b` is).
//! 2. [`eliminate_dead_code`]: drops effect-free ops whose results nothing
//!    reads (each would get a layout, perhaps a conversion).
//! 3. [`unrotate_prefetch`]: undoes the seed's manual pre-fetch so the loop
//!    pipeliner sees the plain loop (skipped with `TRITONC_NO_PIPELINE=1`).
//! 4. [`widen_dot_k`]: on sm_90a, a dot loop stepping K by fewer than 128
//!    bytes of 16-bit operands steps by 128 (every K-axis tile widened),
//!    where the loads are mask-bounded boxes of tensors; needs a target.
//! 5. [`swap_dot_operands`] (`swap-ab`): on sm_90a, a dot loop whose tile
//!    has fewer than 64 rows computes `^b @ ^a` into a transposed
//!    accumulator (transposed back after the loop), so wgmma takes it;
//!    only where the swapped loop is then pipelined on wgmma; needs a target.
//! 6. [`split_k`]: with `--split-k S` on sm_90+, `S` programs (a cluster
//!    along grid axis 2) share the kernel's dot loop and sum their
//!    accumulators (`cluster_sum`); needs a target asking for it.
//! 7. [`assign_layouts`]: chooses every tile's thread layout (kept in
//!    `Function::layouts`, printed on tile types); needs a target.
//! 8. [`pipeline_dot_loops`]: decides which dot loops are software-pipelined
//!    and how (engine, copy widths, buffers); needs a target.
//! 9. [`tma_loads`]: on sm_90a, a wgmma pipeline whose operand loads are
//!    boxes of tensors copies them with TMA (one thread, mbarriers);
//!    needs a target asking for it (`--tma`).
//! 10. [`narrow_before_convert`]: a narrowing cast takes its operand's
//!     layout, so the conversion after it moves the narrow tile; needs a target.
//! 11. [`insert_layout_conversions`]: a `convert_layout` op wherever a tile
//!     is read in another layout than its producer's; needs a target.
//! 12. [`prefetch_dot_operands`]: in a loop not pipelined (attention's),
//!     a dot's loaded `b` is copied an iteration ahead into double buffers
//!     (skipped with `TRITONC_NO_PIPELINE=1`); needs a target.
//! 13. [`allocate_shared_memory`]: every op's scratch shared memory placed
//!     and the kernel's total sized ([`crate::ir::SharedPlan`]); needs a target.
//! 14. [`place_barriers`]: which ops wait for every thread before writing
//!     their buffer (earlier accesses may overlap); needs the plan.
//!
//! Adding a pass: one file here with a unit struct implementing [`Pass`],
//! its place in [`manager::STANDARD`], and a file test in
//! `compiler/tests/passes/` (`cargo test --test passes`).
use crate::ir::Function;

pub mod allocate_shared_memory;
pub mod assign_layouts;
pub mod eliminate_dead_code;
pub mod fold_dot_accumulator;
pub mod insert_layout_conversions;
pub mod manager;
pub mod narrow_before_convert;
pub mod options;
pub mod pipeline_dot_loops;
pub mod place_barriers;
pub mod prefetch_dot_operands;
pub mod selection;
pub mod split_k;
pub mod swap_dot_operands;
pub mod tma_loads;
pub mod unrotate_prefetch;
pub mod widen_dot_k;

pub use manager::{PassEvent, PassFailure, PassManager, PassOutcome};
pub use options::{PassOptions, Target};
pub use selection::{PassSelection, UnknownPass};

/// One IR -> IR rewrite of a function.
pub trait Pass: Sync {
    /// Kebab-case name, as `--print-after` takes it.
    fn name(&self) -> &'static str;
    /// One line for `--print-passes`.
    fn summary(&self) -> &'static str;
    /// Why the pass does not run under `options` (then it leaves the IR as
    /// is); `None` when it runs.
    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        let _ = options;
        None
    }
    /// Rewrites `func` in place under `options` (the target, for passes
    /// that plan for one); `true` when anything changed.
    fn run(&self, func: &mut Function, options: &PassOptions) -> bool;
}
