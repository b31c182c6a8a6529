//! Tensor memory accelerator copies for a wgmma pipeline (sm_90a, the
//! `tma-loads` pass's [`TmaCopies`]): one thread per program issues each
//! stage's bulk tensor copies and arms the stage's mbarrier with the bytes
//! they bring; every thread waits on the barrier's phase before its
//! `wgmma`s read the stage.
//!
//! The copies land where the `cp.async` copies would
//! ([`crate::codegen::tensor_cores::wgmma_layout`]): the hardware swizzles
//! each box's rows (128-, 64- or 32-byte) by the destination address bits,
//! as the wgmma descriptors expect, so boxes start on whole swizzle atoms.
//! `b`: one box of all rows per column block; `a`, whose rows are permuted
//! in blocks of 8 ([`physical_row`]), one box per warpgroup and 64-row
//! block from the folded map, for tiles clear of the tensor's last rows
//! (the caller copies the others by `cp.async`). Rows and columns past the
//! tensor's bounds read as zeros.
//!
//! Thread 0 issues a stage's copies in a branch of its own: a TMA
//! instruction that a warp runs predicated off still costs the unit its
//! time: with every warp running them so, 4096^3 ran 40 % slower than
//! with `cp.async`; with the branch, as fast.
//!
//! A multicast pipeline ([`TmaCopies::multicast`]) runs in clusters of two
//! programs: after the barriers are initialized the pair meets and compares
//! where their `b` boxes start (a word each leaves after the barriers, read
//! through the peer's shared memory); where they match, each program
//! copies every other column block of `b` into both, and the pair meets
//! (without memory ordering) before each refill, since a refill writes the
//! peer's buffer too; where they differ, each copies its own `b`. The pair
//! meets once more before the barriers are invalidated.
use crate::analysis::wgmma::{WgmmaConfig, WG_M};
use crate::codegen::lower::{cluster, Lowering, Result};
use crate::codegen::tensor_cores::pipelined_loop::wrap_add;
use crate::codegen::tensor_cores::wgmma_layout::{
    a_byte_offset, b_byte_offset, physical_row, StagedOperand,
};
use crate::ir::index_poly::{Atom, Poly};
use crate::ir::{TmaCopies, TmaMap};
use crate::passes::tma_loads::{BARRIER_BYTES, FOLD_STEP};
use inkwell::types::BasicMetadataTypeEnum;
use inkwell::values::{BasicMetadataValueEnum, IntValue, PointerValue};
use inkwell::IntPredicate;

/// Which threads run an instruction.
#[derive(Clone, Copy)]
enum Issuer<'ctx> {
    All,
    /// Thread 0 of the program.
    Thread0,
    /// Every thread that gets there, where the i1 holds.
    If(IntValue<'ctx>),
}

/// Inline PTX `body` with i32/i64 inputs `$1 ..` (`r`/`l` by their width)
/// and a memory clobber; `$0` is `tid.x`. A body for one thread is wrapped
/// as `{ .reg .pred p; setp.eq.u32 p, $0, 0; ...; @p ... }`.
fn asm<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    body: &str,
    inputs: &[IntValue<'ctx>],
    issuer: Issuer<'ctx>,
) -> Result<()> {
    let mut all = vec![lw.tid];
    all.extend_from_slice(inputs);
    let guard = match issuer {
        Issuer::All => None,
        Issuer::Thread0 => Some("setp.eq.u32 p, $0, 0;".to_string()),
        Issuer::If(cond) => {
            let cond = lw.builder.build_int_z_extend(cond, lw.ctx.i32_type(), "")?;
            all.push(cond);
            Some(format!("setp.ne.u32 p, ${}, 0;", all.len() - 1))
        }
    };
    let types: Vec<BasicMetadataTypeEnum> = all.iter().map(|v| v.get_type().into()).collect();
    let fn_ty = lw.ctx.void_type().fn_type(&types, false);
    let mut constraints: Vec<String> = all
        .iter()
        .map(|v| {
            if v.get_type().get_bit_width() == 64 {
                "l"
            } else {
                "r"
            }
            .to_string()
        })
        .collect();
    constraints.push("~{memory}".into());
    let text = match guard {
        Some(setp) => format!("{{\n\t.reg .pred p;\n\t{setp}\n\t{body}\n\t}}"),
        None => body.replace("@p ", ""),
    };
    let inline =
        lw.ctx
            .create_inline_asm(fn_ty, text, constraints.join(","), true, false, None, false);
    let args: Vec<BasicMetadataValueEnum> = all.iter().map(|v| (*v).into()).collect();
    lw.builder.build_indirect_call(fn_ty, inline, &args, "")?;
    Ok(())
}

