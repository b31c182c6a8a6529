//! Split-K: `S` programs share the iterations of a kernel's dot loop and sum
//! their accumulators, so a matmul with few output tiles (skinny M, small N)
//! still fills the GPU, and the last, partial wave of a larger one finishes
//! sooner. Asked for by `--split-k S` (an op spec's
//! `#pragma opgen split_k [1, 4]`); needs thread-block clusters (sm_90+).
//!
//! The `S` programs of one output tile are `program_id(2) = 0 .. S` (one
//! cluster along grid axis 2: launchers multiply the grid's z by `S`). The
//! kernel gains a last parameter, `split_tile`, that its `program_id(0)` is
//! offset by: a launch can split only the tiles from `split_tile` on, after
//! the unsplit kernel ran the ones before (stream-K's hybrid schedule; the
//! runtime's `split_launch`). For the loop
//! ```text
//! for (k = k0; k < K; k += BK) { ... c = a @ b + c; pa += da; pb += db; }
//! epilogue(c)
//! ```
//! program `s` runs iterations `s, s + S, s + 2S, ...`: every carried
//! counter and pointer (`+ step`, `- step`) starts `s` steps further and
//! steps `S` times as far;
//! the masks read the same counter, so the edges stay right. After the loop
//! `cluster_sum` adds the `S` accumulators into the last program's, and the
//! rest of the kernel (the epilogue) runs only there.
//!
//! Strict match, else the kernel is left as is (a tuning point that gives
//! the same code as no split is dropped by the op generator):
//! - one loop at the top of the kernel holds a dot, none elsewhere; its body
//!   accumulates the dot into a carried f32 tile (`c = a @ b + c`);
//! - every other carried value is a counter or pointer that adds a
//!   loop-invariant step each iteration (`k + BK`, `pa + da`), computed in
//!   the body from constants and values defined before the loop;
//! - the condition compares one carried value with values that do not
//!   change in the loop (`k < K`, `k > 0`);
//! - nothing before the loop or in it stores, does atomics or returns
//!   (every program of the cluster must reach the sum, and runs that code);
//! - the kernel does not read `program_id(2)` or `num_programs` (a launch
//!   may run part of the tiles).
use super::{Pass, PassOptions};
use crate::ir::walk::{
    memory_free, operands, operands_mut, regions, regions_mut, replace_uses, visit_region, walk_ops,
};
use crate::ir::{
    BinOp, CmpPred, Const, DType, Function, Op, OpKind, Param, ParamAttrs, Region, ScalarType,
    Type, ValueId, MAX_CLUSTER_SPLITS,
};
use crate::span::Span;
use std::collections::{HashMap, HashSet};

pub struct SplitK;

impl Pass for SplitK {
    fn name(&self) -> &'static str {
        "split-k"
    }

    fn summary(&self) -> &'static str {
        "shares a dot loop's iterations among --split-k programs of a cluster and sums their accumulators"
    }

    fn skipped_because(&self, options: &PassOptions) -> Option<&'static str> {
        let Some(target) = options.target else {
            return options.without_target();
        };
        if target.split_k.is_none_or(|s| s <= 1) {
            return Some("no split asked (--split-k)");
        }
        (!target.arch.has_clusters()).then_some("the target has no thread-block clusters (sm_90+)")
    }

    fn run(&self, func: &mut Function, options: &PassOptions) -> bool {
        let Some(splits) = options.target.and_then(|t| t.split_k) else {
            return false;
        };
        if !(2..=MAX_CLUSTER_SPLITS).contains(&splits) {
            return false;
        }
        let Some(m) = find_match(func) else {
            return false;
        };
        apply(func, &m, splits);
        true
    }
}

/// The loop to split and what steps in it.
struct Match {
    /// Index of the loop in the kernel's body.
    at: usize,
    /// Carried position of the accumulator.
    acc: usize,
    /// Every other carried value.
    steps: Vec<Stepper>,
}

/// A carried counter or pointer: `next = this (+|-) step`.
struct Stepper {
    /// Carried position.
    pos: usize,
    /// The body ops (indices, in order) that compute the step.
    chain: Vec<usize>,
    step: ValueId,
    kind: Step,
}

#[derive(Clone, Copy, PartialEq)]
enum Step {
    Add,
    Sub,
    AddPtr,
}

