//! Memory ops: `AddPtr`, `Load`, `Store`. Lanes where the mask is false never
//! touch memory; every other lane must hit one buffer, naturally aligned.

use super::memory::{Element, Fault, Memory};
use super::value::{Data, Stored, Tile};
use crate::ir::DType;
use half::{bf16, f16};

pub(crate) fn add_ptr(ptr: &Tile, offset: &Tile) -> Result<Data, String> {
    let (Data::Ptr(p), Data::Int(o)) = (&ptr.data, &offset.data) else {
        return Err(format!(
            "pointer arithmetic on {} + {}",
            ptr.ty(),
            offset.ty()
        ));
    };
    if p.len() != o.len() {
        return Err(format!(
            "pointer arithmetic on {} + {}: shapes differ",
            ptr.ty(),
            offset.ty()
        ));
    }
    let size = ptr.dtype().size_bytes() as u64;
    Ok(Data::Ptr(
        p.iter()
            .zip(o)
            .map(|(&p, &o)| p.wrapping_add((o as u64).wrapping_mul(size)))
            .collect(),
    ))
}

pub(crate) fn addresses(ptr: &Tile) -> Result<&[u64], String> {
    match &ptr.data {
        Data::Ptr(p) => Ok(p),
        _ => Err(format!(
            "memory access through {}, which is not a pointer",
            ptr.ty()
        )),
    }
}

/// The mask as a slice of the pointer's length (None: every lane is on).
pub(crate) fn mask_lanes(mask: Option<&Tile>, lanes: usize) -> Result<Option<&[bool]>, String> {
    let Some(mask) = mask else { return Ok(None) };
    match &mask.data {
        Data::Bool(m) if m.len() == lanes => Ok(Some(m)),
        _ => Err(format!("mask {} does not fit {lanes} pointers", mask.ty())),
    }
}

pub(crate) fn access_error(
    what: &str,
    d: DType,
    addr: u64,
    lane: usize,
    lanes: usize,
    f: Fault,
) -> String {
    let at = if lanes > 1 {
        format!(" (lane {lane} of {lanes})")
    } else {
        String::new()
    };
    format!("{what} of {} at address {addr:#x} {}{at}", d.name(), f.0)
}

pub(crate) fn load(
    mem: &Memory,
    ptr: &Tile,
    mask: Option<&Tile>,
    other: Option<&Tile>,
) -> Result<Data, String> {
    let addrs = addresses(ptr)?;
    let mask = mask_lanes(mask, addrs.len())?;
    let d = ptr.dtype();
    let lanes = Lanes {
        mem,
        d,
        addrs,
        mask,
    };
    match d {
        DType::F32 => lanes.load(other, <f32 as Element>::read_le),
        DType::F16 => lanes.load(other, |b| f16::read_le(b).to_f32()),
        DType::BF16 => lanes.load(other, |b| bf16::read_le(b).to_f32()),
        DType::F64 => lanes.load(other, <f64 as Element>::read_le),
        DType::I8 => lanes.load(other, |b| i8::read_le(b) as i64),
        DType::I16 => lanes.load(other, |b| i16::read_le(b) as i64),
        DType::I32 => lanes.load(other, |b| i32::read_le(b) as i64),
        DType::I64 => lanes.load(other, <i64 as Element>::read_le),
        DType::I1 => lanes.load(other, <bool as Element>::read_le),
    }
}

