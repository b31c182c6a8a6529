//! Buffers in the kernel's dynamic shared memory: their alignment and packing
//! (the pipeline's operand stages and codegen's scratch buffers follow it).

/// Alignment of every buffer inside the dynamic shared memory.
pub const BUFFER_ALIGN: usize = 16;

/// Alignment of a pipelined loop's operand buffers: wgmma reads its 128-byte
/// swizzle from the address bits, whose pattern repeats every 8 rows of 128
/// bytes, so a stage must start on a multiple of 1024 bytes (the stages
/// inside are multiples of it).
pub const PIPELINE_BUFFER_ALIGN: usize = 1024;

/// Byte offset after a buffer of `bytes` bytes at `offset`, aligned for the next one.
pub fn next_offset(offset: usize, bytes: usize) -> usize {
    (offset + bytes).next_multiple_of(BUFFER_ALIGN)
}

/// Elements added to each row of the element-by-element fallback: one 4-byte bank's worth.
pub fn padding(elem_bytes: usize) -> usize {
    (4 / elem_bytes.max(1)).max(1)
}
