//! C types in Triton-C: the IR type of a written `TypeSpec`, the usual arithmetic
//! conversions between element types, and the accumulator type of `@`.

use crate::diagnostics::{Diagnostic, Result};
use crate::front::ast::{BaseType, TypeSpec};
use crate::ir::{DType, ScalarType};

/// The number type of a base type; `void` has none.
pub fn dtype_of_base(base: BaseType) -> Option<DType> {
    Some(match base {
        BaseType::Void => return None,
        BaseType::Bool => DType::I1,
        BaseType::Int8 => DType::I8,
        BaseType::Int16 => DType::I16,
        BaseType::Int32 => DType::I32,
        BaseType::Int64 => DType::I64,
        BaseType::Half => DType::F16,
        BaseType::BFloat16 => DType::BF16,
        BaseType::Float => DType::F32,
        BaseType::Double => DType::F64,
    })
}

/// The element type of a written type: a number or a pointer to numbers.
pub fn scalar_of(ty: &TypeSpec) -> Result<ScalarType> {
    let dtype = dtype_of_base(ty.base)
        .ok_or_else(|| Diagnostic::error(ty.span, "`void` values and `void*` are not supported"))?;
    match ty.pointer_depth {
        0 => Ok(ScalarType::Num(dtype)),
        1 => Ok(ScalarType::Ptr(dtype)),
        n => Err(Diagnostic::error(
            ty.span,
            format!("pointers to pointers are not supported ({n} levels of `*`)"),
        )),
    }
}

/// Rank in the usual arithmetic conversions: any float beats any int, wider wins.
fn rank(d: DType) -> u32 {
    match d {
        DType::I1 => 0,
        DType::I8 => 1,
        DType::I16 => 2,
        DType::I32 => 3,
        DType::I64 => 4,
        DType::F16 | DType::BF16 => 5,
        DType::F32 => 6,
        DType::F64 => 7,
    }
}

/// The type two operands are converted to before an element-wise op.
/// Mixing `f16` and `bf16` gives `f32` (neither holds the other).
pub fn common_dtype(a: DType, b: DType) -> DType {
    if a == b {
        return a;
    }
    if matches!(
        (a, b),
        (DType::F16, DType::BF16) | (DType::BF16, DType::F16)
    ) {
        return DType::F32;
    }
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

/// A literal not typed yet.
#[derive(Clone, Copy, Debug)]
pub enum WeakLit {
    Int(i64),
    Float,
}

/// The type a "weak" literal takes next to an operand of type `other`: an int
/// literal adopts any number type it fits in (arithmetic on `bool` is done in
/// `i32`; a literal too large for `other` widens like C), a float literal
/// adopts float types and turns ints into `f32`.
pub fn weak_with(literal: WeakLit, other: DType) -> DType {
    match literal {
        WeakLit::Int(v) if other.is_int() => {
            let other = if other == DType::I1 {
                DType::I32
            } else {
                other
            };
            if fits(v, other) {
                other
            } else {
                common_dtype(other, int_literal_dtype(v))
            }
        }
        WeakLit::Int(_) => other,
        WeakLit::Float if other.is_float() => other,
        WeakLit::Float => DType::F32,
    }
}

/// Whether `v` is in the range of the integer type `d`.
fn fits(v: i64, d: DType) -> bool {
    match d {
        DType::I8 => i8::try_from(v).is_ok(),
        DType::I16 => i16::try_from(v).is_ok(),
        DType::I32 => i32::try_from(v).is_ok(),
        _ => true,
    }
}

/// The type of a lone int literal: `i32` when it fits, else `i64`.
pub fn int_literal_dtype(value: i64) -> DType {
    if i32::try_from(value).is_ok() {
        DType::I32
    } else {
        DType::I64
    }
}

/// Accumulator (and result) type of `a @ b` for inputs of type `input`.
pub fn dot_acc_dtype(input: DType) -> Option<DType> {
    match input {
        DType::F16 | DType::BF16 | DType::F32 => Some(DType::F32),
        DType::F64 => Some(DType::F64),
        DType::I8 => Some(DType::I32),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usual_conversions() {
        assert_eq!(common_dtype(DType::I32, DType::F16), DType::F16);
        assert_eq!(common_dtype(DType::I8, DType::I64), DType::I64);
        assert_eq!(common_dtype(DType::F16, DType::BF16), DType::F32);
        assert_eq!(common_dtype(DType::F64, DType::F32), DType::F64);
        assert_eq!(common_dtype(DType::I1, DType::I8), DType::I8);
    }

    #[test]
    fn weak_literals() {
        assert_eq!(weak_with(WeakLit::Int(2), DType::F16), DType::F16);
        assert_eq!(weak_with(WeakLit::Float, DType::F16), DType::F16);
        assert_eq!(weak_with(WeakLit::Float, DType::I32), DType::F32);
        assert_eq!(weak_with(WeakLit::Int(1), DType::I1), DType::I32);
        assert_eq!(weak_with(WeakLit::Int(100), DType::I8), DType::I8);
        assert_eq!(weak_with(WeakLit::Int(300), DType::I8), DType::I32);
        assert_eq!(
            weak_with(WeakLit::Int(5_000_000_000), DType::I32),
            DType::I64
        );
        assert_eq!(int_literal_dtype(1 << 40), DType::I64);
    }
}
