//! What an expression lowers to: an IR value, or a literal not yet typed.

use super::types::int_literal_dtype;
use super::Lowerer;
use crate::ir::{DType, ScalarType, Type, ValueId};
use crate::span::Span;

/// Literals stay "weak" until they meet a typed operand: `x * 2` keeps the type
/// of `x` (so a half tile stays half), and literal arithmetic folds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Value(ValueId),
    Int(i64),
    Float(f64),
}

/// A lowered expression and the span of its source.
#[derive(Clone, Copy, Debug)]
pub struct Val {
    pub op: Operand,
    pub span: Span,
}

impl Val {
    pub fn value(v: ValueId, span: Span) -> Val {
        Val {
            op: Operand::Value(v),
            span,
        }
    }

    pub fn is_weak(&self) -> bool {
        !matches!(self.op, Operand::Value(_))
    }
}

impl Lowerer {
    /// The IR type, or `None` for a weak literal.
    pub(crate) fn type_of(&self, v: &Val) -> Option<Type> {
        match v.op {
            Operand::Value(id) => Some(self.b.ty(id).clone()),
            _ => None,
        }
    }

    /// Weak literals are scalars.
    pub(crate) fn shape_of(&self, v: &Val) -> Vec<usize> {
        self.type_of(v).map(|t| t.shape).unwrap_or_default()
    }

    /// The element type; a weak literal takes its type when alone
    /// (`i32`/`i64` for ints, `f32` for floats, even without an `f` suffix).
    pub(crate) fn scalar_of(&self, v: &Val) -> ScalarType {
        match v.op {
            Operand::Value(id) => self.b.ty(id).scalar,
            Operand::Int(i) => ScalarType::Num(int_literal_dtype(i)),
            Operand::Float(_) => ScalarType::Num(DType::F32),
        }
    }

    /// `i32`, `f16*[64, 32]`, "int literal" — for messages.
    pub(crate) fn describe(&self, v: &Val) -> String {
        match v.op {
            Operand::Value(id) => format!("`{}`", self.b.ty(id)),
            Operand::Int(_) => "an integer literal".into(),
            Operand::Float(_) => "a float literal".into(),
        }
    }
}
