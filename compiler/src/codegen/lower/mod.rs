//! The lowering context: LLVM handles, the table of lowered values, thread
//! indices and the helpers every per-op lowering uses (see `mod.rs` for the
//! model). `Lowering::region` walks a region and hands each op to the op
//! table it was made with (`codegen::ops::lower`, as a [`LowerOp`]), so the
//! context imports no op file.
use crate::analysis::axis_info::AxisInfoMap;
use crate::codegen::lower::shared_alloc::{buffer_of, SharedMemory};
use crate::codegen::lower::tile::{Slot, Tile};
use crate::codegen::lower::types::{llvm_memory_type, llvm_scalar_type, memory_bytes};
use crate::codegen::CodegenError;
use crate::ir::layout::LayoutMap;
use crate::ir::layout::{Layout, TileMap};
use crate::ir::{Function, Op, Region, ScalarType, SharedPlan, ValueId};
use crate::span::Span;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::{Builder, BuilderError};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::types::{BasicType, BasicTypeEnum};
use inkwell::values::{BasicMetadataValueEnum, BasicValueEnum, FunctionValue, IntValue};
use std::borrow::Cow;
use std::collections::HashMap;

pub mod asm;
pub mod cluster;
pub mod convert_layout;
pub mod f64_math;
pub mod loops;
pub mod misaligned_runs;
pub mod scalar;
pub mod shared_alloc;
pub mod staging;
pub mod tile;
pub mod trans;
pub mod types;

pub type Result<T> = std::result::Result<T, CodegenError>;

/// Lowers one op (`codegen::ops::lower`): given to the context, so that the
/// context, which lowers regions, imports no op file.
pub type LowerOp = for<'a, 'b, 'ctx> fn(&'b mut Lowering<'a, 'ctx>, &'b Op) -> Result<()>;

impl From<BuilderError> for CodegenError {
    fn from(e: BuilderError) -> Self {
        CodegenError::Llvm(e.to_string())
    }
}

pub struct Lowering<'a, 'ctx> {
    pub ctx: &'ctx Context,
    pub module: &'a Module<'ctx>,
    pub builder: Builder<'ctx>,
    pub func: &'a Function,
    pub kernel: FunctionValue<'ctx>,
    /// The `assign-layouts` pass's choice (borrowed from the function), or
    /// the same assignment made for IR that skipped the passes.
    pub layouts: Cow<'a, LayoutMap>,
    pub widths: AxisInfoMap,
    pub num_warps: usize,
    pub smem: SharedMemory<'ctx>,
    /// The `allocate-shared-memory` pass's plan.
    pub shared: &'a SharedPlan,
    /// The block holding `ret void`; `Return` branches here.
    pub exit_block: BasicBlock<'ctx>,
    values: HashMap<ValueId, Slot<'ctx>>,
    /// `tid.x`, its lane and warp: computed once in the entry block.
    pub tid: IntValue<'ctx>,
    pub lane: IntValue<'ctx>,
    pub warp: IntValue<'ctx>,
    /// The target (picks `wgmma` over `mma.sync` on sm_90a).
    pub arch: crate::arch::Arch,
    /// Pipeline buffers asked for (`CodegenOptions::num_stages`).
    pub num_stages: Option<usize>,
    /// Threads that meet at [`Lowering::barrier`] when not every thread of
    /// the CTA does (a warp-specialized kernel's consumers, after the
    /// producer warpgroup branched off): named barrier 1 of that count.
    pub barrier_threads: Option<u32>,
    /// A persistent kernel's tile loop: the tile this program works on
    /// (`program_id(0)`) and how many there are (`num_programs(0)`).
    pub persistent_tile: Option<(IntValue<'ctx>, IntValue<'ctx>)>,
    /// A warp-specialized kernel's count of pipeline stages used so far
    /// (per thread, across the tiles it runs): the stages' barrier phases.
    pub stage_counter: Option<inkwell::values::PointerValue<'ctx>>,
    lower_op: LowerOp,
}