/// Shared-memory address (32-bit) of `base + offset`.
fn shared_address<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    base: PointerValue<'ctx>,
    offset: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let p = unsafe {
        lw.builder
            .build_in_bounds_gep(lw.ctx.i8_type(), base, &[offset], "tma_smem")?
    };
    Ok(lw
        .builder
        .build_ptr_to_int(p, lw.ctx.i32_type(), "tma_smem_addr")?)
}

/// Address of stage `slot`'s barrier.
pub fn barrier<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    t: &TmaCopies,
    slot: IntValue<'ctx>,
) -> Result<IntValue<'ctx>> {
    let at = lw
        .builder
        .build_int_mul(slot, lw.i32_const(BARRIER_BYTES as u64), "")?;
    let at = lw.builder.build_int_add(
        at,
        lw.i32_const((lw.smem.current.offset + t.barriers) as u64),
        "",
    )?;
    shared_address(lw, lw.smem.base(), at)
}

/// Address of stage `slot`'s free barrier (a warp-specialized pipeline's
/// second row).
pub fn free_barrier<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    t: &TmaCopies,
    slot: IntValue<'ctx>,
    stages: usize,
) -> Result<IntValue<'ctx>> {
    let at = lw
        .builder
        .build_int_add(slot, lw.i32_const(stages as u64), "free_slot")?;
    barrier(lw, t, at)
}

/// Thread 0 initializes the `stages` barriers (one arrival each: the
/// issuing thread's); every thread waits until they are. A multicast
/// pipeline's pair waits for each other's barriers and compares where
/// their `b` boxes start: the i1 it returns says they match (the pair
/// shares `b`), the same in both programs.
pub fn init_barriers<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    stages: usize,
) -> Result<Option<IntValue<'ctx>>> {
    init_filled_barriers(lw, t, stages)?;
    // A multicast pipeline's `b` column, for the peer to compare.
    let exchanged = if t.multicast {
        let col = evaluate(lw, &t.operands[1].col)?;
        let word = exchange_word(lw, t, stages)?;
        asm(
            lw,
            "@p st.shared.u32 [$1], $2;",
            &[word, col],
            Issuer::Thread0,
        )?;
        Some((col, word))
    } else {
        None
    };
    asm(lw, "fence.mbarrier_init.release.cluster;", &[], Issuer::All)?;
    meet(lw, t)?;
    let Some((col, word)) = exchanged else {
        return Ok(None);
    };
    let peer = peer_word(lw, word)?;
    Ok(Some(lw.builder.build_int_compare(
        IntPredicate::EQ,
        peer,
        col,
        "pair_shares_b",
    )?))
}

/// Thread 0 brings the maps' descriptors into the TMA unit's cache and
/// initializes the stages' filled barriers (one arrival: the issuer's).
fn init_filled_barriers(lw: &Lowering<'_, '_>, t: &TmaCopies, stages: usize) -> Result<()> {
    prefetch_maps(lw, t)?;
    each_barrier(
        lw,
        t,
        0..stages,
        "@p mbarrier.init.shared::cta.b64 [$1], 1;",
    )
}

