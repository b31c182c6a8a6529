//! Warpgroup MMA on sm_90a: the instructions (`wgmma.fence`,
//! `wgmma.mma_async` with shared-memory descriptors, `wgmma.commit_group`,
//! `wgmma.wait_group`) and the IR forms of the shared-memory index math.
//! Layouts, swizzle and descriptors: [`crate::codegen::tensor_cores::wgmma_layout`].
pub use crate::analysis::wgmma::WgmmaConfig;
use crate::analysis::wgmma::WG_M;
use crate::codegen::lower::asm::async_asm;
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::wgmma_layout::{
    a_descriptor_bits, a_operand_offset, acc_register, b_descriptor_bits, b_operand_offset,
};
use crate::codegen::CodegenError;
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, IntValue, PointerValue};

/// A layout row of the accumulator (warps `[num_warps, 1]`) as its
/// digits: row `r` of the 8-row group, warp `w`, the warp's row group `i`.
struct RowDigits<'ctx> {
    r: IntValue<'ctx>,
    w: IntValue<'ctx>,
    i: IntValue<'ctx>,
}

fn row_digits<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    row: IntValue<'ctx>,
) -> Result<RowDigits<'ctx>> {
    let b = &lw.builder;
    let c = |v: usize| lw.i32_const(v as u64);
    let nw_bits = cfg.num_warps.trailing_zeros() as usize;
    let r = b.build_and(row, c(7), "")?;
    let block8 = b.build_right_shift(row, c(3), false, "")?;
    let w = b.build_and(block8, c(cfg.num_warps - 1), "")?;
    let i = b.build_right_shift(block8, c(nw_bits), false, "")?;
    Ok(RowDigits { r, w, i })
}

/// [`crate::codegen::tensor_cores::wgmma_layout::physical_row`] on LLVM values (every factor is a power of two).
pub fn physical_row_ir<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    row: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let b = &lw.builder;
    let c = |v: usize| lw.i32_const(v as u64);
    let RowDigits { r, w, i } = row_digits(lw, cfg, row)?;
    let g = b.build_right_shift(w, c(2), false, "")?;
    let ww = b.build_and(w, c(3), "")?;
    let blk = b.build_right_shift(i, c(1), false, "")?;
    let h = b.build_and(i, c(1), "")?;
    let mut at = b.build_int_mul(g, c(cfg.group_rows()), "")?;
    for (v, scale) in [(blk, WG_M), (ww, 16), (h, 8)] {
        let part = b.build_int_mul(v, c(scale), "")?;
        at = b.build_int_add(at, part, "")?;
    }
    Ok(b.build_int_add(at, r, "prow")?)
}

/// [`crate::codegen::tensor_cores::wgmma_layout::held_position`] on LLVM
/// values: the element `[row, col]`'s register holds in a native-order loop.
pub fn held_position_ir<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    [row, col]: [IntValue<'ctx>; 2],
) -> Result<[IntValue<'ctx>; 2]> {
    if !cfg.split_n() {
        return Ok([physical_row_ir(lw, cfg, row)?, col]);
    }
    let b = &lw.builder;
    let c = |v: usize| lw.i32_const(v as u64);
    let RowDigits { r, w, i } = row_digits(lw, cfg, row)?;
    let pair = b.build_right_shift(col, c(3), false, "")?;
    let q = b.build_and(col, c(7), "")?;
    let pairs = c(cfg.group_cols() / 8);
    let h = b.build_int_unsigned_div(pair, pairs, "")?;
    let j = b.build_int_unsigned_rem(pair, pairs, "")?;
    let ww = b.build_and(w, c(3), "")?;
    let g = b.build_right_shift(w, c(2), false, "")?;
    let mut prow = r;
    for (v, scale) in [(i, WG_M), (ww, 16), (h, 8)] {
        prow = b.build_int_add(prow, b.build_int_mul(v, c(scale), "")?, "")?;
    }
    let pcol = b.build_int_add(b.build_int_mul(g, c(cfg.group_cols()), "")?, q, "")?;
    let pcol = b.build_int_add(pcol, b.build_int_mul(j, c(8), "")?, "pcol")?;
    Ok([prow, pcol])
}

