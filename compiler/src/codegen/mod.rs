//! Code generation: Triton-IR -> LLVM IR (inkwell, NVPTX) -> PTX.
//!
//! Its input is the IR after the [`passes`](crate::passes) (the driver runs
//! them); `compile` of sema's IR directly skips those rewrites.
//!
//! # Model
//! One Triton-C program is one CUDA block (CTA) of `num_warps * 32` threads;
//! `get_program_id(axis)` is `ctaid.{x,y,z}`. Every tile value is distributed
//! over the threads by a [`Layout`](crate::ir::layout::Layout), the one the
//! `assign-layouts` pass chose ([`Function::layouts`]; IR that skipped the
//! passes gets the passes codegen needs here, `PassManager::codegen_minimum`);
//! scalars are held by every thread.
//!
//! # Internal API (what per-op lowerings use)
//! - A lowered value is a [`lower::tile::Tile`]: its layout and, per thread, `regs[r]`
//!   = the element at `layout.tile_map(shape).element_index(tid, r)`; scalars
//!   have `Layout::Scalar` and one register. Splats and ranges stay lazy
//!   ([`lower::tile::Slot`]) and are built in whatever layout a consumer asks for.
//! - [`lower::Lowering::value`]`(v, layout)` gives `v`'s registers in `layout`
//!   (lazy tiles are built there; any other tile must already be in it: the
//!   `insert-layout-conversions` pass put a `convert_layout` op, lowered by
//!   [`ops::convert_layout`] through [`lower::convert_layout`], before it);
//!   [`lower::Lowering::tile`] gives `v` as produced; `define_tile` records a
//!   result. [`lower::Lowering::indices`] gives each register's per-axis
//!   index (`i32` LLVM values), `owner_pred` the predicate that masks off
//!   replicas, `barrier` a `bar.sync`.
//! - Shared memory: one dynamic array `@global_smem`; every op's scratch
//!   buffer is where the `allocate-shared-memory` pass placed it (its
//!   [`crate::ir::SharedPlan`]), current while the op lowers; the op waits
//!   before writing it where the `place-barriers` pass says, and always
//!   between its writes and its reads ([`lower::shared_alloc`]).
//!
//! # Known limits (each an `Unsupported` error or a documented slow path)
//! - `Dot` with f16/bf16 inputs and an f32 accumulator runs on tensor cores
//!   (`mma.sync` m16n8k16, [`tensor_cores::mma`]); other dots on FMA units ([`ops::dot`]). A loop
//!   that the `pipeline-dot-loops` pass marked ([`crate::ir::LoopPipeline`]:
//!   it loads a tensor-core dot's operands straight from pointers) is
//!   software-pipelined with `cp.async` as marked ([`ops::pipeline`];
//!   `TRITONC_NO_PIPELINE=1` skips the pass); other dots' operands go
//!   registers -> shared memory.
//!   The seed's manual pre-fetch (`a = *pa` before the loop and at the end
//!   of the body) is turned back into that loop before codegen, by the pass
//!   [`unrotate_prefetch`](crate::passes::unrotate_prefetch); an operand
//!   transposed between load and dot (`^a`) is not pipelined yet.
//!   On sm_90a the pass puts that loop on warpgroup MMA when the tile fits
//!   the warpgroups ([`tensor_cores::wgmma`], [`ops::wgmma_pipeline`]); everything else keeps
//!   `mma.sync` there.
//!   Transposes and 2-D conversions stage through a swizzled shared buffer
//!   with vector writes ([`lower::trans`]); other conversions element by element.
//! - Transcendentals on f64; float atomic max/min; float compare-and-swap.
//! - Tile dimensions must be powers of two.
//!
//! # Checking on a GPU
//! `TRITONC_PTX_DUMP=out/codegen cargo test -p tritonc --test codegen_kernels dump_ptx`
//! writes the test kernels' PTX and a manifest; on the GPU machine
//! `python3 compiler/tests/common/gpu_codegen_check.py out/codegen` runs them
//! against torch (all passed on an H100, 2026-11-23).
//!
//! # Layout of the code
//! Three layers, each importing only the ones below it (no import circle):
//! - [`lower`], the lowering context: [`lower::Lowering`] (LLVM handles, the
//!   lowered values, thread indices) and what every lowering uses — tiles,
//!   LLVM types, register arithmetic ([`lower::scalar`]), staging through
//!   shared memory ([`lower::staging`], [`lower::convert_layout`],
//!   [`lower::trans`]), shared-memory buffers, loop building
//!   ([`lower::loops`]), inline PTX. It lowers a region by calling the op
//!   table it was given, so it imports no op file.
//! - [`tensor_cores`]: `mma.sync`, `wgmma` and what both pipelined loops
//!   share.
//! - [`ops`]: one file per family of ops ([`ops::elementwise`],
//!   [`ops::memory`], [`ops::control_flow`], [`ops::reduce`], [`ops::dot`],
//!   [`ops::pipeline`], [`ops::wgmma_pipeline`], [`ops::atomics`]); none
//!   imports another, and [`ops::lower`] is the table from op to file.
//!
//! Beside them: [`target`] (module, kernel declaration, PTX), [`limits`]
//! (what a program may use), [`pass_pipeline`] (LLVM's passes).
use crate::analysis::{axis_info, layout_assign};
use crate::ir::layout::LayoutMap;
use crate::ir::{Function, SharedPlan, ValueId};
use crate::timings::{Phase, PhaseTimes};
use inkwell::context::Context;
use std::borrow::Cow;