/// The maps' descriptors into the TMA unit's cache before the first copy
/// (thread 0).
fn prefetch_maps(lw: &Lowering<'_, '_>, t: &TmaCopies) -> Result<()> {
    let maps = [
        Some(&t.b_plain),
        t.a_folded.as_ref(),
        t.b_folded.as_ref(),
        t.a_plain.as_ref(),
    ];
    for map in maps.into_iter().flatten().map(|m| m.map) {
        let address = tensor_map(lw, map)?;
        asm(
            lw,
            "@p prefetch.tensormap [$1];",
            &[address],
            Issuer::Thread0,
        )?;
    }
    Ok(())
}

/// A warp-specialized pipeline's barriers, at the kernel's start (thread 0;
/// every thread of the CTA waits until they are): stage `s` filled (one
/// arrival, the producer's, and the bytes its copies bring) and, from
/// `stages` on, stage `s` free again (one arrival per consumer warp after
/// each read). A multicast pipeline's stage is free once the consumers of
/// both programs of the pair read it (a copy into it may write both), and
/// the pair meets before either copies.
pub fn init_producer_barriers(
    lw: &Lowering<'_, '_>,
    t: &TmaCopies,
    stages: usize,
    consumer_warps: usize,
) -> Result<()> {
    init_filled_barriers(lw, t, stages)?;
    let readers = consumer_warps * if t.multicast { 2 } else { 1 };
    let free = format!("@p mbarrier.init.shared::cta.b64 [$1], {readers};");
    each_barrier(lw, t, stages..2 * stages, &free)?;
    asm(lw, "fence.mbarrier_init.release.cluster;", &[], Issuer::All)?;
    meet(lw, t)
}

/// A consumer warp is done reading the stage before `slot` (that of stage
/// use `used - 1`): its lane 0 arrives on that stage's free barrier, unless
/// `used` is `first` (this loop read nothing yet); a multicast pipeline's
/// then on the peer's too (after its own: the peer's producer, once free
/// there, may copy into this program's buffer).
pub fn release_previous<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    t: &TmaCopies,
    (used, slot, first): (IntValue<'ctx>, IntValue<'ctx>, IntValue<'ctx>),
    stages: usize,
) -> Result<()> {
    let b = &lw.builder;
    let previous = wrap_add(lw, slot, stages - 1, stages)?;
    let free = free_barrier(lw, t, previous, stages)?;
    let lane0 = b.build_int_compare(IntPredicate::EQ, lw.lane, lw.i32_const(0), "")?;
    let read_some = b.build_int_compare(IntPredicate::NE, used, first, "")?;
    let when = b.build_and(lane0, read_some, "release")?;
    asm(
        lw,
        "@p mbarrier.arrive.shared::cta.b64 _, [$1];",
        &[free],
        Issuer::If(when),
    )?;
    if !t.multicast {
        return Ok(());
    }
    let rank = cluster::rank(lw)?;
    let peer = lw.builder.build_xor(rank, lw.i32_const(1), "peer_rank")?;
    let remote = cluster::map_shared(lw, free, peer)?;
    asm(
        lw,
        "@p mbarrier.arrive.shared::cluster.b64 _, [$1];",
        &[remote],
        Issuer::If(when),
    )
}

/// Where `b`'s box starts along its columns this tile (i32).
pub fn b_column<'ctx>(lw: &mut Lowering<'_, 'ctx>, t: &TmaCopies) -> Result<IntValue<'ctx>> {
    evaluate(lw, &t.operands[1].col)
}

/// Every thread of the program meets here, or of the pair for a multicast
/// pipeline (its shared-memory writes visible to both).
fn meet(lw: &Lowering<'_, '_>, t: &TmaCopies) -> Result<()> {
    if t.multicast {
        cluster::barrier(lw)
    } else {
        lw.barrier()
    }
}

