//! The `widen-dot-k` pass: on sm_90a, a dot loop that steps along K by fewer
//! than 128 bytes of its 16-bit operands (a user's `TK = 32`) steps by 128
//! bytes (64 elements) instead, every tile on the K axis widened alike. The
//! wgmma pipeline then waits, meets and issues its copies half (or a quarter)
//! as often per multiply, and each operand row fills the 128-byte swizzle:
//! `examples/linear_relu.tc` (TK 32) ran 0.90–1.00x `relu(addmm)` on an
//! H100, and 1.02–1.11x with TK 64 written by hand.
//!
//! Only as far as the dot still fits the warpgroups (`wgmma::plan`: every
//! doubling of K adds copy registers a thread), so no tile leaves wgmma.
//!
//! Safe where both loads are boxes of tensors bounded by masks (the
//! [`tensor_tile`] proof TMA relies on) whose K coordinate is the loop's
//! counter, stepped by the tile's K: a wider step reads past K only where the
//! mask zero-fills, and zeros add nothing to the product. Only loops the
//! pipeliner takes (nothing stored, the operands loaded from carried pointers
//! in runs of at least two elements, the accumulator carried), where every
//! value on the K axis serves the two loads alone.
use super::pipeline_dot_loops::is_zero_constant;
use super::{Pass, PassOptions};
use crate::analysis::axis_info::{self, AxisInfoMap};
use crate::analysis::tensor_tile::tensor_tile;
use crate::analysis::wgmma;
use crate::ir::index_poly::{Atom, Poly};
use crate::ir::walk::{
    memory_free, operands_mut, regions, regions_mut, walk_ops, Def, DefUse, OpVisit, Use,
};
use crate::ir::{BinOp, Const, Function, Op, OpKind, Region, Type, ValueId};
use std::collections::BTreeMap;

/// Bytes of K one step should cover: a row of the 128-byte swizzle.
const STEP_BYTES: usize = 128;

pub struct WidenDotK;

impl Pass for WidenDotK {
    fn name(&self) -> &'static str {
        "widen-dot-k"
    }

    fn summary(&self) -> &'static str {
        "steps a wgmma dot loop along K by 128 bytes where it steps by fewer, widening every K-axis tile"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_wgmma_pipelining_target("not sm_90a (its wgmma pipelines gain)")
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        if self.skipped_because(options).is_some() {
            return false;
        }
        let Some(target) = options.target else {
            return false;
        };
        let mut changed = false;
        // One loop at a time: widening moves values the next plan reads.
        while let Some(plan) = find(func, target.num_warps) {
            apply(func, &plan);
            changed = true;
        }
        changed
    }
}

/// What widening one loop changes.
#[derive(Debug)]
struct Plan {
    /// The K tile of the operands now, and the new one.
    from: usize,
    to: usize,
    /// Every tile on the K axis, with that axis.
    tagged: BTreeMap<ValueId, usize>,
    /// Carried positions of the widened pointers.
    carried: Vec<usize>,
    /// Their loop results and condition arguments, with the body argument
    /// whose type they take.
    retyped: Vec<(ValueId, ValueId)>,
    /// The steps to multiply: the counter's add and the pointers' addptrs
    /// (their results), each with its step operand.
    steps: Vec<(ValueId, ValueId)>,
}

fn find(func: &Function, num_warps: usize) -> Option<Plan> {
    let widths = axis_info::analyze(func);
    let du = DefUse::compute(func);
    let visits = walk_ops(func);
    let facts = Facts {
        du: &du,
        widths: &widths,
        visits: &visits,
        num_warps,
    };
    (0..visits.len()).find_map(|i| plan_loop(func, &facts, i))
}

/// What planning a loop reads besides the function.
struct Facts<'a, 'f> {
    du: &'a DefUse,
    widths: &'a AxisInfoMap,
    visits: &'a [OpVisit<'f>],
    num_warps: usize,
}

/// The widest K step, up to 128 bytes, at which the dot still runs on the
/// warpgroups (each doubling adds copy registers a thread), if wider than
/// `from`; `None` where the dot is not on wgmma at `from` either.
fn widest_k(m: usize, n: usize, from: usize, bytes: usize, num_warps: usize) -> Option<usize> {
    wgmma::plan(m, n, from, num_warps, false)?;
    let mut k = STEP_BYTES / bytes * from;
    while k > from && wgmma::plan(m, n, k, num_warps, false).is_none() {
        k /= 2;
    }
    (k > from).then_some(k)
}