pub(crate) fn store(
    mem: &mut Memory,
    ptr: &Tile,
    value: &Tile,
    mask: Option<&Tile>,
) -> Result<(), String> {
    let addrs = addresses(ptr)?;
    let mask = mask_lanes(mask, addrs.len())?;
    let d = ptr.dtype();
    let v = &value.data;
    if v.len() != addrs.len() {
        return Err(format!(
            "store of {} through {}: shapes differ",
            value.ty(),
            ptr.ty()
        ));
    }
    match d {
        DType::F32 => store_lanes(mem, d, addrs, mask, v, |x: f32, o| x.write_le(o)),
        DType::F16 => store_lanes(mem, d, addrs, mask, v, |x: f32, o| {
            f16::from_f32(x).write_le(o)
        }),
        DType::BF16 => store_lanes(mem, d, addrs, mask, v, |x: f32, o| {
            bf16::from_f32(x).write_le(o)
        }),
        DType::F64 => store_lanes(mem, d, addrs, mask, v, |x: f64, o| x.write_le(o)),
        DType::I8 => store_lanes(mem, d, addrs, mask, v, |x: i64, o| (x as i8).write_le(o)),
        DType::I16 => store_lanes(mem, d, addrs, mask, v, |x: i64, o| (x as i16).write_le(o)),
        DType::I32 => store_lanes(mem, d, addrs, mask, v, |x: i64, o| (x as i32).write_le(o)),
        DType::I64 => store_lanes(mem, d, addrs, mask, v, |x: i64, o| x.write_le(o)),
        DType::I1 => store_lanes(mem, d, addrs, mask, v, |x: bool, o| x.write_le(o)),
    }
    .map_err(|e| e.unwrap_or_else(|| format!("store of {} through {}", value.ty(), ptr.ty())))
}

struct Lanes<'a> {
    mem: &'a Memory,
    d: DType,
    addrs: &'a [u64],
    mask: Option<&'a [bool]>,
}

impl Lanes<'_> {
    fn load<T: Stored>(
        &self,
        other: Option<&Tile>,
        decode: fn(&[u8]) -> T,
    ) -> Result<Data, String> {
        let n = self.addrs.len();
        let zeros;
        let other: &[T] = match other {
            None => {
                zeros = vec![T::default(); n];
                &zeros
            }
            Some(t) => match T::slice(&t.data) {
                Some(o) if o.len() == n => o,
                _ => return Err(format!("`other` {} does not fit the loaded tile", t.ty())),
            },
        };
        let size = self.d.size_bytes();
        let window = first_active(self.addrs, self.mask).and_then(|a| self.mem.window(a));
        let (base, len) = window.as_ref().map_or((0, 0), |w| (w.base, w.len));
        let bytes = window
            .as_ref()
            .map_or(&[][..], |w| self.mem.window_bytes(w));
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            if let Some(m) = self.mask {
                if !m[i] {
                    out.push(other[i]);
                    continue;
                }
            }
            let addr = self.addrs[i];
            // Fast path: inside the tile's buffer and aligned (checked inline
            // because debug builds do not inline calls).
            let off = addr.wrapping_sub(base);
            if off < len && len - off >= size as u64 && addr % size as u64 == 0 {
                let off = off as usize;
                out.push(decode(&bytes[off..off + size]));
                continue;
            }
            match self.mem.element(addr, size) {
                Ok(b) => out.push(decode(b)),
                Err(f) => return Err(access_error("load", self.d, addr, i, n, f)),
            }
        }
        Ok(T::into_data(out))
    }
}

/// The address of the first lane the mask lets through.
fn first_active(addrs: &[u64], mask: Option<&[bool]>) -> Option<u64> {
    match mask {
        None => addrs.first().copied(),
        Some(m) => m.iter().position(|&on| on).map(|i| addrs[i]),
    }
}

/// `Err(None)`: the value's storage does not fit the pointee.
fn store_lanes<T: Stored>(
    mem: &mut Memory,
    d: DType,
    addrs: &[u64],
    mask: Option<&[bool]>,
    value: &Data,
    encode: fn(T, &mut [u8]),
) -> Result<(), Option<String>> {
    let values = T::slice(value).ok_or(None)?;
    let size = d.size_bytes();
    let n = addrs.len();
    let window = first_active(addrs, mask).and_then(|a| mem.window(a));
    let (base, len) = window.as_ref().map_or((0, 0), |w| (w.base, w.len));
    for i in 0..n {
        if let Some(m) = mask {
            if !m[i] {
                continue;
            }
        }
        let addr = addrs[i];
        let off = addr.wrapping_sub(base);
        if let Some(w) = &window {
            if off < len && len - off >= size as u64 && addr % size as u64 == 0 {
                let off = off as usize;
                encode(values[i], &mut mem.window_bytes_mut(w)[off..off + size]);
                continue;
            }
        }
        match mem.element_mut(addr, size) {
            Ok(bytes) => encode(values[i], bytes),
            Err(f) => return Err(Some(access_error("store", d, addr, i, n, f))),
        }
    }
    Ok(())
}
