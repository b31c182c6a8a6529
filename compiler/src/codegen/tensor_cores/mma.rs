//! `acc + a @ b` on tensor cores: `mma.sync.aligned.m16n8k16.row.col` with
//! f16/bf16 inputs and an f32 accumulator in the mma layout (see
//! [`crate::analysis::mma`] for the layouts, fragments and swizzle).
//!
//! `a` is written to shared memory as `[M][K]`, `b` as `[K][N]` (16-byte
//! chunks XOR-swizzled per row, vector stores of up to 8 elements) in the
//! scratch shared memory, between two barriers; then for
//! every `k` step of 16 each warp loads its A fragments with `ldmatrix.x4`,
//! its B fragments with `ldmatrix.x4.trans` (`.x2` for a single column group)
//! and issues one `mma.sync` per 16x8 accumulator tile.
use crate::analysis::mma::{
    a_from_registers, accumulator_layout, stage_bytes, swizzle_shift_mask, MmaConfig,
};
use crate::codegen::lower::types::llvm_memory_type;
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::CodegenError;
use crate::ir::layout::Layout;
use crate::ir::{DType, Op, OpKind, ValueId};
use inkwell::types::{BasicMetadataTypeEnum, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};

/// Elements of 16 bits in one 16-byte chunk.
const CHUNK: usize = 8;

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op, cfg: &MmaConfig) -> Result<()> {
    lower_with(lw, op, cfg, None)
}

/// [`lower`] for a dot whose `b` a prefetched loop's copies staged already
/// (swizzled as this file reads it, `[K][N]` or, `k_major`, `[N][K]`, at
/// `base`, and waited for): only `a`, unless in registers, is staged here.
pub fn lower_with_staged_b<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    cfg: &MmaConfig,
    base: PointerValue<'ctx>,
    k_major: bool,
) -> Result<()> {
    lower_with(lw, op, cfg, Some((base, k_major)))
}

fn lower_with<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    op: &Op,
    cfg: &MmaConfig,
    staged_b: Option<(PointerValue<'ctx>, bool)>,
) -> Result<()> {
    let OpKind::Dot { a, b, acc } = &op.kind else {
        return lw.unsupported("this op as a dot", op.span);
    };
    let result = lw.result(op)?;
    let Some(input) = input_name(lw.func.dtype(*a)) else {
        return lw.unsupported("a tensor-core dot of this element type", op.span);
    };
    let (n, k) = (cfg.n, cfg.k);
    let layout = Layout::Blocked(accumulator_layout(cfg));
    let acc_regs = lw.value(*acc, &layout)?;

    // `a` in this dot's accumulator layout with warps along M only (layout
    // assignment gives it that to a chained dot's `a`): its registers are
    // the A fragments, and only `b` goes through shared memory.
    let a_tile = lw.tile(*a)?;
    let a_in_registers = a_from_registers(cfg, &a_tile.layout);
    let a_frags = if a_in_registers {
        Some(fragments_of(lw, cfg, &a_tile)?)
    } else {
        None
    };
    let (b_offset, stage_bytes) = stage_bytes(cfg);
    let base = lw.smem_elem_ptr(0, lw.ctx.i8_type().into(), lw.i32_const(0))?;
    let b_stage = match staged_b {
        Some((b_base, k_major)) => {
            if !a_in_registers {
                lw.smem.claim(b_offset)?;
                lw.barrier_before_writing()?;
                write_swizzled(lw, *a, k, base, 0, false)?;
                lw.barrier()?;
            }
            BStage {
                base: b_base,
                offset: 0,
                k_major,
            }
        }
        None => {
            // Wait for the previous readers of the scratch memory (the last
            // execution of this dot included), write the operands, wait for
            // the writers.
            lw.smem.claim(stage_bytes)?;
            lw.barrier_before_writing()?;
            if !a_in_registers {
                write_swizzled(lw, *a, k, base, 0, false)?;
            }
            // `b` loaded with its registers running along K (`k^T` from a
            // row-major `k`) is stored K-major, `[N][K]`, in 16-byte vectors
            // (not element by element into `[K][N]`), and read by `ldmatrix`
            // untransposed.
            let b_k_major = runs_along_rows(lw, *b)?;
            let b_row_len = if b_k_major { k } else { n };
            write_swizzled(lw, *b, b_row_len, base, b_offset, b_k_major)?;
            lw.barrier()?;
            BStage {
                base,
                offset: b_offset,
                k_major: b_k_major,
            }
        }
    };
    let acc_regs = compute_from(lw, cfg, input, base, b_stage, acc_regs, a_frags.as_ref())?;
    lw.define_tile(result, layout, acc_regs);
    Ok(())
}

