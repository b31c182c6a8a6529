//! The accumulator of a native-order wgmma loop
//! ([`WgmmaConfig::native_order`]): `a` lands with its rows as loaded and
//! each register holds what the instructions deliver to it, not the
//! layout's element; one trip through shared memory after the loop puts
//! every value where the layout says ([`Direction::ToLogical`]), and one
//! before it the other way for an initial accumulator that is not one
//! constant ([`Direction::ToLoopOrder`]).
//!
//! Two tiles need it. An M-major `a` (a transposed `a`, dot_tn's `^a`): a
//! K-major `a` lands with its rows permuted
//! ([`crate::codegen::tensor_cores::wgmma_layout::physical_row`]) so that
//! the instructions fill the layout's registers, but an M-major `a`'s rows
//! run along the 16-byte chunks of a copy, and permuting them per stage
//! cost 30 % of dot_tn's time on an H100 (4096³: a shared-memory load,
//! store and barrier per stage, 0.70x cuBLAS; `cp.async` to permuted rows,
//! 16-byte L2 requests, 0.49x; unpermuted 0.97x). And two warpgroups
//! splitting `N` (192x192 tiles): a warpgroup's columns are a contiguous
//! half, the layout's every other 8; no row permutation of `a` mends that.
//! Where each register's value belongs:
//! [`crate::codegen::tensor_cores::wgmma_layout::held_position`].
use crate::analysis::wgmma::{WgmmaConfig, REORDER_PAD};
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::tensor_cores::mma::elem_ptr;
use crate::codegen::tensor_cores::wgmma::held_position_ir;
use crate::codegen::tensor_cores::wgmma_layout::held_position;
use crate::codegen::CodegenError;
use crate::ir::layout::Layout;
use inkwell::values::{BasicValue, BasicValueEnum, IntValue, PointerValue};

/// Which way values move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// The layout's order to the loop's (before the loop).
    ToLoopOrder,
    /// The loop's order back to the layout's (after the loop).
    ToLogical,
}

/// Whether every value of `acc` is one and the same constant: a
/// permutation leaves it as it is.
pub fn uniform_constant(acc: &[BasicValueEnum<'_>]) -> bool {
    let constant = |v: &BasicValueEnum<'_>| match v {
        BasicValueEnum::FloatValue(f) => f.get_constant().map(|(c, _)| c.to_bits()),
        _ => None,
    };
    let first = acc.first().and_then(constant);
    first.is_some() && acc.iter().all(|v| constant(v) == first)
}

/// `acc` (the accumulator registers in `acc_layout`, `[cfg.m, cfg.n]` of
/// `f32`) with its values moved as `direction` says, through `bytes` of
/// shared memory at `region` that no one else uses meanwhile: a barrier
/// before (every warpgroup's `wgmma`s are done reading there), and after
/// each chunk of columns.
pub fn reorder<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    cfg: &WgmmaConfig,
    acc_layout: &Layout,
    acc: Vec<BasicValueEnum<'ctx>>,
    (region, bytes): (PointerValue<'ctx>, usize),
    direction: Direction,
) -> Result<Vec<BasicValueEnum<'ctx>>> {
    let shape = [cfg.m, cfg.n];
    let chunk = cfg.reorder_chunk(bytes).ok_or_else(|| {
        CodegenError::Llvm(format!(
            "{bytes} bytes of shared memory cannot stage 8 columns of a {}x{} accumulator",
            cfg.m, cfg.n
        ))
    })?;
    let map = acc_layout.tile_map(&shape);
    if map.regs() != acc.len() {
        return Err(CodegenError::Llvm(format!(
            "{} accumulator registers for a layout of {}",
            acc.len(),
            map.regs()
        )));
    }
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
    let staging = Staging::new(cfg, chunk);
    // Where this thread's values go and come from, as a base of the
    // thread's plus a constant a register (the positions and the staging
    // are affine in the two parts: `parts_add_up` below): ld/st take
    // the constant as an immediate, no address registers a value.
    let base = lw.thread_base(&map)?;
    let logical_base = staging.offset_ir(lw, [base[0], base[1]])?;
    let held_base = staging.offset_ir(lw, held_position_ir(lw, cfg, [base[0], base[1]])?)?;
    let mut out = acc.clone();
    for c in 0..cfg.n / chunk {
        // The same registers write and read a chunk (`reorder_chunk`).
        let regs: Vec<usize> = pairs
            .iter()
            .copied()
            .filter(|&r| map.reg_offsets(r)[1] % cfg.group_cols() / staging.run_cols == c)
            .collect();
        let first = c * staging.run_cols;
        let at = |base: IntValue<'ctx>, offset: usize| -> Result<PointerValue<'ctx>> {
            let i = lw
                .builder
                .build_int_add(base, lw.i32_const((offset - first) as u64), "")?;
            elem_ptr(lw, region, 0, lw.ctx.f32_type().into(), i)
        };
        let logical_at = |r: usize| {
            let o = map.reg_offsets(r);
            at(logical_base, staging.offset([o[0], o[1]]))
        };
        let held_at = |r: usize| {
            let o = map.reg_offsets(r);
            at(
                held_base,
                staging.offset(held_position(cfg, o[0], o[1]).into()),
            )
        };
        let (write_at, read_at): (&dyn Fn(usize) -> _, &dyn Fn(usize) -> _) = match direction {
            Direction::ToLogical => (&held_at, &logical_at),
            Direction::ToLoopOrder => (&logical_at, &held_at),
        };
        lw.barrier()?;
        for &r in &regs {
            store_pair(lw, write_at(r)?, [acc[r], acc[r + 1]])?;
        }
        lw.barrier()?;
        for &r in &regs {
            let [x, y] = load_pair(lw, read_at(r)?)?;
            (out[r], out[r + 1]) = (x, y);
        }
    }
    // Whatever comes next may write there.
    lw.barrier()?;
    Ok(out)
}