pub mod limits;
pub mod lower;
pub mod ops;
pub mod pass_pipeline;
pub mod target;
pub mod tensor_cores;

pub use crate::arch::Arch;

#[derive(Clone, Debug)]
pub struct CodegenOptions {
    pub arch: Arch,
    pub num_warps: u32,
    /// Most buffers a pipelined loop keeps (2 to 8; fewer where they do not
    /// fit or the compiler keeps fewer); `None`: the compiler's choice.
    pub num_stages: Option<u32>,
    /// Split-K: programs (a cluster along grid axis 2) that share the K loop
    /// of a dot, summed by the `split-k` pass's `cluster_sum`; `None` or 1:
    /// no split. Launchers multiply the grid's z by
    /// [`CompiledKernel::cluster_splits`].
    pub split_k: Option<u32>,
    /// Copy the operand tiles of wgmma pipelines with the tensor memory
    /// accelerator where they are boxes of tensors (the `tma-loads` pass;
    /// sm_90a). Off by default: it wins on some shapes and loses on others,
    /// so an op's tuning space offers both (`#pragma opgen tma [0, 1]`).
    pub tma: bool,
    /// With `tma`: the two programs of a cluster along grid x share each
    /// stage's `b` box (TMA multicast, half the copies each) where the
    /// `tma-loads` pass proves both run the loop alike; launchers keep the
    /// grid's x even ([`CompiledKernel::cluster_x`]).
    pub tma_multicast: bool,
    /// With `tma`: a producer warpgroup issues the copies while the
    /// kernel's warps multiply (the `tma-loads` pass decides where it can);
    /// launchers add [`CompiledKernel::producer_warps`] to `num_warps`.
    pub warp_specialize: bool,
    /// Loads whose pointers run contiguous further than their alignment
    /// allows one vector (an odd N, K or leading stride) read whole runs
    /// misaligned ([`lower::misaligned_runs`]). Off by default until checked
    /// on a GPU (`--misaligned-runs`).
    pub misaligned_runs: bool,
}

/// One kernel, compiled.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    pub name: String,
    /// The optimized LLVM IR (empty when `compile_timed` was told not to keep it).
    pub llvm_ir: String,
    pub ptx: String,
    /// Shared memory the kernel needs, bytes (launchers pass it as dynamic shared memory).
    pub shared_bytes: usize,
    pub num_warps: u32,
    /// Programs per grid point along axis 2 (one cluster): the split-K
    /// factor the kernel was compiled with, 1 without split-K.
    pub cluster_splits: u32,
    /// Programs per cluster along grid axis 0 (TMA multicast pairs): 2 or
    /// 1. A launch's grid x must be a multiple of it.
    pub cluster_x: u32,
    /// Warps a launch adds to `num_warps`: a warp-specialized kernel's
    /// producer warpgroup (4), else 0.
    pub producer_warps: u32,
    /// Launched with at most the programs the GPU holds at once, each
    /// looping over tiles; the grid's x as asked goes in a last parameter
    /// after the tensor maps ([`crate::ir::Function::persistent`]).
    pub persistent: bool,
    /// Tensor-map parameters after the IR's (TMA copies): what launchers
    /// encode and pass by value.
    pub tensor_maps: Vec<crate::ir::TensorMapParam>,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error("code generation does not support {what} yet")]
    Unsupported {
        what: String,
        span: crate::span::Span,
    },
    /// The config needs more than the target gives a program
    /// ([`limits`]); a tuning space drops such configs.
    #[error("exceeds the target's limits: {what}")]
    ResourceLimit {
        what: String,
        span: crate::span::Span,
    },
    /// The compiler declines this config (valid code it does not generate
    /// for these tiles); a tuning space leaves the point out quietly.
    #[error("code generation declines {what}")]
    Declined {
        what: String,
        span: crate::span::Span,
    },
    #[error("LLVM: {0}")]
    Llvm(String),
}

