//! Shared memory: the kernel's dynamic shared memory `@global_smem`, in which
//! the `allocate-shared-memory` pass placed every op's scratch buffer
//! ([`crate::ir::SharedPlan`]). While an op is lowered its buffer is the
//! current one: addresses are relative to it, and what the op writes must
//! fit in it (a misfit is a compiler bug, reported as such).
use super::types::shared_space;
use crate::analysis::smem::BUFFER_ALIGN;
use crate::codegen::lower::{Lowering, Result};
use crate::codegen::CodegenError;
use crate::ir::{SharedBuffer, SharedPlan};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{GlobalValue, IntValue, PointerValue};

pub struct SharedMemory<'ctx> {
    global: GlobalValue<'ctx>,
    /// The buffer of the op being lowered (empty when it has none).
    pub current: SharedBuffer,
}

impl<'ctx> SharedMemory<'ctx> {
    pub fn new(ctx: &'ctx Context, module: &Module<'ctx>) -> Self {
        let ty = ctx.i8_type().array_type(0);
        let global = module.add_global(ty, Some(shared_space()), "global_smem");
        global.set_linkage(Linkage::External);
        global.set_alignment(BUFFER_ALIGN as u32);
        SharedMemory {
            global,
            current: SharedBuffer::default(),
        }
    }

    /// Checks that the op being lowered may use `bytes` bytes of its buffer.
    pub fn claim(&self, bytes: usize) -> Result<()> {
        if bytes > self.current.bytes {
            return Err(CodegenError::Llvm(format!(
                "an op stages {bytes} bytes through shared memory, but the shared-memory \
                 plan gave it {} (allocate-shared-memory and codegen disagree)",
                self.current.bytes
            )));
        }
        Ok(())
    }

    pub fn base(&self) -> PointerValue<'ctx> {
        self.global.as_pointer_value()
    }
}

/// The plan's buffer for the op whose first result is `result`.
pub fn buffer_of(plan: &SharedPlan, result: Option<&crate::ir::ValueId>) -> SharedBuffer {
    result
        .and_then(|r| plan.buffers.get(r))
        .copied()
        .unwrap_or_default()
}

impl<'a, 'ctx> Lowering<'a, 'ctx> {
    /// `bar.sync` before the current op writes its buffer, when the
    /// `place-barriers` pass found that earlier accesses may overlap it.
    pub fn barrier_before_writing(&self) -> Result<()> {
        if self.smem.current.barrier_first {
            self.barrier()?;
        }
        Ok(())
    }

    /// Pointer to element `index` of type `elem` at byte `offset` of the
    /// current op's buffer.
    pub fn smem_elem_ptr(
        &self,
        offset: usize,
        elem: BasicTypeEnum<'ctx>,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>> {
        let i8t = self.ctx.i8_type();
        let base = unsafe {
            self.builder.build_in_bounds_gep(
                i8t,
                self.smem.base(),
                &[self.i32_const((self.smem.current.offset + offset) as u64)],
                "smem",
            )?
        };
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(elem, base, &[index], "smem_elem")?
        })
    }
}
