//! Decides which loops around a tensor-core dot run software-pipelined, and
//! how: writes a [`LoopPipeline`] on each such `While` (codegen follows it:
//! `codegen::pipeline` and, for wgmma, `codegen::wgmma_pipeline`).
//!
//! Pattern: a `While` whose body loads the dot's `a` and `b` straight from
//! pointer tiles (`a = *pa`, plain or masked with a zero fill), or their
//! transposes (`^b`, dot's gradients: staged as loaded, read transposed;
//! a transposed `a` on wgmma only), the loads feeding only the dot, and the
//! dot accumulating into a loop-carried tile (`c = a @ b + c`, `c` used by
//! nothing else in the loop). The loads then
//! become `cp.async` copies into `stages` shared-memory buffers. What is
//! decided here:
//! - the engine: on sm_90a, warpgroup MMA when the tile fits the warpgroups
//!   ([`wgmma::plan`]), else `mma.sync` with its warp split;
//! - the copy width of each operand (16-bit elements per `cp.async`: 2, 4 or
//!   8), from its layout and the alignment the axis analysis proves;
//! - the number of buffers ([`choose_stages`], [`choose_wgmma_stages`]),
//!   at most `num_stages` when the target options ask.
//!
//! Anything else keeps the plain loop. Reads the layouts `assign-layouts`
//! chose. Needs the target (arch and warps): the pass is skipped without one (`tritonc --emit ir` gets it from `--arch` and
//! `--num-warps`) and under `TRITONC_NO_PIPELINE=1`.
use super::options::Target;
use super::{Pass, PassOptions};
use crate::analysis::axis_info::{self, AxisInfoMap};
use crate::analysis::mma::{self, planned_config, MmaConfig};
use crate::analysis::wgmma::{self, WgmmaConfig};
use crate::arch::Arch;
use crate::ir::layout::{Layout, LayoutMap};
use crate::ir::walk::{memory_free, regions_mut, walk_ops, DefUse};
use crate::ir::{Const, DotEngine, Function, LoopPipeline, Op, OpKind, ValueId};

pub struct PipelineDotLoops;

impl Pass for PipelineDotLoops {
    fn name(&self) -> &'static str {
        "pipeline-dot-loops"
    }

    fn summary(&self) -> &'static str {
        "marks loops around a tensor-core dot for cp.async pipelining: engine, copy widths, buffers"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_pipelining_target()
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        let Some(target) = options.target else {
            return false;
        };
        // The layouts the `assign-layouts` pass chose (none: not analyzable).
        let Some(layouts) = &func.layouts else {
            return false;
        };
        let widths = axis_info::analyze(func);
        let facts = Facts {
            target,
            widths: &widths,
            layouts,
        };
        let mut decided = Vec::new();
        let mut acc_layouts: Vec<(ValueId, Layout)> = Vec::new();
        let mut engines = Vec::new();
        for visit in walk_ops(func) {
            // Split-K sums the accumulator in the layout the loop (earlier
            // in the walk) left it in.
            if let OpKind::ClusterSum { src, .. } = &visit.op.kind {
                if let Some((_, l)) = acc_layouts.iter().find(|(v, _)| v == src) {
                    let l = l.clone();
                    acc_layouts.extend(visit.op.results.iter().map(|r| (*r, l.clone())));
                }
            }
            if let Some((p, acc_layout)) = plan(func, &facts, visit.op) {
                engines.push((p.dot, p.engine));
                let chain = accumulator_chain(visit.op, &p);
                acc_layouts.extend(chain.into_iter().map(|v| (v, acc_layout.clone())));
                decided.push((visit.op.span, visit.op.results.clone(), p));
            }
        }
        let changed = !decided.is_empty();
        annotate(&mut func.body, &mut decided);
        // The engine's warps may split the tile unlike the plain dot's plan:
        // the accumulator lives in the engine's layout through the loop.
        if let Some(layouts) = &mut func.layouts {
            layouts.layouts.extend(acc_layouts);
        }
        func.dot_engines.extend(engines);
        changed
    }
}

/// What planning reads besides the IR.
struct Facts<'a> {
    target: Target,
    widths: &'a AxisInfoMap,
    layouts: &'a LayoutMap,
}

/// Writes each decision on its loop (found by its results, which are unique).
fn annotate(
    region: &mut crate::ir::Region,
    decided: &mut Vec<(crate::span::Span, Vec<ValueId>, LoopPipeline)>,
) {
    for op in &mut region.ops {
        if let Some(at) = decided
            .iter()
            .position(|(span, results, _)| *span == op.span && *results == op.results)
        {
            let (_, _, p) = decided.swap_remove(at);
            if let OpKind::While { pipeline, .. } = &mut op.kind {
                *pipeline = Some(Box::new(p));
            }
        }
        for nested in regions_mut(&mut op.kind) {
            annotate(nested, decided);
        }
    }
}