fn find_match(func: &Function) -> Option<Match> {
    let visits = walk_ops(func);
    let uses_axis_2 = visits.iter().any(|v| {
        matches!(
            v.op.kind,
            OpKind::ProgramId { axis: 2 } | OpKind::NumPrograms { .. }
        )
    });
    let dot_loops: Vec<&Op> = visits
        .iter()
        .map(|v| v.op)
        .filter(|op| matches!(op.kind, OpKind::While { .. }) && holds_dot(op))
        .collect();
    if uses_axis_2 || dot_loops.len() != 1 {
        return None;
    }
    let at = func
        .body
        .ops
        .iter()
        .position(|op| std::ptr::eq(op, dot_loops[0]))?;
    if !memory_free(&func.body.ops[..=at]) {
        return None;
    }
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &func.body.ops[at].kind
    else {
        return None;
    };
    let inner: HashSet<ValueId> = defined_in(body_region);
    // The condition: a comparison of one carried value with values that do
    // not change in the loop.
    let args: HashSet<ValueId> = cond_region.args.iter().copied().collect();
    let (last, before) = cond_region.ops.split_last()?;
    let OpKind::Cmp { lhs, rhs, .. } = last.kind else {
        return None;
    };
    let reads_args = |op: &Op| operands(&op.kind).iter().any(|v| args.contains(v));
    let pure = |op: &Op| {
        matches!(
            op.kind,
            OpKind::Constant { .. } | OpKind::Binary { .. } | OpKind::Cast { .. }
        )
    };
    if cond_region.yields != last.results
        || args.contains(&lhs) == args.contains(&rhs)
        || before.iter().any(|op| !pure(op) || reads_args(op))
    {
        return None;
    }
    let acc = body_region.ops.iter().find_map(|op| match op.kind {
        OpKind::Dot { acc, .. } => {
            let pos = body_region.args.iter().position(|&a| a == acc)?;
            (body_region.yields.get(pos) == op.results.first()).then_some(pos)
        }
        _ => None,
    })?;
    if func.ty(body_region.args[acc]).scalar != ScalarType::Num(DType::F32) {
        return None;
    }
    let defs: HashMap<ValueId, usize> = body_region
        .ops
        .iter()
        .enumerate()
        .flat_map(|(i, op)| op.results.iter().map(move |r| (*r, i)))
        .collect();
    let mut steps = Vec::new();
    for (pos, (&arg, &next)) in body_region.args.iter().zip(&body_region.yields).enumerate() {
        if pos == acc {
            continue;
        }
        let step_op = &body_region.ops[*defs.get(&next)?];
        let (step, kind) = match step_op.kind {
            OpKind::Binary {
                op: BinOp::Add,
                lhs,
                rhs,
            } if lhs == arg || rhs == arg => (if lhs == arg { rhs } else { lhs }, Step::Add),
            OpKind::Binary {
                op: BinOp::Sub,
                lhs,
                rhs,
            } if lhs == arg => (rhs, Step::Sub),
            OpKind::AddPtr { ptr, offset } if ptr == arg => (offset, Step::AddPtr),
            _ => return None,
        };
        // Split's index is an i32: it scales i32 steps only.
        if func.ty(step).scalar != ScalarType::Num(DType::I32) {
            return None;
        }
        let chain = invariant_chain(body_region, &defs, &inner, step)?;
        steps.push(Stepper {
            pos,
            chain,
            step,
            kind,
        });
    }
    (inits.len() == body_region.args.len()).then_some(Match { at, acc, steps })
}

/// Whether `op` or an op nested in it is a dot.
fn holds_dot(op: &Op) -> bool {
    let mut found = false;
    for r in regions(&op.kind) {
        visit_region(r, 0, &mut |o, _| {
            found |= matches!(o.kind, OpKind::Dot { .. })
        });
    }
    found
}

fn defined_in(region: &Region) -> HashSet<ValueId> {
    let mut out: HashSet<ValueId> = region.args.iter().copied().collect();
    visit_region(region, 0, &mut |o, _| out.extend(o.results.iter().copied()));
    out
}

/// The body ops (indices, in order) that compute `v` from constants and
/// values defined before the loop; `None` when `v` depends on the iteration.
fn invariant_chain(
    body: &Region,
    defs: &HashMap<ValueId, usize>,
    inner: &HashSet<ValueId>,
    v: ValueId,
) -> Option<Vec<usize>> {
    let mut chain = Vec::new();
    let mut todo = vec![v];
    while let Some(v) = todo.pop() {
        if !inner.contains(&v) {
            continue;
        }
        let i = *defs.get(&v)?;
        let op = &body.ops[i];
        // Computed before the loop even when it runs no iteration: nothing
        // that can fail (a division) moves there.
        let pure = match op.kind {
            OpKind::Binary { op, .. } => !matches!(op, BinOp::Div | BinOp::Rem),
            OpKind::Constant { .. }
            | OpKind::Splat { .. }
            | OpKind::Broadcast { .. }
            | OpKind::Reshape { .. }
            | OpKind::Cast { .. } => true,
            _ => false,
        };
        if !pure {
            return None;
        }
        if !chain.contains(&i) {
            chain.push(i);
            todo.extend(operands(&op.kind));
        }
    }
    chain.sort_unstable();
    Some(chain)
}

