//! Misaligned runs: a thread's run of consecutive elements whose first
//! address is aligned to the element only (the rows of an odd-N matrix).
//! One aligned vector access cannot read it, and element loads cost an
//! instruction and a 64-bit pointer each. Instead the run is read as the
//! two aligned chunks of its size that cover it, and a funnel shift moves
//! its bytes into place. The first chunk holds the run's first byte and the
//! second is read only when the run crosses into it (else the first is read
//! again), so every byte read shares a 16-byte line, hence a page, with a
//! byte of the run: nothing can fault that the element loads would not.
//!
//! Masks: in a thread whose elements of the load are all unmasked (every
//! thread of an interior tile), the load reads runs; a thread holding any
//! masked element loads element by element (the tiles at the edges).
//!
//! Only with the compile's `misaligned_runs` option (`--misaligned-runs`):
//! off by default until a GPU run has checked its values and timed it.
use super::asm::int_asm;
use super::loops::current_block;
use super::types::vector_or_scalar_type;
use super::{Lowering, Result};
use crate::analysis::axis_info::MISALIGNED_RUN_MIN_BYTES;
use crate::ir::layout::Layout;
use crate::ir::{ScalarType, ValueId};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};
use inkwell::IntPredicate;

/// The runs one thread reads: `len` elements, `bytes` bytes (4, 8 or 16).
#[derive(Clone, Copy, Debug)]
pub struct Runs {
    pub len: usize,
    pub bytes: usize,
}

/// The runs a load through `ptr` in `layout` reads misaligned: where the
/// layout holds longer runs of consecutive addresses than `vec`, the widest
/// access their alignment allows.
pub fn run_width(lw: &Lowering<'_, '_>, ptr: ValueId, layout: &Layout, vec: usize) -> Option<Runs> {
    let (axis, held) = layout.tile_map(&lw.shape(ptr)).fastest_run()?;
    let ScalarType::Ptr(elem) = lw.func.ty(ptr).scalar else {
        return None;
    };
    let len = (lw.widths.run_width_along(ptr, axis, lw.func) as usize).min(held);
    let bytes = len * elem.size_bytes();
    (len > vec && bytes as u64 >= MISALIGNED_RUN_MIN_BYTES).then_some(Runs { len, bytes })
}

