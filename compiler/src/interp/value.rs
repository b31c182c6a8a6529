//! Runtime values: tiles of scalars (a scalar is a tile of shape `[]`), stored
//! as one typed `Vec` per tile so per-element work stays cheap.
//!
//! Storage per element type: `i1` → `Bool`; `i8`..`i64` → `Int` holding the
//! value sign-extended from its width (so wrapping is a re-normalisation);
//! `f16`/`bf16`/`f32` → `F32` holding values exactly representable in the type;
//! `f64` → `F64`; pointers → `Ptr` (addresses).

use crate::ir::{DType, ScalarType, Type};
use half::{bf16, f16};

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Data {
    Bool(Vec<bool>),
    Int(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    Ptr(Vec<u64>),
}

/// One element, for the rare per-lane paths (arguments, atomics, constants).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
    Ptr(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Tile {
    pub scalar: ScalarType,
    pub shape: Vec<usize>,
    pub data: Data,
}

impl Tile {
    pub fn ty(&self) -> Type {
        Type::tile(self.scalar, self.shape.clone())
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn dtype(&self) -> DType {
        self.scalar.dtype()
    }
}

impl Data {
    pub fn len(&self) -> usize {
        match self {
            Data::Bool(v) => v.len(),
            Data::Int(v) => v.len(),
            Data::F32(v) => v.len(),
            Data::F64(v) => v.len(),
            Data::Ptr(v) => v.len(),
        }
    }

    /// `n` copies of `x`, stored the way `scalar` is.
    pub fn splat(scalar: ScalarType, x: Scalar, n: usize) -> Result<Data, String> {
        Ok(match to_storage(scalar, x)? {
            Scalar::Bool(b) => Data::Bool(vec![b; n]),
            Scalar::Int(i) => Data::Int(vec![i; n]),
            Scalar::Float(f) if scalar == ScalarType::Num(DType::F64) => Data::F64(vec![f; n]),
            Scalar::Float(f) => Data::F32(vec![f as f32; n]),
            Scalar::Ptr(p) => Data::Ptr(vec![p; n]),
        })
    }

    pub fn get(&self, i: usize) -> Scalar {
        match self {
            Data::Bool(v) => Scalar::Bool(v[i]),
            Data::Int(v) => Scalar::Int(v[i]),
            Data::F32(v) => Scalar::Float(v[i] as f64),
            Data::F64(v) => Scalar::Float(v[i]),
            Data::Ptr(v) => Scalar::Ptr(v[i]),
        }
    }

    /// Overwrites element `i` with `x`, which must already be in stored form.
    pub fn set(&mut self, i: usize, x: Scalar) {
        match (self, x) {
            (Data::Bool(v), Scalar::Bool(b)) => v[i] = b,
            (Data::Int(v), Scalar::Int(n)) => v[i] = n,
            (Data::F32(v), Scalar::Float(f)) => v[i] = f as f32,
            (Data::F64(v), Scalar::Float(f)) => v[i] = f,
            (Data::Ptr(v), Scalar::Ptr(p)) => v[i] = p,
            (d, x) => debug_assert!(false, "{x:?} stored into {}", d.kind_name()),
        }
    }

    /// `n` copies of element `i`.
    pub fn repeat(&self, i: usize, n: usize) -> Data {
        match self {
            Data::Bool(v) => Data::Bool(vec![v[i]; n]),
            Data::Int(v) => Data::Int(vec![v[i]; n]),
            Data::F32(v) => Data::F32(vec![v[i]; n]),
            Data::F64(v) => Data::F64(vec![v[i]; n]),
            Data::Ptr(v) => Data::Ptr(vec![v[i]; n]),
        }
    }

    /// Elements at `indices`, in that order (broadcasts, transposes).
    pub fn gather(&self, indices: &[usize]) -> Data {
        fn pick<T: Copy>(v: &[T], indices: &[usize]) -> Vec<T> {
            // An index loop: cheaper than iterator adapters in debug builds.
            let mut out = Vec::with_capacity(indices.len());
            for k in 0..indices.len() {
                out.push(v[indices[k]]);
            }
            out
        }
        match self {
            Data::Bool(v) => Data::Bool(pick(v, indices)),
            Data::Int(v) => Data::Int(pick(v, indices)),
            Data::F32(v) => Data::F32(pick(v, indices)),
            Data::F64(v) => Data::F64(pick(v, indices)),
            Data::Ptr(v) => Data::Ptr(pick(v, indices)),
        }
    }

    pub fn kind_name(&self) -> &'static str {
        match self {
            Data::Bool(_) => "bool",
            Data::Int(_) => "int",
            Data::F32(_) => "f32",
            Data::F64(_) => "f64",
            Data::Ptr(_) => "pointer",
        }
    }
}

/// Converts `x` to the exact stored form of `scalar` (wrapping ints to their
/// width, rounding floats to their precision), or says why it cannot be one.
pub(crate) fn to_storage(scalar: ScalarType, x: Scalar) -> Result<Scalar, String> {
    let d = scalar.dtype();
    Ok(match (scalar, x) {
        (ScalarType::Ptr(_), Scalar::Ptr(p)) => Scalar::Ptr(p),
        (ScalarType::Num(DType::I1), Scalar::Bool(b)) => Scalar::Bool(b),
        (ScalarType::Num(DType::I1), Scalar::Int(i)) => Scalar::Bool(i != 0),
        (ScalarType::Num(_), Scalar::Int(i)) if d.is_int() => Scalar::Int(wrap_int(i, d)),
        (ScalarType::Num(_), Scalar::Int(i)) => Scalar::Float(round_f64(i as f64, d)),
        (ScalarType::Num(_), Scalar::Float(f)) if d.is_float() => Scalar::Float(round_f64(f, d)),
        (scalar, x) => return Err(format!("{x:?} cannot be a value of type {scalar}")),
    })
}

/// `v` wrapped to the width of the int type `d` and sign-extended back.
pub(crate) fn wrap_int(v: i64, d: DType) -> i64 {
    let bits = d.bits();
    if bits >= 64 || bits <= 1 {
        return v;
    }
    let shift = 64 - bits;
    (v << shift) >> shift
}

/// Wraps every element to the width of `d` (no-op for `i64`).
pub(crate) fn wrap_ints(v: &mut [i64], d: DType) {
    if d.bits() < 64 {
        for x in v.iter_mut() {
            *x = wrap_int(*x, d);
        }
    }
}

/// Rounds f32 results to `f16`/`bf16` when that is the type (no-op for `f32`):
/// the GPU computes half ops in f32 and rounds each result.
pub(crate) fn round_f32s(v: &mut [f32], d: DType) {
    match d {
        DType::F16 => v.iter_mut().for_each(|x| *x = f16::from_f32(*x).to_f32()),
        DType::BF16 => v.iter_mut().for_each(|x| *x = bf16::from_f32(*x).to_f32()),
        _ => {}
    }
}

/// `x` rounded (once, from f64) to the float type `d`, returned as f64.
pub(crate) fn round_f64(x: f64, d: DType) -> f64 {
    // `half`'s own f64 conversions round twice (through f32); rounding to odd
    // first keeps the second rounding exact.
    match d {
        DType::F16 => f16::from_f32(f64_to_f32_round_odd(x)).to_f64(),
        DType::BF16 => bf16::from_f32(f64_to_f32_round_odd(x)).to_f64(),
        DType::F32 => x as f32 as f64,
        _ => x,
    }
}

/// `x` truncated to f32 with the last bit set when inexact ("round to odd"):
/// rounding that to a type at least two bits narrower than f32 equals rounding
/// `x` directly.
fn f64_to_f32_round_odd(x: f64) -> f32 {
    let y = x as f32;
    if y as f64 == x || x.is_nan() {
        return y;
    }
    let mut bits = y.to_bits();
    if (y as f64).abs() > x.abs() {
        bits -= 1; // rounded away from zero: step back toward it
    }
    f32::from_bits(bits | 1)
}

/// Row-major strides of `shape` (in elements).
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ints_wrap_to_their_width() {
        assert_eq!(wrap_int(200, DType::I8), -56);
        assert_eq!(wrap_int(i32::MAX as i64 + 1, DType::I32), i32::MIN as i64);
        assert_eq!(wrap_int(-1, DType::I16), -1);
        assert_eq!(wrap_int(i64::MIN, DType::I64), i64::MIN);
    }

    #[test]
    fn floats_round_to_their_type() {
        let mut v = vec![1.0 + 1.0 / 4096.0, 65520.0];
        round_f32s(&mut v, DType::F16);
        assert_eq!(v, vec![1.0, f32::INFINITY]);
        assert_eq!(round_f64(1.0 + 1.0 / 512.0, DType::BF16), 1.0);
        // Just above an f16 halfway point, by less than f32 can hold: rounds up.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        assert_eq!(round_f64(x, DType::F16), 1.0 + 2f64.powi(-10));
        assert_eq!(round_f64(-x, DType::F16), -1.0 - 2f64.powi(-10));
        assert_eq!(round_f64(1.0 + 2f64.powi(-11), DType::F16), 1.0);
        assert_eq!(round_f64(1e300, DType::F16), f64::INFINITY);
    }

    #[test]
    fn storage_conversions() {
        let f16s = ScalarType::Num(DType::F16);
        assert_eq!(to_storage(f16s, Scalar::Int(3)), Ok(Scalar::Float(3.0)));
        assert!(to_storage(ScalarType::Num(DType::I32), Scalar::Float(1.0)).is_err());
        assert_eq!(strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(strides(&[]), Vec::<usize>::new());
    }
}

/// The Rust element type of one `Data` variant, to write code once for all.
pub(crate) trait Stored: Copy + Default {
    fn slice(d: &Data) -> Option<&[Self]>;
    fn into_data(v: Vec<Self>) -> Data;
}

macro_rules! stored {
    ($t:ty, $variant:ident) => {
        impl Stored for $t {
            fn slice(d: &Data) -> Option<&[Self]> {
                match d {
                    Data::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn into_data(v: Vec<Self>) -> Data {
                Data::$variant(v)
            }
        }
    };
}

stored!(bool, Bool);
stored!(i64, Int);
stored!(f32, F32);
stored!(f64, F64);
stored!(u64, Ptr);
