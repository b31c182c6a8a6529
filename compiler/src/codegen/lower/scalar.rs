//! Arithmetic on one register: the binary operators and casts of Triton-IR on
//! LLVM values, shared by element-wise ops, reductions and dots.
use super::{Lowering, Result};
use crate::codegen::lower::types::llvm_dtype;
use crate::ir::{BinOp, DType, ScalarType};
use crate::span::Span;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::{FloatPredicate, IntPredicate};

/// The suffix LLVM's overloaded float intrinsics use for `d`.
pub fn float_suffix(d: DType) -> &'static str {
    match d {
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        DType::F64 => "f64",
        _ => "f32",
    }
}

pub fn binary<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    bop: BinOp,
    dtype: DType,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
    span: Span,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &lw.builder;
    if dtype.is_float() {
        let (x, y) = (x.into_float_value(), y.into_float_value());
        let v: FloatValue = match bop {
            BinOp::Add => b.build_float_add(x, y, "")?,
            BinOp::Sub => b.build_float_sub(x, y, "")?,
            BinOp::Mul => b.build_float_mul(x, y, "")?,
            // As Triton's `/`: div.full.f32 (2 ulp) instead of the IEEE division
            // subroutine, which costs a softmax's normalisation more than its loads.
            BinOp::Div if dtype == DType::F32 => {
                let f32t = lw.ctx.f32_type();
                let fn_ty = f32t.fn_type(&[f32t.into(), f32t.into()], false);
                let asm = lw.ctx.create_inline_asm(
                    fn_ty,
                    "div.full.f32 $0, $1, $2;".into(),
                    "=f,f,f".into(),
                    false,
                    false,
                    None,
                    false,
                );
                let call = b.build_indirect_call(fn_ty, asm, &[x.into(), y.into()], "div")?;
                return call.try_as_basic_value().basic().ok_or_else(|| {
                    crate::codegen::CodegenError::Llvm("div.full.f32 returned nothing".into())
                });
            }
            BinOp::Div => b.build_float_div(x, y, "")?,
            BinOp::Rem => b.build_float_rem(x, y, "")?,
            BinOp::Min | BinOp::Max => {
                let name = if bop == BinOp::Min {
                    "minnum"
                } else {
                    "maxnum"
                };
                let name = format!("llvm.{name}.{}", float_suffix(dtype));
                return lw.call_value(&name, x.get_type().into(), &[x.into(), y.into()]);
            }
            _ => return lw.unsupported(format!("{bop:?} on floats"), span),
        };
        return Ok(v.into());
    }
    let (x, y) = (x.into_int_value(), y.into_int_value());
    let v: IntValue = match bop {
        BinOp::Add => b.build_int_add(x, y, "")?,
        BinOp::Sub => b.build_int_sub(x, y, "")?,
        BinOp::Mul => b.build_int_mul(x, y, "")?,
        BinOp::Div => b.build_int_signed_div(x, y, "")?,
        BinOp::Rem => b.build_int_signed_rem(x, y, "")?,
        BinOp::And => b.build_and(x, y, "")?,
        BinOp::Or => b.build_or(x, y, "")?,
        BinOp::Xor => b.build_xor(x, y, "")?,
        BinOp::Shl => b.build_left_shift(x, y, "")?,
        BinOp::Shr => b.build_right_shift(x, y, true, "")?,
        BinOp::Min | BinOp::Max => {
            let pred = if bop == BinOp::Min {
                IntPredicate::SLT
            } else {
                IntPredicate::SGT
            };
            let c = b.build_int_compare(pred, x, y, "")?;
            return Ok(b.build_select(c, x, y, "")?);
        }
    };
    Ok(v.into())
}

pub fn cast<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    x: BasicValueEnum<'ctx>,
    from: ScalarType,
    to: ScalarType,
    span: Span,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &lw.builder;
    let (f, t) = match (from, to) {
        (ScalarType::Ptr(_), ScalarType::Ptr(_)) => return Ok(x),
        (ScalarType::Num(f), ScalarType::Num(t)) => (f, t),
        _ => return lw.unsupported("casts between pointers and numbers", span),
    };
    if f == t {
        return Ok(x);
    }
    let to_ty = llvm_dtype(lw.ctx, t);
    Ok(match (f.is_float(), t.is_float()) {
        (false, false) => {
            let x = x.into_int_value();
            let tt = to_ty.into_int_type();
            if t == DType::I1 {
                b.build_int_compare(IntPredicate::NE, x, x.get_type().const_zero(), "")?
                    .into()
            } else if f == DType::I1 {
                b.build_int_z_extend(x, tt, "")?.into()
            } else if f.bits() < t.bits() {
                b.build_int_s_extend(x, tt, "")?.into()
            } else {
                b.build_int_truncate(x, tt, "")?.into()
            }
        }
        (false, true) => {
            let x = x.into_int_value();
            let tt = to_ty.into_float_type();
            if f == DType::I1 {
                b.build_unsigned_int_to_float(x, tt, "")?.into()
            } else {
                b.build_signed_int_to_float(x, tt, "")?.into()
            }
        }
        (true, false) => {
            let x = x.into_float_value();
            if t == DType::I1 {
                b.build_float_compare(FloatPredicate::UNE, x, x.get_type().const_zero(), "")?
                    .into()
            } else {
                b.build_float_to_signed_int(x, to_ty.into_int_type(), "")?
                    .into()
            }
        }
        (true, true) => {
            let x = x.into_float_value();
            let tt = to_ty.into_float_type();
            let half_pair = matches!(
                (f, t),
                (DType::F16, DType::BF16) | (DType::BF16, DType::F16)
            );
            if half_pair {
                let wide = b.build_float_ext(x, lw.ctx.f32_type(), "")?;
                b.build_float_trunc(wide, tt, "")?.into()
            } else if f.bits() < t.bits() {
                b.build_float_ext(x, tt, "")?.into()
            } else {
                b.build_float_trunc(x, tt, "")?.into()
            }
        }
    })
}