/// The parameter [`SplitK`] adds: the tile of the launch's first program.
pub const SPLIT_TILE_PARAM: &str = "split_tile";

/// Adds the `split_tile` parameter; every read of `program_id(0)` in `body`
/// is replaced by `program_id(0) + split_tile`. The ops computing it, to go
/// first, and the old reads, now unused (removed once the body is rebuilt:
/// they sit before the loop whose index the match holds).
fn offset_tiles(func: &mut Function, body: &mut Region, span: Span) -> (Vec<Op>, Vec<ValueId>) {
    let first = func.new_value(i32_scalar(), Some(SPLIT_TILE_PARAM.to_string()));
    func.params.push(Param {
        name: SPLIT_TILE_PARAM.to_string(),
        value: first,
        attrs: ParamAttrs::default(),
    });
    let mut reads = Vec::new();
    visit_region(body, 0, &mut |op, _| {
        if matches!(op.kind, OpKind::ProgramId { axis: 0 }) {
            reads.extend(op.results.iter().copied());
        }
    });
    let mut cx = Builder {
        func,
        ops: Vec::new(),
        span,
    };
    let program = cx.push(OpKind::ProgramId { axis: 0 }, i32_scalar(), None);
    let tile = cx.push(
        OpKind::Binary {
            op: BinOp::Add,
            lhs: program,
            rhs: first,
        },
        i32_scalar(),
        Some("tile"),
    );
    for &read in &reads {
        replace_uses(body, read, tile);
    }
    (cx.ops, reads)
}

/// Removes the ops of `region` (nested too) that define `values`: reads of
/// `program_id(0)` nothing uses any more.
fn drop_defs(region: &mut Region, values: &[ValueId]) {
    region
        .ops
        .retain(|op| !op.results.iter().any(|r| values.contains(r)));
    for op in &mut region.ops {
        for inner in regions_mut(&mut op.kind) {
            drop_defs(inner, values);
        }
    }
}