/// The element type name of a tensor-core dot's inputs (`f16` or `bf16`).
pub fn input_name(dtype: DType) -> Option<&'static str> {
    match dtype {
        DType::F16 => Some("f16"),
        DType::BF16 => Some("bf16"),
        _ => None,
    }
}

/// A fragments per `k` step and 16-row tile, `[a0, a1, a2, a3]` of the PTX
/// m16n8k16 A operand, each two 16-bit elements in 32 bits.
type AFragments<'ctx> = Vec<Vec<[IntValue<'ctx>; 4]>>;

/// The A fragments of `tile`, a `[M, K]` 16-bit tile in the accumulator
/// layout of `cfg` (warps along M only): register `(i, l)` (row rep `i`,
/// column local `l`) holds row `8 w + lane / 4 + 8 wm i`, column
/// `8 (l / 2) + 2 (lane % 4) + l % 2`, so the fragment of row tile `tm` and
/// `k` step `s` packs locals `(2 tm, 4 s + {0,1})`, `(2 tm + 1, 4 s + {0,1})`,
/// `(2 tm, 4 s + {2,3})`, `(2 tm + 1, 4 s + {2,3})` (FlashAttention's P).
fn fragments_of<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &MmaConfig,
    tile: &crate::codegen::lower::tile::Tile<'ctx>,
) -> Result<AFragments<'ctx>> {
    let map = tile.layout.tile_map(&[cfg.m, cfg.k]);
    let i32t = lw.ctx.i32_type();
    let pack = |i: usize, l: usize| -> Result<IntValue<'ctx>> {
        let lo = tile.regs[map.reg_of_locals(&[i, l])];
        let hi = tile.regs[map.reg_of_locals(&[i, l + 1])];
        let vty = vector_of(lo.get_type(), 2)?;
        let v = lw
            .builder
            .build_insert_element(vty.get_undef(), lo, lw.i32_const(0), "")?;
        let v = lw
            .builder
            .build_insert_element(v, hi, lw.i32_const(1), "")?;
        Ok(lw
            .builder
            .build_bit_cast(v, i32t, "afrag")?
            .into_int_value())
    };
    (0..cfg.steps_k())
        .map(|s| {
            (0..cfg.tiles_m())
                .map(|tm| {
                    Ok([
                        pack(2 * tm, 4 * s)?,
                        pack(2 * tm + 1, 4 * s)?,
                        pack(2 * tm, 4 * s + 2)?,
                        pack(2 * tm + 1, 4 * s + 2)?,
                    ])
                })
                .collect()
        })
        .collect()
}

/// `acc + a @ b` with `a` (`[M][K]`) at `base` and `b` (`[K][N]` or,
/// `k_major`, `[N][K]`) at `base + offset` in shared memory, both swizzled:
/// `ldmatrix` + `mma.sync`.
pub fn compute<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cfg: &MmaConfig,
    input: &str,
    base: PointerValue<'ctx>,
    (offset, k_major): (usize, bool),
    acc_regs: Vec<BasicValueEnum<'ctx>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let b_stage = BStage {
        base,
        offset,
        k_major,
    };
    compute_from(lw, cfg, input, base, b_stage, acc_regs, None)
}

/// Where `b` sits in shared memory: at byte `offset` from `base`, `[K][N]`
/// (read by `ldmatrix.trans`) or, `k_major`, `[N][K]`.
#[derive(Clone, Copy)]
struct BStage<'ctx> {
    base: PointerValue<'ctx>,
    offset: usize,
    k_major: bool,
}

/// Whether `v`'s registers run along its first axis (vectors of 2 or more):
/// a `[K, N]` operand loaded from a tensor whose rows are `N`'s.
fn runs_along_rows(lw: &mut Lowering<'_, '_>, v: ValueId) -> Result<bool> {
    let tile = lw.tile(v)?;
    let map = tile.layout.tile_map(&lw.shape(v));
    Ok(matches!(map.fastest_run(), Some((0, run)) if run >= 2))
}

