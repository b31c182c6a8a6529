//! Element-wise ops and the ops that only shape tiles: constants, program ids,
//! ranges, splats, broadcasts, reshapes, arithmetic, comparisons, math, casts,
//! pointer arithmetic and selects. Every element-wise op computes its result
//! in its assigned layout, register by register, after fetching its operands
//! in that layout (lazy splats and ranges are built there directly).
use crate::codegen::lower::scalar::{binary, cast, float_suffix};
use crate::codegen::lower::tile::{Slot, Tile};
use crate::codegen::lower::types::{llvm_dtype, llvm_memory_type};
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::reshape_src_layout;
use crate::ir::{CmpPred, Const, DType, Op, OpKind, ScalarType, UnOp};
use crate::span::Span;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FloatValue};
use inkwell::{FloatPredicate, IntPredicate};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let result = lw.result(op)?;
    let layout = lw.assigned_layout(result);
    let result_scalar = lw.scalar_type(result);
    match &op.kind {
        OpKind::Constant { value } => {
            let c = constant(lw, *value, result_scalar, op.span)?;
            if lw.func.ty(result).is_scalar() {
                lw.define(result, Slot::Tile(Tile::scalar(c)));
            } else {
                lw.define(result, Slot::Splat(c));
            }
        }
        OpKind::ProgramId { axis } | OpKind::NumPrograms { axis } => {
            let is_id = matches!(op.kind, OpKind::ProgramId { .. });
            let v = match (*axis, lw.persistent_tile) {
                // A persistent kernel's tile and tile count along x.
                (0, Some((tile, tiles))) => if is_id { tile } else { tiles }.into(),
                _ => {
                    let Some(xyz) = ["x", "y", "z"].get(*axis as usize) else {
                        return lw.unsupported(format!("grid axis {axis}"), op.span);
                    };
                    let reg = if is_id { "ctaid" } else { "nctaid" };
                    let name = format!("llvm.nvvm.read.ptx.sreg.{reg}.{xyz}");
                    lw.call_value(&name, lw.ctx.i32_type().into(), &[])?
                }
            };
            lw.define(result, Slot::Tile(Tile::scalar(v)));
        }
        OpKind::MakeRange { start, end } => {
            if end <= start {
                return lw.unsupported("an empty range", op.span);
            }
            lw.define(result, Slot::Range { start: *start });
        }
        OpKind::Splat { src } => {
            let s = lw.scalar(*src)?;
            lw.define(result, Slot::Splat(s));
        }
        OpKind::Broadcast { src } => {
            let (src_shape, dst_shape) = (lw.shape(*src), lw.shape(result));
            if src_shape.len() != dst_shape.len() {
                return lw.unsupported("a broadcast that changes the rank", op.span);
            }
            let src_regs = lw.value(*src, &layout)?;
            let (sm, dm) = (layout.tile_map(&src_shape), layout.tile_map(&dst_shape));
            let regs = (0..dm.regs())
                .map(|r| {
                    let locals: Vec<usize> = dm
                        .reg_locals(r)
                        .iter()
                        .zip(&src_shape)
                        .map(|(&l, &s)| if s == 1 { 0 } else { l })
                        .collect();
                    src_regs[sm.reg_of_locals(&locals)]
                })
                .collect();
            lw.define_tile(result, layout, regs);
        }
        OpKind::Reshape { src } => {
            let (src_shape, dst_shape) = (lw.shape(*src), lw.shape(result));
            if src_shape.iter().product::<usize>() != dst_shape.iter().product::<usize>() {
                return lw.unsupported("a reshape that changes the element count", op.span);
            }
            let regs = match reshape_src_layout(&layout, &src_shape, &dst_shape) {
                Some(src_layout) => lw.value(*src, &src_layout)?,
                None => {
                    let tile = lw.tile(*src)?;
                    let (ss, ds) = (
                        crate::codegen::lower::staging::row_major_strides(&src_shape),
                        crate::codegen::lower::staging::row_major_strides(&dst_shape),
                    );
                    let n = src_shape.iter().product();
                    crate::codegen::lower::staging::stage(
                        lw,
                        &tile,
                        result_scalar,
                        &src_shape,
                        &ss,
                        &layout,
                        &dst_shape,
                        &ds,
                        n,
                    )?
                }
            };
            lw.define_tile(result, layout, regs);
        }
        OpKind::Binary { op: bop, lhs, rhs } => {
            let (a, b) = (lw.value(*lhs, &layout)?, lw.value(*rhs, &layout)?);
            let dtype = lw.func.dtype(*lhs);
            if lw.scalar_type(*lhs).is_ptr() {
                return lw.unsupported("arithmetic on pointers (use pointer + int)", op.span);
            }
            let mut regs = Vec::with_capacity(a.len());
            for (x, y) in a.into_iter().zip(b) {
                regs.push(binary(lw, *bop, dtype, x, y, op.span)?);
            }
            lw.define_tile(result, layout, regs);
        }
        OpKind::Cmp { pred, lhs, rhs } => {
            let (a, b) = (lw.value(*lhs, &layout)?, lw.value(*rhs, &layout)?);
            let scalar = lw.scalar_type(*lhs);
            let mut regs = Vec::with_capacity(a.len());
            for (x, y) in a.into_iter().zip(b) {
                regs.push(compare(lw, *pred, scalar, x, y, op.span)?);
            }
            lw.define_tile(result, layout, regs);
        }
        OpKind::Unary { op: uop, src } => {
            let a = lw.value(*src, &layout)?;
            let dtype = lw.func.dtype(*src);
            let mut regs = Vec::with_capacity(a.len());
            for x in a {
                regs.push(unary(lw, *uop, dtype, x, op.span)?);
            }
            lw.define_tile(result, layout, regs);
        }
        OpKind::Cast { src } => {
            let a = lw.value(*src, &layout)?;
            let from = lw.scalar_type(*src);
            let mut regs = Vec::with_capacity(a.len());
            for x in a {
                regs.push(cast(lw, x, from, result_scalar, op.span)?);
            }
            lw.define_tile(result, layout, regs);
        }
        OpKind::AddPtr { ptr, offset } => {
            let (p, o) = (lw.value(*ptr, &layout)?, lw.value(*offset, &layout)?);
            let elem = llvm_memory_type(lw.ctx, ScalarType::Num(lw.func.dtype(*ptr)));
            let mut regs = Vec::with_capacity(p.len());
            for (x, y) in p.into_iter().zip(o) {
                let g = unsafe {
                    lw.builder.build_gep(
                        elem,
                        x.into_pointer_value(),
                        &[y.into_int_value()],
                        "addptr",
                    )?
                };
                regs.push(g.into());
            }
            lw.define_tile(result, layout, regs);
        }
        OpKind::Select {
            cond,
            on_true,
            on_false,
        } => {
            let c = lw.value(*cond, &layout)?;
            let t = lw.value(*on_true, &layout)?;
            let f = lw.value(*on_false, &layout)?;
            let mut regs = Vec::with_capacity(c.len());
            for ((c, t), f) in c.into_iter().zip(t).zip(f) {
                regs.push(
                    lw.builder
                        .build_select(c.into_int_value(), t, f, "select")?,
                );
            }
            lw.define_tile(result, layout, regs);
        }
        _ => return lw.unsupported("this op as element-wise", op.span),
    }
    Ok(())
}