fn plan_loop(func: &Function, facts: &Facts<'_, '_>, index: usize) -> Option<Plan> {
    let (du, widths, visits) = (facts.du, facts.widths, facts.visits);
    let op = visits[index].op;
    let OpKind::While {
        inits,
        cond_region,
        body_region: body,
        pipeline: None,
        prefetch: None,
    } = &op.kind
    else {
        return None;
    };
    if !memory_free(&body.ops)
        || !memory_free(&cond_region.ops)
        || body.ops.iter().any(|o| !regions(&o.kind).is_empty())
    {
        return None;
    }
    let mut dots = body
        .ops
        .iter()
        .filter(|o| matches!(o.kind, OpKind::Dot { .. }));
    let (dot, None) = (dots.next()?, dots.next()) else {
        return None;
    };
    let OpKind::Dot { a, b, acc } = dot.kind else {
        return None;
    };
    let product = *dot.results.first()?;
    let acc_at = body.args.iter().position(|&v| v == acc)?;
    let single = |v: ValueId| du.uses_of(v).len() == 1;
    if body.yields.get(acc_at) != Some(&product) || !single(acc) || !single(product) {
        return None;
    }
    // 16-bit operands stepping K by fewer than 128 bytes.
    let elem = func.dtype(a);
    let from = *func.ty(a).shape.get(1)?;
    let bytes = from * elem.size_bytes();
    if elem.size_bytes() != 2 || !elem.is_float() || func.ty(b).shape.first() != Some(&from) {
        return None;
    }
    if bytes >= STEP_BYTES || STEP_BYTES % bytes != 0 {
        return None;
    }
    let (m, n) = (func.ty(a).shape[0], *func.ty(b).shape.get(1)?);
    let to = widest_k(m, n, from, bytes, facts.num_warps)?;
    // Each operand: a single-use load of a carried pointer, zero-filled,
    // a box of a tensor, copied in runs the pipeliner takes.
    let def_in_body = |v: ValueId| body.ops.iter().find(|o| o.results.first() == Some(&v));
    let mut boxes = Vec::new();
    for operand in [a, b] {
        let load = def_in_body(operand)?;
        let OpKind::Load { ptr, mask, other } = load.kind else {
            return None;
        };
        let rank = func.ty(ptr).shape.len();
        if !single(operand)
            || !body.args.contains(&ptr)
            || !other.is_none_or(|o| is_zero_constant(func, o))
            || widths.vector_width_along(ptr, mask, rank - 1, func) < 2
        {
            return None;
        }
        boxes.push(tensor_tile(func, op, load)?);
    }
    // The K coordinate of both boxes is the counter itself, which steps by
    // the tile's K.
    let counter_at = body.args.iter().position(|&v| {
        let k = Poly::atom(Atom::Value(v));
        boxes[0].col == k && boxes[1].row == k
    })?;
    let counter = body.args[counter_at];
    let counter_step = body.yields[counter_at];
    let stepped = match def_in_body(counter_step)?.kind {
        OpKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } if lhs == counter => rhs,
        OpKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } if rhs == counter => lhs,
        _ => return None,
    };
    if func.constant_of(stepped) != Some(Const::Int(from as i64)) {
        return None;
    }

    let mut plan = Plan {
        from,
        to,
        tagged: BTreeMap::new(),
        carried: Vec::new(),
        retyped: Vec::new(),
        steps: vec![(counter_step, stepped)],
    };
    let mut work = vec![(a, 1), (b, 0)];
    while let Some((v, axis)) = work.pop() {
        match plan.tagged.get(&v) {
            Some(&seen) if seen == axis => continue,
            Some(_) => return None,
            None => {}
        }
        if func.ty(v).shape.get(axis) != Some(&from) {
            return None;
        }
        plan.tagged.insert(v, axis);
        match *du.defs.get(&v)? {
            Def::RegionArg {
                op: owner,
                region: 1,
                arg,
            } if owner == index => {
                // A carried pointer: its entry, its step, nothing else.
                if !du.uses_of(cond_region.args[arg]).is_empty()
                    || !du.uses_of(op.results[arg]).is_empty()
                {
                    return None;
                }
                let next = body.yields[arg];
                let OpKind::AddPtr { ptr, offset } = def_in_body(next)?.kind else {
                    return None;
                };
                if ptr != v {
                    return None;
                }
                plan.carried.push(arg);
                plan.retyped
                    .extend([(op.results[arg], v), (cond_region.args[arg], v)]);
                plan.steps.push((next, offset));
                work.extend([(inits[arg], axis), (next, axis)]);
            }
            Def::OpResult { op: at, .. } => work.extend(operands_on_axis(
                func,
                &visits[at].op.kind,
                v,
                axis,
                [a, b],
            )?),
            _ => return None,
        }
    }
    // Every carried value is the counter, the accumulator or a widened pointer.
    if plan.carried.len() + 2 != body.args.len() {
        return None;
    }
    // Nothing else reads a widened value.
    for &v in plan.tagged.keys() {
        for u in du.uses_of(v) {
            let ok = match *u {
                Use::Operand { op: at, .. } if at == index => inits
                    .iter()
                    .enumerate()
                    .all(|(i, &x)| x != v || plan.carried.contains(&i)),
                Use::Operand { op: at, .. } => {
                    let user = visits[at].op;
                    user.results == dot.results
                        || (!user.results.is_empty()
                            && user.results.iter().all(|r| plan.tagged.contains_key(r)))
                }
                Use::Yield {
                    op: Some(owner),
                    region: 1,
                } if owner == index => body
                    .yields
                    .iter()
                    .enumerate()
                    .all(|(i, &y)| y != v || plan.carried.contains(&i)),
                _ => false,
            };
            if !ok {
                return None;
            }
        }
    }
    Some(plan)
}