/// Where a dot's A fragments come from.
#[derive(Clone, Copy)]
enum ASource<'a, 'ctx> {
    /// Packed from registers already ([`fragments_of`]).
    Registers(&'a AFragments<'ctx>),
    /// `ldmatrix` from the swizzled `[M][K]` stage: this lane's row, and
    /// the bytes between the 16-row tiles of one warp.
    Shared {
        row: KMajorRow<'ctx>,
        tile_bytes: usize,
    },
}

/// Where a dot's B fragments come from: `ldmatrix.trans` at each column
/// group's address (`[K][N]`, the address fixed, `k` an immediate), or
/// `ldmatrix` from `[N][K]` rows, this lane's row per column group.
enum BSource<'ctx> {
    NMajor(Vec<IntValue<'ctx>>),
    KMajor(Vec<KMajorRow<'ctx>>),
}

/// A lane's row of a K-major stage (`[rows][K]`, 16-byte chunks XOR-
/// swizzled by row), as `ldmatrix` reads `a` and a K-major `b`: the row's
/// swizzle phase XOR the half of a `k` step the lane reads (`x`), and the
/// row's first element. Rows of a lane keep their phase from step to step.
#[derive(Clone, Copy)]
struct KMajorRow<'ctx> {
    x: IntValue<'ctx>,
    row_elem: IntValue<'ctx>,
}

impl<'ctx> KMajorRow<'ctx> {
    /// Row `row` of a stage with rows of `k` elements, read at chunk `half`
    /// (0 or 1) of each 16-wide `k` step.
    fn new(
        lw: &Lowering<'_, 'ctx>,
        row: IntValue<'ctx>,
        half: IntValue<'ctx>,
        k: usize,
    ) -> Result<Self> {
        let (shift, mask) = swizzle_shift_mask(k / CHUNK);
        let ph = phase(lw, row, shift, mask)?;
        Ok(KMajorRow {
            x: lw.builder.build_xor(ph, half, "")?,
            row_elem: mul(lw, row, k as u64)?,
        })
    }

    /// The lane's shared address at the `k` step starting at `k0` of the
    /// stage at byte `offset` from `base`.
    fn address(
        &self,
        lw: &Lowering<'_, 'ctx>,
        base: PointerValue<'ctx>,
        offset: usize,
        k0: usize,
    ) -> Result<IntValue<'ctx>> {
        let chunk = lw
            .builder
            .build_xor(self.x, lw.i32_const((k0 / 8) as u64), "")?;
        let elem = add(lw, self.row_elem, mul(lw, chunk, CHUNK as u64)?)?;
        shared_address(lw, base, offset, elem)
    }
}