/// The swizzled byte offset of element `col` of row `row` of a
/// `[blocks][rows][row_elems]` operand of 16-bit elements (`rows` rows, a
/// multiple of 8, per block of `row_elems` columns: 64, 32 or 16, the 128-,
/// 64- and 32-byte swizzles of [`crate::codegen::tensor_cores::wgmma_layout::swizzle`]).
pub fn swizzled_offset_ir<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    row: IntValue<'ctx>,
    col: IntValue<'ctx>,
    rows: usize,
    row_elems: usize,
) -> Result<IntValue<'ctx>> {
    let b = &lw.builder;
    let c = |v: usize| lw.i32_const(v as u64);
    let row_bytes = 2 * row_elems;
    let chunks = row_elems / 8;
    let block = b.build_right_shift(col, c(row_elems.trailing_zeros() as usize), false, "")?;
    let chunk = b.build_and(
        b.build_right_shift(col, c(3), false, "")?,
        c(chunks - 1),
        "",
    )?;
    let within = b.build_and(col, c(7), "")?;
    // Address bits 7.. of the row's offset (`rows` keeps blocks 8-row aligned).
    let phase = b.build_right_shift(row, c(7 - row_bytes.trailing_zeros() as usize), false, "")?;
    let chunk = b.build_xor(chunk, b.build_and(phase, c(chunks - 1), "")?, "")?;
    let line = b.build_int_add(b.build_int_mul(block, c(rows), "")?, row, "")?;
    let at = b.build_int_mul(line, c(row_bytes), "")?;
    let at = b.build_int_add(at, b.build_int_mul(chunk, c(16), "")?, "")?;
    Ok(b.build_int_add(at, b.build_int_mul(within, c(2), "")?, "swz")?)
}

/// `acc + a @ b` for the operands of the stage at `stage`: `wgmma.fence`, one
/// instruction per block and `k` step, `wgmma.commit_group`. The results are
/// in flight until a [`wait`].
pub fn issue<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    input: &str,
    stage: PointerValue<'ctx>,
    mut acc: Vec<BasicValueEnum<'ctx>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let i64t = lw.ctx.i64_type();
    let addr = lw
        .builder
        .build_ptr_to_int(stage, lw.ctx.i32_type(), "stage_addr")?;
    let addr = lw.builder.build_int_z_extend(addr, i64t, "")?;
    // Start address field: bits 4..18 of the address, in 16-byte units.
    let start = lw
        .builder
        .build_right_shift(addr, i64t.const_int(4, false), false, "")?;
    let start = lw
        .builder
        .build_and(start, i64t.const_int(0x3fff, false), "")?;
    let group = lw
        .builder
        .build_right_shift(lw.warp, lw.i32_const(2), false, "warpgroup")?;
    // Warpgroup g's rows (or, split along N, columns) start g times
    // warpgroup 1's (linear in g).
    let group_start = |lw: &Lowering<'_, 'ctx>, offset_of_one: usize| {
        let off = lw
            .builder
            .build_int_mul(group, lw.i32_const((offset_of_one / 16) as u64), "")?;
        let off = lw.builder.build_int_z_extend(off, i64t, "")?;
        Ok::<_, CodegenError>(lw.builder.build_int_add(start, off, "")?)
    };
    let a_base = group_start(lw, a_operand_offset(cfg, 1, 0, 0))?;
    let a_base = lw.builder.build_or(
        a_base,
        i64t.const_int(a_descriptor_bits(cfg), false),
        "desc_a",
    )?;
    let b_base = if cfg.split_n() {
        group_start(
            lw,
            b_operand_offset(cfg, 1, 0) - b_operand_offset(cfg, 0, 0),
        )?
    } else {
        start
    };
    let b_base = lw.builder.build_or(
        b_base,
        i64t.const_int(b_descriptor_bits(cfg), false),
        "desc_b",
    )?;
    fence(lw)?;
    let regs: Vec<Vec<usize>> = (0..cfg.blocks())
        .map(|b| {
            (0..cfg.group_cols() / 2)
                .map(|d| acc_register(cfg, b, d))
                .collect()
        })
        .collect();
    let mut steps = Vec::with_capacity(cfg.steps_k() * regs.len());
    for s in 0..cfg.steps_k() {
        let b_desc = lw.builder.build_int_add(
            b_base,
            i64t.const_int((b_operand_offset(cfg, 0, s) / 16) as u64, false),
            "",
        )?;
        for (blk, regs) in regs.iter().enumerate() {
            let a_desc = lw.builder.build_int_add(
                a_base,
                i64t.const_int((a_operand_offset(cfg, 0, blk, s) / 16) as u64, false),
                "",
            )?;
            steps.push(MmaStep {
                a_desc,
                b_desc,
                regs,
            });
        }
    }
    mma_async_chain(lw, cfg, input, &steps, &mut acc)?;
    async_asm(lw, "wgmma.commit_group.sync.aligned;")?;
    Ok(acc)
}

/// `wgmma.fence.sync.aligned`: orders earlier register and shared-memory
/// accesses before the next `wgmma`.
pub fn fence(lw: &Lowering<'_, '_>) -> Result<()> {
    async_asm(lw, "wgmma.fence.sync.aligned;")
}

/// `wgmma.wait_group.sync.aligned pending` without touching the accumulator.
pub fn wait_pending(lw: &Lowering<'_, '_>, pending: usize) -> Result<()> {
    async_asm(lw, &format!("wgmma.wait_group.sync.aligned {pending};"))
}

