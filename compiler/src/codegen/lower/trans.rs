//! 2-D transpose through shared memory, vectorized on both sides.
//!
//! The buffer's layout (which axis stays contiguous, the XOR swizzle that
//! keeps readers off each other's banks) is [`Swizzle`]'s plan.
//!
//! Layout conversions of 2-D tiles use the same buffer ([`convert_2d`]), with
//! the result's axes not swapped.
use crate::analysis::smem::padding;
use crate::analysis::swizzle::Swizzle;
use crate::codegen::lower::staging::{from_memory, stage, to_memory};
use crate::codegen::lower::tile::Tile;
use crate::codegen::lower::types::{llvm_memory_type, memory_bytes};
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::Layout;
use crate::ir::{Op, OpKind, ScalarType};
use inkwell::types::BasicTypeEnum;
use inkwell::values::BasicValue;
use inkwell::values::{BasicValueEnum, IntValue};

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::Trans { src } = &op.kind else {
        return lw.unsupported("this op as a transpose", op.span);
    };
    let result = lw.result(op)?;
    let shape = lw.shape(*src);
    if shape.len() != 2 {
        return lw.unsupported("a transpose of a tile that is not 2-D", op.span);
    }
    let (m, n) = (shape[0], shape[1]);
    let scalar = lw.scalar_type(*src);
    let tile = lw.tile(*src)?;
    let layout = lw.assigned_layout(result);
    let regs = match Swizzle::plan(&tile.layout, &layout, &shape, memory_bytes(scalar), true) {
        Some(plan) if !scalar.is_ptr() => swizzled(lw, &tile, scalar, &shape, &layout, &plan)?,
        _ => {
            // Pointers (no vector bitcasts) and unusual layouts: element by element.
            let row = n + padding(lw.mem_bytes(*src));
            stage(
                lw,
                &tile,
                scalar,
                &shape,
                &[row, 1],
                &layout,
                &[n, m],
                &[1, row],
                m * row,
            )?
        }
    };
    lw.define_tile(result, layout, regs);
    Ok(())
}

/// `tile` (2-D, of `shape`) in layout `dst` through the swizzled buffer, or
/// `None` when the plan does not apply (then the caller stages element by element).
pub fn convert_2d<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    tile: &Tile<'ctx>,
    scalar: ScalarType,
    shape: &[usize],
    dst: &Layout,
) -> Result<Option<Vec<BasicValueEnum<'ctx>>>> {
    if scalar.is_ptr() {
        return Ok(None);
    }
    match Swizzle::plan(&tile.layout, dst, shape, memory_bytes(scalar), false) {
        Some(plan) => Ok(Some(swizzled(lw, tile, scalar, shape, dst, &plan)?)),
        None => Ok(None),
    }
}

fn swizzled<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    src: &Tile<'ctx>,
    scalar: ScalarType,
    shape: &[usize],
    dst_layout: &Layout,
    plan: &Swizzle,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let elem_ty = llvm_memory_type(lw.ctx, scalar);
    let bytes = memory_bytes(scalar);
    lw.smem.claim(shape[0] * shape[1] * bytes)?;
    lw.barrier_before_writing()?;
    let src_idx = lw.indices(&src.layout, shape)?;
    for g in (0..src.regs.len()).step_by(plan.vec) {
        let (ia, ib) = (src_idx[g][plan.axis], src_idx[g][1 - plan.axis]);
        let at = place(lw, plan, ia, ib)?;
        let data: Vec<BasicValueEnum> = src.regs[g..g + plan.vec]
            .iter()
            .map(|v| to_memory(lw, *v, scalar))
            .collect::<Result<_>>()?;
        store_vector(lw, elem_ty, bytes, at, &data)?;
    }
    lw.barrier()?;
    let dst_shape = [shape[plan.result_axis(0)], shape[plan.result_axis(1)]];
    let dst_idx = lw.indices(dst_layout, &dst_shape)?;
    let mut out = Vec::with_capacity(dst_idx.len());
    for g in (0..dst_idx.len()).step_by(plan.read_vec) {
        let (ia, ib) = (
            dst_idx[g][plan.result_axis(plan.axis)],
            dst_idx[g][plan.result_axis(1 - plan.axis)],
        );
        let at = place(lw, plan, ia, ib)?;
        for v in load_vector(lw, elem_ty, bytes, at, plan.read_vec)? {
            out.push(from_memory(lw, v, scalar)?);
        }
    }
    Ok(out)
}