/// [`compute`], with `a`'s fragments from `a_frags` instead of shared memory
/// when given.
fn compute_from<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cfg: &MmaConfig,
    input: &str,
    base: PointerValue<'ctx>,
    b_stage: BStage<'ctx>,
    mut acc_regs: Vec<BasicValueEnum<'ctx>>,
    a_frags: Option<&AFragments<'ctx>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let (n, k) = (cfg.n, cfg.k);
    let layout = Layout::Blocked(accumulator_layout(cfg));
    let cmap = layout.tile_map(&[cfg.m, n]);
    let (wm, wn) = (cfg.warps[0] as u64, cfg.warps[1] as u64);
    let warp_m = lw.warp_coord(&cmap.axes[0])?;
    let warp_n = lw.warp_coord(&cmap.axes[1])?;
    let bld = &lw.builder;
    let q = bld.build_right_shift(lw.lane, lw.i32_const(3), false, "q")?;
    let r = bld.build_and(lw.lane, lw.i32_const(7), "r")?;
    let q_lo = bld.build_and(q, lw.i32_const(1), "q_lo")?;
    let q_hi = bld.build_right_shift(q, lw.i32_const(1), false, "q_hi")?;

    // A: lane addresses row `(2 tm + q_lo) * 8 wm + 8 warp_m + r`, chunk `k0 / 8 + q_hi`.
    // Rows of one lane differ by multiples of 16 between instructions (and
    // `k` rows between steps), which keeps the swizzle phase: the per-lane
    // address is a register per `k` step (A) or column group (B), the rest
    // an immediate offset.
    let a_source = match a_frags {
        Some(frags) => ASource::Registers(frags),
        None => {
            let a_row0 = add(lw, mul(lw, warp_m, 8)?, r)?;
            let a_row0 = add(lw, a_row0, mul(lw, q_lo, 8 * wm)?)?;
            ASource::Shared {
                row: KMajorRow::new(lw, a_row0, q_hi, k)?,
                tile_bytes: 2 * 8 * wm as usize * k * 2,
            }
        }
    };
    // B, `[K][N]`: lane addresses `k` row `k0 + r + 8 q_lo`, column chunk
    // `(2 p + q_hi) wn + warp_n` (x4) or `warp_n` (x2, one column group).
    let pairs = cfg.tiles_n() >= 2;
    let b_groups = if pairs {
        cfg.tiles_n() / 2
    } else {
        cfg.tiles_n()
    };
    let b_group_stride = if pairs { 2 * wn } else { wn };
    let b_chunk0 = if pairs {
        add(lw, mul(lw, q_hi, wn)?, warp_n)?
    } else {
        warp_n
    };
    let b_offset = b_stage.offset;
    let b_source = if b_stage.k_major {
        // `[N][K]`: lane addresses `n` row `8 ((2 p + q_hi) wn + warp_n) + r`
        // (x4; `8 warp_n + r`, x2), `k` chunk `k0 / 8 + q_lo`, as `a`'s rows.
        let mut rows = Vec::with_capacity(b_groups);
        for g in 0..b_groups {
            let chunk = add(lw, b_chunk0, lw.i32_const(g as u64 * b_group_stride))?;
            let row = add(lw, mul(lw, chunk, 8)?, r)?;
            rows.push(KMajorRow::new(lw, row, q_lo, k)?);
        }
        BSource::KMajor(rows)
    } else {
        let b_row0 = add(lw, r, mul(lw, q_lo, 8)?)?;
        let (b_shift, b_mask) = swizzle_shift_mask(n / CHUNK);
        let b_phase = phase(lw, b_row0, b_shift, b_mask)?;
        let b_row_elem = mul(lw, b_row0, n as u64)?;
        let mut b_addrs = Vec::with_capacity(b_groups);
        for g in 0..b_groups {
            let chunk = add(lw, b_chunk0, lw.i32_const(g as u64 * b_group_stride))?;
            let chunk = lw.builder.build_xor(chunk, b_phase, "")?;
            let elem = add(lw, b_row_elem, mul(lw, chunk, CHUNK as u64)?)?;
            b_addrs.push(shared_address(lw, b_stage.base, b_offset, elem)?);
        }
        BSource::NMajor(b_addrs)
    };

    for step in 0..cfg.steps_k() {
        let k0 = step * 16;
        let a_frags: Vec<Vec<IntValue>> = match a_source {
            ASource::Registers(frags) => frags[step].iter().map(|f| f.to_vec()).collect(),
            ASource::Shared { row, tile_bytes } => {
                let a_addr = row.address(lw, base, 0, k0)?;
                let mut frags = Vec::with_capacity(cfg.tiles_m());
                for tm in 0..cfg.tiles_m() {
                    frags.push(ldmatrix(lw, a_addr, tm * tile_bytes, 4, false)?);
                }
                frags
            }
        };
        let mut b_frags: Vec<[IntValue; 2]> = Vec::with_capacity(cfg.tiles_n());
        let count = if pairs { 4 } else { 2 };
        for g in 0..b_groups {
            let regs = match &b_source {
                BSource::NMajor(addrs) => ldmatrix(lw, addrs[g], k0 * n * 2, count, true)?,
                BSource::KMajor(rows) => {
                    let addr = rows[g].address(lw, b_stage.base, b_offset, k0)?;
                    ldmatrix(lw, addr, 0, count, false)?
                }
            };
            for pair in regs.chunks(2) {
                b_frags.push([pair[0], pair[1]]);
            }
        }
        for (tm, af) in a_frags.iter().enumerate() {
            for (tn, bf) in b_frags.iter().enumerate() {
                let regs: Vec<usize> = (0..4)
                    .map(|i| cmap.reg_of_locals(&[2 * tm + i / 2, 2 * tn + i % 2]))
                    .collect();
                let c: Vec<BasicValueEnum> = regs.iter().map(|&i| acc_regs[i]).collect();
                let d = mma(lw, input, af, bf, &c)?;
                for (&i, v) in regs.iter().zip(d) {
                    acc_regs[i] = v;
                }
            }
        }
    }
    Ok(acc_regs)
}

