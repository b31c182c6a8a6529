//! 2-D transpose through shared memory, vectorized on both sides.
//!
//! The buffer's layout (which axis stays contiguous, the XOR swizzle that
//! keeps readers off each other's banks) is [`Swizzle`]'s plan.
//!
//! Layout conversions of 2-D tiles use the same buffer ([`convert_2d`]), with
//! the result's axes not swapped.
use crate::analysis::smem::padding;
use crate::analysis::swizzle::{StMatrix, Swizzle};
use crate::codegen::lower::staging::{from_memory, stage, to_memory};
use crate::codegen::lower::tile::Tile;
use crate::codegen::lower::types::{llvm_memory_type, memory_bytes};
use crate::codegen::lower::{Lowering, Result};
use crate::ir::layout::{transpose_in_place, Layout};
use crate::ir::{Op, OpKind, ScalarType};
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::BasicValue;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue};

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
    if transpose_in_place(&tile.layout, &layout) {
        let regs = tile.regs.clone();
        lw.define_tile(result, layout, regs);
        return Ok(());
    }
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
    let stmatrix = match lw.arch.has_stmatrix() {
        true => plan.stmatrix(&src.layout, shape, bytes),
        false => None,
    };
    match stmatrix {
        Some(st) => store_matrices(lw, src, shape, plan, &st)?,
        None => {
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
        }
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

/// The writes of [`swizzled`] as `stmatrix.x4`: lane `8 k + r` addresses
/// row `r` of block `k`, the row lane `4 r` holds in the group's first
/// register, `k` blocks further along the buffer's axis.
fn store_matrices<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    src: &Tile<'ctx>,
    shape: &[usize],
    plan: &Swizzle,
    st: &StMatrix,
) -> Result<()> {
    let map = src.layout.tile_map(shape);
    let c = |x: usize| lw.i32_const(x as u64);
    let b = &lw.builder;
    let row = b.build_int_unsigned_rem(lw.lane, c(8), "")?;
    let row_lane = b.build_int_mul(row, c(4), "")?;
    let block = b.build_int_unsigned_div(lw.lane, c(8), "")?;
    let block_offset = b.build_int_mul(block, c(st.block_stride), "")?;
    let base = lw.thread_base_of_lane(&map, row_lane)?;
    let i16t = lw.ctx.i16_type();
    for &g in &st.groups {
        let offsets = map.reg_offsets(g);
        let b = &lw.builder;
        let ia = b.build_int_add(base[plan.axis], c(offsets[plan.axis]), "")?;
        let ia = b.build_int_add(ia, block_offset, "")?;
        let ib = b.build_int_add(base[1 - plan.axis], c(offsets[1 - plan.axis]), "")?;
        let at = place(lw, plan, ia, ib)?;
        let ptr = lw.smem_elem_ptr(0, i16t.into(), at)?;
        let addr = lw.builder.build_ptr_to_int(ptr, lw.ctx.i32_type(), "")?;
        let words = (0..4)
            .map(|k| pack_word(lw, &src.regs[g + 2 * k..g + 2 * k + 2]))
            .collect::<Result<Vec<_>>>()?;
        stmatrix_x4(lw, addr, &words)?;
    }
    Ok(())
}

/// Two 16-bit elements as one 32-bit word (the first in the low half).
fn pack_word<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    pair: &[BasicValueEnum<'ctx>],
) -> Result<BasicValueEnum<'ctx>> {
    pack(lw, pair, lw.ctx.i32_type().into())
}

/// `data` (elements of one type) as a vector, bit-cast to `ty`.
fn pack<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    data: &[BasicValueEnum<'ctx>],
    ty: BasicTypeEnum<'ctx>,
) -> Result<BasicValueEnum<'ctx>> {
    let vty = elems_vector_type(data[0].get_type(), data.len())
        .ok_or_else(|| crate::codegen::CodegenError::Llvm("vector of this element type".into()))?
        .into_vector_type();
    let mut v = vty.get_undef();
    for (i, d) in data.iter().enumerate() {
        v = lw
            .builder
            .build_insert_element(v, *d, lw.i32_const(i as u64), "")?;
    }
    Ok(lw.builder.build_bit_cast(v, ty, "")?)
}

/// `stmatrix.sync.aligned.m8n8.x4.shared.b16 [addr], {words}`.
fn stmatrix_x4<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: IntValue<'ctx>,
    words: &[BasicValueEnum<'ctx>],
) -> Result<()> {
    let i32t = lw.ctx.i32_type();
    let params: Vec<BasicMetadataTypeEnum> = vec![i32t.into(); 1 + words.len()];
    let fn_ty = lw.ctx.void_type().fn_type(&params, false);
    let asm = lw.ctx.create_inline_asm(
        fn_ty,
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};".into(),
        "r,r,r,r,r,~{memory}".into(),
        true,
        false,
        None,
        false,
    );
    let mut args: Vec<BasicMetadataValueEnum> = vec![addr.into()];
    args.extend(words.iter().map(|w| BasicMetadataValueEnum::from(*w)));
    lw.builder.build_indirect_call(fn_ty, asm, &args, "")?;
    Ok(())
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
    let chunk = b.build_int_unsigned_div(ia, c(plan.chunk), "chunk")?;
    let pattern = b.build_int_unsigned_div(ib, c(plan.step), "")?;
    let pattern = b.build_int_unsigned_rem(pattern, c(plan.pattern_span()), "")?;
    let chunk = b.build_xor(chunk, pattern, "swz")?;
    let within = b.build_int_unsigned_rem(ia, c(plan.chunk), "")?;
    let line = b.build_int_mul(ib, c(plan.line), "")?;
    let col = b.build_int_mul(chunk, c(plan.chunk), "")?;
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
        pack(lw, data, access_type(lw, elem_ty, bytes, data.len()))?
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
