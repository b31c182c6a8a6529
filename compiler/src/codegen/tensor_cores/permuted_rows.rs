//! The accumulator of a wgmma loop whose `a` is staged M-major (a
//! transposed `a`, dot_tn's `^a`), carried with its rows permuted.
//!
//! The accumulator keeps the `mma.sync` layout, so a K-major `a` lands with
//! its rows permuted ([`crate::codegen::tensor_cores::wgmma_layout::physical_row`]).
//! An M-major `a` cannot: its rows run along the 16-byte chunks of a copy,
//! and permuting them per stage cost 30 % of dot_tn's time on an H100
//! (4096³: a shared-memory load, store and barrier per stage, 0.70x cuBLAS;
//! `cp.async` to permuted rows, 16-byte L2 requests, 0.49x; unpermuted
//! 0.97x). So it lands as loaded: physical row `q` then holds the tile's
//! row `q`, and the instruction that reads it accumulates into the
//! register of logical row `l` with `physical_row(l) = q`. The loop carries
//! the accumulator so; one trip through the pipeline's shared memory after
//! the loop moves each row where the layout says ([`Direction::ToLogical`]),
//! and one before it the other way for an initial accumulator that is not
//! one constant ([`Direction::ToLoopOrder`]).
use crate::analysis::wgmma::WgmmaConfig;
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma::elem_ptr;
use crate::codegen::tensor_cores::wgmma::physical_row_ir;
use crate::codegen::CodegenError;
use crate::ir::layout::Layout;
use inkwell::values::{BasicValue, BasicValueEnum, PointerValue};

/// Which way rows move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Logical rows to the order the loop carries (before the loop).
    ToLoopOrder,
    /// The loop's order back to logical rows (after the loop).
    ToLogical,
}

/// Floats of padding a staged row: rows 8 floats apart in banks, so the
/// 64-bit accesses of a half-warp (4 rows, 4 column pairs) hit 32 banks.
const PAD: usize = 8;

/// The widest chunk of columns (a multiple of 8 dividing `n`) whose
/// `m` padded rows of `f32` fit `bytes`; `None` if not even 8 do.
pub fn chunk_columns(m: usize, n: usize, bytes: usize) -> Option<usize> {
    (8..=n)
        .rev()
        .step_by(8)
        .filter(|cw| n % cw == 0)
        .find(|cw| m * (cw + PAD) * 4 <= bytes)
}

/// Whether every value of `acc` is one and the same constant: a
/// permutation of rows leaves it as it is.
pub fn uniform_constant(acc: &[BasicValueEnum<'_>]) -> bool {
    let constant = |v: &BasicValueEnum<'_>| match v {
        BasicValueEnum::FloatValue(f) => f.get_constant().map(|(c, _)| c.to_bits()),
        _ => None,
    };
    let first = acc.first().and_then(constant);
    first.is_some() && acc.iter().all(|v| constant(v) == first)
}

/// `acc` (the accumulator registers in `acc_layout`, `[cfg.m, cfg.n]` of
/// `f32`) with its rows moved as `direction` says, through `bytes` of shared
/// memory at `region` that no one else uses meanwhile: a barrier before
/// (every warpgroup's `wgmma`s are done reading there), and after each chunk
/// of columns.
pub fn permute_rows<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    acc_layout: &Layout,
    acc: Vec<BasicValueEnum<'ctx>>,
    (region, bytes): (PointerValue<'ctx>, usize),
    direction: Direction,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let shape = [cfg.m, cfg.n];
    let chunk = chunk_columns(cfg.m, cfg.n, bytes).ok_or_else(|| {
        CodegenError::Llvm(format!(
            "{bytes} bytes of shared memory cannot stage 8 columns of a {}x{} accumulator",
            cfg.m, cfg.n
        ))
    })?;
    let map = acc_layout.tile_map(&shape);
    let idx = lw.indices(acc_layout, &shape)?;
    if idx.len() != acc.len() {
        return Err(CodegenError::Llvm(format!(
            "{} accumulator registers for a layout of {}",
            acc.len(),
            idx.len()
        )));
    }
    let b = &lw.builder;
    let f32t = lw.ctx.f32_type();
    let pair_t = f32t.vec_type(2);
    let stride = lw.i32_const((chunk + PAD) as u64);
    // Registers in pairs of adjacent columns (the layout's two a thread).
    let pairs: Vec<usize> = (0..acc.len())
        .step_by(2)
        .filter(|&r| {
            let (o, p) = (map.reg_offsets(r), map.reg_offsets(r + 1));
            o[0] == p[0] && o[1] % 2 == 0 && p[1] == o[1] + 1
        })
        .collect();
    if pairs.len() * 2 != acc.len() {
        return Err(CodegenError::Llvm(
            "an accumulator layout without column pairs".into(),
        ));
    }
    let mut out = acc.clone();
    for c in 0..cfg.n / chunk {
        let first_col = lw.i32_const((c * chunk) as u64);
        let in_chunk: Vec<usize> = pairs
            .iter()
            .copied()
            .filter(|&r| map.reg_offsets(r)[1] / chunk == c)
            .collect();
        let at = |row, reg: usize| -> Result<PointerValue<'ctx>> {
            let col = b.build_int_sub(idx[reg][1], first_col, "")?;
            let i = b.build_int_add(b.build_int_mul(row, stride, "")?, col, "")?;
            elem_ptr(lw, region, 0, f32t.into(), i)
        };
        let moved = |reg: usize| physical_row_ir(lw, cfg, idx[reg][0]);
        lw.barrier()?;
        for &r in &in_chunk {
            let row = match direction {
                Direction::ToLogical => moved(r)?,
                Direction::ToLoopOrder => idx[r][0],
            };
            let mut v = pair_t.get_undef();
            for (k, reg) in [r, r + 1].into_iter().enumerate() {
                let lane = lw.i32_const(k as u64);
                v = b.build_insert_element(v, acc[reg].into_float_value(), lane, "")?;
            }
            b.build_store(at(row, r)?, v)?
                .set_alignment(8)
                .map_err(|e| CodegenError::Llvm(e.to_string()))?;
        }
        lw.barrier()?;
        for &r in &in_chunk {
            let row = match direction {
                Direction::ToLogical => idx[r][0],
                Direction::ToLoopOrder => moved(r)?,
            };
            let v = b.build_load(pair_t, at(row, r)?, "row_pair")?;
            if let Some(load) = v.as_instruction_value() {
                load.set_alignment(8)
                    .map_err(|e| CodegenError::Llvm(e.to_string()))?;
            }
            for (k, reg) in [r, r + 1].into_iter().enumerate() {
                let lane = lw.i32_const(k as u64);
                out[reg] = b.build_extract_element(v.into_vector_value(), lane, "")?;
            }
        }
    }
    // Whatever comes next may write there.
    lw.barrier()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_fit_the_bytes() {
        // 128x256 of f32 with padded rows: 135 168 bytes; 4 stages of
        // 128x64 + 64x256 halves hold it whole.
        assert_eq!(chunk_columns(128, 256, 4 * 49152), Some(256));
        // Two stages of 64x64 + 64x64: 64 columns at a time.
        assert_eq!(chunk_columns(128, 256, 2 * 16384), Some(32));
        // 48 columns: 48, 24, 16 or 8 (multiples of 8 dividing 48).
        assert_eq!(chunk_columns(64, 48, 64 * 56 * 4), Some(48));
        assert_eq!(chunk_columns(64, 48, 64 * 55 * 4), Some(24));
        assert_eq!(chunk_columns(64, 48, 64 * 16 * 4 - 1), None);
    }
}
