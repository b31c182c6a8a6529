//! Shared memory: the kernel's dynamic shared memory `@global_smem` and the
//! scratch buffers of layout conversions, transposes and reductions.
//!
//! Allocation rule: a scratch buffer lives only inside the op that uses it,
//! so every buffer starts at offset 0 (several buffers of one op are packed
//! one after another), and the kernel needs the largest op's total. Reuse is
//! made safe by barriers: each op waits before writing its buffer (earlier
//! readers are done) and after writing it (writers are done before anybody reads).
use super::types::shared_space;
use crate::codegen::lower::{Lowering, Result};
use inkwell::context::Context;
use inkwell::module::{Linkage, Module};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{GlobalValue, IntValue, PointerValue};

pub struct SharedMemory<'ctx> {
    global: GlobalValue<'ctx>,
    /// Peak bytes needed by any op.
    pub peak_bytes: usize,
    /// Bytes below which scratch buffers must not go: a pipelined loop's
    /// operand buffers live there while the loop runs (0 otherwise).
    pub floor: usize,
}

pub use crate::analysis::smem::{next_offset, BUFFER_ALIGN};

impl<'ctx> SharedMemory<'ctx> {
    pub fn new(ctx: &'ctx Context, module: &Module<'ctx>) -> Self {
        let ty = ctx.i8_type().array_type(0);
        let global = module.add_global(ty, Some(shared_space()), "global_smem");
        global.set_linkage(Linkage::External);
        global.set_alignment(BUFFER_ALIGN as u32);
        SharedMemory {
            global,
            peak_bytes: 0,
            floor: 0,
        }
    }

    /// Records that one op uses `bytes` bytes from offset 0.
    pub fn reserve(&mut self, bytes: usize) {
        let end = self.floor + bytes;
        self.peak_bytes = self.peak_bytes.max(end.next_multiple_of(BUFFER_ALIGN));
    }

    pub fn base(&self) -> PointerValue<'ctx> {
        self.global.as_pointer_value()
    }
}

impl<'a, 'ctx> Lowering<'a, 'ctx> {
    /// Pointer to element `index` of type `elem` of the buffer at byte `offset`.
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
                &[self.i32_const((self.smem.floor + offset) as u64)],
                "smem",
            )?
        };
        Ok(unsafe {
            self.builder
                .build_in_bounds_gep(elem, base, &[index], "smem_elem")?
        })
    }
}
