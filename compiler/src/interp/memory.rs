//! A flat simulated global address space. Every buffer gets a base address
//! aligned to 256 bytes with a gap after it, so an access that strays past the
//! end of one buffer lands in no buffer and is reported, never silently served
//! from a neighbour. Pointers are plain `u64` addresses; address 0 is never valid.

use super::error::{InterpError, InterpResult};
use crate::ir::DType;
use crate::span::Span;
use half::{bf16, f16};
use std::cell::Cell;

const FIRST_BASE: u64 = 0x1000_0000;
const BASE_ALIGN: u64 = 256;
/// Unmapped bytes left after every buffer (on top of the alignment padding).
const GAP: u64 = 4096;

struct Buffer {
    base: u64,
    dtype: DType,
    len: usize,
    bytes: Vec<u8>,
}

impl Buffer {
    fn end(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }
}

/// Host buffers of one kernel launch (or several).
pub struct Memory {
    /// Sorted by `base`: addresses only grow.
    buffers: Vec<Buffer>,
    next_base: u64,
    /// Index of the buffer the last access hit: most accesses of a tile go to
    /// the same buffer, so this skips the search.
    last_hit: Cell<usize>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

/// A number type that lives in [`Memory`] (little-endian, like the GPU).
pub trait Element: Copy {
    const DTYPE: DType;
    fn write_le(self, out: &mut [u8]);
    fn read_le(bytes: &[u8]) -> Self;
}

macro_rules! element_via_le_bytes {
    ($t:ty, $dtype:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dtype;
            fn write_le(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
            fn read_le(bytes: &[u8]) -> Self {
                let mut raw = [0u8; std::mem::size_of::<$t>()];
                raw.copy_from_slice(bytes);
                <$t>::from_le_bytes(raw)
            }
        }
    };
}

element_via_le_bytes!(f32, DType::F32);
element_via_le_bytes!(f64, DType::F64);
element_via_le_bytes!(f16, DType::F16);
element_via_le_bytes!(bf16, DType::BF16);
element_via_le_bytes!(i8, DType::I8);
element_via_le_bytes!(i16, DType::I16);
element_via_le_bytes!(i32, DType::I32);
element_via_le_bytes!(i64, DType::I64);

impl Element for bool {
    const DTYPE: DType = DType::I1;
    fn write_le(self, out: &mut [u8]) {
        out[0] = self as u8;
    }
    fn read_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
}

/// One buffer's address range, found once per tile access.
pub(crate) struct Window {
    index: usize,
    pub base: u64,
    pub len: u64,
}

/// Why an access failed; the caller adds what was accessed and the span.
pub(crate) struct Fault(pub String);

impl Memory {
    pub fn new() -> Self {
        Memory {
            buffers: Vec::new(),
            next_base: FIRST_BASE,
            last_hit: Cell::new(0),
        }
    }

    /// A zero-filled buffer of `len` elements of `dtype`; returns its base address.
    pub fn alloc(&mut self, dtype: DType, len: usize) -> u64 {
        let size = len * dtype.size_bytes();
        let base = self.next_base;
        self.next_base = (base + size as u64 + GAP).next_multiple_of(BASE_ALIGN);
        self.buffers.push(Buffer {
            base,
            dtype,
            len,
            bytes: vec![0; size],
        });
        base
    }

    /// A buffer holding a copy of `data`; returns its base address.
    pub fn alloc_slice<T: Element>(&mut self, data: &[T]) -> u64 {
        let base = self.alloc(T::DTYPE, data.len());
        let buf = self.buffers.last_mut().expect("just allocated");
        let size = T::DTYPE.size_bytes();
        for (chunk, &x) in buf.bytes.chunks_exact_mut(size).zip(data) {
            x.write_le(chunk);
        }
        base
    }

    /// `len` elements of `T` starting at `addr` (anywhere inside one buffer).
    pub fn read<T: Element>(&self, addr: u64, len: usize) -> InterpResult<Vec<T>> {
        let size = T::DTYPE.size_bytes();
        let bytes = self
            .range(addr, len * size, size)
            .map_err(|f| host_error("read", T::DTYPE, len, addr, f))?;
        Ok(bytes.chunks_exact(size).map(T::read_le).collect())
    }

    /// Overwrites `data.len()` elements starting at `addr` (inside one buffer).
    pub fn write<T: Element>(&mut self, addr: u64, data: &[T]) -> InterpResult<()> {
        let size = T::DTYPE.size_bytes();
        let bytes = self
            .range_mut(addr, data.len() * size, size)
            .map_err(|f| host_error("write", T::DTYPE, data.len(), addr, f))?;
        for (chunk, &x) in bytes.chunks_exact_mut(size).zip(data) {
            x.write_le(chunk);
        }
        Ok(())
    }

    /// The buffer holding `addr`, for tile accesses that check each lane
    /// against it directly and only fall back to [`Memory::element`] on a miss.
    pub(crate) fn window(&self, addr: u64) -> Option<Window> {
        let after = self.buffers.partition_point(|b| b.base <= addr);
        let index = after.checked_sub(1)?;
        let b = &self.buffers[index];
        Some(Window {
            index,
            base: b.base,
            len: b.bytes.len() as u64,
        })
    }

    pub(crate) fn window_bytes(&self, w: &Window) -> &[u8] {
        &self.buffers[w.index].bytes
    }

    pub(crate) fn window_bytes_mut(&mut self, w: &Window) -> &mut [u8] {
        &mut self.buffers[w.index].bytes
    }