fn constant<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    value: Const,
    scalar: ScalarType,
    span: Span,
) -> Result<BasicValueEnum<'ctx>> {
    let ScalarType::Num(d) = scalar else {
        return lw.unsupported("pointer constants", span);
    };
    let ty = llvm_dtype(lw.ctx, d);
    Ok(match (value, ty) {
        (Const::Int(i), BasicTypeEnum::IntType(t)) => t.const_int(i as u64, true).into(),
        (Const::Bool(b), BasicTypeEnum::IntType(t)) => t.const_int(b as u64, false).into(),
        (Const::Int(i), BasicTypeEnum::FloatType(t)) => t.const_float(i as f64).into(),
        (Const::Float(f), BasicTypeEnum::FloatType(t)) => t.const_float(f).into(),
        (Const::Bool(b), BasicTypeEnum::FloatType(t)) => t.const_float(b as u8 as f64).into(),
        (Const::Float(f), BasicTypeEnum::IntType(t)) => t.const_int(f as i64 as u64, true).into(),
        _ => return lw.unsupported("this constant", span),
    })
}

fn compare<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    pred: CmpPred,
    scalar: ScalarType,
    x: BasicValueEnum<'ctx>,
    y: BasicValueEnum<'ctx>,
    span: Span,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &lw.builder;
    match scalar {
        ScalarType::Ptr(_) => lw.unsupported("comparing pointers", span),
        ScalarType::Num(d) if d.is_float() => {
            let p = match pred {
                CmpPred::Lt => FloatPredicate::OLT,
                CmpPred::Le => FloatPredicate::OLE,
                CmpPred::Gt => FloatPredicate::OGT,
                CmpPred::Ge => FloatPredicate::OGE,
                CmpPred::Eq => FloatPredicate::OEQ,
                CmpPred::Ne => FloatPredicate::UNE,
            };
            Ok(
                b.build_float_compare(p, x.into_float_value(), y.into_float_value(), "")?
                    .into(),
            )
        }
        ScalarType::Num(d) => {
            // `bool` compares as 0/1 (unsigned); other ints are signed.
            let unsigned = d == DType::I1;
            let p = match (pred, unsigned) {
                (CmpPred::Lt, false) => IntPredicate::SLT,
                (CmpPred::Le, false) => IntPredicate::SLE,
                (CmpPred::Gt, false) => IntPredicate::SGT,
                (CmpPred::Ge, false) => IntPredicate::SGE,
                (CmpPred::Lt, true) => IntPredicate::ULT,
                (CmpPred::Le, true) => IntPredicate::ULE,
                (CmpPred::Gt, true) => IntPredicate::UGT,
                (CmpPred::Ge, true) => IntPredicate::UGE,
                (CmpPred::Eq, _) => IntPredicate::EQ,
                (CmpPred::Ne, _) => IntPredicate::NE,
            };
            Ok(
                b.build_int_compare(p, x.into_int_value(), y.into_int_value(), "")?
                    .into(),
            )
        }
    }
}

