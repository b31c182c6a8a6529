//! 2-D transpose through shared memory, vectorized on both sides.
//!
//! The buffer keeps the source's fastest axis `a` contiguous: each line (one
//! index along the other axis `b`) holds `shape[a]` elements split into
//! chunks of `vec` (at most 16 bytes), and every thread writes its `vec`
//! contiguous source elements as one `st.shared.v*`. Readers walk axis `b`,
//! so chunk `c` of line `i` is stored at chunk `c ^ ((i / step) % chunks)`
//! (`step`: how far apart the readers' lanes are along `b`): the lanes of a
//! warp then read distinct banks instead of the same chunk of different lines.
//! Readers whose own fastest axis is `a` read vectors too.
//!
//! Layout conversions of 2-D tiles use the same buffer ([`convert_2d`]), with
//! the result's axes not swapped.
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

/// Elements added to each row of the element-by-element fallback: one 4-byte bank's worth.
pub fn padding(elem_bytes: usize) -> usize {
    (4 / elem_bytes.max(1)).max(1)
}

/// How a transpose lays out its buffer (all sizes powers of two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Swizzle {
    /// The source axis kept contiguous in the buffer.
    pub axis: usize,
    /// Elements per chunk: the writers' vector.
    pub vec: usize,
    /// The source's size along `axis` (elements per line).
    pub line: usize,
    /// Lines that share one XOR pattern (the readers' step along the other axis).
    pub step: usize,
    /// Elements per read (1, or a vector when the readers' fastest axis is `axis`).
    pub read_vec: usize,
    /// Whether the result's axes are the source's swapped (a transpose).
    pub transposed: bool,
}

impl Swizzle {
    /// The plan for moving a 2-D tile of `shape` (source axes) from `src`
    /// to `dst` (over the swapped shape when `transposed`); `None` when a
    /// layout has no fastest axis.
    pub fn plan(
        src: &Layout,
        dst: &Layout,
        shape: &[usize],
        elem_bytes: usize,
        transposed: bool,
    ) -> Option<Self> {
        if shape.len() != 2 || src.rank() != 2 || dst.rank() != 2 {
            return None;
        }
        let dst_shape = if transposed {
            [shape[1], shape[0]]
        } else {
            [shape[0], shape[1]]
        };
        let smap = src.tile_map(shape);
        let dmap = dst.tile_map(&dst_shape);
        let (axis, run) = smap.fastest_run()?;
        let (dfast, drun) = dmap.fastest_run()?;
        let max_vec = (16 / elem_bytes.max(1)).max(1);
        let vec = run.min(max_vec).max(1);
        let result_axis = |s: usize| if transposed { 1 - s } else { s };
        let step = dmap.axes[result_axis(1 - axis)].size_per_thread.max(1);
        let read_vec = if dfast == result_axis(axis) {
            drun.min(vec)
        } else {
            1
        };
        Some(Swizzle {
            axis,
            vec,
            line: shape[axis],
            step,
            read_vec,
            transposed,
        })
    }

    /// The result axis holding source axis `s`.
    fn result_axis(&self, s: usize) -> usize {
        if self.transposed {
            1 - s
        } else {
            s
        }
    }

    fn chunks(&self) -> usize {
        (self.line / self.vec).max(1)
    }

    /// Buffer element of source element (`i[axis]`, `i[1 - axis]`) — the
    /// formula the generated code computes, for tests.
    pub fn place(&self, ia: usize, ib: usize) -> usize {
        let chunk = (ia / self.vec) ^ ((ib / self.step) % self.chunks());
        ib * self.line + chunk * self.vec + ia % self.vec
    }
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
    lw.smem.reserve(shape[0] * shape[1] * bytes);
    lw.barrier()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::layout::BlockedLayout;

    /// The transpose kernel's layouts: the source fast along axis 0 (its
    /// pointers' contiguous axis), the result fast along axis 0 as well.
    fn transpose_plan() -> Swizzle {
        let src = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        Swizzle::plan(&src, &dst, &[64, 64], 2, true).unwrap()
    }

    #[test]
    fn plan_vectorizes_writes_and_places_every_element_once() {
        let p = transpose_plan();
        assert_eq!(
            (p.axis, p.vec, p.line, p.step, p.read_vec),
            (0, 8, 64, 8, 1)
        );
        let mut seen = vec![false; 64 * 64];
        for ia in 0..64 {
            for ib in 0..64 {
                let at = p.place(ia, ib);
                assert!(!seen[at], "two elements at {at}");
                seen[at] = true;
            }
        }
        // A writer's vector stays contiguous and aligned.
        assert_eq!(p.place(9, 3) - p.place(8, 3), 1);
        assert_eq!(p.place(8, 3) % 8, 0);
    }

    #[test]
    fn readers_of_one_warp_hit_distinct_banks() {
        let p = transpose_plan();
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[64, 64], 4, 8, &[0, 1]));
        let map = dst.tile_map(&[64, 64]);
        for reg in 0..map.regs() {
            // 4-byte banks; lanes reading the same word share it (a broadcast).
            let mut words = std::collections::BTreeMap::new();
            for lane in 0..32 {
                let j = map.element_index(lane, reg);
                let word = p.place(j[1], j[0]) * 2 / 4;
                words.insert(word, word % 32);
            }
            let banks: std::collections::BTreeSet<_> = words.values().collect();
            assert_eq!(banks.len(), words.len(), "bank conflict in register {reg}");
        }
    }

    #[test]
    fn readers_fast_along_the_buffer_axis_read_vectors() {
        let src = Layout::Blocked(BlockedLayout::for_shape(&[32, 32], 4, 4));
        let dst = Layout::Blocked(BlockedLayout::for_shape_ordered(&[32, 32], 4, 4, &[0, 1]));
        let p = Swizzle::plan(&src, &dst, &[32, 32], 4, true).unwrap();
        assert_eq!((p.axis, p.vec, p.read_vec), (1, 4, 4));
        // Without the swap the readers are fast along the other axis: scalar reads.
        let p = Swizzle::plan(&src, &dst, &[32, 32], 4, false).unwrap();
        assert_eq!((p.axis, p.vec, p.read_vec, p.step), (1, 4, 1, 4));
        // Same fastest axis, narrower vectors: reads of the readers' run.
        let narrow = Layout::Blocked(BlockedLayout::for_shape(&[32, 32], 4, 2));
        let p = Swizzle::plan(&src, &narrow, &[32, 32], 4, false).unwrap();
        assert_eq!((p.vec, p.read_vec), (4, 2));
    }
}