    /// The bytes of one element at `addr`, which must be aligned to `size`.
    pub(crate) fn element(&self, addr: u64, size: usize) -> Result<&[u8], Fault> {
        self.range(addr, size, size)
    }

    pub(crate) fn element_mut(&mut self, addr: u64, size: usize) -> Result<&mut [u8], Fault> {
        self.range_mut(addr, size, size)
    }

    fn range(&self, addr: u64, size: usize, align: usize) -> Result<&[u8], Fault> {
        let (index, offset) = self.locate(addr, size, align)?;
        Ok(&self.buffers[index].bytes[offset..offset + size])
    }

    fn range_mut(&mut self, addr: u64, size: usize, align: usize) -> Result<&mut [u8], Fault> {
        let (index, offset) = self.locate(addr, size, align)?;
        Ok(&mut self.buffers[index].bytes[offset..offset + size])
    }

    /// Buffer index and byte offset of `[addr, addr + size)`.
    fn locate(&self, addr: u64, size: usize, align: usize) -> Result<(usize, usize), Fault> {
        if align > 1 && addr % align as u64 != 0 {
            return Err(Fault(format!(
                "is misaligned (the address is not a multiple of {align})"
            )));
        }
        let hit = self.last_hit.get();
        let index = match self.buffers.get(hit) {
            Some(b) if b.base <= addr && addr < b.end() => hit,
            _ => {
                // The last buffer whose base is at or below `addr`.
                let after = self.buffers.partition_point(|b| b.base <= addr);
                if after == 0 {
                    return Err(self.outside(addr));
                }
                after - 1
            }
        };
        let buf = &self.buffers[index];
        let end = addr.checked_add(size as u64);
        if end.is_none_or(|e| e > buf.end()) {
            return Err(self.outside(addr));
        }
        self.last_hit.set(index);
        Ok((index, (addr - buf.base) as usize))
    }

    fn outside(&self, addr: u64) -> Fault {
        let after = self.buffers.partition_point(|b| b.base <= addr);
        let detail = match after.checked_sub(1).map(|i| &self.buffers[i]) {
            None => "below every buffer".to_string(),
            Some(b) if addr < b.end() => format!(
                "runs past the end of the buffer at {:#x} ({}[{}])",
                b.base,
                b.dtype.name(),
                b.len
            ),
            Some(b) => format!(
                "{} bytes past the end of the buffer at {:#x} ({}[{}])",
                addr - b.end(),
                b.base,
                b.dtype.name(),
                b.len
            ),
        };
        Fault(format!("is outside every buffer ({detail})"))
    }
}

fn host_error(what: &str, dtype: DType, len: usize, addr: u64, fault: Fault) -> InterpError {
    InterpError::new(
        Span::default(),
        format!(
            "host {what} of {len} x {} at address {addr:#x} {}",
            dtype.name(),
            fault.0
        ),
    )
}

macro_rules! typed_access {
    ($t:ty, $alloc:ident, $read:ident, $write:ident) => {
        impl Memory {
            pub fn $alloc(&mut self, data: &[$t]) -> u64 {
                self.alloc_slice(data)
            }
            pub fn $read(&self, addr: u64, len: usize) -> InterpResult<Vec<$t>> {
                self.read(addr, len)
            }
            pub fn $write(&mut self, addr: u64, data: &[$t]) -> InterpResult<()> {
                self.write(addr, data)
            }
        }
    };
}

typed_access!(f32, alloc_f32, read_f32, write_f32);
typed_access!(f64, alloc_f64, read_f64, write_f64);
typed_access!(f16, alloc_f16, read_f16, write_f16);
typed_access!(bf16, alloc_bf16, read_bf16, write_bf16);
typed_access!(i8, alloc_i8, read_i8, write_i8);
typed_access!(i16, alloc_i16, read_i16, write_i16);
typed_access!(i32, alloc_i32, read_i32, write_i32);
typed_access!(i64, alloc_i64, read_i64, write_i64);
typed_access!(bool, alloc_bool, read_bool, write_bool);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_aligned_and_apart() {
        let mut mem = Memory::new();
        let a = mem.alloc(DType::F32, 3);
        let b = mem.alloc(DType::F64, 5);
        assert_eq!(a % 256, 0);
        assert_eq!(b % 256, 0);
        assert!(b >= a + 12 + GAP);
    }

    #[test]
    fn round_trips_and_reports_strays() {
        let mut mem = Memory::new();
        let a = mem.alloc_i32(&[1, -2, 3]);
        assert_eq!(mem.read_i32(a + 4, 2).unwrap(), vec![-2, 3]);
        mem.write_i32(a, &[7]).unwrap();
        assert_eq!(mem.read_i32(a, 3).unwrap(), vec![7, -2, 3]);
        let err = mem.read_i32(a + 8, 2).unwrap_err();
        assert!(
            err.message.contains("outside every buffer"),
            "{}",
            err.message
        );
        assert!(mem
            .read_i32(a + 2, 1)
            .unwrap_err()
            .message
            .contains("misaligned"));
        assert!(mem
            .read_i32(0, 1)
            .unwrap_err()
            .message
            .contains("below every buffer"));
        assert!(mem.element(a + 12 + 8, 4).is_err());
    }

    #[test]
    fn zero_length_buffers_hold_nothing() {
        let mut mem = Memory::new();
        let a = mem.alloc(DType::F32, 0);
        assert!(mem.read_f32(a, 0).is_ok());
        assert!(mem.read_f32(a, 1).is_err());
    }
}
