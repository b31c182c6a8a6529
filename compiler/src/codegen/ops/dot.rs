//! `acc + a @ b` on FMA units, for the dots [`crate::codegen::tensor_cores::mma`] does not take
//! (fp32 or integer inputs, tiles not made of whole mma instructions). `a` and `b` are staged in
//! shared memory (rows padded); then each thread, for every `k`, reads the
//! rows of `a` and the columns of `b` its accumulator registers need and
//! accumulates with `fmuladd` in the accumulator's layout.
use crate::analysis::scratch::{fma_dot_stage, FmaDotStage};
use crate::codegen::lower::staging::{linear, to_memory};
use crate::codegen::lower::types::llvm_memory_type;
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::Layout;
use crate::ir::{DType, Op, OpKind, ScalarType, ValueId};
use inkwell::values::{BasicValueEnum, IntValue};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    if let Some(cfg) = crate::analysis::mma::planned_config(lw.func, op) {
        return crate::codegen::tensor_cores::mma::lower(lw, op, &cfg);
    }
    let OpKind::Dot { a, b, acc } = &op.kind else {
        return lw.unsupported("this op as a dot", op.span);
    };
    let result = lw.result(op)?;
    let (sa, sb, sc) = (lw.shape(*a), lw.shape(*b), lw.shape(result));
    if sa.len() != 2
        || sb.len() != 2
        || sc.len() != 2
        || sa[1] != sb[0]
        || sa[0] != sc[0]
        || sb[1] != sc[1]
    {
        return lw.unsupported(
            "a dot whose operands are not [M, K] @ [K, N] + [M, N]",
            op.span,
        );
    }
    let k = sa[1];
    let in_ty = lw.scalar_type(*a);
    let acc_dtype = lw.func.dtype(result);
    if in_ty.is_ptr() || lw.scalar_type(*b) != in_ty {
        return lw.unsupported("a dot of these element types", op.span);
    }
    let layout = match lw.assigned_layout(result) {
        Layout::Blocked(b) => Layout::Blocked(b),
        _ => lw.layouts.canonical(&sc),
    };
    let mut acc_regs = lw.value(*acc, &layout)?;
    let cmap = layout.tile_map(&sc);

    // Stage a ([m][k + pad]) and b ([k][n + pad]) in shared memory.
    let Some(FmaDotStage {
        row_a,
        row_b,
        b_offset,
        bytes,
    }) = fma_dot_stage(&sa, &sb, lw.mem_bytes(*a))
    else {
        return lw.unsupported("a dot whose operands are not 2-D", op.span);
    };
    lw.smem.claim(bytes)?;
    lw.barrier_before_writing()?;
    write_tile(lw, *a, &[row_a, 1], 0)?;
    write_tile(lw, *b, &[row_b, 1], b_offset)?;
    lw.barrier()?;

    let elem_ty = llvm_memory_type(lw.ctx, in_ty);
    let base = lw.thread_base(&cmap)?;
    let (rows, cols) = (&cmap.axes[0], &cmap.axes[1]);
    let row_idx: Vec<IntValue> = (0..rows.regs())
        .map(|l| {
            lw.builder
                .build_int_add(base[0], lw.i32_const(rows.offset(l) as u64), "row")
        })
        .collect::<std::result::Result<_, _>>()?;
    let col_idx: Vec<IntValue> = (0..cols.regs())
        .map(|l| {
            lw.builder
                .build_int_add(base[1], lw.i32_const(cols.offset(l) as u64), "col")
        })
        .collect::<std::result::Result<_, _>>()?;
    for kk in 0..k {
        let mut a_vals = Vec::with_capacity(row_idx.len());
        for r in &row_idx {
            let at = lw
                .builder
                .build_int_mul(*r, lw.i32_const(row_a as u64), "")?;
            let at = lw.builder.build_int_add(at, lw.i32_const(kk as u64), "")?;
            let p = lw.smem_elem_ptr(0, elem_ty, at)?;
            let v = lw.builder.build_load(elem_ty, p, "a")?;
            a_vals.push(widen(lw, v, in_ty.dtype(), acc_dtype, op.span)?);
        }
        let mut b_vals = Vec::with_capacity(col_idx.len());
        for c in &col_idx {
            let at = lw
                .builder
                .build_int_add(*c, lw.i32_const((kk * row_b) as u64), "")?;
            let p = lw.smem_elem_ptr(b_offset, elem_ty, at)?;
            let v = lw.builder.build_load(elem_ty, p, "b")?;
            b_vals.push(widen(lw, v, in_ty.dtype(), acc_dtype, op.span)?);
        }
        for (r, c) in acc_regs.iter_mut().enumerate() {
            let l = cmap.reg_locals(r);
            *c = multiply_add(lw, acc_dtype, a_vals[l[0]], b_vals[l[1]], *c)?;
        }
    }
    lw.define_tile(result, layout, acc_regs);
    Ok(())
}

/// Writes tile `v` into shared memory at byte `offset` with element strides `strides`.
fn write_tile(
    lw: &mut Lowering<'_, '_>,
    v: ValueId,
    strides: &[usize],
    offset: usize,
) -> Result<()> {
    let tile = lw.tile(v)?;
    let shape = lw.shape(v);
    let scalar = lw.scalar_type(v);
    let elem_ty = llvm_memory_type(lw.ctx, scalar);
    let idx = lw.indices(&tile.layout, &shape)?;
    for (reg, i) in tile.regs.iter().zip(&idx) {
        let at = linear(lw, i, strides)?;
        let p = lw.smem_elem_ptr(offset, elem_ty, at)?;
        let val = to_memory(lw, *reg, scalar)?;
        lw.builder.build_store(p, val)?;
    }
    Ok(())
}

/// An input element converted to the accumulator's type.
fn widen<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    v: BasicValueEnum<'ctx>,
    from: DType,
    to: DType,
    span: crate::span::Span,
) -> Result<BasicValueEnum<'ctx>> {
    crate::codegen::lower::scalar::cast(lw, v, ScalarType::Num(from), ScalarType::Num(to), span)
}

fn multiply_add<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    dtype: DType,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
    c: BasicValueEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    if dtype.is_float() {
        let name = format!(
            "llvm.fmuladd.{}",
            crate::codegen::lower::scalar::float_suffix(dtype)
        );
        return lw.call_value(&name, c.get_type(), &[a, b, c]);
    }
    let p = lw
        .builder
        .build_int_mul(a.into_int_value(), b.into_int_value(), "")?;
    Ok(lw.builder.build_int_add(p, c.into_int_value(), "")?.into())
}
