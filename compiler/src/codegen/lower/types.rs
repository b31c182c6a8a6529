//! LLVM types of IR element types: numbers as themselves (`f16` as `half`,
//! `bf16` as `bfloat`), pointers as `ptr addrspace(1)`; in memory `i1` is a byte.
use crate::ir::{DType, ScalarType};
use inkwell::context::Context;
use inkwell::types::BasicTypeEnum;
use inkwell::AddressSpace;

pub fn llvm_dtype(ctx: &Context, d: DType) -> BasicTypeEnum<'_> {
    match d {
        DType::I1 => ctx.bool_type().into(),
        DType::I8 => ctx.i8_type().into(),
        DType::I16 => ctx.i16_type().into(),
        DType::I32 => ctx.i32_type().into(),
        DType::I64 => ctx.i64_type().into(),
        DType::F16 => ctx.f16_type().into(),
        DType::BF16 => ctx.bf16_type().into(),
        DType::F32 => ctx.f32_type().into(),
        DType::F64 => ctx.f64_type().into(),
    }
}

/// Type of one element held in a register.
pub fn llvm_scalar_type(ctx: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    match s {
        ScalarType::Num(d) => llvm_dtype(ctx, d),
        ScalarType::Ptr(_) => ctx.ptr_type(global_space()).into(),
    }
}

/// Type of one element in memory (`i1` is stored as `i8`).
pub fn llvm_memory_type(ctx: &Context, s: ScalarType) -> BasicTypeEnum<'_> {
    match s {
        ScalarType::Num(DType::I1) => ctx.i8_type().into(),
        other => llvm_scalar_type(ctx, other),
    }
}

/// Bytes of one element in memory.
pub fn memory_bytes(s: ScalarType) -> usize {
    s.memory_bytes()
}

pub fn global_space() -> AddressSpace {
    AddressSpace::from(1u16)
}

pub fn shared_space() -> AddressSpace {
    AddressSpace::from(3u16)
}

/// `<vec x ty>`, or `ty` itself for one element (a group of registers
/// accessed at once).
pub fn vector_or_scalar_type<'ctx>(mem_ty: BasicTypeEnum<'ctx>, vec: usize) -> BasicTypeEnum<'ctx> {
    if vec == 1 {
        mem_ty
    } else {
        match mem_ty {
            BasicTypeEnum::IntType(t) => t.vec_type(vec as u32).into(),
            BasicTypeEnum::FloatType(t) => t.vec_type(vec as u32).into(),
            BasicTypeEnum::PointerType(t) => t.vec_type(vec as u32).into(),
            other => other,
        }
    }
}