pub fn compile(func: &Function, options: &CodegenOptions) -> Result<CompiledKernel, CodegenError> {
    compile_timed(func, options, true, &mut PhaseTimes::new())
}

/// [`compile`], adding the time of each phase to `times`. Without
/// `keep_llvm_ir`, `llvm_ir` is left empty (printing it costs ~5% of a compile).
pub fn compile_timed(
    func: &Function,
    options: &CodegenOptions,
    keep_llvm_ir: bool,
    times: &mut PhaseTimes,
) -> Result<CompiledKernel, CodegenError> {
    let num_warps = options.num_warps as usize;
    if num_warps == 0 || !num_warps.is_power_of_two() || num_warps > 32 {
        return Err(CodegenError::Unsupported {
            what: format!("{num_warps} warps (must be a power of two, 1 to 32)"),
            span: func.span,
        });
    }
    limits::check_tiles(func, num_warps)?;
    // IR that skipped the passes (`compile` of sema's IR) gets the layouts,
    // their conversions, the shared-memory plan and its barriers here, for
    // these warps.
    let prepared;
    let func = match &func.layouts {
        Some(l) if l.num_warps == num_warps => func,
        _ => {
            prepared = with_codegen_passes(func, options)?;
            &prepared
        }
    };
    let producer_warps = func.producer_warps();
    let ctx = Context::create();
    let (tm, module, kernel) = times.time(Phase::TargetSetup, || {
        let tm = target::target_machine(options.arch)?;
        let module = target::new_module(&ctx, &func.name, &tm);
        let threads = (options.num_warps + producer_warps) * 32;
        let kernel = target::declare_kernel(&ctx, &module, func, threads)?;
        Ok::<_, CodegenError>((tm, module, kernel))
    })?;
    let (widths, layouts) = times.time(Phase::Analyses, || {
        let mut widths = axis_info::analyze(func);
        widths.misaligned_runs = options.misaligned_runs;
        let layouts = match &func.layouts {
            Some(l) => Cow::Borrowed(l),
            // Not assignable (codegen refuses it below with its own error).
            None => Cow::Owned(layout_assign::assign(func, num_warps, &widths)),
        };
        (widths, layouts)
    });
    check_layouts_fit(func, &layouts)?;
    check_non_power_of_two_engines(func)?;
    // Without a plan (layouts not assignable) no op gets shared memory.
    let no_plan = SharedPlan::default();
    let shared = func.shared.as_ref().unwrap_or(&no_plan);
    times.time(Phase::LowerToLlvm, || {
        let mut lw = lower::Lowering::new(
            &ctx,
            &module,
            kernel,
            func,
            layouts,
            shared,
            widths,
            ops::lower,
        )?;
        lw.arch = options.arch;
        lw.num_stages = options.num_stages.map(|s| s as usize);
        if !tensor_cores::warp_specialize::lower_kernel(&mut lw)? {
            lw.region(&func.body)?;
            lw.builder.build_unconditional_branch(lw.exit_block)?;
        }
        Ok::<_, CodegenError>(())
    })?;
    let shared_bytes = shared.total_bytes;
    limits::check_shared(func, shared_bytes, options.arch)?;
    times
        .time(Phase::LlvmVerify, || module.verify())
        .map_err(|e| CodegenError::Llvm(format!("invalid LLVM IR: {e}")))?;
    times.time(Phase::LlvmOptimize, || target::optimize(&module, &tm))?;
    let llvm_ir = if keep_llvm_ir {
        times.time(Phase::LlvmPrint, || module.print_to_string().to_string())
    } else {
        String::new()
    };
    let cluster_splits = func.cluster_splits();
    let cluster_x = func.cluster_x();
    let ptx = times.time(Phase::PtxEmit, || {
        target::emit_ptx(&module, &tm)
            .and_then(|ptx| target::with_cluster(ptx, (cluster_x, cluster_splits)))
    })?;
    Ok(CompiledKernel {
        name: func.name.clone(),
        llvm_ir,
        ptx,
        shared_bytes,
        num_warps: options.num_warps,
        cluster_splits,
        cluster_x,
        producer_warps,
        persistent: func.persistent(),
        tensor_maps: func.tensor_maps(),
    })
}