/// The word after the barriers where a multicast pipeline leaves its `b`
/// column for the peer.
fn exchange_word<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    t: &TmaCopies,
    stages: usize,
) -> Result<IntValue<'ctx>> {
    let at = lw.smem.current.offset + t.barriers + stages * BARRIER_BYTES;
    shared_address(lw, lw.smem.base(), lw.i32_const(at as u64))
}

/// The peer's word at the same place (the other program of the pair).
fn peer_word<'ctx>(lw: &Lowering<'_, 'ctx>, word: IntValue<'ctx>) -> Result<IntValue<'ctx>> {
    let rank = cluster::rank(lw)?;
    let peer = lw.builder.build_xor(rank, lw.i32_const(1), "peer_rank")?;
    let at = cluster::map_shared(lw, word, peer)?;
    cluster::load_u32(lw, at)
}

/// After the loop (every thread past its last wait): thread 0 invalidates
/// the barriers, so their bytes may serve as scratch again.
pub fn invalidate_barriers(lw: &Lowering<'_, '_>, t: &TmaCopies, stages: usize) -> Result<()> {
    meet(lw, t)?;
    each_barrier(lw, t, 0..stages, "@p mbarrier.inval.shared::cta.b64 [$1];")?;
    Ok(())
}

/// `op` (with the barrier's address as `$1`) on thread 0, per barrier.
fn each_barrier(
    lw: &Lowering<'_, '_>,
    t: &TmaCopies,
    barriers: std::ops::Range<usize>,
    op: &str,
) -> Result<()> {
    for s in barriers {
        let bar = barrier(lw, t, lw.i32_const(s as u64))?;
        asm(lw, op, &[bar], Issuer::Thread0)?;
    }
    Ok(())
}

/// Waits until the barrier at `bar` completes the phase of tile `tile`
/// (stage `tile % stages` fills for the `tile / stages`-th time).
pub fn wait<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    bar: IntValue<'ctx>,
    tile: IntValue<'ctx>,
    stages: usize,
) -> Result<()> {
    let round = lw
        .builder
        .build_int_unsigned_div(tile, lw.i32_const(stages as u64), "")?;
    let parity = lw.builder.build_and(round, lw.i32_const(1), "parity")?;
    asm(
        lw,
        "{\n\t.reg .pred done;\n\tTMA_WAIT:\n\t\
         mbarrier.try_wait.parity.shared::cta.b64 done, [$1], $2;\n\t\
         @!done bra TMA_WAIT;\n\t}",
        &[bar, parity],
        Issuer::All,
    )
}

/// The value of `p` (row or column of a tile) at this iteration, as i32.
fn evaluate<'ctx>(lw: &mut Lowering<'_, 'ctx>, p: &Poly) -> Result<IntValue<'ctx>> {
    let i32t = lw.ctx.i32_type();
    let mut sum = lw.i32_const(0);
    for (m, c) in p.terms() {
        let mut term = i32t.const_int(c as u64, true);
        for a in m {
            let Atom::Value(v) = *a else {
                return lw.unsupported("a TMA coordinate over tile indices", lw.func.span);
            };
            let x = lw.scalar(v)?.into_int_value();
            let x = lw.builder.build_int_cast_sign_flag(x, i32t, true, "")?;
            term = lw.builder.build_int_mul(term, x, "")?;
        }
        sum = lw.builder.build_int_add(sum, term, "")?;
    }
    Ok(sum)
}

/// Generic address of tensor map `map` (a kernel parameter after the IR's).
fn tensor_map<'ctx>(lw: &Lowering<'_, 'ctx>, map: usize) -> Result<IntValue<'ctx>> {
    let index = (lw.func.params.len() + map) as u32;
    let Some(param) = lw.kernel.get_nth_param(index) else {
        return lw.unsupported("a TMA copy without its tensor-map parameter", lw.func.span);
    };
    Ok(lw
        .builder
        .build_ptr_to_int(param.into_pointer_value(), lw.ctx.i64_type(), "tensor_map")?)
}