fn unary<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    uop: UnOp,
    dtype: DType,
    x: BasicValueEnum<'ctx>,
    span: Span,
) -> Result<BasicValueEnum<'ctx>> {
    let b = &lw.builder;
    if dtype.is_int() {
        let x = x.into_int_value();
        let t = x.get_type();
        return Ok(match uop {
            UnOp::Neg => b.build_int_neg(x, "")?.into(),
            UnOp::Not => b.build_not(x, "")?.into(),
            UnOp::Abs => {
                let neg = b.build_int_neg(x, "")?;
                let is_neg = b.build_int_compare(IntPredicate::SLT, x, t.const_zero(), "")?;
                b.build_select(is_neg, neg, x, "")?
            }
            _ => return lw.unsupported(format!("{uop:?} on integers"), span),
        });
    }
    let x = x.into_float_value();
    match uop {
        UnOp::Neg => return Ok(b.build_float_neg(x, "")?.into()),
        UnOp::Not => return lw.unsupported("`!` on floats", span),
        UnOp::Abs | UnOp::Sqrt => {
            let name = if uop == UnOp::Abs { "fabs" } else { "sqrt" };
            let name = format!("llvm.{name}.{}", float_suffix(dtype));
            return lw.call_value(&name, x.get_type().into(), &[x.into()]);
        }
        _ => {}
    }
    if dtype == DType::F64 {
        use crate::codegen::lower::f64_math;
        return Ok(match uop {
            UnOp::Exp => f64_math::exp(lw, x)?,
            UnOp::Exp2 => f64_math::exp2(lw, x)?,
            UnOp::Log => f64_math::log(lw, x)?,
            _ => return lw.unsupported(format!("{uop:?} on f64"), span),
        }
        .into());
    }
    // Transcendentals run in f32 with the fast hardware approximations.
    let f32t = lw.ctx.f32_type();
    let xf = if dtype == DType::F32 {
        x
    } else {
        b.build_float_ext(x, f32t, "")?
    };
    let approx = |name: &str, v: FloatValue<'ctx>| -> Result<FloatValue<'ctx>> {
        Ok(lw
            .call_value(
                &format!("llvm.nvvm.{name}.approx.f"),
                f32t.into(),
                &[v.into()],
            )?
            .into_float_value())
    };
    // `ex2.approx.ftz`: results below 2^-126 are 0, as with `__expf` under
    // fast math. Without `.ftz` ptxas brackets every `MUFU.EX2` with a
    // compare and two predicated multiplies to produce subnormals: three
    // instructions per element, a third of a softmax-heavy loop's issue.
    let ex2 = |v: FloatValue<'ctx>| -> Result<FloatValue<'ctx>> {
        Ok(lw
            .call_value("llvm.nvvm.ex2.approx.ftz.f", f32t.into(), &[v.into()])?
            .into_float_value())
    };
    let r = match uop {
        UnOp::Exp => {
            let scaled = b.build_float_mul(xf, f32t.const_float(std::f64::consts::LOG2_E), "")?;
            ex2(scaled)?
        }
        UnOp::Exp2 => ex2(xf)?,
        UnOp::Log => {
            let l2 = approx("lg2", xf)?;
            b.build_float_mul(l2, f32t.const_float(std::f64::consts::LN_2), "")?
        }
        UnOp::Sin => approx("sin", xf)?,
        UnOp::Cos => approx("cos", xf)?,
        _ => return lw.unsupported(format!("{uop:?}"), span),
    };
    Ok(if dtype == DType::F32 {
        r.into()
    } else {
        b.build_float_trunc(r, x.get_type(), "")?.into()
    })
}