pub(crate) fn add<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    a: IntValue<'ctx>,
    b: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    Ok(lw.builder.build_int_add(a, b, "")?)
}

pub(crate) fn mul<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    a: IntValue<'ctx>,
    b: u64,
) -> Result<IntValue<'ctx>> {
    Ok(lw.builder.build_int_mul(a, lw.i32_const(b), "")?)
}

/// The swizzle phase `(row >> shift) & mask` of a row.
pub(crate) fn phase<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    row: IntValue<'ctx>,
    shift: u32,
    mask: usize,
) -> Result<IntValue<'ctx>> {
    let s = lw
        .builder
        .build_right_shift(row, lw.i32_const(shift as u64), false, "")?;
    Ok(lw
        .builder
        .build_and(s, lw.i32_const(mask as u64), "phase")?)
}

/// Writes the 2-D 16-bit tile `v` to shared memory at byte `offset` as rows of
/// `row_len` elements with swizzled 16-byte chunks, in vectors of up to one chunk.
/// Stores 2-D tile `v` at byte `offset` from `base` as rows of `row_len`
/// elements whose 16-byte chunks are XOR-swizzled by row, in vectors where
/// the tile's registers run along the stored rows. `transposed`: the stored
/// rows are the tile's columns (`[N][K]` for a `[K, N]` operand).
fn write_swizzled<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    v: ValueId,
    row_len: usize,
    base: PointerValue<'ctx>,
    offset: usize,
    transposed: bool,
) -> Result<()> {
    let shape = lw.shape(v);
    // Blocked (`insert-layout-conversions` converted any other layout).
    let tile = lw.tile(v)?;
    let map = tile.layout.tile_map(&shape);
    let along = if transposed { 0 } else { shape.len() - 1 };
    let width = match map.fastest_run() {
        Some((axis, run)) if axis == along => run.clamp(1, CHUNK),
        _ => 1,
    };
    let elem_ty = llvm_memory_type(lw.ctx, lw.scalar_type(v));
    let (shift, mask) = swizzle_shift_mask(row_len / CHUNK);
    let idx = lw.indices(&tile.layout, &shape)?;
    for (reg, i) in idx.iter().enumerate() {
        if map.reg_locals(reg)[along] % width != 0 {
            continue;
        }
        let (row, col) = if transposed {
            (i[1], i[0])
        } else {
            (i[0], i[1])
        };
        let chunk = lw
            .builder
            .build_right_shift(col, lw.i32_const(3), false, "")?;
        let within = lw.builder.build_and(col, lw.i32_const(7), "")?;
        let ph = phase(lw, row, shift, mask)?;
        let chunk = lw.builder.build_xor(chunk, ph, "")?;
        let at = add(
            lw,
            mul(lw, row, row_len as u64)?,
            mul(lw, chunk, CHUNK as u64)?,
        )?;
        let at = add(lw, at, within)?;
        let p = elem_ptr(lw, base, offset, elem_ty, at)?;
        let store = if width == 1 {
            lw.builder.build_store(p, tile.regs[reg])?
        } else {
            let vty = vector_of(elem_ty, width)?;
            let mut vec = vty.get_undef();
            for j in 0..width {
                vec = lw.builder.build_insert_element(
                    vec,
                    tile.regs[reg + j],
                    lw.i32_const(j as u64),
                    "",
                )?;
            }
            lw.builder.build_store(p, vec)?
        };
        store
            .set_alignment((2 * width) as u32)
            .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    }
    Ok(())
}