/// Where this iteration's tiles start in their tensors, computed by every
/// thread before the copying thread branches off (so nothing the lowering
/// caches is first built inside that branch).
pub struct Origins<'ctx> {
    b: [IntValue<'ctx>; 2],
    /// Whether `b` is clear of the tensor's last columns (with a folded map).
    b_inside: Option<IntValue<'ctx>>,
    folded_a: Option<FoldedA<'ctx>>,
    /// A multicast pipeline's pair shares `b` (from [`init_barriers`]).
    paired: Option<IntValue<'ctx>>,
    /// `a`'s first row, where the tile at the last rows comes in 8-row boxes.
    a_row: Option<IntValue<'ctx>>,
    /// An M-major `a`'s first row and column (every tile in boxes).
    a_boxes: Option<[IntValue<'ctx>; 2]>,
}

/// `a` through its folded map: the first row in steps of the map, the
/// first column, and whether the tile is clear of the tensor's last rows.
struct FoldedA<'ctx> {
    step: IntValue<'ctx>,
    col: IntValue<'ctx>,
    inside: IntValue<'ctx>,
}

/// How a pipeline's `a` tiles arrive.
#[derive(Clone, Copy)]
pub enum ACopies<'ctx> {
    /// Every tile by `cp.async` (no map for `a`).
    CpAsync,
    /// Every tile by TMA: an M-major `a`'s boxes, or a producer's folded
    /// map with 8-row boxes at the last rows.
    Tma,
    /// By TMA where the i1 holds (the folded map, clear of the tensor's
    /// last rows), by `cp.async` elsewhere.
    TmaWhere(IntValue<'ctx>),
}

impl<'ctx> Origins<'ctx> {
    /// How this iteration's `a` tile arrives.
    pub fn a_copies(&self) -> ACopies<'ctx> {
        match &self.folded_a {
            _ if self.a_boxes.is_some() || self.a_row.is_some() => ACopies::Tma,
            Some(f) => ACopies::TmaWhere(f.inside),
            None => ACopies::CpAsync,
        }
    }
}

pub fn origins<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    w: &WgmmaConfig,
    paired: Option<IntValue<'ctx>>,
) -> Result<Origins<'ctx>> {
    let [a, b] = &t.operands;
    let b_at = [evaluate(lw, &b.row)?, evaluate(lw, &b.col)?];
    let folded_a = match folded_a_inside(lw, t, w)? {
        None => None,
        Some(inside) => {
            let Some(steps) = a.row.exact_div(FOLD_STEP as i64) else {
                return lw.unsupported("a folded TMA map off its row step", lw.func.span);
            };
            Some(FoldedA {
                step: evaluate(lw, &steps)?,
                col: evaluate(lw, &a.col)?,
                inside,
            })
        }
    };
    let b_inside = match &t.b_folded {
        Some(_) => Some(clear_of_edge(lw, b_at[1], w.n, b.cols)?),
        None => None,
    };
    let a_row = match &t.a_plain {
        Some(_) => Some(evaluate(lw, &a.row)?),
        None => None,
    };
    let a_boxes = match &t.a_boxes {
        Some(_) => Some([evaluate(lw, &a.row)?, evaluate(lw, &a.col)?]),
        None => None,
    };
    Ok(Origins {
        b: b_at,
        b_inside,
        folded_a,
        paired,
        a_row,
        a_boxes,
    })
}

/// `first + extent <= bound` (an i1), `bound` an int parameter.
fn clear_of_edge<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    first: IntValue<'ctx>,
    extent: usize,
    bound: crate::ir::ValueId,
) -> Result<IntValue<'ctx>> {
    let bound = lw.scalar(bound)?.into_int_value();
    let i32t = lw.ctx.i32_type();
    let bound = lw.builder.build_int_cast_sign_flag(bound, i32t, true, "")?;
    let end = lw
        .builder
        .build_int_add(first, lw.i32_const(extent as u64), "")?;
    Ok(lw
        .builder
        .build_int_compare(IntPredicate::SLE, end, bound, "clear_of_edge")?)
}