/// Loads through `addrs` (one pointer a register; each `runs.len`
/// consecutive registers a run of consecutive addresses), values in memory
/// type `mem_ty`. Where some of this thread's `masks` are off, `elementwise`
/// loads instead, given each element's address.
pub fn load<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addrs: &[PointerValue<'ctx>],
    masks: Option<&[IntValue<'ctx>]>,
    mem_ty: BasicTypeEnum<'ctx>,
    runs: Runs,
    elementwise: impl FnOnce(
        &Lowering<'_, 'ctx>,
        &[PointerValue<'ctx>],
    ) -> Result<Vec<BasicValueEnum<'ctx>>>,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let b = &lw.builder;
    let Some((first, rest)) = masks.and_then(|m| m.split_first()) else {
        return read_runs(lw, addrs, mem_ty, runs);
    };
    let all_on = rest
        .iter()
        .try_fold(*first, |acc, m| b.build_and(acc, *m, ""))?;
    let (whole, edge, join) = (
        lw.new_block("runs"),
        lw.new_block("runs_masked"),
        lw.new_block("runs_done"),
    );
    b.build_conditional_branch(all_on, whole, edge)?;
    b.position_at_end(whole);
    let read = read_runs(lw, addrs, mem_ty, runs)?;
    let whole_end = current_block(lw)?;
    b.build_unconditional_branch(join)?;
    b.position_at_end(edge);
    let element_addrs = run_element_addresses(lw, addrs, mem_ty, runs)?;
    let masked = elementwise(lw, &element_addrs)?;
    let edge_end = current_block(lw)?;
    b.build_unconditional_branch(join)?;
    b.position_at_end(join);
    read.iter()
        .zip(&masked)
        .map(|(r, m)| {
            let phi = b.build_phi(mem_ty, "")?;
            phi.add_incoming(&[(r, whole_end), (m, edge_end)]);
            Ok(phi.as_basic_value())
        })
        .collect()
}

/// Each element's address from its run's first: the other pointers of a
/// run then need no registers of their own.
fn run_element_addresses<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addrs: &[PointerValue<'ctx>],
    mem_ty: BasicTypeEnum<'ctx>,
    runs: Runs,
) -> Result<Vec<PointerValue<'ctx>>> {
    let mut out = Vec::with_capacity(addrs.len());
    for g in (0..addrs.len()).step_by(runs.len) {
        out.push(addrs[g]);
        for i in 1..runs.len.min(addrs.len() - g) {
            let at = lw.ctx.i64_type().const_int(i as u64, false);
            out.push(unsafe { lw.builder.build_gep(mem_ty, addrs[g], &[at], "")? });
        }
    }
    Ok(out)
}

/// The runs themselves: per run, the two aligned chunks covering it and
/// the run's words shifted out of them.
fn read_runs<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addrs: &[PointerValue<'ctx>],
    mem_ty: BasicTypeEnum<'ctx>,
    runs: Runs,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let b = &lw.builder;
    let (i8t, i32t, i64t) = (lw.ctx.i8_type(), lw.ctx.i32_type(), lw.ctx.i64_type());
    let words = runs.bytes / 4;
    let mut out = Vec::with_capacity(addrs.len());
    for g in (0..addrs.len()).step_by(runs.len) {
        let p = addrs[g];
        let offset = b.build_and(
            b.build_ptr_to_int(p, i64t, "")?,
            i64t.const_int(runs.bytes as u64 - 1, false),
            "",
        )?;
        let lower = unsafe { b.build_gep(i8t, p, &[b.build_int_neg(offset, "")?], "")? };
        let crosses = b.build_int_compare(IntPredicate::NE, offset, i64t.const_zero(), "")?;
        let step = b
            .build_select(
                crosses,
                i64t.const_int(runs.bytes as u64, false),
                i64t.const_zero(),
                "",
            )?
            .into_int_value();
        let upper = unsafe { b.build_gep(i8t, lower, &[step], "")? };
        let mut chunks = read_words(lw, lower, words, runs.bytes)?;
        chunks.extend(read_words(lw, upper, words, runs.bytes)?);
        let offset = b.build_int_truncate(offset, i32t, "")?;
        let skip_words = b.build_right_shift(offset, i32t.const_int(2, false), false, "")?;
        let bits = b.build_left_shift(
            b.build_and(offset, i32t.const_int(3, false), "")?,
            i32t.const_int(3, false),
            "",
        )?;
        // from[j] = chunks[j + skip_words], a select chain (a register
        // array indexed at run time would go to local memory).
        let from: Vec<IntValue> = (0..=words)
            .map(|j| {
                (1..words).try_fold(chunks[j], |v, t| {
                    let here = b.build_int_compare(
                        IntPredicate::EQ,
                        skip_words,
                        i32t.const_int(t as u64, false),
                        "",
                    )?;
                    Ok(b.build_select(here, chunks[j + t], v, "")?.into_int_value())
                })
            })
            .collect::<Result<_>>()?;
        let mut shifted = i32t.vec_type(words as u32).get_undef();
        for i in 0..words {
            let w = funnel_shift_right(lw, from[i], from[i + 1], bits)?;
            shifted = b.build_insert_element(shifted, w, lw.i32_const(i as u64), "")?;
        }
        let elems = b
            .build_bit_cast(shifted, vector_or_scalar_type(mem_ty, runs.len), "")?
            .into_vector_value();
        for i in 0..runs.len {
            out.push(b.build_extract_element(elems, lw.i32_const(i as u64), "")?);
        }
    }
    Ok(out)
}

/// The low word of `high:low` shifted right by `bits` (< 32): one
/// `shf.r.wrap` (LLVM 19 expands its `fshr` to five shifts, masks and ors).
fn funnel_shift_right<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    low: IntValue<'ctx>,
    high: IntValue<'ctx>,
    bits: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    int_asm(
        lw,
        "shf.r.wrap.b32 $0, $1, $2, $3;",
        &[low, high, bits],
        false,
    )
}

/// One aligned chunk of `words` 32-bit words at `at`.
fn read_words<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    at: PointerValue<'ctx>,
    words: usize,
    bytes: usize,
) -> Result<Vec<IntValue<'ctx>>> {
    let b = &lw.builder;
    let ty = lw.ctx.i32_type().vec_type(words as u32);
    let v = b.build_load(ty, at, "chunk")?;
    if let Some(inst) = v.as_instruction_value() {
        inst.set_alignment(bytes as u32)
            .map_err(|e| crate::codegen::CodegenError::Llvm(e.to_string()))?;
    }
    (0..words)
        .map(|i| {
            Ok(
                b.build_extract_element(v.into_vector_value(), lw.i32_const(i as u64), "")?
                    .into_int_value(),
            )
        })
        .collect()
}