/// The values that hold the pipelined loop's accumulator: the loop's result,
/// the regions' arguments and the dot's result (its init is converted).
fn accumulator_chain(op: &Op, p: &LoopPipeline) -> Vec<ValueId> {
    let OpKind::While {
        cond_region,
        body_region,
        ..
    } = &op.kind
    else {
        // A pipeline is planned for loops only.
        return Vec::new();
    };
    [
        op.results.get(p.acc),
        cond_region.args.get(p.acc),
        body_region.args.get(p.acc),
        Some(&p.dot),
    ]
    .into_iter()
    .flatten()
    .copied()
    .collect()
}

/// The pipeline for `op` when it is a loop of the pattern, with the layout
/// of its accumulator on the chosen engine.
fn plan(func: &Function, facts: &Facts<'_>, op: &Op) -> Option<(LoopPipeline, Layout)> {
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &op.kind
    else {
        return None;
    };
    // Tiles are copied iterations ahead: the loop must write no memory a
    // later iteration's loads could read.
    if !memory_free(&body_region.ops) || !memory_free(&cond_region.ops) {
        return None;
    }
    let num_warps = facts.target.num_warps;
    let ops = &body_region.ops;
    // The first dot `assign-layouts` put on tensor cores.
    let dot = ops.iter().position(|o| planned_config(func, o).is_some())?;
    let cfg = planned_config(func, &ops[dot])?;
    let OpKind::Dot { a, b, acc } = ops[dot].kind else {
        return None;
    };
    let du = DefUse::compute(func);
    let single_use = |v: ValueId| du.uses_of(v).len() == 1;
    let result = *ops[dot].results.first()?;
    let acc_pos = body_region.args.iter().position(|&x| x == acc)?;
    let yields_acc = body_region.yields.get(acc_pos) == Some(&result);
    if !yields_acc || !single_use(acc) || !single_use(result) || inits.len() != op.results.len() {
        return None;
    }
    let mut copy_widths = [0; 2];
    let mut loads = [a, b];
    let mut transposes = [None; 2];
    let defined = |v: ValueId| ops[..dot].iter().find(|o| o.results.first() == Some(&v));
    for (i, operand) in [a, b].into_iter().enumerate() {
        if !single_use(operand) {
            return None;
        }
        let mut load = defined(operand)?;
        // `^load`: staged as loaded, read transposed.
        if let OpKind::Trans { src } = load.kind {
            transposes[i] = Some(operand);
            loads[i] = src;
            load = defined(src)?;
            if !single_use(src) {
                return None;
            }
        }
        let OpKind::Load { ptr, mask, other } = load.kind else {
            return None;
        };
        let zero_fill = other.is_none_or(|o| is_zero_constant(func, o));
        if !zero_fill {
            return None;
        }
        copy_widths[i] = copy_width(func, facts, ptr, mask)?;
    }
    let transposed = transposes.map(|t| t.is_some());
    let wgmma = (facts.target.arch == Arch::Sm90a)
        .then(|| wgmma::plan_for_op(func, &ops[dot], num_warps, facts.target.tma))
        .flatten();
    // An M-major `a` needs wgmma; a K-major `b` either engine.
    if transposed[0] && wgmma.is_none() {
        return None;
    }
    let (stages, stage_bytes, engine, engine_cfg) = match &wgmma {
        Some(w) => (
            choose_wgmma_stages(w, facts.target.num_stages)?,
            w.stage_bytes(),
            DotEngine::Wgmma {
                warpgroups: w.groups(),
            },
            w.mma(),
        ),
        None => (
            choose_stages(&cfg, num_warps, facts.target.num_stages)?,
            mma::stage_bytes(&cfg).1,
            DotEngine::MmaSync { warps: cfg.warps },
            cfg,
        ),
    };
    let acc_layout = Layout::Blocked(mma::accumulator_layout(&engine_cfg));
    let pipeline = LoopPipeline {
        stages,
        dot: result,
        loads,
        transposes,
        acc: acc_pos,
        copy_widths,
        engine,
        shared_bytes: stages * stage_bytes,
        tma: None,
    };
    Some((pipeline, acc_layout))
}

/// Whether `v` is a `constant 0` (what `cp.async`'s zero fill gives).
pub(crate) fn is_zero_constant(func: &Function, v: ValueId) -> bool {
    func.constant_of(v).is_some_and(Const::is_zero)
}

/// Elements per `cp.async` (2, 4 or 8 of 16 bits: 4, 8 or 16 bytes) for
/// `ptr` in its layout, or `None` when the copies cannot be that wide or
/// do not run along the tile's rows.
fn copy_width(
    func: &Function,
    facts: &Facts<'_>,
    ptr: ValueId,
    mask: Option<ValueId>,
) -> Option<usize> {
    let (axis, width) = copy_run(func, facts.widths, facts.layouts, ptr, mask)?;
    (axis + 1 == func.ty(ptr).shape.len()).then_some(width)
}