/// Whether `a`'s tile is clear of the tensor's last rows (an i1), where it
/// has a folded map. The pass folds only a first row the loop does not
/// change, so this holds for every tile of the loop.
fn folded_a_inside<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    w: &WgmmaConfig,
) -> Result<Option<IntValue<'ctx>>> {
    if t.a_folded.is_none() {
        return Ok(None);
    }
    let a = &t.operands[0];
    let row = evaluate(lw, &a.row)?;
    Ok(Some(clear_of_edge(lw, row, w.m, a.rows)?))
}

/// How the loop's `a` tiles arrive ([`Origins::a_copies`] without the
/// other origins).
pub fn a_copies<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    w: &WgmmaConfig,
) -> Result<ACopies<'ctx>> {
    if t.a_boxes.is_some() || t.a_plain.is_some() {
        return Ok(ACopies::Tma);
    }
    Ok(match folded_a_inside(lw, t, w)? {
        Some(inside) => ACopies::TmaWhere(inside),
        None => ACopies::CpAsync,
    })
}

/// Thread 0 issues stage `slot`'s copies ([`issue_stage`]); the other
/// threads branch around them.
pub fn copy_stage<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    w: &WgmmaConfig,
    (stage, slot): (PointerValue<'ctx>, IntValue<'ctx>),
    at: &Origins<'ctx>,
) -> Result<()> {
    let issue = lw.new_block("tma_issue");
    let after = lw.new_block("tma_issued");
    let first =
        lw.builder
            .build_int_compare(IntPredicate::EQ, lw.tid, lw.i32_const(0), "tma_thread")?;
    lw.builder.build_conditional_branch(first, issue, after)?;
    lw.builder.position_at_end(issue);
    issue_stage(lw, t, w, (stage, slot), at)?;
    lw.builder.build_unconditional_branch(after)?;
    lw.builder.position_at_end(after);
    Ok(())
}

