//! CPU interpreter of Triton-IR: runs a kernel over its whole grid on host buffers.
//!
//! Programs run one after another (x fastest, then y, then z), each with its
//! own values; they share [`Memory`]. That makes atomics sequential and any
//! result that depends on program order deterministic. Errors (bad accesses,
//! bad arguments, integer division by zero, a loop over the step limit) come
//! back as [`InterpError`] with the span of the op at fault, never as panics.
//!
//! Choices where the IR leaves room (what PTX does, where it says):
//! - shift amounts outside `0..width` clamp to the width (`shl` gives 0,
//!   `shr` the sign); float→int casts saturate and map NaN to 0;
//! - f16/bf16 ops compute in f32 and round each result; float sums in
//!   `Reduce` accumulate in f64 and round once; `Dot` accumulates in f32;
//! - atomics are sequential (programs run in order); CAS compares bits;
//! - the step limit counts ops and loop iterations per program.
//!
//! Module map: `memory` (address space), `value` (tiles), `exec` (regions and
//! control flow), `elementwise`, `cast`, `shape`, `reduce`, `dot`, `access`
//! (loads/stores), `atomics`, `cluster` (split-K's sum over programs), `args`
//! (kernel arguments).

mod access;
mod args;
mod atomics;
mod cast;
mod cluster;
mod dot;
mod elementwise;
mod error;
mod exec;
mod memory;
mod reduce;
mod shape;
mod value;

pub use args::ArgValue;
pub use error::{InterpError, InterpResult};
pub use memory::{Element, Memory};

use crate::ir::Function;
use exec::Program;

/// Limits of one [`run_with`].
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Most ops plus loop iterations one program may execute before the run
    /// fails, so that a kernel that never ends is an error, not a hang.
    pub max_steps: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_steps: 10_000_000,
        }
    }
}

/// Runs `func` on every program of `grid` with default [`RunOptions`].
pub fn run(
    func: &Function,
    grid: [u32; 3],
    args: &[ArgValue],
    mem: &mut Memory,
) -> Result<(), InterpError> {
    run_with(func, grid, args, mem, &RunOptions::default())
}

/// Runs `func` on every program of `grid`; the first error stops the run
/// (memory keeps what earlier programs wrote).
pub fn run_with(
    func: &Function,
    grid: [u32; 3],
    args: &[ArgValue],
    mem: &mut Memory,
    options: &RunOptions,
) -> Result<(), InterpError> {
    let params = args::bind(func, args)?;
    let mut partials = cluster::ClusterPartials::default();
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let pid = [x, y, z];
                let mut program =
                    Program::new(func, mem, &mut partials, pid, grid, options.max_steps);
                let outcome = params
                    .iter()
                    .try_for_each(|(v, tile)| program.bind(*v, tile.clone(), func.span))
                    .and_then(|()| program.run_region(&func.body));
                if let Err(mut e) = outcome {
                    e.message = format!("{} [program ({x}, {y}, {z})]", e.message);
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}
