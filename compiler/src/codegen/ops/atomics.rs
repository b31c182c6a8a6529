//! Atomic read-modify-write and compare-and-swap on global memory, one
//! `atomicrmw`/`cmpxchg` per element, done only by the element's owner thread
//! and where the mask is true (a branch around each). Masked-off elements get
//! zero as their old value; threads holding replicas (and, for a scalar,
//! every thread but thread 0) get the owner's old value through shared memory.
use crate::codegen::lower::loops::current_block;
use crate::codegen::lower::{Lowering, Result};
use crate::ir::{AtomicOp, DType, Op, OpKind};
use inkwell::types::BasicType;
use inkwell::values::{BasicValueEnum, IntValue};
use inkwell::{AtomicOrdering, AtomicRMWBinOp};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let result = lw.result(op)?;
    let layout = lw.assigned_layout(result);
    let shape = lw.shape(result);
    let ty = lw.reg_type(result);
    let dtype = lw.func.dtype(result);
    let owner = lw.owner_pred(&layout, &shape)?;
    let (ptr, mask) = match &op.kind {
        OpKind::AtomicRmw { ptr, mask, .. } => (*ptr, *mask),
        OpKind::AtomicCas { ptr, .. } => (*ptr, None),
        _ => return lw.unsupported("this op as an atomic", op.span),
    };
    if dtype == crate::ir::DType::I1 {
        return lw.unsupported("atomics on bool", op.span);
    }
    let ptrs = lw.value(ptr, &layout)?;
    let masks = match mask {
        Some(m) => Some(lw.value(m, &layout)?),
        None => None,
    };
    let mut regs = Vec::with_capacity(ptrs.len());
    match &op.kind {
        OpKind::AtomicRmw { op: aop, value, .. } => {
            let bin = match (aop, dtype.is_float()) {
                (AtomicOp::Add, false) => Some(AtomicRMWBinOp::Add),
                (AtomicOp::Max, false) => Some(AtomicRMWBinOp::Max),
                (AtomicOp::Min, false) => Some(AtomicRMWBinOp::Min),
                (AtomicOp::Exchange, false) => Some(AtomicRMWBinOp::Xchg),
                (AtomicOp::Add, true) if matches!(dtype, DType::F32 | DType::F64) => None,
                _ => return lw.unsupported(format!("atomic {aop:?} on {}", dtype.name()), op.span),
            };
            let vals = lw.value(*value, &layout)?;
            for (i, p) in ptrs.iter().enumerate() {
                let pred = lw.and_preds(masks.as_ref().map(|m| m[i].into_int_value()), owner)?;
                let (p, v) = (p.into_pointer_value(), vals[i]);
                let old = guarded(lw, pred, ty, |lw| match bin {
                    Some(bin) => Ok(lw
                        .builder
                        .build_atomicrmw(bin, p, v.into_int_value(), AtomicOrdering::Monotonic)?
                        .into()),
                    None => float_atomic_add(lw, p, v),
                })?;
                regs.push(old);
            }
        }
        OpKind::AtomicCas { cmp, value, .. } => {
            if dtype.is_float() {
                return lw.unsupported("compare-and-swap on floats", op.span);
            }
            let cmps = lw.value(*cmp, &layout)?;
            let vals = lw.value(*value, &layout)?;
            for (i, p) in ptrs.iter().enumerate() {
                let (p, c, v) = (p.into_pointer_value(), cmps[i], vals[i]);
                let old = guarded(lw, owner, ty, |lw| {
                    let pair = lw.builder.build_cmpxchg(
                        p,
                        c,
                        v,
                        AtomicOrdering::Monotonic,
                        AtomicOrdering::Monotonic,
                    )?;
                    Ok(lw.builder.build_extract_value(pair, 0, "old")?)
                })?;
                regs.push(old);
            }
        }
        _ => return lw.unsupported("this op as an atomic", op.span),
    }
    if let Some(owner) = owner {
        regs = share_from_owners(lw, owner, &layout, &shape, result, &regs)?;
    }
    lw.define_tile(result, layout, regs);
    Ok(())
}

