//! How many bytes of shared memory each op's lowering stages through:
//! conversions that cannot renumber registers, reshapes that reorder
//! elements, transposes, reductions across warps, dots (their operands),
//! atomics whose result threads hold replicas of, and a pipelined loop's
//! operand buffers. The `allocate-shared-memory` pass places them; codegen
//! addresses them and checks that what it writes fits.
use super::layout_assign::reduction_source_layout;
use super::mma::{a_from_registers, planned_config, stage_bytes};
use super::smem::{next_offset, padding};
use super::swizzle::Swizzle;
use crate::ir::layout::{
    register_remap, reshape_src_layout, transpose_in_place, Layout, LayoutMap, WARP_SIZE,
};
use crate::ir::{Function, LoopPipeline, LoopPrefetch, Op, OpKind, ValueId};

/// The schedule of the innermost loop an op sits in, whose buffers some of
/// its ops read instead of their own.
#[derive(Clone, Copy, Debug, Default)]
pub enum InLoop<'a> {
    /// Not in a scheduled loop.
    #[default]
    Plain,
    /// Its dot and the transposes of the dot's operands read the loop's buffers.
    Pipelined(&'a LoopPipeline),
    /// Its prefetched dots read their `b` from the loop's buffers.
    Prefetched(&'a LoopPrefetch),
}

impl<'a> InLoop<'a> {
    /// The schedule of the loop `op` when it has one, else `self` (the
    /// enclosing one).
    pub fn entering(self, op: &'a Op) -> InLoop<'a> {
        match &op.kind {
            OpKind::While {
                pipeline: Some(p), ..
            } => InLoop::Pipelined(p),
            OpKind::While {
                prefetch: Some(p), ..
            } => InLoop::Prefetched(p),
            _ => self,
        }
    }
}

/// Bytes `op` needs (0: none), in the loop `in_loop` (some ops of a
/// scheduled loop read its buffers instead).
pub fn scratch_bytes(func: &Function, layouts: &LayoutMap, op: &Op, in_loop: InLoop<'_>) -> usize {
    let Some(&result) = op.results.first() else {
        return 0;
    };
    if matches!(in_loop, InLoop::Pipelined(p) if p.reads_buffers(result)) {
        return 0;
    }
    let threads = layouts.num_warps * WARP_SIZE;
    let shape = |v: ValueId| func.ty(v).shape.clone();
    let elem_bytes = |v: ValueId| func.ty(v).scalar.memory_bytes();
    let elements = |v: ValueId| shape(v).iter().product::<usize>();
    match &op.kind {
        OpKind::ConvertLayout { src } => {
            let (from, to) = (layouts.get(func, *src), layouts.get(func, result));
            match register_remap(&from, &to, &shape(*src), threads) {
                Some(_) => 0,
                None => elements(*src) * elem_bytes(*src),
            }
        }
        OpKind::Reshape { src } => {
            let to = layouts.get(func, result);
            match reshape_src_layout(&to, &shape(*src), &shape(result)) {
                Some(_) => 0,
                None => elements(*src) * elem_bytes(result),
            }
        }
        OpKind::Trans { src } => transpose_bytes(func, layouts, *src, result),
        OpKind::Reduce { src, axis, .. } => {
            let Some(from) = reduction_source_layout(func, layouts, *src) else {
                return 0;
            };
            let Some(along) = from.tile_map(&shape(*src)).axes.get(*axis).copied() else {
                return 0;
            };
            match along.distinct_warps() {
                1 => 0,
                warps => warps * elements(result) * elem_bytes(*src),
            }
        }
        OpKind::ClusterSum { src, .. } => cluster_sum_bytes(
            layouts.get(func, *src).tile_map(&shape(*src)).regs(),
            threads,
        ),
        OpKind::Dot { a, b, .. } => match planned_config(func, op) {
            // A prefetched `b` is in the loop's buffers: only `a` is staged here.
            Some(cfg) if matches!(in_loop, InLoop::Prefetched(p) if p.operand_of(result).is_some()) => {
                if a_from_registers(&cfg, &layouts.get(func, *a)) {
                    0
                } else {
                    stage_bytes(&cfg).0
                }
            }
            Some(cfg) => stage_bytes(&cfg).1,
            None => fma_dot_stage(&shape(*a), &shape(*b), elem_bytes(*a)).map_or(0, |s| s.bytes),
        },
        OpKind::AtomicRmw { .. } | OpKind::AtomicCas { .. } => {
            let layout = layouts.get(func, result);
            let shared_with_replicas = matches!(layout, Layout::Scalar)
                || layout.tile_map(&shape(result)).has_replicas(threads);
            if shared_with_replicas {
                elements(result) * elem_bytes(result)
            } else {
                0
            }
        }
        OpKind::While {
            pipeline: Some(p), ..
        } => p.shared_bytes,
        OpKind::While {
            prefetch: Some(p), ..
        } => p.shared_bytes,
        _ => 0,
    }
}

/// Floats a thread moves per shared-memory access in split-K's
/// `cluster_sum` (16-byte stores and loads).
pub const CLUSTER_SUM_VECTOR: usize = 4;

/// `cluster_sum`'s buffer: each thread's `regs` floats (padded to whole
/// [`CLUSTER_SUM_VECTOR`]s), for every one of `threads`.
pub fn cluster_sum_bytes(regs: usize, threads: usize) -> usize {
    regs.div_ceil(CLUSTER_SUM_VECTOR) * CLUSTER_SUM_VECTOR * threads * 4
}

/// A transpose's buffer: the swizzled one, or rows padded by a bank.
fn transpose_bytes(func: &Function, layouts: &LayoutMap, src: ValueId, result: ValueId) -> usize {
    let ty = func.ty(src);
    let [m, n] = ty.shape[..] else {
        return 0;
    };
    let bytes = ty.scalar.memory_bytes();
    let (from, to) = (layouts.get(func, src), layouts.get(func, result));
    if transpose_in_place(&from, &to) {
        return 0;
    }
    match Swizzle::plan(&from, &to, &ty.shape, bytes, true) {
        Some(_) if !ty.scalar.is_ptr() => m * n * bytes,
        _ => m * (n + padding(bytes)) * bytes,
    }
}

/// How a dot on FMA units stages its operands: `a` as `[M][K + pad]` at 0,
/// then `b` as `[K][N + pad]` at `b_offset`.
pub struct FmaDotStage {
    /// Elements per row of `a` and of `b`.
    pub row_a: usize,
    pub row_b: usize,
    pub b_offset: usize,
    pub bytes: usize,
}

/// The staging of `a` (`[M, K]`) and `b` (`[K, N]`) with elements of `elem_bytes`.
pub fn fma_dot_stage(a: &[usize], b: &[usize], elem_bytes: usize) -> Option<FmaDotStage> {
    let (&[m, k], &[_, n]) = (a, b) else {
        return None;
    };
    let pad = padding(elem_bytes);
    let (row_a, row_b) = (k + pad, n + pad);
    let b_offset = next_offset(0, m * row_a * elem_bytes);
    Some(FmaDotStage {
        row_a,
        row_b,
        b_offset,
        bytes: b_offset + k * row_b * elem_bytes,
    })
}
