//! Undoes the seed's manual pre-fetch so the loop pipeliner sees the plain form.
//!
//! The rotated loop (seed 003, "Optimizations"; `dot_prefetch.tc`, `dot_trans.tc`):
//! ```text
//! a = *pa;                                  // before the loop
//! for (k = K; k > 0; k -= S) {
//!   c += a @ b;  pa += ..;
//!   a = *pa;         or  a = (k > S) ? *pa : 0;   // for the next iteration
//! }
//! ```
//! carries `a` whose initial value is `load(init of pa)` and whose yielded value
//! is `load(yielded pa)`. Each iteration therefore reads `load(pa)` of its own
//! carried `pa`, so `a` becomes a load of the carried `pa` at the top of the
//! body and the carried `a`, the pre-loop load and the in-loop load go away:
//! the shape [`super::pipeline_dot_loops`] recognizes (then `cp.async`, or `wgmma` on
//! sm_90a).
//!
//! Strict match, else the loop is left as is:
//! - the pre-loop load is unmasked and only memory-free ops sit between it and
//!   the loop; the cond region and the body ops after the in-loop load touch no
//!   memory either (so moving a load across them reads the same bytes);
//! - the in-loop load's pointer is exactly the value yielded for `pa`, its
//!   result is used only by the yield, and `a`'s loop result and cond argument
//!   are unused;
//! - a masked in-loop load needs the mask `splat(k > S)` on a counter with
//!   cond `k > 0` and step `k - S` (S > 0): inside the body `k > 0`, so
//!   `k - S` cannot wrap and `k > S` is exactly "the next iteration runs";
//!   the masked-off value is never read by an executed iteration.
use super::{Pass, PassOptions};
use crate::ir::walk::{memory_free, operands, regions, regions_mut, DefUse};
use crate::ir::{BinOp, CmpPred, Const, DType, Function, Op, OpKind, Region, ValueId};
use std::collections::HashMap;

pub struct UnrotatePrefetch;

impl Pass for UnrotatePrefetch {
    fn name(&self) -> &'static str {
        "unrotate-prefetch"
    }

    fn summary(&self) -> &'static str {
        "turns the seed's manual pre-fetch loop back into the loop the pipeliner knows"
    }

    /// Its only purpose is to feed the pipeliner.
    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        options.without_pipelining()
    }

    fn run(&self, func: &mut Function, _: &PassOptions) -> bool {
        unrotate_prefetch(func)
    }
}

/// Rewrites every matching loop of `func`; `true` when one matched.
pub fn unrotate_prefetch(func: &mut Function) -> bool {
    let mut changed = false;
    while let Some(m) = find_match(func) {
        apply(func, &m);
        changed = true;
    }
    changed
}

/// One carried operand to unrotate.
#[derive(Clone, Debug)]
struct Match {
    /// (op index, region index) steps from the function body to the region
    /// holding the loop.
    path: Vec<(usize, usize)>,
    /// The loop's index in that region.
    while_at: usize,
    /// Carried position of the operand (`a`) and of its pointer (`pa`).
    operand: usize,
    pointer: usize,
    /// The pre-loop load's index in the loop's region.
    pre_load_at: usize,
    /// The in-loop load's result.
    body_load: ValueId,
}

/// Defining op of every op result.
fn def_ops(func: &Function) -> HashMap<ValueId, &Op> {
    let mut defs = HashMap::new();
    crate::ir::walk::visit_region(&func.body, 0, &mut |op, _| {
        for &r in &op.results {
            defs.insert(r, op);
        }
    });
    defs
}

fn find_match(func: &Function) -> Option<Match> {
    let cx = Ctx {
        func,
        du: DefUse::compute(func),
        defs: def_ops(func),
    };
    let mut path = Vec::new();
    find_in(&cx, &func.body, &mut path)
}

struct Ctx<'f> {
    func: &'f Function,
    du: DefUse,
    defs: HashMap<ValueId, &'f Op>,
}

impl Ctx<'_> {
    fn unused(&self, v: ValueId) -> bool {
        self.du.uses_of(v).is_empty()
    }

    fn int_constant(&self, v: ValueId) -> Option<i64> {
        match self.defs.get(&v)?.kind {
            OpKind::Constant {
                value: Const::Int(i),
            } => Some(i),
            _ => None,
        }
    }
}

fn find_in(cx: &Ctx<'_>, region: &Region, path: &mut Vec<(usize, usize)>) -> Option<Match> {
    for (at, op) in region.ops.iter().enumerate() {
        if let Some((operand, pointer, pre_load_at, body_load)) = match_loop(cx, region, at) {
            return Some(Match {
                path: path.clone(),
                while_at: at,
                operand,
                pointer,
                pre_load_at,
                body_load,
            });
        }
        for (ri, nested) in regions(&op.kind).into_iter().enumerate() {
            path.push((at, ri));
            let found = find_in(cx, nested, path);
            path.pop();
            if found.is_some() {
                return found;
            }
        }
    }
    None
}

