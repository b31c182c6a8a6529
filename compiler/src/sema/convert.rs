//! Implicit conversions: element casts, broadcasting to a shape, and turning
//! weak literals into constants of the type they meet.

use super::shapes::{broadcasts_to, fmt_shape};
use super::value::{Operand, Val};
use super::Lowerer;
use crate::diagnostics::{Diagnostic, Result};
use crate::ir::{Const, DType, OpKind, ScalarType, Type, ValueId};
use crate::span::Span;

/// "scalar" or "shape [16, 8]", for messages.
pub fn describe_shape(shape: &[usize]) -> String {
    if shape.is_empty() {
        "a scalar".into()
    } else {
        format!("a tile of shape {}", fmt_shape(shape))
    }
}

/// An integer converted to type `d` the way C does (two's complement wrap).
fn wrap_to(v: i64, d: DType) -> i64 {
    match d {
        DType::I8 => v as i8 as i64,
        DType::I16 => v as i16 as i64,
        DType::I32 => v as i32 as i64,
        _ => v,
    }
}

/// Float constant to int the way the run-time cast does it (the interpreter and
/// PTX's `cvt.rzi.sat`): truncate toward zero, saturate at the type's range, NaN to 0.
fn saturate_to(f: f64, d: DType) -> i64 {
    match d {
        DType::I8 => f as i8 as i64,
        DType::I16 => f as i16 as i64,
        DType::I32 => f as i32 as i64,
        _ => f as i64,
    }
}

impl Lowerer {
    /// A constant of type `ty` (a tile constant is splatted by the op itself).
    pub(crate) fn constant(&mut self, value: Const, ty: Type, span: Span) -> ValueId {
        self.b.push1(OpKind::Constant { value }, ty, span)
    }

    /// `v` as a value of element type `to` and shape `shape` (which the caller
    /// has checked `v` broadcasts to).
    pub(crate) fn materialize(
        &mut self,
        v: Val,
        to: ScalarType,
        shape: &[usize],
    ) -> Result<ValueId> {
        let ty = Type::tile(to, shape.to_vec());
        let value = match (v.op, to) {
            (Operand::Value(id), _) => {
                let cast = self.cast_value(id, to, v.span)?;
                return self.broadcast_value(cast, shape, v.span);
            }
            (_, ScalarType::Ptr(_)) => {
                return Err(Diagnostic::error(
                    v.span,
                    format!("cannot use {} as a pointer (`{to}`)", self.describe(&v)),
                ))
            }
            (Operand::Int(i), ScalarType::Num(DType::I1)) => Const::Bool(i != 0),
            (Operand::Int(i), ScalarType::Num(d)) => Const::Int(wrap_to(i, d)),
            (Operand::Float(f), ScalarType::Num(DType::I1)) => Const::Bool(f != 0.0),
            (Operand::Float(f), ScalarType::Num(d)) if d.is_int() => Const::Int(saturate_to(f, d)),
            (Operand::Float(f), _) => Const::Float(f),
        };
        Ok(self.constant(value, ty, v.span))
    }

    /// A weak literal at its own type, or the value itself.
    pub(crate) fn value_of(&mut self, v: Val) -> Result<ValueId> {
        let scalar = self.scalar_of(&v);
        let shape = self.shape_of(&v);
        self.materialize(v, scalar, &shape)
    }

    /// Element-wise conversion, same shape. Numbers convert to numbers and
    /// pointers to pointers; anything else is an error.
    pub(crate) fn cast_value(&mut self, v: ValueId, to: ScalarType, span: Span) -> Result<ValueId> {
        let from = self.b.ty(v).clone();
        if from.scalar == to {
            return Ok(v);
        }
        if from.scalar.is_ptr() != to.is_ptr() {
            return Err(Diagnostic::error(
                span,
                format!("cannot convert `{}` to `{to}`", from),
            ));
        }
        Ok(self
            .b
            .push1(OpKind::Cast { src: v }, from.with_scalar(to), span))
    }

