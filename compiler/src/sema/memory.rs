//! Loads and stores through pointer tiles: `*p`, `*?(m) p`, `*p = v`, and the
//! guarded loads that `c ? *p : x` becomes.

use super::convert::Target;
use super::value::Val;
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::Expr;
use crate::ir::{BinOp, DType, OpKind, ScalarType, Type, ValueId};
use crate::span::Span;

impl Lowerer {
    /// A lowered pointer operand and its pointee, or an error naming what it is.
    pub(crate) fn lower_pointer(&mut self, e: &Expr, what: &str) -> Result<(Val, DType)> {
        let p = self.lower_expr(e)?;
        match self.scalar_of(&p) {
            ScalarType::Ptr(d) if !p.is_weak() => Ok((p, d)),
            _ => Err(Diagnostic::error(
                e.span,
                format!("{what} needs a pointer, but this is {}", self.describe(&p)),
            )),
        }
    }

    /// `*p` or `*?(mask) p`.
    pub(crate) fn lower_load(
        &mut self,
        ptr: &Expr,
        mask: Option<&Expr>,
        span: Span,
    ) -> Result<Val> {
        let (p, _) = self.lower_pointer(ptr, "`*` (dereference)")?;
        let mut vals = vec![p];
        let mask = self.lower_mask(mask, span)?;
        vals.extend(mask);
        let shape = self.common_shape("*?()", &vals, span)?;
        self.emit_load(p, mask, None, &shape, span)
    }

    /// The mask of `*?(mask)` as an i1 value, combined with the lanes the
    /// enclosing control flow guards (see [`Self::guard_mask`]).
    pub(crate) fn lower_mask(&mut self, mask: Option<&Expr>, span: Span) -> Result<Option<Val>> {
        let written = match mask {
            Some(m) => {
                let mv = self.lower_expr(m)?;
                // A float tile as a mask is almost always a slip (the data
                // instead of a comparison on it); C's "non-zero is true" is
                // kept for integers and bools.
                if let ScalarType::Num(d) = self.scalar_of(&mv) {
                    if d.is_float() {
                        return Err(Diagnostic::error(
                            m.span,
                            format!(
                                "{} is not a mask: a mask is a bool or integer tile",
                                self.describe(&mv)
                            ),
                        )
                        .with_note("compare it to make one, e.g. `*?(x != 0)p`"));
                    }
                }
                let mb = self.truth_value(mv)?;
                Some(Val::value(mb, m.span))
            }
            None => None,
        };
        self.guard_mask(written, span)
    }

    /// A load of `ptr` broadcast to `shape`, masked by `mask` (i1), lanes off
    /// the mask giving `other` (converted to the pointee type).
    pub(crate) fn emit_load(
        &mut self,
        ptr: Val,
        mask: Option<Val>,
        other: Option<Val>,
        shape: &[usize],
        span: Span,
    ) -> Result<Val> {
        let scalar = self.scalar_of(&ptr);
        let p = self.materialize(ptr, scalar, shape)?;
        let m = match mask {
            Some(m) => Some(self.materialize(m, ScalarType::Num(DType::I1), shape)?),
            None => None,
        };
        let pointee = ScalarType::Num(scalar.dtype());
        let o = match other {
            Some(o) => Some(self.materialize(o, pointee, shape)?),
            None => None,
        };
        let ty = Type::tile(pointee, shape.to_vec());
        let v = self.b.push1(
            OpKind::Load {
                ptr: p,
                mask: m,
                other: o,
            },
            ty,
            span,
        );
        Ok(Val::value(v, span))
    }

    /// Stores `value` through `ptr` (optionally masked); gives the stored value.
    pub(crate) fn emit_store(
        &mut self,
        ptr: Val,
        mask: Option<Val>,
        value: Val,
        span: Span,
    ) -> Result<Val> {
        let pty = self.type_of(&ptr).expect("pointers are values");
        let mut shape = pty.shape.clone();
        if let Some(m) = mask {
            shape = self.common_shape("*?()", &[ptr, m], span)?;
        }
        let target = Type::tile(ScalarType::Num(pty.scalar.dtype()), shape.clone());
        let v = self.convert_to_declared(value, &target, Target::Store)?;
        let p = self.materialize(ptr, pty.scalar, &shape)?;
        let m = match mask {
            Some(m) => Some(self.materialize(m, ScalarType::Num(DType::I1), &shape)?),
            None => None,
        };
        self.b.push(
            OpKind::Store {
                ptr: p,
                value: v,
                mask: m,
            },
            vec![],
            span,
        );
        Ok(Val::value(v, value.span))
    }

    /// `mask` combined with the active guard (see [`Lowerer::guards`]).
    pub(crate) fn guard_mask(&mut self, mask: Option<Val>, span: Span) -> Result<Option<Val>> {
        let Some(g) = self.guards.last().copied() else {
            return Ok(mask);
        };
        let Some(m) = mask else {
            return Ok(Some(g));
        };
        let shape = self.common_shape("*?()", &[m, g], span)?;
        let x = self.materialize(m, ScalarType::Num(DType::I1), &shape)?;
        let y = self.materialize(g, ScalarType::Num(DType::I1), &shape)?;
        Ok(Some(Val::value(self.and_masks(x, y, span), m.span)))
    }

    /// Lowers with `guard` (an `i1` value) active: loads, stores and atomics
    /// inside touch only lanes where it (and every enclosing guard) holds.
    pub(crate) fn with_guard<T>(
        &mut self,
        guard: Val,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let combined = self.guard_mask(Some(guard), guard.span)?.expect("a guard");
        self.guards.push(combined);
        let r = f(self);
        self.guards.pop();
        r
    }

    /// `a && b` on two `i1` values of the same shape.
    pub(crate) fn and_masks(&mut self, a: ValueId, b: ValueId, span: Span) -> ValueId {
        let ty = self.b.ty(a).clone();
        self.b.push1(
            OpKind::Binary {
                op: BinOp::And,
                lhs: a,
                rhs: b,
            },
            ty,
            span,
        )
    }
}