/// Runs `body` only where `pred` holds (always when `None`); elsewhere the result is zero.
fn guarded<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    pred: Option<IntValue<'ctx>>,
    ty: inkwell::types::BasicTypeEnum<'ctx>,
    body: impl FnOnce(&Lowering<'_, 'ctx>) -> Result<BasicValueEnum<'ctx>>,
) -> Result<BasicValueEnum<'ctx>> {
    let Some(pred) = pred else {
        return body(lw);
    };
    let before = current_block(lw)?;
    let (do_bb, join_bb) = (lw.new_block("atomic"), lw.new_block("atomic_done"));
    lw.builder.build_conditional_branch(pred, do_bb, join_bb)?;
    lw.builder.position_at_end(do_bb);
    let v = body(lw)?;
    let end = current_block(lw)?;
    lw.builder.build_unconditional_branch(join_bb)?;
    lw.builder.position_at_end(join_bb);
    let phi = lw.builder.build_phi(ty, "old")?;
    phi.add_incoming(&[(&v, end), (&ty.const_zero(), before)]);
    Ok(phi.as_basic_value())
}

/// `atom.global.add.f32/f64` (LLVM's float `atomicrmw` is not reachable from inkwell).
fn float_atomic_add<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    ptr: inkwell::values::PointerValue<'ctx>,
    v: BasicValueEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    let ty = v.get_type();
    let (suffix, c) = if ty == lw.ctx.f64_type().into() {
        ("f64", "d")
    } else {
        ("f32", "f")
    };
    let fn_ty = ty.fn_type(&[ptr.get_type().into(), ty.into()], false);
    let asm = lw.ctx.create_inline_asm(
        fn_ty,
        format!("atom.global.add.{suffix} $0, [ $1 ], $2;"),
        format!("={c},l,{c}"),
        true,
        false,
        None,
        false,
    );
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm, &[ptr.into(), v.into()], "atom")?;
    call.try_as_basic_value()
        .basic()
        .ok_or_else(|| crate::codegen::CodegenError::Llvm("atomic returned nothing".into()))
}

/// The owners' registers of a tile, in every thread: owners write them to
/// shared memory, everybody reads them back.
fn share_from_owners<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    owner: IntValue<'ctx>,
    layout: &crate::ir::layout::Layout,
    shape: &[usize],
    result: crate::ir::ValueId,
    regs: &[BasicValueEnum<'ctx>],
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    use crate::codegen::lower::staging::{from_memory, linear, row_major_strides, to_memory};
    let scalar = lw.scalar_type(result);
    let elem_ty = lw.mem_type(result);
    let numel: usize = shape.iter().product();
    lw.smem.claim(numel * lw.mem_bytes(result))?;
    let strides = row_major_strides(shape);
    let idx = lw.indices(layout, shape)?;
    lw.barrier_before_writing()?;
    let (write_bb, read_bb) = (lw.new_block("share_write"), lw.new_block("share_read"));
    lw.builder
        .build_conditional_branch(owner, write_bb, read_bb)?;
    lw.builder.position_at_end(write_bb);
    for (r, i) in regs.iter().zip(&idx) {
        let at = linear(lw, i, &strides)?;
        let p = lw.smem_elem_ptr(0, elem_ty, at)?;
        let v = to_memory(lw, *r, scalar)?;
        lw.builder.build_store(p, v)?;
    }
    lw.builder.build_unconditional_branch(read_bb)?;
    lw.builder.position_at_end(read_bb);
    lw.barrier()?;
    let mut out = Vec::with_capacity(regs.len());
    for i in &idx {
        let at = linear(lw, i, &strides)?;
        let p = lw.smem_elem_ptr(0, elem_ty, at)?;
        let v = lw.builder.build_load(elem_ty, p, "shared_old")?;
        out.push(from_memory(lw, v, scalar)?);
    }
    Ok(out)
}
