//! What a loop's next iteration would compute, evaluated one step ahead
//! inside the current one (a [`crate::ir::LoopPrefetch`] copies the next
//! iteration's operand tiles while this one runs): the slice of the body
//! and the condition that computes some roots (a load's pointers and mask,
//! the condition) from the carried values, where every carried value the
//! slice reads has a next value the slice computes too (a counter, a
//! pointer tile stepped by a constant). Only cheap, side-effect-free ops
//! that need no shared memory qualify, and no integer division by a value
//! (the lookahead of an iteration that does not run must not divide by
//! zero): evaluating them for an iteration that never runs is harmless.
use super::scratch::{scratch_bytes, InLoop};
use crate::ir::layout::LayoutMap;
use crate::ir::walk::{carried_position, operands, regions};
use crate::ir::{BinOp, Function, Op, OpKind, Region, ValueId};
use std::collections::{BTreeSet, HashMap, HashSet};

/// The slice of a loop that computes its roots for the next iteration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lookahead {
    /// Positions of the carried values the slice reads: the next
    /// iteration's are the body's yields at these positions.
    pub carried: Vec<usize>,
    /// Indices of the body's ops in the slice, in order.
    pub body_ops: Vec<usize>,
    /// Indices of the condition region's ops in the slice, in order.
    pub cond_ops: Vec<usize>,
}

/// The lookahead slice of `loop_op` (a `While`) computing `roots` (values
/// of its body or condition region, or from before the loop), or `None`
/// when a root needs memory, a tile the loop accumulates, a nested region's
/// value or an op that is not cheap and pure.
pub fn lookahead(
    func: &Function,
    layouts: &LayoutMap,
    loop_op: &Op,
    roots: impl IntoIterator<Item = ValueId>,
) -> Option<Lookahead> {
    let OpKind::While {
        cond_region,
        body_region,
        ..
    } = &loop_op.kind
    else {
        return None;
    };
    let index = |r: &Region| -> HashMap<ValueId, usize> {
        r.ops
            .iter()
            .enumerate()
            .flat_map(|(i, o)| o.results.iter().map(move |v| (*v, i)))
            .collect()
    };
    let (in_body, in_cond) = (index(body_region), index(cond_region));
    let mut nested = HashSet::new();
    for op in body_region.ops.iter().chain(&cond_region.ops) {
        defined_within(op, &mut nested);
    }
    let carried_at = |v: ValueId| carried_position(cond_region, body_region, v);
    let mut slice = Lookahead::default();
    let (mut body_ops, mut cond_ops) = (BTreeSet::new(), BTreeSet::new());
    let mut seen = HashSet::new();
    let mut work: Vec<ValueId> = roots.into_iter().collect();
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        if let Some(j) = carried_at(v) {
            if !slice.carried.contains(&j) {
                slice.carried.push(j);
                work.push(*body_region.yields.get(j)?);
            }
            continue;
        }
        let op = match (in_body.get(&v), in_cond.get(&v)) {
            (Some(&i), _) => {
                body_ops.insert(i);
                &body_region.ops[i]
            }
            (_, Some(&i)) => {
                cond_ops.insert(i);
                &cond_region.ops[i]
            }
            // Defined in a nested region: not at hand one step ahead.
            _ if nested.contains(&v) => return None,
            // From before the loop: the same in every iteration.
            _ => continue,
        };
        if !cheap_and_pure(func, layouts, op) {
            return None;
        }
        work.extend(operands(&op.kind));
    }
    slice.carried.sort_unstable();
    slice.body_ops = body_ops.into_iter().collect();
    slice.cond_ops = cond_ops.into_iter().collect();
    Some(slice)
}

/// Every value `op` and the ops of its regions define.
fn defined_within(op: &Op, into: &mut HashSet<ValueId>) {
    into.extend(op.results.iter().copied());
    for r in regions(&op.kind) {
        into.extend(r.args.iter().copied());
        for o in &r.ops {
            defined_within(o, into);
        }
    }
}

