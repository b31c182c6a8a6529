//! `cluster_sum`: split-K's reduction across the CTAs of one cluster
//! (sm_90: distributed shared memory). Every CTA but the last writes its
//! registers to its own buffer, four floats a thread at a time in thread
//! order (16-byte stores, no bank conflicts); a cluster barrier publishes
//! them; the last CTA (`ctaid.z == splits - 1`) reads each other CTA's
//! buffer through `mapa` + `ld.shared::cluster` at the same offsets (the
//! same code put the same elements there) and adds them to its own; a
//! second cluster barrier keeps the others' shared memory alive until it
//! has read it.
use crate::analysis::scratch::{cluster_sum_bytes, CLUSTER_SUM_VECTOR as VECTOR};
use crate::codegen::lower::loops::current_block;
use crate::codegen::lower::{cluster, Lowering, Result};
use crate::codegen::CodegenError;
use crate::ir::{Op, OpKind};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, FloatValue, IntValue};
use inkwell::IntPredicate;

pub fn lower(lw: &mut Lowering<'_, '_>, op: &Op) -> Result<()> {
    let OpKind::ClusterSum { src, splits } = &op.kind else {
        return lw.unsupported("this op as a cluster sum", op.span);
    };
    if !lw.arch.has_clusters() {
        return lw.unsupported(
            "split-K's cluster sum below sm_90 (no thread-block clusters)",
            op.span,
        );
    }
    let result = lw.result(op)?;
    let layout = lw.assigned_layout(result);
    let regs: Vec<FloatValue> = lw
        .value(*src, &layout)?
        .into_iter()
        .map(|v| match v {
            BasicValueEnum::FloatValue(f) => Ok(f),
            _ => Err(CodegenError::Llvm("cluster_sum of a non-float tile".into())),
        })
        .collect::<Result<_>>()?;
    let threads = lw.num_threads();
    lw.smem.claim(cluster_sum_bytes(regs.len(), threads))?;
    let i32t = lw.ctx.i32_type();
    let rank = lw.call_value("llvm.nvvm.read.ptx.sreg.ctaid.z", i32t.into(), &[])?;
    let last = lw.builder.build_int_compare(
        IntPredicate::EQ,
        rank.into_int_value(),
        lw.i32_const(u64::from(*splits - 1)),
        "last_split",
    )?;
    let f32t = lw.ctx.f32_type();
    let vec_ty: BasicTypeEnum = f32t.vec_type(VECTOR as u32).into();

    lw.barrier_before_writing()?;
    let (write_bb, publish_bb) = (lw.new_block("split_write"), lw.new_block("split_publish"));
    lw.builder
        .build_conditional_branch(last, publish_bb, write_bb)?;
    lw.builder.position_at_end(write_bb);
    for (c, chunk) in regs.chunks(VECTOR).enumerate() {
        let mut v = vec_ty.into_vector_type().get_undef();
        for j in 0..VECTOR {
            let x = chunk.get(j).copied().unwrap_or(f32t.const_zero());
            v = lw
                .builder
                .build_insert_element(v, x, lw.i32_const(j as u64), "")?;
        }
        let at = chunk_index(lw, c, threads)?;
        let ptr = lw.smem_elem_ptr(0, vec_ty, at)?;
        let store = lw.builder.build_store(ptr, v)?;
        store
            .set_alignment(16)
            .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    }
    lw.builder.build_unconditional_branch(publish_bb)?;
    lw.builder.position_at_end(publish_bb);
    cluster::barrier(lw)?;

    let (read_bb, done_bb) = (lw.new_block("split_read"), lw.new_block("split_done"));
    let entry_bb = current_block(lw)?;
    lw.builder
        .build_conditional_branch(last, read_bb, done_bb)?;
    lw.builder.position_at_end(read_bb);
    let mut locals = Vec::with_capacity(regs.len().div_ceil(VECTOR));
    for c in 0..locals.capacity() {
        let at = chunk_index(lw, c, threads)?;
        let local = lw.smem_elem_ptr(0, vec_ty, at)?;
        locals.push(lw.builder.build_ptr_to_int(local, i32t, "split_local")?);
    }
    // Chunk by chunk, each summed over the other CTAs in rank order (the
    // interpreter's order): only one chunk's loads are in flight per CTA,
    // so a 128x256 tile split 4 ways does not run out of registers.
    let mut sums = regs.clone();
    for (chunk, &local) in sums.chunks_mut(VECTOR).zip(&locals) {
        for other in 0..*splits - 1 {
            let remote = cluster::map_shared(lw, local, lw.i32_const(u64::from(other)))?;
            let parts = load_remote(lw, remote)?;
            for (s, p) in chunk.iter_mut().zip(parts) {
                *s = lw.builder.build_float_add(*s, p, "split_sum")?;
            }
        }
    }
    let read_end = current_block(lw)?;
    lw.builder.build_unconditional_branch(done_bb)?;
    lw.builder.position_at_end(done_bb);
    // Only the last CTA's sums are defined; the others keep their partials.
    let mut out: Vec<BasicValueEnum> = Vec::with_capacity(regs.len());
    for (own, sum) in regs.iter().zip(&sums) {
        let phi = lw.builder.build_phi(f32t, "split_total")?;
        phi.add_incoming(&[(own, entry_bb), (sum, read_end)]);
        out.push(phi.as_basic_value());
    }
    // The others' buffers stay until the last CTA has read them.
    cluster::barrier(lw)?;
    lw.define_tile(result, layout, out);
    Ok(())
}

/// Where chunk `c` of this thread's floats (4c .. 4c+3) goes, in 16-byte
/// units: `c * threads + tid`.
fn chunk_index<'ctx>(lw: &Lowering<'_, 'ctx>, c: usize, threads: usize) -> Result<IntValue<'ctx>> {
    Ok(lw
        .builder
        .build_int_add(lw.i32_const((c * threads) as u64), lw.tid, "")?)
}

/// Four floats at a `shared::cluster` address.
fn load_remote<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    addr: IntValue<'ctx>,
) -> Result<Vec<FloatValue<'ctx>>> {
    let f32t = lw.ctx.f32_type();
    let ret = lw.ctx.struct_type(&[f32t.into(); VECTOR], false);
    let fn_ty = ret.fn_type(&[lw.ctx.i32_type().into()], false);
    let asm = lw.ctx.create_inline_asm(
        fn_ty,
        "ld.shared::cluster.v4.f32 {$0, $1, $2, $3}, [$4];".into(),
        "=f,=f,=f,=f,r,~{memory}".into(),
        true,
        false,
        None,
        false,
    );
    let value = lw
        .builder
        .build_indirect_call(fn_ty, asm, &[addr.into()], "split_part")?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| CodegenError::Llvm("ld.shared::cluster returned nothing".into()))?
        .into_struct_value();
    (0..VECTOR as u32)
        .map(|i| {
            Ok(lw
                .builder
                .build_extract_value(value, i, "")?
                .into_float_value())
        })
        .collect()
}
