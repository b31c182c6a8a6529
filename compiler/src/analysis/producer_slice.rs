//! What the producer warpgroup of a warp-specialized TMA pipeline computes
//! (see [`crate::passes::tma_loads`]): it branches off at the kernel's
//! start and runs the loop on its own, so every value it needs (where each
//! stage's boxes start, the loop's condition) must come from kernel
//! parameters through side-effect-free scalar ops, in the top region
//! before the loop or in the loop's regions, and from scalar carried
//! values computed alike. Tiles, memory and nested regions stay with the
//! consumers.
use crate::ir::index_poly::Atom;
use crate::ir::walk::{carried_position, operands};
use crate::ir::{Function, Op, OpKind, TmaCopies, ValueId};
use std::collections::{HashMap, HashSet};

/// The producer's part of a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProducerSlice {
    /// The loop's position among the top region's ops.
    pub loop_at: usize,
    /// Results of the ops the producer lowers (top region before the loop,
    /// the loop's condition and body).
    pub values: HashSet<ValueId>,
    /// Positions of the carried values the producer keeps (scalars).
    pub carried: Vec<usize>,
}

impl ProducerSlice {
    /// Whether the producer lowers `op`.
    pub fn has(&self, op: &Op) -> bool {
        op.results.first().is_some_and(|r| self.values.contains(r))
    }
}

/// The producer's slice for the loop `loop_op` (in `func`'s top region)
/// computing `roots` (values of the loop's regions or before it), or `None`
/// when some root needs a tile, memory or a nested region's result.
pub fn producer_slice(
    func: &Function,
    loop_op: &Op,
    roots: impl IntoIterator<Item = ValueId>,
) -> Option<ProducerSlice> {
    let loop_at = func
        .body
        .ops
        .iter()
        .position(|o| o.results == loop_op.results)?;
    let OpKind::While {
        inits,
        cond_region,
        body_region,
        ..
    } = &loop_op.kind
    else {
        return None;
    };
    let mut defined: HashMap<ValueId, &Op> = HashMap::new();
    let ops = func.body.ops[..loop_at]
        .iter()
        .chain(&cond_region.ops)
        .chain(&body_region.ops);
    for op in ops {
        for r in &op.results {
            defined.insert(*r, op);
        }
    }
    let carried_at = |v: ValueId| carried_position(cond_region, body_region, v);
    let params: HashSet<ValueId> = func.params.iter().map(|p| p.value).collect();
    let mut values = HashSet::new();
    let mut carried = Vec::new();
    let mut seen = HashSet::new();
    let mut work: Vec<ValueId> = roots.into_iter().collect();
    while let Some(v) = work.pop() {
        if !seen.insert(v) || params.contains(&v) {
            continue;
        }
        if !func.ty(v).shape.is_empty() {
            return None;
        }
        if let Some(j) = carried_at(v) {
            if !carried.contains(&j) {
                carried.push(j);
                work.push(*inits.get(j)?);
                work.push(*body_region.yields.get(j)?);
            }
            continue;
        }
        let op = defined.get(&v)?;
        if !pure_scalar(op) {
            return None;
        }
        values.insert(v);
        work.extend(operands(&op.kind));
    }
    carried.sort_unstable();
    Some(ProducerSlice {
        loop_at,
        values,
        carried,
    })
}

/// The slice of a TMA pipeline's producer: the loop's condition and where
/// each operand's boxes start (`None` also where a start reads a tile index).
pub fn tma_producer_slice(func: &Function, op: &Op, t: &TmaCopies) -> Option<ProducerSlice> {
    let OpKind::While { cond_region, .. } = &op.kind else {
        return None;
    };
    let mut roots: Vec<ValueId> = cond_region.yields.clone();
    for o in &t.operands {
        for p in [&o.row, &o.col] {
            for atom in p.atoms() {
                match atom {
                    Atom::Value(v) => roots.push(v),
                    Atom::Axis(_) => return None,
                }
            }
        }
    }
    producer_slice(func, op, roots)
}

/// Ops the producer can run: no memory, no tiles, no regions.
fn pure_scalar(op: &Op) -> bool {
    op.results.len() == 1
        && matches!(
            op.kind,
            OpKind::Constant { .. }
                | OpKind::ProgramId { .. }
                | OpKind::NumPrograms { .. }
                | OpKind::Binary { .. }
                | OpKind::Cmp { .. }
                | OpKind::Unary { .. }
                | OpKind::Cast { .. }
                | OpKind::Select { .. }
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::walk::walk_ops;

    use crate::driver::pipeline::first_kernel as lowered;

    fn the_loop(func: &Function) -> &Op {
        walk_ops(func)
            .into_iter()
            .map(|v| v.op)
            .find(|op| matches!(op.kind, OpKind::While { .. }))
            .expect("a loop")
    }

    fn cond_of(op: &Op) -> ValueId {
        let OpKind::While { cond_region, .. } = &op.kind else {
            unreachable!()
        };
        cond_region.yields[0]
    }

    #[test]
    fn a_counted_loop_needs_its_counter_and_the_program_id() {
        let func = lowered(
            "__global__ void k(float* X, int K) {
               int pm = get_program_id(0) * 64;
               float acc[16] = 0;
               for (int k = 0; k < K; k += 16) {
                 int row = pm + k;
                 acc += *(X + row + 0 ... 16);
               }
               *(X + 0 ... 16) = acc;
             }",
        );
        let op = the_loop(&func);
        let OpKind::While { body_region, .. } = &op.kind else {
            unreachable!()
        };
        let row = body_region
            .ops
            .iter()
            .find(|o| {
                matches!(o.kind, OpKind::Binary { .. }) && func.ty(o.results[0]).shape.is_empty()
            })
            .map(|o| o.results[0])
            .expect("the row");
        let slice = producer_slice(&func, op, [cond_of(op), row]).expect("scalars only");
        // k is carried; acc (a tile) is not.
        assert_eq!(slice.carried, vec![0]);
        assert!(slice.values.contains(&row));
        let loads = walk_ops(&func)
            .into_iter()
            .filter(|v| matches!(v.op.kind, OpKind::Load { .. }))
            .count();
        assert!(loads > 0);
        assert!(!walk_ops(&func)
            .into_iter()
            .filter(|v| matches!(v.op.kind, OpKind::Load { .. }))
            .any(|v| slice.has(v.op)));
    }

    #[test]
    fn a_bound_read_from_memory_has_no_slice() {
        let func = lowered(
            "__global__ void k(float* X, int* B) {
               int bound = *B;
               float acc[16] = 0;
               for (int k = 0; k < bound; k += 16) {
                 acc += *(X + k + 0 ... 16);
               }
               *(X + 0 ... 16) = acc;
             }",
        );
        let op = the_loop(&func);
        assert_eq!(producer_slice(&func, op, [cond_of(op)]), None);
    }
}