/// [`Swizzle::place`] in LLVM IR.
fn place<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    plan: &Swizzle,
    ia: IntValue<'ctx>,
    ib: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let b = &lw.builder;
    let c = |x: usize| lw.i32_const(x as u64);
    let chunk = b.build_int_unsigned_div(ia, c(plan.vec), "chunk")?;
    let pattern = b.build_int_unsigned_div(ib, c(plan.step), "")?;
    let pattern = b.build_int_unsigned_rem(pattern, c(plan.chunks()), "")?;
    let chunk = b.build_xor(chunk, pattern, "swz")?;
    let within = b.build_int_unsigned_rem(ia, c(plan.vec), "")?;
    let line = b.build_int_mul(ib, c(plan.line), "")?;
    let col = b.build_int_mul(chunk, c(plan.vec), "")?;
    let col = b.build_int_add(col, within, "")?;
    Ok(b.build_int_add(line, col, "smem_at")?)
}

/// The access type of `n` elements of `bytes` each: 32-bit words when they
/// fill whole words (so PTX gets `.v2/.v4.b32`), else the elements themselves.
fn access_type<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    elem_ty: BasicTypeEnum<'ctx>,
    bytes: usize,
    n: usize,
) -> BasicTypeEnum<'ctx> {
    let total = bytes * n;
    let i32t = lw.ctx.i32_type();
    match (n, total) {
        (1, _) => elem_ty,
        (_, 4) => i32t.into(),
        (_, t) if t % 4 == 0 && t > 4 => i32t.vec_type((t / 4) as u32).into(),
        _ => match elem_ty {
            BasicTypeEnum::IntType(t) => t.vec_type(n as u32).into(),
            BasicTypeEnum::FloatType(t) => t.vec_type(n as u32).into(),
            other => other,
        },
    }
}

fn elems_vector_type<'ctx>(elem_ty: BasicTypeEnum<'ctx>, n: usize) -> Option<BasicTypeEnum<'ctx>> {
    match elem_ty {
        BasicTypeEnum::IntType(t) => Some(t.vec_type(n as u32).into()),
        BasicTypeEnum::FloatType(t) => Some(t.vec_type(n as u32).into()),
        _ => None,
    }
}

fn store_vector<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    elem_ty: BasicTypeEnum<'ctx>,
    bytes: usize,
    at: IntValue<'ctx>,
    data: &[BasicValueEnum<'ctx>],
) -> Result<()> {
    let ptr = lw.smem_elem_ptr(0, elem_ty, at)?;
    let value: BasicValueEnum = if data.len() == 1 {
        data[0]
    } else {
        let vty = elems_vector_type(elem_ty, data.len())
            .ok_or_else(|| {
                crate::codegen::CodegenError::Llvm("vector of this element type".into())
            })?
            .into_vector_type();
        let mut v = vty.get_undef();
        for (i, d) in data.iter().enumerate() {
            v = lw
                .builder
                .build_insert_element(v, *d, lw.i32_const(i as u64), "")?;
        }
        let ty = access_type(lw, elem_ty, bytes, data.len());
        lw.builder.build_bit_cast(v, ty, "")?
    };
    let inst = lw.builder.build_store(ptr, value)?;
    inst.set_alignment((bytes * data.len()) as u32)
        .map_err(|e| crate::codegen::CodegenError::Llvm(e.to_string()))?;
    Ok(())
}

fn load_vector<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    elem_ty: BasicTypeEnum<'ctx>,
    bytes: usize,
    at: IntValue<'ctx>,
    n: usize,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let ptr = lw.smem_elem_ptr(0, elem_ty, at)?;
    let ty = access_type(lw, elem_ty, bytes, n);
    let v = lw.builder.build_load(ty, ptr, "staged")?;
    if let Some(inst) = v.as_instruction_value() {
        inst.set_alignment((bytes * n) as u32)
            .map_err(|e| crate::codegen::CodegenError::Llvm(e.to_string()))?;
    }
    if n == 1 {
        return Ok(vec![v]);
    }
    let vty = elems_vector_type(elem_ty, n)
        .ok_or_else(|| crate::codegen::CodegenError::Llvm("vector of this element type".into()))?;
    let elems = lw.builder.build_bit_cast(v, vty, "")?.into_vector_value();
    (0..n)
        .map(|i| {
            Ok(lw
                .builder
                .build_extract_element(elems, lw.i32_const(i as u64), "")?)
        })
        .collect()
}