fn vector_of(elem: BasicTypeEnum<'_>, width: usize) -> Result<inkwell::types::VectorType<'_>> {
    match elem {
        BasicTypeEnum::FloatType(f) => Ok(f.vec_type(width as u32)),
        BasicTypeEnum::IntType(i) => Ok(i.vec_type(width as u32)),
        _ => Err(CodegenError::Llvm("a vector of this type".into())),
    }
}

/// The 32-bit shared-memory address of 16-bit element `elem` of the buffer at
/// byte `offset` from `base`.
pub(crate) fn shared_address<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    base: PointerValue<'ctx>,
    offset: usize,
    elem: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let p = elem_ptr(lw, base, offset, lw.ctx.i16_type().into(), elem)?;
    Ok(lw
        .builder
        .build_ptr_to_int(p, lw.ctx.i32_type(), "smem_addr")?)
}

/// Pointer to element `index` of type `elem` of the buffer at byte `offset` from `base`.
pub(crate) fn elem_ptr<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    base: PointerValue<'ctx>,
    offset: usize,
    elem: BasicTypeEnum<'ctx>,
    index: IntValue<'ctx>,
) -> Result<PointerValue<'ctx>> {
    let i8t = lw.ctx.i8_type();
    let at = unsafe {
        lw.builder
            .build_in_bounds_gep(i8t, base, &[lw.i32_const(offset as u64)], "")?
    };
    Ok(unsafe { lw.builder.build_in_bounds_gep(elem, at, &[index], "")? })
}

/// `ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16` at shared address
/// `addr + imm`: `count` 32-bit registers.
fn ldmatrix<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: IntValue<'ctx>,
    imm: usize,
    count: usize,
    trans: bool,
) -> Result<Vec<IntValue<'ctx>>> {
    let outs: Vec<String> = (0..count).map(|i| format!("${i}")).collect();
    let asm = format!(
        "ldmatrix.sync.aligned.m8n8.x{count}{}.shared.b16 {{{}}}, [${count}+{imm}];",
        if trans { ".trans" } else { "" },
        outs.join(", ")
    );
    let mut constraints: Vec<String> = (0..count).map(|_| "=r".to_string()).collect();
    constraints.push("r".into());
    let i32t = lw.ctx.i32_type();
    let ret = lw.ctx.struct_type(&vec![i32t.into(); count], false);
    let fn_ty = ret.fn_type(&[BasicMetadataTypeEnum::from(i32t)], false);
    // Side effects: it reads shared memory, so it must stay between the barriers.
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.join(","), true, false, None, false);
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm_ptr, &[addr.into()], "ldmatrix")?;
    let value = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| CodegenError::Llvm("ldmatrix returned nothing".into()))?
        .into_struct_value();
    (0..count)
        .map(|i| {
            Ok(lw
                .builder
                .build_extract_value(value, i as u32, "")?
                .into_int_value())
        })
        .collect()
}

/// One `mma.sync.aligned.m16n8k16.row.col.f32.{input}.{input}.f32`.
fn mma<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    input: &str,
    a: &[IntValue<'ctx>],
    b: &[IntValue<'ctx>; 2],
    c: &[BasicValueEnum<'ctx>],
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let asm = format!(
        "mma.sync.aligned.m16n8k16.row.col.f32.{input}.{input}.f32 \
         {{$0, $1, $2, $3}}, {{$4, $5, $6, $7}}, {{$8, $9}}, {{$10, $11, $12, $13}};"
    );
    let constraints = "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3";
    let (i32t, f32t) = (lw.ctx.i32_type(), lw.ctx.f32_type());
    let ret = lw.ctx.struct_type(&[f32t.into(); 4], false);
    let mut params: Vec<BasicMetadataTypeEnum> = vec![i32t.into(); 6];
    params.extend([BasicMetadataTypeEnum::from(f32t); 4]);
    let fn_ty = ret.fn_type(&params, false);
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.into(), false, false, None, false);
    let mut args: Vec<BasicMetadataValueEnum> = a.iter().map(|v| (*v).into()).collect();
    args.extend(b.iter().map(|v| BasicMetadataValueEnum::from(*v)));
    args.extend(c.iter().map(|v| BasicMetadataValueEnum::from(*v)));
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm_ptr, &args, "mma")?;
    let value = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| CodegenError::Llvm("mma returned nothing".into()))?
        .into_struct_value();
    (0..4)
        .map(|i| Ok(lw.builder.build_extract_value(value, i as u32, "")?))
        .collect()
}