/// `wgmma.wait_group.sync.aligned 0`, passing `acc` through so that no reader
/// of the accumulator moves above it.
pub fn wait_all<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    acc: Vec<BasicValueEnum<'ctx>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let n = acc.len();
    let f32t = lw.ctx.f32_type();
    let ret = lw.ctx.struct_type(&vec![f32t.into(); n], false);
    let params: Vec<BasicMetadataTypeEnum> = vec![f32t.into(); n];
    let fn_ty = ret.fn_type(&params, false);
    let mut constraints: Vec<String> = (0..n).map(|_| "=f".to_string()).collect();
    constraints.extend((0..n).map(|i| i.to_string()));
    constraints.push("~{memory}".into());
    let asm = lw.ctx.create_inline_asm(
        fn_ty,
        "wgmma.wait_group.sync.aligned 0;".into(),
        constraints.join(","),
        true,
        false,
        None,
        false,
    );
    let args: Vec<BasicMetadataValueEnum> = acc.iter().map(|v| (*v).into()).collect();
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm, &args, "wgmma_wait")?;
    unpack(lw, call, n)
}

/// One `wgmma.mma_async` of a chain: its descriptors and the accumulator
/// registers it updates.
struct MmaStep<'a, 'ctx> {
    a_desc: IntValue<'ctx>,
    b_desc: IntValue<'ctx>,
    regs: &'a [usize],
}

/// `wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{input}.{input}` for every
/// step, in order, accumulating into `acc`; the transpose immediates say
/// which operand is staged MN-major (`b` unless `cfg.b_k_major`, `a` when
/// `cfg.a_m_major`). One inline asm holds them all: the accumulator passes
/// through LLVM once per chain instead of once per instruction (less IR for
/// the optimizer and instruction selection; the PTX is the same instruction
/// sequence).
fn mma_async_chain<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    input: &str,
    steps: &[MmaStep<'_, 'ctx>],
    acc: &mut [BasicValueEnum<'ctx>],
) -> Result<()> {
    // The registers the chain touches, in first-use order: operand i is used[i].
    let mut used: Vec<usize> = Vec::new();
    for step in steps {
        for &r in step.regs {
            if !used.contains(&r) {
                used.push(r);
            }
        }
    }
    let count = used.len();
    let operand_of = |r: usize| used.iter().position(|&u| u == r).unwrap_or(0);
    // Descriptor operands follow the outputs, each distinct value once.
    let mut descs: Vec<IntValue<'ctx>> = Vec::new();
    let mut desc_operand = |v: IntValue<'ctx>| match descs.iter().position(|d| *d == v) {
        Some(i) => count + i,
        None => {
            descs.push(v);
            count + descs.len() - 1
        }
    };
    let (n, trans_a, trans_b) = (cfg.group_cols(), cfg.a_m_major as u8, !cfg.b_k_major as u8);
    let lines: Vec<String> = steps
        .iter()
        .map(|step| {
            let outs: Vec<String> = step.regs.iter().map(|&r| format!("${}", operand_of(r))).collect();
            let (a, b) = (desc_operand(step.a_desc), desc_operand(step.b_desc));
            format!(
                "wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{input}.{input} {{{}}}, ${a}, ${b}, 1, 1, 1, {trans_a}, {trans_b};",
                outs.join(", ")
            )
        })
        .collect();
    let asm = lines.join("\n\t");
    let mut constraints: Vec<String> = (0..count).map(|_| "=f".to_string()).collect();
    constraints.extend(descs.iter().map(|_| "l".to_string()));
    constraints.extend((0..count).map(|i| i.to_string()));
    let (i64t, f32t) = (lw.ctx.i64_type(), lw.ctx.f32_type());
    let ret = lw.ctx.struct_type(&vec![f32t.into(); count], false);
    let mut params: Vec<BasicMetadataTypeEnum> = vec![i64t.into(); descs.len()];
    params.extend(vec![BasicMetadataTypeEnum::from(f32t); count]);
    let fn_ty = ret.fn_type(&params, false);
    // Side effects: it reads shared memory, so it stays between the barriers.
    let asm_ptr =
        lw.ctx
            .create_inline_asm(fn_ty, asm, constraints.join(","), true, false, None, false);
    let mut args: Vec<BasicMetadataValueEnum> = descs.iter().map(|d| (*d).into()).collect();
    args.extend(used.iter().map(|&r| BasicMetadataValueEnum::from(acc[r])));
    let call = lw
        .builder
        .build_indirect_call(fn_ty, asm_ptr, &args, "wgmma")?;
    for (&r, v) in used.iter().zip(unpack(lw, call, count)?) {
        acc[r] = v;
    }
    Ok(())
}

fn unpack<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    call: inkwell::values::CallSiteValue<'ctx>,
    count: usize,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let value = call
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| CodegenError::Llvm("wgmma returned nothing".into()))?
        .into_struct_value();
    (0..count)
        .map(|i| Ok(lw.builder.build_extract_value(value, i as u32, "")?))
        .collect()
}
