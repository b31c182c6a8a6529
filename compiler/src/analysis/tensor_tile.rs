//! Whether a masked tile load in a loop reads exactly a box of a row-major
//! 2-D tensor in memory, bounds and all: `*?(r < R && c < C)(P + r * ld + c)`
//! with `r` the row index growing down the tile, `c` the column index
//! across it, and `P`, `ld`, `R`, `C` kernel parameters. Then a tensor
//! memory accelerator copy (TMA, sm_90) over the tensor `[R, C]` with row
//! stride `ld` at `P`, from the tile's first row and column, reads the same
//! elements and zero-fills the same masked-off ones.
//!
//! The proof is on closed forms ([`Poly`]): the pointer's offset from `P`
//! and the two compared indices, over the tile's axes, scalars from outside
//! the loop, and the loop's carried scalars. The offset minus
//! `r * ld + c` must be zero on entry and stay zero from one iteration to
//! the next (substituting the carried values' yields keeps it the same).
use crate::ir::index_poly::{Atom, Poly};
use crate::ir::walk::visit_region;
use crate::ir::{BinOp, CmpPred, Const, Function, Op, OpKind, ScalarType, TensorBox, ValueId};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The tensor tile `load` (an op of `loop_op`'s body) reads, if it is one.
pub fn tensor_tile(func: &Function, loop_op: &Op, load: &Op) -> Option<TensorBox> {
    let OpKind::While {
        inits, body_region, ..
    } = &loop_op.kind
    else {
        return None;
    };
    let OpKind::Load {
        ptr,
        mask: Some(mask),
        ..
    } = load.kind
    else {
        return None;
    };
    if func.ty(ptr).rank() != 2 {
        return None;
    }
    let forms = Forms::new(func, loop_op);
    let (base, offset) = forms.pointer_or_carried(ptr)?;
    let [row, col] = forms.bounds(mask)?;
    // Carried values: on entry, and what one iteration makes of them.
    let mut carried: Vec<ValueId> = [&offset, &row.index, &col.index]
        .into_iter()
        .flat_map(|p| p.atoms())
        .filter_map(|a| match a {
            Atom::Value(v) if body_region.args.contains(&v) => Some(v),
            _ => None,
        })
        .collect();
    carried.sort_unstable();
    carried.dedup();
    let mut on_entry = BTreeMap::new();
    let mut next = BTreeMap::new();
    for v in carried {
        let at = body_region.args.iter().position(|&a| a == v)?;
        let (init, yielded) = (inits[at], *body_region.yields.get(at)?);
        let (entry, step) = if func.ty(v).scalar.is_ptr() {
            let (b0, e) = forms.pointer(init)?;
            let (b1, s) = forms.pointer_or_carried(yielded)?;
            (b0 == base && b1 == base).then_some((e, s))?
        } else {
            (forms.int(init)?, forms.int(yielded)?)
        };
        on_entry.insert(Atom::Value(v), entry);
        next.insert(Atom::Value(v), step);
    }
    // The tile's shape in memory, read on entry (a carried pointer is one
    // atom; the induction below shows it keeps its entry's shape).
    let shape = offset.substitute(&on_entry);
    let row_stride = single_param(func, &shape.axis_coefficient(0))?;
    if shape.axis_coefficient(1) != Poly::constant(1)
        || row.index.axis_coefficient(0) != Poly::constant(1)
        || row.index.axis_coefficient(1) != Poly::default()
        || col.index.axis_coefficient(0) != Poly::default()
        || col.index.axis_coefficient(1) != Poly::constant(1)
    {
        return None;
    }
    let stride = Poly::atom(Atom::Value(row_stride));
    let gap = offset.sub(&row.index.mul(&stride).add(&col.index));
    if !gap.substitute(&on_entry).is_zero() || gap.substitute(&next) != gap {
        return None;
    }
    let (row_at, col_at) = (row.index.at_origin(), col.index.at_origin());
    // The coordinates are computed where the copy is issued: only scalars.
    let scalar = |p: &Poly| {
        p.atoms().all(|a| match a {
            Atom::Value(v) => func.ty(v).is_scalar() && !func.ty(v).scalar.is_ptr(),
            Atom::Axis(_) => false,
        })
    };
    (scalar(&row_at) && scalar(&col_at)).then_some(TensorBox {
        base,
        row_stride,
        rows: row.bound,
        cols: col.bound,
        row: row_at,
        col: col_at,
    })
}

/// `p` is exactly one int kernel parameter.
fn single_param(func: &Function, p: &Poly) -> Option<ValueId> {
    let mut terms = p.terms();
    let (m, c) = terms.next()?;
    match (m.as_slice(), c, terms.next()) {
        ([Atom::Value(v)], 1, None) if is_int_param(func, *v) => Some(*v),
        _ => None,
    }
}

fn is_int_param(func: &Function, v: ValueId) -> bool {
    func.params.iter().any(|p| p.value == v)
        && matches!(func.ty(v).scalar, ScalarType::Num(d) if d.is_int())
        && func.ty(v).is_scalar()
}

/// One side of a bounds mask: `index < bound`.
struct Bound {
    index: Poly,
    bound: ValueId,
}

/// Closed forms of the values a loop's body reads.
struct Forms<'f> {
    func: &'f Function,
    defs: HashMap<ValueId, &'f Op>,
    /// Values defined inside the loop (its regions' args and ops' results).
    inside: HashSet<ValueId>,
    /// The loop body's arguments: the carried values.
    carried: HashSet<ValueId>,
}