/// Ops a lookahead may evaluate for an iteration that never runs: no
/// memory, no regions, no shared memory (reshapes and conversions only
/// where they renumber registers), no integer division but by a constant.
fn cheap_and_pure(func: &Function, layouts: &LayoutMap, op: &Op) -> bool {
    match &op.kind {
        OpKind::Binary { op: bin, rhs, .. } => {
            let integer = !func.dtype(*rhs).is_float();
            !(matches!(bin, BinOp::Div | BinOp::Rem) && integer && func.constant_of(*rhs).is_none())
        }
        OpKind::Reshape { .. } | OpKind::ConvertLayout { .. } => {
            scratch_bytes(func, layouts, op, InLoop::Plain) == 0
        }
        kind => kind.is_elementwise(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::walk::walk_ops;

    /// The kernel after the standard passes for sm_80, 4 warps.
    fn lowered(src: &str) -> Function {
        let mut func = crate::driver::pipeline::first_kernel(src);
        let options = crate::passes::PassOptions::all()
            .with_target(crate::passes::Target::plain(crate::arch::Arch::Sm80, 4));
        crate::passes::PassManager::standard(options)
            .run(&mut func, &mut |_| {})
            .expect("the passes run");
        func
    }

    fn the_loop(func: &Function) -> &Op {
        walk_ops(func)
            .into_iter()
            .map(|v| v.op)
            .find(|op| matches!(op.kind, OpKind::While { .. }))
            .expect("a loop")
    }

    /// The pointer and mask of the loop body's last load, and the condition.
    fn roots(op: &Op) -> Vec<ValueId> {
        let OpKind::While {
            cond_region,
            body_region,
            ..
        } = &op.kind
        else {
            unreachable!()
        };
        let load = body_region
            .ops
            .iter()
            .rev()
            .find_map(|o| match o.kind {
                OpKind::Load { ptr, mask, .. } => Some([Some(ptr), mask]),
                _ => None,
            })
            .expect("a load");
        load.into_iter()
            .flatten()
            .chain(cond_region.yields.iter().copied())
            .collect()
    }

    #[test]
    fn a_counter_steps_the_pointers_and_the_mask() {
        let func = lowered(
            "__global__ void k(float* X, float* Y, int S) {
               float acc[16] = 0;
               for (int s = 0; s < S; s += 16) {
                 int cols[16] = s + 0 ... 16;
                 acc += *?(cols < S)(X + cols);
               }
               *(Y + 0 ... 16) = acc;
             }",
        );
        let op = the_loop(&func);
        let layouts = func.layouts.clone().expect("layouts");
        let slice = lookahead(&func, &layouts, op, roots(op)).expect("index arithmetic only");
        // `s` (carried #0) is read and advanced; `acc` (#1) is not read.
        assert_eq!(slice.carried, vec![0]);
        assert!(!slice.cond_ops.is_empty());
        let OpKind::While { body_region, .. } = &op.kind else {
            unreachable!()
        };
        // The load and the accumulation stay out of the slice.
        for &i in &slice.body_ops {
            assert!(cheap_and_pure(&func, &layouts, &body_region.ops[i]));
        }
        assert!(body_region
            .ops
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.kind, OpKind::Load { .. }))
            .all(|(i, _)| !slice.body_ops.contains(&i)));
    }

    #[test]
    fn a_pointer_read_from_memory_has_no_lookahead() {
        let func = lowered(
            "__global__ void k(float* X, int* Off, float* Y, int S) {
               float acc[16] = 0;
               for (int s = 0; s < S; s += 16) {
                 int off = *(Off + s);
                 acc += *(X + off + 0 ... 16);
               }
               *(Y + 0 ... 16) = acc;
             }",
        );
        let op = the_loop(&func);
        let layouts = func.layouts.clone().expect("layouts");
        assert_eq!(lookahead(&func, &layouts, op, roots(op)), None);
    }

    #[test]
    fn a_carried_value_the_body_computes_from_memory_has_no_lookahead() {
        let func = lowered(
            "__global__ void k(float* X, float* Y, int S) {
               float acc[16] = 0;
               int s = 0;
               while (s < S) {
                 acc += *(X + s + 0 ... 16);
                 s = s + (int)*(X + s);
               }
               *(Y + 0 ... 16) = acc;
             }",
        );
        let op = the_loop(&func);
        let layouts = func.layouts.clone().expect("layouts");
        assert_eq!(lookahead(&func, &layouts, op, roots(op)), None);
    }
}