/// The calling thread arms stage `slot`'s barrier with the bytes its copies
/// bring and issues them: `b`'s, and `a`'s as [`Origins::a_copies`] says
/// (through the folded map clear of the last rows, else, for a
/// warp-specialized pipeline, in 8-row boxes; an M-major `a` in boxes).
pub fn issue_stage<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    t: &TmaCopies,
    w: &WgmmaConfig,
    (stage, slot): (PointerValue<'ctx>, IntValue<'ctx>),
    at: &Origins<'ctx>,
) -> Result<()> {
    let bar = barrier(lw, t, slot)?;
    let b_bytes = lw.i32_const((w.k * w.n * 2) as u64);
    let bytes = match at.a_copies() {
        ACopies::Tma => {
            lw.builder
                .build_int_add(b_bytes, lw.i32_const(w.b_offset() as u64), "tma_bytes")?
        }
        ACopies::TmaWhere(by_tma) => {
            let with_a =
                lw.builder
                    .build_int_add(b_bytes, lw.i32_const(w.b_offset() as u64), "")?;
            lw.builder
                .build_select(by_tma, with_a, b_bytes, "tma_bytes")?
                .into_int_value()
        }
        ACopies::CpAsync => b_bytes,
    };
    let zero = lw.i32_const(0);
    asm(
        lw,
        "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [$1], $2;",
        &[bar, bytes],
        Issuer::All,
    )?;
    // a, clear of the last rows: warpgroup `g`, block `b` starts
    // `32 g + 16 num_warps b` logical rows into the tile and fills physical
    // rows `g M / G + 64 b ..` ([`physical_row`]).
    if let (Some(m), Some(FoldedA { step, col, inside })) = (&t.a_folded, &at.folded_a) {
        let (step, col) = (*step, *col);
        let folded = |lw: &mut Lowering<'_, 'ctx>| {
            for kb in (0..w.k).step_by(w.a_atom()) {
                let c = lw.builder.build_int_add(col, lw.i32_const(kb as u64), "")?;
                for g in 0..w.groups() {
                    for b in 0..w.blocks() {
                        let logical = FOLD_STEP * g + 16 * w.num_warps * b;
                        let physical = g * w.group_rows() + WG_M * b;
                        debug_assert_eq!(physical_row(w, logical), physical);
                        let dst = a_byte_offset(w, physical, kb);
                        let s = lw.builder.build_int_add(
                            step,
                            lw.i32_const((logical / FOLD_STEP) as u64),
                            "",
                        )?;
                        copy(lw, m, (stage, dst, bar), &[c, zero, zero, zero, s], None)?;
                    }
                }
            }
            Ok(())
        };
        // At the last rows: one box per 8 logical rows (contiguous in
        // physical rows), rows past the tensor read as zeros.
        let edge = |lw: &mut Lowering<'_, 'ctx>| {
            let (Some(plain), Some(row)) = (&t.a_plain, at.a_row) else {
                return Ok(());
            };
            for kb in (0..w.k).step_by(w.a_atom()) {
                let c = lw.builder.build_int_add(col, lw.i32_const(kb as u64), "")?;
                for logical in (0..w.m).step_by(8) {
                    let dst = a_byte_offset(w, physical_row(w, logical), kb);
                    let r = lw
                        .builder
                        .build_int_add(row, lw.i32_const(logical as u64), "")?;
                    copy(lw, plain, (stage, dst, bar), &[c, r], None)?;
                }
            }
            Ok(())
        };
        branch_either(lw, *inside, folded, edge)?;
    }
    // An M-major `a`: one box per 64-column block, as loaded.
    if let (Some(m), Some(at_a)) = (&t.a_boxes, at.a_boxes) {
        let staged = (StagedOperand::a(w), 0);
        column_blocks(lw, m, staged, (stage, bar), at_a, false)?;
    }
    // b: one box clear of the last columns, else one per column block
    // (along `N`, or `K` for a K-major `b`), shared with the pair or not.
    let [row, col] = at.b;
    let staged = (StagedOperand::b(w), w.b_offset());
    let blocks = |lw: &mut Lowering<'_, 'ctx>, to_pair: bool| {
        column_blocks(lw, &t.b_plain, staged, (stage, bar), at.b, to_pair)
    };
    let plain = |lw: &mut Lowering<'_, 'ctx>| blocks(lw, false);
    let shared = |lw: &mut Lowering<'_, 'ctx>| blocks(lw, true);
    let own = |lw: &mut Lowering<'_, 'ctx>| match (&t.b_folded, at.b_inside) {
        (Some(m), Some(inside)) => {
            let block =
                lw.builder
                    .build_int_unsigned_div(col, lw.i32_const(w.b_atom() as u64), "")?;
            let folded = |lw: &mut Lowering<'_, 'ctx>| {
                copy(
                    lw,
                    m,
                    (stage, b_byte_offset(w, 0, 0), bar),
                    &[zero, row, block],
                    None,
                )
            };
            branch_either(lw, inside, folded, plain)
        }
        _ => plain(lw),
    };
    match at.paired {
        Some(paired) => branch_either(lw, paired, shared, own)?,
        None => own(lw)?,
    }
    Ok(())
}

/// One box of map `m` per swizzled column block of an operand staged as
/// loaded (`staged`, at byte `offset` of the stage), its tile's first row
/// and column at `[row, col]`, arriving on barrier `bar`. `to_pair`: block
/// `j` is copied by the program of rank `j % 2` into both of the pair (each
/// program's barrier counts the bytes it receives).
fn column_blocks<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    m: &TmaMap,
    (staged, offset): (StagedOperand, usize),
    (stage, bar): (PointerValue<'ctx>, IntValue<'ctx>),
    [row, col]: [IntValue<'ctx>; 2],
    to_pair: bool,
) -> Result<()> {
    for (j, first) in (0..staged.cols).step_by(staged.atom).enumerate() {
        let c = lw
            .builder
            .build_int_add(col, lw.i32_const(first as u64), "")?;
        let dst = offset + staged.loaded_byte_offset(0, first);
        copy(
            lw,
            m,
            (stage, dst, bar),
            &[c, row],
            to_pair.then_some(j % 2),
        )?;
    }
    Ok(())
}