impl<'f> Forms<'f> {
    fn new(func: &'f Function, loop_op: &'f Op) -> Forms<'f> {
        let mut defs = HashMap::new();
        visit_region(&func.body, 0, &mut |op, _| {
            for &r in &op.results {
                defs.insert(r, op);
            }
        });
        let mut inside = HashSet::new();
        let mut carried = HashSet::new();
        if let OpKind::While {
            cond_region,
            body_region,
            ..
        } = &loop_op.kind
        {
            carried.extend(body_region.args.iter().copied());
            for region in [cond_region, body_region] {
                inside.extend(region.args.iter().copied());
                visit_region(region, 0, &mut |op, _| {
                    inside.extend(op.results.iter().copied())
                });
            }
        }
        Forms {
            func,
            defs,
            inside,
            carried,
        }
    }

    /// `mask` as `row < R && col < C` (either order, broadcasts around).
    fn bounds(&self, mask: ValueId) -> Option<[Bound; 2]> {
        let op = self.through_broadcasts(mask)?;
        let OpKind::Binary {
            op: BinOp::And,
            lhs,
            rhs,
        } = op.kind
        else {
            return None;
        };
        let (a, b) = (self.bound(lhs)?, self.bound(rhs)?);
        // The row bound's index moves along axis 0.
        if a.index.axis_coefficient(0).is_zero() {
            Some([b, a])
        } else {
            Some([a, b])
        }
    }

    fn bound(&self, v: ValueId) -> Option<Bound> {
        let op = self.through_broadcasts(v)?;
        let OpKind::Cmp {
            pred: CmpPred::Lt,
            lhs,
            rhs,
        } = op.kind
        else {
            return None;
        };
        let bound = single_param(self.func, &self.int(rhs)?)?;
        let index = self.int(lhs)?;
        Some(Bound { index, bound })
    }

    /// The op behind `v`, looking through broadcasts and reshapes.
    fn through_broadcasts(&self, v: ValueId) -> Option<&'f Op> {
        let op = *self.defs.get(&v)?;
        match op.kind {
            OpKind::Broadcast { src } | OpKind::Reshape { src } => self.through_broadcasts(src),
            _ => Some(op),
        }
    }

    /// A pointer (tile) as its base parameter and offset in elements.
    fn pointer(&self, v: ValueId) -> Option<(ValueId, Poly)> {
        if self.func.params.iter().any(|p| p.value == v) {
            return Some((v, Poly::default()));
        }
        if self.carried.contains(&v) {
            // A carried pointer: its own offset; its base is its entry's.
            return None;
        }
        let op = *self.defs.get(&v)?;
        let (base, offset) = match op.kind {
            OpKind::Splat { src } | OpKind::Broadcast { src } => self.pointer(src)?,
            OpKind::Reshape { src } => {
                let (b, o) = self.pointer(src)?;
                (b, self.reshaped(src, v, &o)?)
            }
            OpKind::AddPtr { ptr, offset } => {
                let (b, o) = self.pointer_or_carried(ptr)?;
                (b, o.add(&self.int(offset)?))
            }
            _ => return None,
        };
        Some((base, self.without_unit_axes(v, offset)))
    }

    /// [`Self::pointer`], where a carried pointer is its entry's base plus
    /// an offset atom of its own.
    fn pointer_or_carried(&self, v: ValueId) -> Option<(ValueId, Poly)> {
        if !self.carried.contains(&v) {
            return self.pointer(v);
        }
        let base = self.carried_base(v)?;
        Some((base, Poly::atom(Atom::Value(v))))
    }

    /// The base parameter of carried pointer `v`'s entry value.
    fn carried_base(&self, v: ValueId) -> Option<ValueId> {
        let (loop_op, at) = self.defs.values().find_map(|op| match &op.kind {
            OpKind::While {
                inits, body_region, ..
            } => body_region
                .args
                .iter()
                .position(|&a| a == v)
                .map(|at| (inits, at)),
            _ => None,
        })?;
        self.pointer(loop_op[at]).map(|(b, _)| b)
    }

    /// An int value (scalar or tile) as a polynomial.
    fn int(&self, v: ValueId) -> Option<Poly> {
        let ty = self.func.ty(v);
        if !matches!(ty.scalar, ScalarType::Num(d) if d.is_int() && d.bits() > 1) {
            return None;
        }
        let opaque = || {
            // A scalar this analysis does not open: fine before the loop or
            // carried by it, not computed inside it (not known where copies issue).
            (ty.is_scalar() && (!self.inside.contains(&v) || self.carried.contains(&v)))
                .then(|| Poly::atom(Atom::Value(v)))
        };
        let Some(op) = self.defs.get(&v).copied() else {
            return opaque();
        };
        let form = match op.kind {
            OpKind::Constant {
                value: Const::Int(c),
            } => Some(Poly::constant(c)),
            OpKind::MakeRange { start, .. } => {
                Some(Poly::constant(start).add(&Poly::atom(Atom::Axis(0))))
            }
            OpKind::Splat { src } | OpKind::Broadcast { src } | OpKind::Cast { src } => {
                self.int(src)
            }
            OpKind::Reshape { src } => self.int(src).and_then(|p| self.reshaped(src, v, &p)),
            OpKind::Binary { op: bin, lhs, rhs } => {
                let (l, r) = (self.int(lhs), self.int(rhs));
                match (bin, l, r) {
                    (BinOp::Add, Some(l), Some(r)) => Some(l.add(&r)),
                    (BinOp::Sub, Some(l), Some(r)) => Some(l.sub(&r)),
                    (BinOp::Mul, Some(l), Some(r)) => Some(l.mul(&r)),
                    _ => None,
                }
            }
            _ => None,
        };
        match form {
            Some(p) => Some(self.without_unit_axes(v, p)),
            None => opaque(),
        }
    }

    /// `p`, a form of `src`, as a form of `dst`, a reshape of `src` that
    /// inserts or removes axes of size 1 (the others keep their order).
    fn reshaped(&self, src: ValueId, dst: ValueId, p: &Poly) -> Option<Poly> {
        let non_unit = |v: ValueId| -> Vec<usize> {
            let shape = &self.func.ty(v).shape;
            (0..shape.len()).filter(|&i| shape[i] != 1).collect()
        };
        let (from, to) = (non_unit(src), non_unit(dst));
        if from.len() != to.len() {
            return None;
        }
        Some(p.remap_axes(|i| from.iter().position(|&a| a == i).map(|k| to[k])))
    }

    /// Axes of size 1 have only index 0: their terms go.
    fn without_unit_axes(&self, v: ValueId, p: Poly) -> Poly {
        let shape = &self.func.ty(v).shape;
        p.at_axis_zero(|i| shape.get(i).is_none_or(|&n| n == 1))
    }
}