/// Rows of `stride` floats, a chunk of columns at a time: chunk `c` holds
/// run `c` of `run_cols` columns of each warpgroup's `group_cols` (split
/// along N: both warpgroups' runs side by side), else columns
/// `c run_cols ..`. Element `[row, col]` of chunk `c` sits at
/// [`Self::offset`] less `c run_cols`.
struct Staging {
    stride: usize,
    run_cols: usize,
    group_cols: usize,
}

impl Staging {
    fn new(cfg: &WgmmaConfig, chunk: usize) -> Self {
        Staging {
            stride: chunk + REORDER_PAD,
            run_cols: chunk / (cfg.n / cfg.group_cols()),
            group_cols: cfg.group_cols(),
        }
    }

    fn offset(&self, [row, col]: [usize; 2]) -> usize {
        let (set, within) = (col / self.group_cols, col % self.group_cols);
        row * self.stride + set * self.run_cols + within
    }

    /// [`Self::offset`] on LLVM values.
    fn offset_ir<'ctx>(
        &self,
        lw: &Lowering<'_, 'ctx>,
        [row, col]: [IntValue<'ctx>; 2],
    ) -> Result<IntValue<'ctx>> {
        let b = &lw.builder;
        let k = |v: usize| lw.i32_const(v as u64);
        let set = b.build_int_unsigned_div(col, k(self.group_cols), "")?;
        let within = b.build_int_unsigned_rem(col, k(self.group_cols), "")?;
        let col = b.build_int_add(b.build_int_mul(set, k(self.run_cols), "")?, within, "")?;
        Ok(b.build_int_add(b.build_int_mul(row, k(self.stride), "")?, col, "")?)
    }
}

/// Stores two floats as one 64-bit access.
fn store_pair<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    at: PointerValue<'ctx>,
    values: [BasicValueEnum<'ctx>; 2],
) -> Result<()> {
    let b = &lw.builder;
    let mut v = lw.ctx.f32_type().vec_type(2).get_undef();
    for (k, x) in values.into_iter().enumerate() {
        v = b.build_insert_element(v, x.into_float_value(), lw.i32_const(k as u64), "")?;
    }
    b.build_store(at, v)?
        .set_alignment(8)
        .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    Ok(())
}

/// Loads two floats as one 64-bit access.
fn load_pair<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    at: PointerValue<'ctx>,
) -> Result<[BasicValueEnum<'ctx>; 2]> {
    let b = &lw.builder;
    let v = b.build_load(lw.ctx.f32_type().vec_type(2), at, "pair")?;
    if let Some(load) = v.as_instruction_value() {
        load.set_alignment(8)
            .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    }
    let v = v.into_vector_value();
    Ok([
        b.build_extract_element(v, lw.i32_const(0), "")?,
        b.build_extract_element(v, lw.i32_const(1), "")?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::mma::accumulator_layout;

    /// Every register's staging offset, logical and held, is its thread's
    /// plus its own (what `reorder` computes them as), and within a chunk
    /// the held values land exactly on the elements the same registers read.
    #[test]
    fn parts_add_up() {
        let split = WgmmaConfig::new(192, 192, 64, 8);
        let m_major = WgmmaConfig::new(128, 128, 64, 8).oriented([true, false]);
        for (cfg, chunks) in [(split, [192, 96, 64]), (m_major, [128, 64, 32])] {
            let layout = Layout::Blocked(accumulator_layout(&cfg.mma()));
            let map = layout.tile_map(&[cfg.m, cfg.n]);
            for chunk in chunks {
                let st = Staging::new(&cfg, chunk);
                let run = st.run_cols;
                for tid in 0..32 * cfg.num_warps {
                    let t = map.thread_base(tid);
                    let (t_held_r, t_held_c) = held_position(&cfg, t[0], t[1]);
                    for reg in (0..map.regs()).step_by(2) {
                        let o = map.reg_offsets(reg);
                        let e = map.element_index(tid, reg);
                        let (hr, hc) = held_position(&cfg, e[0], e[1]);
                        let (sr, sc) = held_position(&cfg, o[0], o[1]);
                        assert_eq!(
                            st.offset([e[0], e[1]]),
                            st.offset([t[0], t[1]]) + st.offset([o[0], o[1]])
                        );
                        assert_eq!(
                            st.offset([hr, hc]),
                            st.offset([t_held_r, t_held_c]) + st.offset([sr, sc])
                        );
                        // The register's chunk holds both its element and its value.
                        let c = o[1] % cfg.group_cols() / run;
                        for col in [e[1], hc] {
                            assert_eq!(col % cfg.group_cols() / run, c, "{cfg:?} chunk {chunk}");
                        }
                        assert!(st.offset([hr, hc]) - c * run < cfg.m * st.stride);
                    }
                }
            }
        }
    }
}