/// `(operand, pointer, pre-load index, in-loop load result)` of the first
/// carried operand of `region.ops[at]` that matches.
fn match_loop(cx: &Ctx<'_>, region: &Region, at: usize) -> Option<(usize, usize, usize, ValueId)> {
    let op = &region.ops[at];
    let OpKind::While {
        inits,
        cond_region,
        body_region: body,
        ..
    } = &op.kind
    else {
        return None;
    };
    if !memory_free(&cond_region.ops) {
        return None;
    }
    (0..inits.len()).find_map(|p| {
        let pre_at = region.ops[..at]
            .iter()
            .position(|o| o.results.first() == Some(&inits[p]))?;
        let OpKind::Load {
            ptr: pre_ptr,
            mask: None,
            ..
        } = region.ops[pre_at].kind
        else {
            return None;
        };
        if !memory_free(&region.ops[pre_at + 1..at]) {
            return None;
        }
        let yielded = *body.yields.get(p)?;
        let load_at = body
            .ops
            .iter()
            .position(|o| o.results.first() == Some(&yielded))?;
        let OpKind::Load { ptr, mask, .. } = body.ops[load_at].kind else {
            return None;
        };
        let q =
            (0..inits.len()).find(|&q| q != p && body.yields[q] == ptr && inits[q] == pre_ptr)?;
        let only_yielded = cx.du.uses_of(yielded).len() == 1
            && body.yields.iter().filter(|&&y| y == yielded).count() == 1;
        let ok = only_yielded
            && cx.unused(op.results[p])
            && cx.unused(cond_region.args[p])
            && memory_free(&body.ops[load_at + 1..])
            && mask.is_none_or(|m| masks_only_the_exit(cx, op, m) == Some(true));
        ok.then_some((p, q, pre_at, yielded))
    })
}

/// Whether `mask` is `splat(k > S)` (or that scalar) where the loop's
/// counter `k` runs `while (k > 0) { ..; k = k - S }` with `S > 0`: then the
/// mask is false only when no further iteration runs (see the module doc).
fn masks_only_the_exit(cx: &Ctx<'_>, loop_op: &Op, mask: ValueId) -> Option<bool> {
    let OpKind::While {
        cond_region,
        body_region: body,
        ..
    } = &loop_op.kind
    else {
        return None;
    };
    let check = match cx.defs.get(&mask)?.kind {
        OpKind::Splat { src } => src,
        _ => mask,
    };
    let OpKind::Cmp {
        pred: CmpPred::Gt,
        lhs: k,
        rhs: s_check,
    } = cx.defs.get(&check)?.kind
    else {
        return None;
    };
    let j = body.args.iter().position(|&a| a == k)?;
    let counter = body.args[j];
    let ty = cx.func.ty(counter);
    let signed_int =
        ty.shape.is_empty() && matches!(cx.func.dtype(counter), DType::I32 | DType::I64);
    let OpKind::Binary {
        op: BinOp::Sub,
        lhs: next_lhs,
        rhs: s_step,
    } = cx.defs.get(body.yields.get(j)?)?.kind
    else {
        return None;
    };
    let [cond] = cond_region.yields[..] else {
        return None;
    };
    let OpKind::Cmp {
        pred: CmpPred::Gt,
        lhs: cond_k,
        rhs: zero,
    } = cx.defs.get(&cond)?.kind
    else {
        return None;
    };
    let step = cx.int_constant(s_step)?;
    Some(
        signed_int
            && next_lhs == counter
            && cond_k == cond_region.args[j]
            && cx.int_constant(zero)? == 0
            && step > 0
            && cx.int_constant(s_check)? == step,
    )
}

fn region_at<'r>(body: &'r mut Region, path: &[(usize, usize)]) -> &'r mut Region {
    let mut region = body;
    for &(op, ri) in path {
        region = regions_mut(&mut region.ops[op].kind)
            .into_iter()
            .nth(ri)
            .expect("path found by find_match");
    }
    region
}

fn apply(func: &mut Function, m: &Match) {
    let region = region_at(&mut func.body, &m.path);
    let loop_op = &mut region.ops[m.while_at];
    let OpKind::While {
        inits,
        cond_region,
        body_region: body,
        ..
    } = &mut loop_op.kind
    else {
        unreachable!("matched a loop")
    };
    let (p, q) = (m.operand, m.pointer);
    let operand = body.args.remove(p);
    let pointer = body.args[if q > p { q - 1 } else { q }];
    body.ops.retain(|o| o.results.first() != Some(&m.body_load));
    body.ops.insert(
        0,
        Op {
            kind: OpKind::Load {
                ptr: pointer,
                mask: None,
                other: None,
            },
            results: vec![operand],
            span: loop_op.span,
        },
    );
    body.yields.remove(p);
    cond_region.args.remove(p);
    let pre_value = inits.remove(p);
    loop_op.results.remove(p);
    remove_dead_pure_ops(body);
    let pre_load_unused = !region_uses(region, pre_value);
    if pre_load_unused {
        region.ops.remove(m.pre_load_at);
    }
}

/// Whether `v` is read anywhere in `region` (nested regions included).
fn region_uses(region: &Region, v: ValueId) -> bool {
    region.yields.contains(&v)
        || region.ops.iter().any(|o| {
            operands(&o.kind).contains(&v) || regions(&o.kind).iter().any(|r| region_uses(r, v))
        })
}

/// Drops ops of `region` without side effects whose results nothing reads
/// (the in-loop load's mask and fill).
fn remove_dead_pure_ops(region: &mut Region) {
    loop {
        let dead = region
            .ops
            .iter()
            .rposition(|o| is_pure(&o.kind) && o.results.iter().all(|&r| !region_uses(region, r)));
        match dead {
            Some(i) => {
                region.ops.remove(i);
            }
            None => return,
        }
    }
}

fn is_pure(kind: &OpKind) -> bool {
    matches!(
        kind,
        OpKind::Constant { .. }
            | OpKind::Splat { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Reshape { .. }
            | OpKind::Cmp { .. }
            | OpKind::Unary { .. }
            | OpKind::Cast { .. }
            | OpKind::AddPtr { .. }
            | OpKind::Select { .. }
            | OpKind::MakeRange { .. }
    )
}
