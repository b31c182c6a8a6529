//! GPU-level facts on Triton-IR: what the target-aware passes decide and
//! codegen follows without deciding again. Printed with the IR
//! (`tritonc --emit ir --print-after pipeline-dot-loops`) and checked by the
//! verifier.

use super::ValueId;
use std::collections::BTreeMap;

/// A `While` whose dot runs software-pipelined: the loads of its operands
/// become asynchronous copies (`cp.async`) global -> shared memory into
/// `stages` rotating buffers at the bottom of shared memory, and iteration
/// `i` multiplies tile `i - stages + 1` while the copies of the later tiles
/// fly; the last tiles are drained after the loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopPipeline {
    /// Operand buffers (each holds one iteration's `a` and `b` tiles).
    pub stages: usize,
    /// The body's `Dot` (its result) and the `Load`s of its `a` and `b`.
    pub dot: ValueId,
    pub loads: [ValueId; 2],
    /// Position of the dot's accumulator among the carried values.
    pub acc: usize,
    /// Elements per `cp.async` of `a` and of `b` (16-bit elements: 2, 4 or 8).
    pub copy_widths: [usize; 2],
    pub engine: DotEngine,
    /// Bytes of shared memory the buffers take, from offset 0.
    pub shared_bytes: usize,
}

/// The tensor-core instructions the pipelined dot runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DotEngine {
    /// `mma.sync m16n8k16` with `ldmatrix`, warps split `[M, N]` like this.
    MmaSync { warps: [usize; 2] },
    /// `wgmma.mma_async` (sm_90a) on this many warpgroups, which split `M`.
    Wgmma { warpgroups: usize },
}

/// Where each op's scratch shared memory lies, and how much dynamic shared
/// memory the kernel needs: the `allocate-shared-memory` pass's plan, which
/// codegen addresses with (printed as `smem [offset, end)` on each op that
/// has a buffer and `smem N bytes` on the function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SharedPlan {
    /// By the op's first result (every op with scratch memory has one).
    pub buffers: BTreeMap<ValueId, SharedBuffer>,
    /// Bytes the kernel launches with (every buffer's end, aligned).
    pub total_bytes: usize,
}

/// One op's bytes of shared memory, from byte `offset`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SharedBuffer {
    pub offset: usize,
    pub bytes: usize,
    /// Whether every thread waits (`bar.sync`) before the op writes its
    /// buffer: earlier accesses to overlapping bytes may not be done. Set
    /// by `place-barriers`; an op always waits between its writes and its
    /// reads.
    pub barrier_first: bool,
}

impl SharedBuffer {
    pub fn end(&self) -> usize {
        self.offset + self.bytes
    }
}