/// One box of map `m` at `coords` (innermost first) into byte `dst` of the
/// stage, arriving on barrier `bar`; `to_pair: Some(rank)`: into both
/// programs of the cluster's pair (the same place in each, arriving on each
/// one's barrier), issued by the program of rank `rank`.
fn copy<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    m: &TmaMap,
    (stage, dst, bar): (PointerValue<'ctx>, usize, IntValue<'ctx>),
    coords: &[IntValue<'ctx>],
    to_pair: Option<usize>,
) -> Result<()> {
    let rank = m.dims.len();
    if coords.len() != rank {
        return lw.unsupported(
            format!(
                "a TMA copy of {} coordinates into a map of rank {rank}",
                coords.len()
            ),
            lw.func.span,
        );
    }
    let dst = shared_address(lw, stage, lw.i32_const(dst as u64))?;
    let map = tensor_map(lw, m.map)?;
    let names: Vec<String> = (0..rank).map(|i| format!("${}", 3 + i)).collect();
    let (multicast, mask) = match to_pair {
        Some(_) => (".multicast::cluster", ", mask"),
        None => ("", ""),
    };
    let instruction = format!(
        "cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile\
         .mbarrier::complete_tx::bytes{multicast} [$1], [$2, {{{}}}], [${}]{mask};",
        names.join(", "),
        3 + rank
    );
    let text = match to_pair {
        None => format!("@p {instruction}"),
        Some(issuer) => format!(
            "{{\n\t.reg .b32 rk;\n\t.reg .pred q;\n\t.reg .b16 mask;\n\t\
             mov.u32 rk, %cluster_ctarank;\n\tsetp.eq.u32 q, rk, {issuer};\n\t\
             mov.b16 mask, 3;\n\t@q {instruction}\n\t}}"
        ),
    };
    let mut inputs = vec![dst, map];
    inputs.extend_from_slice(coords);
    inputs.push(bar);
    asm(lw, &text, &inputs, Issuer::All)
}

/// Runs `then` where `cond` (an i1) holds: a branch of its own.
pub(crate) fn branch_if<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cond: IntValue<'ctx>,
    then: impl FnOnce(&mut Lowering<'_, 'ctx>) -> Result<()>,
) -> Result<()> {
    branch_either(lw, cond, then, |_| Ok(()))
}

/// `then` where `cond` (an i1) holds, else `otherwise`, then joins.
fn branch_either<'ctx>(
    lw: &mut Lowering<'_, 'ctx>,
    cond: IntValue<'ctx>,
    then: impl FnOnce(&mut Lowering<'_, 'ctx>) -> Result<()>,
    otherwise: impl FnOnce(&mut Lowering<'_, 'ctx>) -> Result<()>,
) -> Result<()> {
    let (yes, no, join) = (
        lw.new_block("tma_then"),
        lw.new_block("tma_else"),
        lw.new_block("tma_join"),
    );
    lw.builder.build_conditional_branch(cond, yes, no)?;
    lw.builder.position_at_end(yes);
    then(lw)?;
    lw.builder.build_unconditional_branch(join)?;
    lw.builder.position_at_end(no);
    otherwise(lw)?;
    lw.builder.build_unconditional_branch(join)?;
    lw.builder.position_at_end(join);
    Ok(())
}

/// `bar.sync 0` where `when` (an i1, the same in every thread) holds.
pub fn barrier_if<'ctx>(lw: &Lowering<'_, 'ctx>, when: IntValue<'ctx>) -> Result<()> {
    asm(lw, "@p bar.sync 0;", &[], Issuer::If(when))
}