/// The axis the tile `*ptr` is copied along (its layout's fastest) and
/// the elements per `cp.async` (2, 4 or 8 of 16 bits), from its layout and
/// the alignment the axis analysis proves; `None` below 2.
pub(crate) fn copy_run(
    func: &Function,
    widths: &AxisInfoMap,
    layouts: &LayoutMap,
    ptr: ValueId,
    mask: Option<ValueId>,
) -> Option<(usize, usize)> {
    let shape = func.ty(ptr).shape.clone();
    let (axis, run) = layouts.get(func, ptr).tile_map(&shape).fastest_run()?;
    let w = (widths.vector_width_along(ptr, mask, axis, func) as usize)
        .min(run)
        .min(8);
    (w >= 2 && w.is_power_of_two()).then_some((axis, w))
}

/// Shared memory the `mma.sync` operand buffers may take (all stages).
pub(crate) const MAX_PIPELINE_BYTES: usize = 96 * 1024;

/// `mma.sync` buffers: 3 with at most 4 warps when they fit in 64 KiB, else 2
/// (with 8 warps ptxas aims at 128 registers a thread, and a third buffer's
/// drain tips 128x128 tiles into spills on sm_90), and at most `asked`
/// (`--num-stages`).
pub fn choose_stages(cfg: &MmaConfig, num_warps: usize, asked: Option<usize>) -> Option<usize> {
    let (_, stage) = mma::stage_bytes(cfg);
    let most = asked.unwrap_or(3).max(2);
    [3, 2].into_iter().find(|s| {
        *s <= most
            && s * stage <= MAX_PIPELINE_BYTES
            && (*s == 2 || (s * stage <= 64 * 1024 && num_warps <= 4))
    })
}

/// Shared memory the wgmma operand buffers may take (all stages): an H100
/// block may have 227 KiB; the rest is left to the epilogue's scratch users.
pub const MAX_WGMMA_PIPELINE_BYTES: usize = 200 * 1024;

/// Most buffers a wgmma pipeline gets: small tiles (skinny M) are bound by
/// the bytes in flight, and 8 of them keep the copies of 7 tiles flying.
pub const MAX_WGMMA_STAGES: usize = 8;

/// wgmma buffers: as many as fit, [`MAX_WGMMA_STAGES`] at most, or at most
/// `asked` (`--num-stages`: fewer buffers leave shared memory for a second
/// program on the multiprocessor, which pays where the epilogue weighs, at
/// small K). Depth costs a short loop nothing: codegen multiplies only the
/// tiles that exist.
pub fn choose_wgmma_stages(cfg: &WgmmaConfig, asked: Option<usize>) -> Option<usize> {
    let stage = cfg.stage_bytes();
    let most = asked.unwrap_or(MAX_WGMMA_STAGES).clamp(2, MAX_WGMMA_STAGES);
    (2..=most)
        .rev()
        .find(|s| s * stage <= MAX_WGMMA_PIPELINE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::DType;

    #[test]
    fn mma_stages_follow_warps_and_shared_memory() {
        let cfg = |m, n, k, w| mma::plan(m, n, k, DType::F16, DType::F32, w).unwrap();
        // 16 KiB a stage: 3 stages with 4 warps, 2 with 8.
        assert_eq!(choose_stages(&cfg(128, 128, 32, 4), 4, None), Some(3));
        assert_eq!(choose_stages(&cfg(128, 128, 32, 8), 8, None), Some(2));
        // 32 KiB a stage: 3 would pass 64 KiB.
        assert_eq!(choose_stages(&cfg(128, 128, 64, 4), 4, None), Some(2));
        // 64 KiB a stage: 2 is the most that fits in 96 KiB... and it does not.
        assert_eq!(choose_stages(&cfg(256, 256, 64, 8), 8, None), None);
    }

    #[test]
    fn wgmma_stages_fit_the_shared_memory() {
        // 48 KiB a stage: 4 stages.
        assert_eq!(
            choose_wgmma_stages(&wgmma::plan(128, 256, 64, 8, false).unwrap(), None),
            Some(4)
        );
        let cfg = WgmmaConfig::new;
        assert_eq!(choose_wgmma_stages(&cfg(256, 128, 64, 8), None), Some(4));
        // 24 KiB (128x64x64): 8, the most; 32 KiB (128x128x64): 6.
        assert_eq!(choose_wgmma_stages(&cfg(128, 64, 64, 8), None), Some(8));
        assert_eq!(choose_wgmma_stages(&cfg(128, 128, 64, 8), None), Some(6));
        // 64 KiB a stage (32 + 32): 3.
        assert_eq!(choose_wgmma_stages(&cfg(128, 128, 128, 8), None), Some(3));
        // 96 KiB a stage (32 + 64): 2.
        assert_eq!(choose_wgmma_stages(&cfg(128, 256, 128, 8), None), Some(2));
        // 128 KiB a stage: none.
        assert_eq!(choose_wgmma_stages(&cfg(256, 256, 128, 16), None), None);
        // Asked for: at most that many, still only what fits.
        assert_eq!(choose_wgmma_stages(&cfg(128, 64, 64, 8), Some(3)), Some(3));
        assert_eq!(choose_wgmma_stages(&cfg(128, 256, 64, 8), Some(8)), Some(4));
    }
}
