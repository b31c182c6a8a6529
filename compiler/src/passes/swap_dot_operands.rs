//! The `swap-ab` pass: on sm_90a, a dot loop whose tile has fewer rows than
//! a warpgroup multiplies (wgmma's `m64`) computes the transposed product
//! instead, `c^T = b^T a^T`: the tile's columns become the instruction's
//! rows and its few rows the instruction's `N` (8 to 256), so a skinny tile
//! (`TM` 16 or 32, small-M matmuls) runs on wgmma rather than `mma.sync`.
//! ```text
//! c[M, N] = 0; loop { a = *pa; b = *pb; c = a @ b + c; }   epilogue(c)
//! cT[N, M] = 0; loop { a = *pa; b = *pb; cT = ^b @ ^a + cT; }   epilogue(^cT)
//! ```
//! The operands stay loaded as they were: the pipeliner stages them as loaded
//! and reads them transposed (`b` as an M-major `a`, `a` as a K-major `b`);
//! a `^a` written by the kernel (dot_tn's) is read as it was loaded. The
//! accumulator is transposed once, after the loop.
//!
//! Only where the swapped loop is then pipelined on wgmma (tried on a copy
//! with the target's layouts and pipeline plan): an unpipelined loop would
//! transpose both operands through shared memory every iteration. Match: a
//! loop at the top of the kernel whose body holds one dot, accumulating into
//! a carried f32 tile of fewer than 64 rows that nothing else in the loop
//! reads, of 16-bit operands (wgmma reads only those transposed). The
//! pipeliner takes no M-major `a` of 192 rows, so 192 columns stay as they
//! are.
use super::assign_layouts::AssignLayouts;
use super::pipeline_dot_loops::PipelineDotLoops;
use super::{Pass, PassOptions};
use crate::analysis::wgmma::{self, WG_K, WG_M};
use crate::ir::walk::{replace_uses, DefUse};
use crate::ir::{DType, DotEngine, Function, Op, OpKind, Region, ScalarType, Type, ValueId};

pub struct SwapDotOperands;

impl Pass for SwapDotOperands {
    fn name(&self) -> &'static str {
        "swap-ab"
    }

    fn summary(&self) -> &'static str {
        "on sm_90a, a dot loop of fewer than 64 rows computes b^T a^T so wgmma takes it"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_wgmma_pipelining_target("not sm_90a (wgmma is what the swap is for)")
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        if self.skipped_because(options).is_some() {
            return false;
        }
        let Some(target) = options.target else {
            return false;
        };
        let Some(m) = find_match(func, target.num_warps) else {
            return false;
        };
        let mut swapped = func.clone();
        apply(&mut swapped, &m);
        if !pipelined_on_wgmma(&swapped, options, m.dot) {
            return false;
        }
        *func = swapped;
        true
    }
}

/// The loop to swap.
struct Match {
    /// Index of the loop in the kernel's body.
    at: usize,
    /// Carried position of the accumulator.
    acc: usize,
    /// Index of the dot in the loop's body, and its result.
    dot_at: usize,
    dot: ValueId,
}

fn find_match(func: &Function, num_warps: usize) -> Option<Match> {
    let du = DefUse::compute(func);
    func.body.ops.iter().enumerate().find_map(|(at, op)| {
        match_loop(func, &du, op, num_warps).map(|(acc, dot_at, dot)| Match {
            at,
            acc,
            dot_at,
            dot,
        })
    })
}

/// `(carried position, dot index, dot result)` when `op` is a loop of the pattern.
fn match_loop(
    func: &Function,
    du: &DefUse,
    op: &Op,
    num_warps: usize,
) -> Option<(usize, usize, ValueId)> {
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        pipeline: None,
        ..
    } = &op.kind
    else {
        return None;
    };
    let dots: Vec<usize> = (0..body_region.ops.len())
        .filter(|&i| matches!(body_region.ops[i].kind, OpKind::Dot { .. }))
        .collect();
    let [dot_at] = dots[..] else {
        return None;
    };
    let dot_op = &body_region.ops[dot_at];
    let OpKind::Dot { a, acc, .. } = dot_op.kind else {
        return None;
    };
    let result = *dot_op.results.first()?;
    let pos = body_region.args.iter().position(|&v| v == acc)?;
    let ty = func.ty(acc);
    let [m, n] = ty.shape[..] else {
        return None;
    };
    let k = *func.ty(a).shape.last()?;
    let half_precision = matches!(func.ty(a).scalar, ScalarType::Num(DType::F16 | DType::BF16));
    let carried = inits.len() == body_region.args.len()
        && body_region.yields.get(pos) == Some(&result)
        && op.results.len() > pos
        && cond_region.args.len() > pos;
    // The accumulator feeds the dot alone in the loop, and the dot only the yield.
    let private = du.uses_of(acc).len() == 1
        && du.uses_of(result).len() == 1
        && du.uses_of(*cond_region.args.get(pos)?).is_empty();
    (carried
        && private
        && half_precision
        && ty.scalar == ScalarType::Num(DType::F32)
        && m < WG_M
        // The swapped tile's width is `m`: whole 16-column swizzle rows
        // (16, 32, 48: checked on an H100), not the unswizzled widths of 8.
        && m % WG_K == 0
        && wgmma::plan(n, m, k, num_warps, false).is_some())
    .then_some((pos, dot_at, result))
}