fn apply(func: &mut Function, m: &Match, splits: u32) {
    let mut body = std::mem::take(&mut func.body);
    let span = body.ops[m.at].span;
    let (tile_ops, old_reads) = offset_tiles(func, &mut body, span);
    let mut cx = Builder {
        func,
        ops: Vec::new(),
        span,
    };
    let split = cx.push(OpKind::ProgramId { axis: 2 }, i32_scalar(), Some("split"));
    let OpKind::While {
        inits, body_region, ..
    } = &mut body.ops[m.at].kind
    else {
        return;
    };
    let mut in_body: Vec<(usize, Vec<Op>)> = Vec::new();
    for Stepper {
        pos,
        chain,
        step,
        kind,
    } in &m.steps
    {
        // The step, computed again before the loop (fresh names).
        let mut renamed: HashMap<ValueId, ValueId> = HashMap::new();
        for &i in chain {
            let mut op = body_region.ops[i].clone();
            for operand in operands_mut(&mut op.kind) {
                if let Some(r) = renamed.get(operand) {
                    *operand = *r;
                }
            }
            let fresh: Vec<ValueId> = op.results.iter().map(|&r| cx.value_like(r)).collect();
            renamed.extend(op.results.iter().copied().zip(fresh.iter().copied()));
            op.results = fresh;
            op.span = span;
            cx.ops.push(op);
        }
        let outer_step = renamed.get(step).copied().unwrap_or(*step);
        // init + step * split
        let ty = cx.func.ty(outer_step).clone();
        let factor = cx.splat_of(split, &ty);
        let offset = cx.push(
            OpKind::Binary {
                op: BinOp::Mul,
                lhs: outer_step,
                rhs: factor,
            },
            ty,
            None,
        );
        let init = inits[*pos];
        let init_ty = cx.func.ty(init).clone();
        let advanced = match kind {
            Step::AddPtr => OpKind::AddPtr { ptr: init, offset },
            Step::Add | Step::Sub => OpKind::Binary {
                op: if *kind == Step::Add {
                    BinOp::Add
                } else {
                    BinOp::Sub
                },
                lhs: init,
                rhs: offset,
            },
        };
        let name = cx.func.values[init.0 as usize].name.clone();
        inits[*pos] = cx.push_named(advanced, init_ty, name);
        // In the body: step * S.
        let step_ty = cx.func.ty(*step).clone();
        let mut extra = Builder {
            func: cx.func,
            ops: Vec::new(),
            span,
        };
        let times = extra.push(
            OpKind::Constant {
                value: Const::Int(i64::from(splits)),
            },
            step_ty.clone(),
            None,
        );
        let wide = extra.push(
            OpKind::Binary {
                op: BinOp::Mul,
                lhs: *step,
                rhs: times,
            },
            step_ty,
            None,
        );
        let next = body_region.yields[*pos];
        if let Some(op) = body_region
            .ops
            .iter_mut()
            .find(|o| o.results.first() == Some(&next))
        {
            // The step is not the carried value itself: only it is replaced.
            for operand in operands_mut(&mut op.kind) {
                if *operand == *step {
                    *operand = wide;
                }
            }
        }
        let stepper = body_region
            .ops
            .iter()
            .position(|o| o.results.first() == Some(&next))
            .unwrap_or(body_region.ops.len());
        in_body.push((stepper, extra.ops));
    }
    // Insert the widened steps before their users, last first so the
    // indices stay right.
    in_body.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
    for (i, ops) in in_body {
        body_region.ops.splice(i..i, ops);
    }
    let acc_result = body.ops[m.at].results[m.acc];
    let prologue = std::mem::take(&mut cx.ops);
    // After the loop: the sum, then the rest only in the last program.
    let acc_ty = cx.func.ty(acc_result).clone();
    let total = cx.push(
        OpKind::ClusterSum {
            src: acc_result,
            splits,
        },
        acc_ty,
        cx.func.values[acc_result.0 as usize]
            .name
            .clone()
            .as_deref(),
    );
    let last = cx.push(
        OpKind::Constant {
            value: Const::Int(i64::from(splits - 1)),
        },
        i32_scalar(),
        None,
    );
    let is_last = cx.push(
        OpKind::Cmp {
            pred: CmpPred::Eq,
            lhs: split,
            rhs: last,
        },
        Type::scalar(ScalarType::Num(DType::I1)),
        None,
    );
    let mut rest = Region {
        args: Vec::new(),
        ops: body.ops.split_off(m.at + 1),
        yields: Vec::new(),
    };
    replace_uses(&mut rest, acc_result, total);
    let tail = std::mem::take(&mut cx.ops);
    let rest_span = rest.ops.first().map_or(span, |o| o.span);
    let guarded = Op {
        kind: OpKind::If {
            cond: is_last,
            then_region: rest,
            else_region: Region::default(),
        },
        results: Vec::new(),
        span: rest_span,
    };
    let loop_op = body.ops.pop();
    body.ops.splice(0..0, tile_ops);
    body.ops.extend(prologue);
    body.ops.extend(loop_op);
    body.ops.extend(tail);
    body.ops.push(guarded);
    drop_defs(&mut body, &old_reads);
    func.body = body;
}

fn i32_scalar() -> Type {
    Type::scalar(ScalarType::Num(DType::I32))
}

/// Appends new ops (with new values) at one span.
struct Builder<'a> {
    func: &'a mut Function,
    ops: Vec<Op>,
    span: Span,
}

impl Builder<'_> {
    fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        self.func.new_value(ty, name)
    }

    fn value_like(&mut self, v: ValueId) -> ValueId {
        let info = self.func.values[v.0 as usize].clone();
        self.new_value(info.ty, info.name)
    }

    fn push_named(&mut self, kind: OpKind, ty: Type, name: Option<String>) -> ValueId {
        let r = self.new_value(ty, name);
        self.ops.push(Op {
            kind,
            results: vec![r],
            span: self.span,
        });
        r
    }

    fn push(&mut self, kind: OpKind, ty: Type, name: Option<&str>) -> ValueId {
        self.push_named(kind, ty, name.map(str::to_string))
    }

    /// `v` (a scalar) as a value of `ty` (itself, or splatted to the tile).
    fn splat_of(&mut self, v: ValueId, ty: &Type) -> ValueId {
        if ty.is_scalar() {
            return v;
        }
        self.push(
            OpKind::Splat { src: v },
            ty.with_scalar(self.func.ty(v).scalar),
            None,
        )
    }
}