    /// Broadcasts `v` to `shape`: splat a scalar, reshape to add leading axes
    /// of size 1, then repeat the axes of size 1.
    pub(crate) fn broadcast_value(
        &mut self,
        v: ValueId,
        shape: &[usize],
        span: Span,
    ) -> Result<ValueId> {
        let ty = self.b.ty(v).clone();
        if ty.shape == shape {
            return Ok(v);
        }
        if !broadcasts_to(&ty.shape, shape) {
            return Err(Diagnostic::error(
                span,
                format!(
                    "cannot broadcast a tile of shape {} to shape {}",
                    fmt_shape(&ty.shape),
                    fmt_shape(shape)
                ),
            ));
        }
        let target = Type::tile(ty.scalar, shape.to_vec());
        if ty.shape.is_empty() {
            return Ok(self.b.push1(OpKind::Splat { src: v }, target, span));
        }
        let mut v = v;
        if ty.shape.len() < shape.len() {
            let mut padded = vec![1; shape.len() - ty.shape.len()];
            padded.extend_from_slice(&ty.shape);
            let reshaped = Type::tile(ty.scalar, padded.clone());
            v = self.b.push1(OpKind::Reshape { src: v }, reshaped, span);
            if padded == shape {
                return Ok(v);
            }
        }
        Ok(self.b.push1(OpKind::Broadcast { src: v }, target, span))
    }

    /// A truth value: `i1` as is, numbers compared with zero.
    pub(crate) fn truth_value(&mut self, v: Val) -> Result<ValueId> {
        let shape = self.shape_of(&v);
        match self.scalar_of(&v) {
            ScalarType::Ptr(_) => Err(Diagnostic::error(
                v.span,
                format!("{} is not a truth value", self.describe(&v)),
            )),
            _ => self.materialize(v, ScalarType::Num(DType::I1), &shape),
        }
    }

    /// Converts `v` to the declared type `ty` of a variable (or of the memory
    /// a pointer tile points to): broadcasts its shape, converts numbers.
    pub(crate) fn convert_to_declared(
        &mut self,
        v: Val,
        ty: &Type,
        target: Target,
    ) -> Result<ValueId> {
        let shape = self.shape_of(&v);
        if !broadcasts_to(&shape, &ty.shape) {
            return Err(Diagnostic::error(v.span, target.shape_message(&ty.shape, &shape)).with_note(
                "a value broadcasts to a shape when, aligning trailing axes, each of its axes is 1 or equal",
            ));
        }
        let from = self.scalar_of(&v);
        let mismatch = match (from, ty.scalar) {
            (ScalarType::Ptr(a), ScalarType::Ptr(b)) => a != b,
            (ScalarType::Num(_), ScalarType::Num(_)) => false,
            _ => true,
        };
        if mismatch {
            return Err(Diagnostic::error(
                v.span,
                format!(
                    "cannot {} {} of type `{}` with {}",
                    target.verb(),
                    target.name(),
                    ty.scalar,
                    self.describe(&v)
                ),
            ));
        }
        self.materialize(v, ty.scalar, &ty.shape)
    }
}

/// What receives a converted value, for messages.
#[derive(Clone, Copy)]
pub enum Target<'a> {
    Init(&'a str),
    Assign(&'a str),
    Store,
}

impl Target<'_> {
    fn verb(&self) -> &'static str {
        match self {
            Target::Init(_) => "initialize",
            Target::Assign(_) => "assign to",
            Target::Store => "store to",
        }
    }

    fn name(&self) -> String {
        match self {
            Target::Init(n) | Target::Assign(n) => format!("`{n}`"),
            Target::Store => "memory".into(),
        }
    }

    fn shape_message(&self, to: &[usize], from: &[usize]) -> String {
        let from = describe_shape(from);
        let to_desc = |n: &str| {
            if to.is_empty() {
                format!("scalar `{n}`")
            } else {
                format!("`{n}` of shape {}", fmt_shape(to))
            }
        };
        match self {
            Target::Init(n) => format!("cannot initialize {} with {from}", to_desc(n)),
            Target::Assign(n) => format!("cannot assign {from} to {}", to_desc(n)),
            Target::Store if to.is_empty() => {
                format!("cannot store {from} through a scalar pointer")
            }
            Target::Store => format!(
                "cannot store {from} through pointers of shape {}",
                fmt_shape(to)
            ),
        }
    }
}