/// The transposed value's type.
fn transposed(ty: &Type) -> Type {
    let mut t = ty.clone();
    t.shape.reverse();
    t
}

fn apply(func: &mut Function, m: &Match) {
    let OpKind::While { inits, .. } = &func.body.ops[m.at].kind else {
        return;
    };
    // The carried accumulator changes type where it lives: the init,
    // both regions' arguments, the dot and the loop's result.
    let du = DefUse::compute(func);
    let init = inits[m.acc];
    let init_value = func.constant_of(init);
    // The untransposed init goes where it is a constant only the loop reads.
    let init_dead = init_value.is_some() && du.uses_of(init).len() == 1;
    let init_t = match init_value {
        Some(value) => OpKind::Constant { value },
        None => OpKind::Trans { src: init },
    };
    let init_name = func.values[init.0 as usize].name.clone();
    let init_t_value = func.new_value(transposed(func.ty(init)), init_name);
    let mut body = std::mem::take(&mut func.body);
    let span = body.ops[m.at].span;
    let loop_result = body.ops[m.at].results[m.acc];
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &mut body.ops[m.at].kind
    else {
        func.body = body;
        return;
    };
    inits[m.acc] = init_t_value;
    for v in [
        cond_region.args[m.acc],
        body_region.args[m.acc],
        m.dot,
        loop_result,
    ] {
        let t = transposed(func.ty(v));
        func.values[v.0 as usize].ty = t;
    }
    // In the loop: cT = ^b @ ^a + cT, a transpose written by the kernel
    // read as loaded.
    let OpKind::Dot { a, b, acc } = body_region.ops[m.dot_at].kind else {
        func.body = body;
        return;
    };
    // `(operand, kernel transpose now dead)`: `^v` itself, or the `src` of a
    // kernel's `v = ^src` that only the dot reads.
    let mut before_dot = Vec::new();
    let mut operand_t = |func: &mut Function, v: ValueId| -> (ValueId, Option<ValueId>) {
        let written = body_region
            .ops
            .iter()
            .find(|o| o.results.first() == Some(&v));
        if let Some(OpKind::Trans { src }) = written.map(|o| &o.kind) {
            if du.uses_of(v).len() == 1 {
                return (*src, Some(v));
            }
        }
        let t = func.new_value(transposed(func.ty(v)), None);
        before_dot.push(Op {
            kind: OpKind::Trans { src: v },
            results: vec![t],
            span,
        });
        (t, None)
    };
    let (new_a, dead_b) = operand_t(func, b);
    let (new_b, dead_a) = operand_t(func, a);
    body_region.ops[m.dot_at].kind = OpKind::Dot {
        a: new_a,
        b: new_b,
        acc,
    };
    body_region.ops.splice(m.dot_at..m.dot_at, before_dot);
    let dead = [dead_a, dead_b];
    body_region
        .ops
        .retain(|o| !o.results.iter().any(|r| dead.contains(&Some(*r))));
    // After the loop: c = ^cT for the rest of the kernel.
    let c_ty = transposed(func.ty(loop_result));
    let name = func.values[loop_result.0 as usize].name.clone();
    let c = func.new_value(c_ty, name);
    let mut rest = Region {
        ops: body.ops.split_off(m.at + 1),
        ..Region::default()
    };
    replace_uses(&mut rest, loop_result, c);
    body.ops.push(Op {
        kind: OpKind::Trans { src: loop_result },
        results: vec![c],
        span,
    });
    body.ops.append(&mut rest.ops);
    body.ops.insert(
        m.at,
        Op {
            kind: init_t,
            results: vec![init_t_value],
            span,
        },
    );
    if init_dead {
        body.ops.retain(|o| o.results.first() != Some(&init));
    }
    func.body = body;
}

/// Whether the loop that holds `dot` is pipelined on wgmma once the target's
/// layouts are assigned (on a copy: the later passes run for real).
fn pipelined_on_wgmma(func: &Function, options: &PassOptions, dot: ValueId) -> bool {
    let mut trial = func.clone();
    AssignLayouts.run(&mut trial, options);
    PipelineDotLoops.run(&mut trial, options);
    crate::ir::walk::walk_ops(&trial).iter().any(|v| {
        matches!(&v.op.kind, OpKind::While { pipeline: Some(p), .. }
            if p.dot == dot && matches!(p.engine, DotEngine::Wgmma { .. }))
    })
}
