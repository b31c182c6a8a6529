//! Triton-IR types: a scalar element type and a (possibly empty) tile shape.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Numeric element types. Integers are signed (C semantics); `I1` is `bool`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DType {
    I1,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl DType {
    pub fn bits(self) -> u32 {
        match self {
            DType::I1 => 1,
            DType::I8 => 8,
            DType::I16 | DType::F16 | DType::BF16 => 16,
            DType::I32 | DType::F32 => 32,
            DType::I64 | DType::F64 => 64,
        }
    }

    /// Bytes one element takes in memory (`bool` is stored as one byte).
    pub fn size_bytes(self) -> usize {
        (self.bits() as usize).div_ceil(8)
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float()
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::I1 => "i1",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
}

/// An element: a number, or a pointer (global memory) to numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarType {
    Num(DType),
    Ptr(DType),
}

impl ScalarType {
    /// Bytes of one element in memory (pointers are 64-bit).
    pub fn memory_bytes(self) -> usize {
        match self {
            ScalarType::Num(d) => d.size_bytes(),
            ScalarType::Ptr(_) => 8,
        }
    }

    pub fn is_ptr(self) -> bool {
        matches!(self, ScalarType::Ptr(_))
    }

    /// The number type, or for a pointer its pointee.
    pub fn dtype(self) -> DType {
        match self {
            ScalarType::Num(d) | ScalarType::Ptr(d) => d,
        }
    }
}

/// The type of an IR value: element type and tile shape. An empty shape is a
/// scalar (every thread of the program holds the same value).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Type {
    pub scalar: ScalarType,
    pub shape: Vec<usize>,
}

impl Type {
    pub fn scalar(scalar: ScalarType) -> Self {
        Type {
            scalar,
            shape: Vec::new(),
        }
    }

    pub fn num(dtype: DType) -> Self {
        Type::scalar(ScalarType::Num(dtype))
    }

    pub fn ptr(pointee: DType) -> Self {
        Type::scalar(ScalarType::Ptr(pointee))
    }

    pub fn tile(scalar: ScalarType, shape: Vec<usize>) -> Self {
        Type { scalar, shape }
    }

    pub fn is_scalar(&self) -> bool {
        self.shape.is_empty()
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn num_elements(&self) -> usize {
        self.shape.iter().product()
    }

    /// Same shape, other element type.
    pub fn with_scalar(&self, scalar: ScalarType) -> Type {
        Type {
            scalar,
            shape: self.shape.clone(),
        }
    }
}

impl fmt::Display for ScalarType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarType::Num(d) => write!(f, "{}", d.name()),
            ScalarType::Ptr(d) => write!(f, "{}*", d.name()),
        }
    }
}

impl fmt::Display for Type {
    /// `f32`, `f32*`, `i32[128]`, `f16*[64, 32]`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.scalar)?;
        if !self.shape.is_empty() {
            let dims: Vec<String> = self.shape.iter().map(|d| d.to_string()).collect();
            write!(f, "[{}]", dims.join(", "))?;
        }
        Ok(())
    }
}