/// The tile operands of the op defining `v` (on `axis`) that lie on the K
/// axis too, with theirs; `None` for an op the pass does not widen.
fn operands_on_axis(
    func: &Function,
    kind: &OpKind,
    v: ValueId,
    axis: usize,
    loads: [ValueId; 2],
) -> Option<Vec<(ValueId, usize)>> {
    let same = |vs: &[ValueId]| Some(vs.iter().map(|&x| (x, axis)).collect());
    match *kind {
        OpKind::MakeRange { .. } | OpKind::Constant { .. } | OpKind::Splat { .. } => {
            Some(Vec::new())
        }
        OpKind::Broadcast { src } if func.ty(src).shape[axis] == 1 => Some(Vec::new()),
        OpKind::Broadcast { src } => same(&[src]),
        OpKind::Reshape { src } => {
            // The k-th axis longer than 1 stays the k-th.
            let long = |x: ValueId| -> Vec<usize> {
                let shape = &func.ty(x).shape;
                (0..shape.len()).filter(|&i| shape[i] != 1).collect()
            };
            let k = long(v).iter().position(|&i| i == axis)?;
            Some(vec![(src, *long(src).get(k)?)])
        }
        OpKind::Binary { lhs, rhs, .. } | OpKind::Cmp { lhs, rhs, .. } => same(&[lhs, rhs]),
        OpKind::Select {
            cond,
            on_true,
            on_false,
        } => same(&[cond, on_true, on_false]),
        OpKind::Unary { src, .. } | OpKind::Cast { src } => same(&[src]),
        OpKind::AddPtr { ptr, offset } => same(&[ptr, offset]),
        OpKind::Load { ptr, mask, other } if loads.contains(&v) => {
            let mut on = vec![ptr];
            on.extend(mask);
            on.extend(other);
            same(&on)
        }
        _ => None,
    }
}

fn apply(func: &mut Function, plan: &Plan) {
    for (&v, &axis) in &plan.tagged {
        func.values[v.0 as usize].ty.shape[axis] = plan.to;
    }
    for &(v, like) in &plan.retyped {
        func.values[v.0 as usize].ty = func.ty(like).clone();
    }
    let factor = (plan.to / plan.from) as i64;
    for &(next, step) in &plan.steps {
        scale_step(func, next, step, factor);
    }
    stretch_ranges(&mut func.body, plan);
}

/// Multiplies `step`, the operand of `next` (`k + step` or `addptr(p,
/// step)`), by `factor`: a constant and a multiply inserted before it.
fn scale_step(func: &mut Function, next: ValueId, step: ValueId, factor: i64) {
    let Some(region) = region_defining(&mut func.body, next) else {
        return;
    };
    let at = region
        .ops
        .iter()
        .position(|o| o.results.first() == Some(&next))
        .unwrap_or_default();
    let span = region.ops[at].span;
    let ty: Type = func.ty(step).clone();
    let times = func.new_value(ty.clone(), None);
    let scaled = func.new_value(ty, None);
    let new_ops = [
        Op {
            kind: OpKind::Constant {
                value: Const::Int(factor),
            },
            results: vec![times],
            span,
        },
        Op {
            kind: OpKind::Binary {
                op: BinOp::Mul,
                lhs: step,
                rhs: times,
            },
            results: vec![scaled],
            span,
        },
    ];
    let Some(region) = region_defining(&mut func.body, next) else {
        return;
    };
    for operand in operands_mut(&mut region.ops[at].kind) {
        if *operand == step {
            *operand = scaled;
        }
    }
    region.ops.splice(at..at, new_ops);
}

/// The region (at any depth) with the op whose first result is `v`.
fn region_defining(region: &mut Region, v: ValueId) -> Option<&mut Region> {
    if region.ops.iter().any(|o| o.results.first() == Some(&v)) {
        return Some(region);
    }
    region
        .ops
        .iter_mut()
        .flat_map(|o| regions_mut(&mut o.kind))
        .find_map(|r| region_defining(r, v))
}

/// Every `make_range` on the K axis covers the new K.
fn stretch_ranges(region: &mut Region, plan: &Plan) {
    for op in &mut region.ops {
        let on_k = op
            .results
            .first()
            .is_some_and(|r| plan.tagged.contains_key(r));
        if let OpKind::MakeRange { start, end } = &mut op.kind {
            if on_k {
                *end = *start + plan.to as i64;
            }
        }
        for r in regions_mut(&mut op.kind) {
            stretch_ranges(r, plan);
        }
    }
}