/// `func` through the passes codegen needs, for the target of `options`.
fn with_codegen_passes(
    func: &Function,
    options: &CodegenOptions,
) -> Result<Function, CodegenError> {
    let mut func = func.clone();
    func.layouts = None;
    let target = crate::passes::Target {
        arch: options.arch,
        num_warps: options.num_warps as usize,
        num_stages: options.num_stages.map(|s| s as usize),
        split_k: options.split_k,
        tma: options.tma,
        tma_multicast: options.tma_multicast,
        warp_specialize: options.warp_specialize,
        misaligned_runs: options.misaligned_runs,
    };
    crate::passes::PassManager::codegen_minimum(target)
        .run(&mut func, &mut |_| {})
        .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    Ok(func)
}

/// Tiles with a dimension that is not a power of two are generated where
/// they were checked on the GPU (H100, every variant pinned on odd shapes):
/// kernels whose dots all run on wgmma, or on `mma.sync` with whole
/// 64-column blocks per warp (128x192 on 4 warps). Other `mma.sync` splits
/// gave wrong values (64x192 on 8 warps, 128x160 on 4) and kernels without
/// a dot were not tried: declined.
fn check_non_power_of_two_engines(func: &Function) -> Result<(), CodegenError> {
    use crate::ir::{DotEngine, OpKind};
    let Some(v) = func
        .values
        .iter()
        .find(|v| v.ty.shape.iter().any(|d| !d.is_power_of_two()))
    else {
        return Ok(());
    };
    let dots: Vec<ValueId> = crate::ir::walk::walk_ops(func)
        .iter()
        .filter(|visit| matches!(visit.op.kind, OpKind::Dot { .. }))
        .filter_map(|visit| visit.op.results.first().copied())
        .collect();
    let checked = |dot: &ValueId| match func.dot_engines.get(dot) {
        Some(DotEngine::Wgmma { .. }) => true,
        Some(DotEngine::MmaSync { warps: [_, wn] }) => {
            let n = func.ty(*dot).shape.get(1).copied().unwrap_or(0);
            *wn > 0 && n % wn == 0 && (n / wn) % 64 == 0
        }
        None => false,
    };
    if !dots.is_empty() && dots.iter().all(checked) {
        return Ok(());
    }
    Err(CodegenError::Declined {
        what: format!(
            "{} (a dimension not a power of two) off the wgmma path: such tiles are \
             generated where every dot runs on wgmma or on mma.sync with 64-column blocks per warp",
            v.ty
        ),
        span: func.span,
    })
}

/// Every tile's layout must repeat or replicate its CTA tile a whole number
/// of times along each axis (the layout math relies on it): always so for
/// power-of-two tiles; a dimension like 192 needs a CTA tile of at most 64
/// along it.
fn check_layouts_fit(func: &Function, layouts: &LayoutMap) -> Result<(), CodegenError> {
    for (i, v) in func.values.iter().enumerate() {
        if v.ty.shape.iter().all(|d| d.is_power_of_two()) {
            continue;
        }
        let layout = layouts.get(func, ValueId(i as u32));
        if !layout.tile_map(&v.ty.shape).fits() {
            return Err(CodegenError::Unsupported {
                what: format!(
                    "tile dimension {} (not a power of two) in {} with layout {layout}",
                    v.ty.shape
                        .iter()
                        .find(|d| !d.is_power_of_two())
                        .unwrap_or(&0),
                    v.ty
                ),
                span: func.span,
            });
        }
    }
    Ok(())
}