impl<'a, 'ctx> Lowering<'a, 'ctx> {
    pub fn new(
        ctx: &'ctx Context,
        module: &'a Module<'ctx>,
        kernel: FunctionValue<'ctx>,
        func: &'a Function,
        layouts: Cow<'a, LayoutMap>,
        shared: &'a SharedPlan,
        widths: AxisInfoMap,
        lower_op: LowerOp,
    ) -> Result<Self> {
        let builder = ctx.create_builder();
        let entry = ctx.append_basic_block(kernel, "entry");
        let exit_block = ctx.append_basic_block(kernel, "exit");
        builder.position_at_end(exit_block);
        builder.build_return(None)?;
        builder.position_at_end(entry);
        let i32t = ctx.i32_type();
        let tid_fn = declare(
            module,
            "llvm.nvvm.read.ptx.sreg.tid.x",
            i32t.fn_type(&[], false),
        );
        let tid = builder
            .build_call(tid_fn, &[], "tid")?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| CodegenError::Llvm("tid.x returned nothing".into()))?
            .into_int_value();
        let lane = builder.build_and(tid, i32t.const_int(31, false), "lane")?;
        let warp = builder.build_right_shift(tid, i32t.const_int(5, false), false, "warp")?;
        let mut values = HashMap::new();
        for (i, p) in func.params.iter().enumerate() {
            let v = kernel
                .get_nth_param(i as u32)
                .ok_or_else(|| CodegenError::Llvm("missing kernel parameter".into()))?;
            values.insert(p.value, Slot::Tile(Tile::scalar(v)));
        }
        let num_warps = layouts.num_warps;
        Ok(Lowering {
            ctx,
            module,
            builder,
            func,
            kernel,
            layouts,
            widths,
            num_warps,
            smem: SharedMemory::new(ctx, module),
            shared,
            exit_block,
            values,
            tid,
            lane,
            warp,
            arch: crate::arch::Arch::Sm90,
            num_stages: None,
            barrier_threads: None,
            persistent_tile: None,
            stage_counter: None,
            lower_op,
        })
    }

    pub fn num_threads(&self) -> usize {
        self.num_warps * crate::ir::layout::WARP_SIZE
    }

    pub fn unsupported<T>(&self, what: impl Into<String>, span: Span) -> Result<T> {
        Err(CodegenError::Unsupported {
            what: what.into(),
            span,
        })
    }

    pub fn shape(&self, v: ValueId) -> Vec<usize> {
        self.func.ty(v).shape.clone()
    }

    pub fn scalar_type(&self, v: ValueId) -> ScalarType {
        self.func.ty(v).scalar
    }

    pub fn reg_type(&self, v: ValueId) -> BasicTypeEnum<'ctx> {
        llvm_scalar_type(self.ctx, self.scalar_type(v))
    }

    pub fn mem_type(&self, v: ValueId) -> BasicTypeEnum<'ctx> {
        llvm_memory_type(self.ctx, self.scalar_type(v))
    }

    pub fn mem_bytes(&self, v: ValueId) -> usize {
        memory_bytes(self.scalar_type(v))
    }

    /// The layout assignment's choice for `v`.
    pub fn assigned_layout(&self, v: ValueId) -> Layout {
        self.layouts.get(self.func, v)
    }

    pub fn i32_const(&self, v: u64) -> IntValue<'ctx> {
        self.ctx.i32_type().const_int(v, false)
    }

    pub fn define(&mut self, v: ValueId, slot: Slot<'ctx>) {
        self.values.insert(v, slot);
    }

    pub fn define_tile(&mut self, v: ValueId, layout: Layout, regs: Vec<BasicValueEnum<'ctx>>) {
        self.values.insert(v, Slot::Tile(Tile { layout, regs }));
    }

    fn slot(&self, v: ValueId) -> Result<Slot<'ctx>> {
        self.values
            .get(&v)
            .cloned()
            .ok_or_else(|| CodegenError::Llvm(format!("value %{} used before it is defined", v.0)))
    }

    /// The scalar value `v` (uniform over the threads).
    pub fn scalar(&mut self, v: ValueId) -> Result<BasicValueEnum<'ctx>> {
        Ok(self.value(v, &Layout::Scalar)?[0])
    }

    /// `v` as it was produced (lazy tiles are built in their assigned layout).
    pub fn tile(&mut self, v: ValueId) -> Result<Tile<'ctx>> {
        match self.slot(v)? {
            Slot::Tile(t) => Ok(t),
            _ => {
                let layout = self.assigned_layout(v);
                let regs = self.value(v, &layout)?;
                Ok(Tile { layout, regs })
            }
        }
    }

    /// The registers of `v` in `layout`: lazy tiles are built there; other
    /// tiles must already be in it.
    pub fn value(&mut self, v: ValueId, layout: &Layout) -> Result<Vec<BasicValueEnum<'ctx>>> {
        let shape = self.shape(v);
        match self.slot(v)? {
            Slot::Tile(t) if &t.layout == layout => Ok(t.regs),
            // The `insert-layout-conversions` pass put a conversion before
            // every read in another layout: this one is a compiler bug.
            Slot::Tile(t) => Err(CodegenError::Llvm(format!(
                "%{} is read in {layout:?} but lives in {:?} (no convert_layout before its reader)",
                v.0, t.layout
            ))),
            Slot::Splat(s) => Ok(vec![s; layout.tile_map(&shape).regs()]),
            Slot::Range { start } => {
                let idx = self.indices(layout, &shape)?;
                let mut regs = Vec::with_capacity(idx.len());
                for i in idx {
                    let r =
                        self.builder
                            .build_int_add(i[0], self.i32_const(start as u64), "range")?;
                    regs.push(r.into());
                }
                Ok(regs)
            }
        }
    }

    /// Per axis, the calling thread's base index into a tile distributed by `map`.
    pub fn thread_base(&self, map: &TileMap) -> Result<Vec<IntValue<'ctx>>> {
        self.thread_base_of_lane(map, self.lane)
    }

    /// [`Self::thread_base`] of lane `lane` of the calling thread's warp.
    pub fn thread_base_of_lane(
        &self,
        map: &TileMap,
        lane: IntValue<'ctx>,
    ) -> Result<Vec<IntValue<'ctx>>> {
        map.axes
            .iter()
            .map(|a| {
                let coord = self.thread_coord_of_lane(a, lane)?;
                let scaled = self.builder.build_int_mul(
                    coord,
                    self.i32_const(a.size_per_thread as u64),
                    "",
                )?;
                Ok(self.builder.build_int_unsigned_rem(
                    scaled,
                    self.i32_const(a.size as u64),
                    "base",
                )?)
            })
            .collect()
    }

    fn lane_warp_coords(
        &self,
        a: &crate::ir::layout::AxisMap,
        lane: IntValue<'ctx>,
    ) -> Result<(IntValue<'ctx>, IntValue<'ctx>)> {
        let b = &self.builder;
        let l = b.build_int_unsigned_div(lane, self.i32_const(a.lane_stride as u64), "")?;
        let l = b.build_int_unsigned_rem(l, self.i32_const(a.threads_per_warp as u64), "")?;
        let w = b.build_int_unsigned_div(self.warp, self.i32_const(a.warp_stride as u64), "")?;
        let w = b.build_int_unsigned_rem(w, self.i32_const(a.warps_per_cta as u64), "")?;
        Ok((l, w))
    }

    /// The thread's lane coordinate along an axis.
    pub fn lane_coord(&self, a: &crate::ir::layout::AxisMap) -> Result<IntValue<'ctx>> {
        Ok(self.lane_warp_coords(a, self.lane)?.0)
    }

    /// The thread's warp coordinate along an axis.
    pub fn warp_coord(&self, a: &crate::ir::layout::AxisMap) -> Result<IntValue<'ctx>> {
        Ok(self.lane_warp_coords(a, self.lane)?.1)
    }

    /// `lane_coord + threads_per_warp * warp_coord` along an axis.
    pub fn thread_coord(&self, a: &crate::ir::layout::AxisMap) -> Result<IntValue<'ctx>> {
        self.thread_coord_of_lane(a, self.lane)
    }

    fn thread_coord_of_lane(
        &self,
        a: &crate::ir::layout::AxisMap,
        lane: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>> {
        let (l, w) = self.lane_warp_coords(a, lane)?;
        let w = self
            .builder
            .build_int_mul(w, self.i32_const(a.threads_per_warp as u64), "")?;
        Ok(self.builder.build_int_add(l, w, "coord")?)
    }

    /// For every register of a tile of `shape` in `layout`, its index on each axis (`i32`).
    pub fn indices(&self, layout: &Layout, shape: &[usize]) -> Result<Vec<Vec<IntValue<'ctx>>>> {
        let map = layout.tile_map(shape);
        let base = self.thread_base(&map)?;
        let mut out = Vec::with_capacity(map.regs());
        for reg in 0..map.regs() {
            let offs = map.reg_offsets(reg);
            let mut idx = Vec::with_capacity(offs.len());
            for (b, o) in base.iter().zip(offs) {
                idx.push(if o == 0 {
                    *b
                } else {
                    self.builder
                        .build_int_add(*b, self.i32_const(o as u64), "idx")?
                });
            }
            out.push(idx);
        }
        Ok(out)
    }

    /// `i1` that is true in the one thread owning each element of a tile of
    /// `shape` in `layout`, or `None` when no thread holds replicas. For a
    /// scalar, thread 0 owns it.
    pub fn owner_pred(&self, layout: &Layout, shape: &[usize]) -> Result<Option<IntValue<'ctx>>> {
        let b = &self.builder;
        if matches!(layout, Layout::Scalar) {
            let p = b.build_int_compare(
                inkwell::IntPredicate::EQ,
                self.tid,
                self.i32_const(0),
                "owner",
            )?;
            return Ok(Some(p));
        }
        let map = layout.tile_map(shape);
        if !map.has_replicas(self.num_threads()) {
            return Ok(None);
        }
        let mut pred = self.ctx.bool_type().const_int(1, false);
        for a in &map.axes {
            if a.size < a.cta_tile() {
                let c = self.thread_coord(a)?;
                let limit = a.size.div_ceil(a.size_per_thread) as u64;
                let ok =
                    b.build_int_compare(inkwell::IntPredicate::ULT, c, self.i32_const(limit), "")?;
                pred = b.build_and(pred, ok, "")?;
            }
        }
        if let Some(r) = &map.removed {
            let c = self.thread_coord(r)?;
            let ok = b.build_int_compare(inkwell::IntPredicate::EQ, c, self.i32_const(0), "")?;
            pred = b.build_and(pred, ok, "")?;
        }
        Ok(Some(pred))
    }

    pub fn and_preds(
        &self,
        a: Option<IntValue<'ctx>>,
        b: Option<IntValue<'ctx>>,
    ) -> Result<Option<IntValue<'ctx>>> {
        Ok(match (a, b) {
            (Some(x), Some(y)) => Some(self.builder.build_and(x, y, "")?),
            (x, None) => x,
            (None, y) => y,
        })
    }

    /// Calls a function by name, declaring it on first use (intrinsics).
    pub fn call(
        &self,
        name: &str,
        ret: Option<BasicTypeEnum<'ctx>>,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<Option<BasicValueEnum<'ctx>>> {
        let arg_types: Vec<_> = args.iter().map(|a| a.get_type().into()).collect();
        let fn_type = match ret {
            Some(t) => t.fn_type(&arg_types, false),
            None => self.ctx.void_type().fn_type(&arg_types, false),
        };
        let f = declare(self.module, name, fn_type);
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|a| (*a).into()).collect();
        Ok(self
            .builder
            .build_call(f, &args, "")?
            .try_as_basic_value()
            .basic())
    }

    /// Calls an intrinsic that returns a value.
    pub fn call_value(
        &self,
        name: &str,
        ret: BasicTypeEnum<'ctx>,
        args: &[BasicValueEnum<'ctx>],
    ) -> Result<BasicValueEnum<'ctx>> {
        self.call(name, Some(ret), args)?
            .ok_or_else(|| CodegenError::Llvm(format!("{name} returned nothing")))
    }

    /// `bar.sync 0`: every thread of the CTA waits for the others (or
    /// `barrier.sync 1, n` among the [`Lowering::barrier_threads`]).
    pub fn barrier(&self) -> Result<()> {
        match self.barrier_threads {
            None => self.call("llvm.nvvm.barrier0", None, &[])?,
            Some(n) => self.call(
                "llvm.nvvm.barrier.sync.cnt",
                None,
                &[self.i32_const(1).into(), self.i32_const(n as u64).into()],
            )?,
        };
        Ok(())
    }

    /// Runs `f`, then forgets the values it defined (code in a branch that
    /// never rejoins: a warp-specialized kernel's producer).
    pub fn apart<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        let values = self.values.clone();
        let current = self.smem.current;
        let out = f(self);
        self.values = values;
        self.smem.current = current;
        out
    }

    /// A fresh block after the current one.
    pub fn new_block(&self, name: &str) -> BasicBlock<'ctx> {
        self.ctx.append_basic_block(self.kernel, name)
    }

    pub fn region(&mut self, region: &Region) -> Result<()> {
        for op in &region.ops {
            self.op(op)?;
        }
        Ok(())
    }

    /// Lowers `op` through the op table the context was made with, with
    /// its shared-memory buffer as the current one.
    pub fn op(&mut self, op: &Op) -> Result<()> {
        let lower_op = self.lower_op;
        self.in_buffer_of(op, |lw| lower_op(lw, op))
    }

    /// Runs `f` with `op`'s shared-memory buffer as the current one.
    pub fn in_buffer_of<T>(
        &mut self,
        op: &Op,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let outer = self.smem.current;
        self.smem.current = buffer_of(self.shared, op.results.first());
        let out = f(self);
        self.smem.current = outer;
        out
    }

    /// The single result of `op`.
    pub fn result(&self, op: &Op) -> Result<ValueId> {
        op.results
            .first()
            .copied()
            .ok_or_else(|| CodegenError::Llvm("op without a result".into()))
    }
}

/// Declares `name` in `module` unless it already is.
pub fn declare<'ctx>(
    module: &Module<'ctx>,
    name: &str,
    fn_type: inkwell::types::FunctionType<'ctx>,
) -> FunctionValue<'ctx> {
    module
        .get_function(name)
        .unwrap_or_else(|| module.add_function(name, fn_type, None))
}

/// The LLVM integer type of `bits` bits (1, 8, 16, 32, 64 or 128).
pub fn int_type<'ctx>(lw: &Lowering<'_, 'ctx>, bits: u32) -> inkwell::types::IntType<'ctx> {
    match bits {
        1 => lw.ctx.bool_type(),
        8 => lw.ctx.i8_type(),
        16 => lw.ctx.i16_type(),
        64 => lw.ctx.i64_type(),
        128 => lw.ctx.i128_type(),
        _ => lw.ctx.i32_type(),
    }
}
