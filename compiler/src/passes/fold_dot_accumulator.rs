//! The `fold-dot-accumulator` pass: `x + a @ b` (sema's `a @ b` has a zero
//! accumulator) becomes one `Dot` accumulating into `x`, as `c += a @ b`
//! already is. The tensor cores then start from `x` instead of adding
//! each element after the product: FlashAttention's
//! `acc = acc * alpha + p @ v` saves an add per accumulator element and
//! iteration. The rounding differs as in any reordered float sum (the
//! product's terms are added to `x` one by one instead of to zero).
//!
//! Only where the product feeds nothing else and `x` has its type; the
//! new `Dot` takes the add's place (after `x` and the operands), the old
//! one goes.
use super::pipeline_dot_loops::is_zero_constant;
use super::{Pass, PassOptions};
use crate::ir::walk::{regions_mut, walk_ops, DefUse};
use crate::ir::{BinOp, Function, OpKind, Region, ValueId};

pub struct FoldDotAccumulator;

impl Pass for FoldDotAccumulator {
    fn name(&self) -> &'static str {
        "fold-dot-accumulator"
    }

    fn summary(&self) -> &'static str {
        "turns `x + a @ b` into one dot accumulating into `x`"
    }

    fn run(&self, func: &mut Function, _options: &PassOptions) -> bool {
        let folds = find_folds(func);
        if folds.is_empty() {
            return false;
        }
        apply(&mut func.body, &folds);
        true
    }
}

/// One fold: the add (its result), the product's operands, `x`, and the
/// product (its result) that goes.
#[derive(Clone, Copy, Debug)]
struct Fold {
    add: ValueId,
    a: ValueId,
    b: ValueId,
    x: ValueId,
    product: ValueId,
}

fn find_folds(func: &Function) -> Vec<Fold> {
    let du = DefUse::compute(func);
    let visits = walk_ops(func);
    let dot_of = |v: ValueId| {
        visits.iter().find_map(|visit| match visit.op.kind {
            OpKind::Dot { a, b, acc } if visit.op.results.first() == Some(&v) => Some((a, b, acc)),
            _ => None,
        })
    };
    let mut folds = Vec::new();
    for visit in &visits {
        let OpKind::Binary {
            op: BinOp::Add,
            lhs,
            rhs,
        } = visit.op.kind
        else {
            continue;
        };
        let Some(&add) = visit.op.results.first() else {
            continue;
        };
        for (x, product) in [(lhs, rhs), (rhs, lhs)] {
            let Some((a, b, acc)) = dot_of(product) else {
                continue;
            };
            let taken = folds
                .iter()
                .any(|f: &Fold| f.product == product || f.x == product);
            if is_zero_constant(func, acc)
                && du.uses_of(product).len() == 1
                && func.ty(x) == func.ty(product)
                && x != product
                && !taken
                && same_region(func, add, product)
            {
                folds.push(Fold {
                    add,
                    a,
                    b,
                    x,
                    product,
                });
                break;
            }
        }
    }
    folds
}

/// Whether the ops defining `u` and `v` sit in one region (the product
/// must be before the add, as definitions come before uses).
fn same_region(func: &Function, u: ValueId, v: ValueId) -> bool {
    fn holds(region: &Region, u: ValueId, v: ValueId) -> Option<bool> {
        let here = |w: ValueId| region.ops.iter().any(|o| o.results.contains(&w));
        if here(u) || here(v) {
            return Some(here(u) && here(v));
        }
        region
            .ops
            .iter()
            .flat_map(|o| crate::ir::walk::regions(&o.kind))
            .find_map(|r| holds(r, u, v))
    }
    holds(&func.body, u, v).unwrap_or(false)
}

fn apply(region: &mut Region, folds: &[Fold]) {
    region
        .ops
        .retain(|op| !folds.iter().any(|f| op.results.first() == Some(&f.product)));
    for op in &mut region.ops {
        if let Some(f) = folds.iter().find(|f| op.results.first() == Some(&f.add)) {
            op.kind = OpKind::Dot {
                a: f.a,
                b: f.b,
                acc: f.x,
            };
        }
        for nested in regions_mut(&mut op.kind) {
            apply(nested, folds);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::driver::pipeline::first_kernel as lowered;

    fn dots(func: &Function) -> Vec<(ValueId, ValueId)> {
        walk_ops(func)
            .into_iter()
            .filter_map(|v| match v.op.kind {
                OpKind::Dot { acc, .. } => Some((v.op.results[0], acc)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_scaled_accumulator_plus_a_product_is_one_dot() {
        let mut func = lowered(
            "__global__ void k(half* A, half* B, float* C) {
               half a[16, 16] = *(A + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]);
               half b[16, 16] = *(B + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]);
               float c[16, 16] = *(C + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]);
               c = c * 2.0f + a @ b;
               *(C + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]) = c;
             }",
        );
        assert!(FoldDotAccumulator.run(&mut func, &PassOptions::all()));
        crate::ir::verifier::verify_function(&func).expect("valid IR");
        let [(_, acc)] = dots(&func)[..] else {
            panic!("one dot: {:?}", dots(&func))
        };
        // It accumulates into `c * 2`, not a zero.
        assert!(!is_zero_constant(&func, acc));
        assert!(walk_ops(&func).iter().all(|v| !matches!(
            v.op.kind,
            OpKind::Binary { op: BinOp::Add, .. }
        ) || func.ty(v.op.results[0]).shape.len() != 2));
        assert!(!FoldDotAccumulator.run(&mut func, &PassOptions::all()));
    }

    #[test]
    fn a_product_read_twice_stays() {
        let mut func = lowered(
            "__global__ void k(half* A, half* B, float* C) {
               half a[16, 16] = *(A + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]);
               half b[16, 16] = *(B + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]);
               float p[16, 16] = a @ b;
               float c[16, 16] = p + 1.0f;
               *(C + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]) = c + p;
             }",
        );
        assert!(!FoldDotAccumulator.run(&mut func, &PassOptions::all()));
        assert!(is_zero_constant(&func, dots(&func)[0].1));
    }
}
