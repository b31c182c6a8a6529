//! `AtomicRmw` and `AtomicCas`. Programs run one after another, so atomics are
//! plain read-modify-writes, lane by lane in row-major order; they return the
//! old values (zero on masked-off lanes). CAS compares bit patterns, as the GPU does.

use super::access::{access_error, addresses, mask_lanes};
use super::memory::{Element, Memory};
use super::value::{round_f64, wrap_int, Data, Scalar, Tile};
use crate::ir::{AtomicOp, DType};
use half::{bf16, f16};

pub(crate) fn atomic_rmw(
    mem: &mut Memory,
    op: AtomicOp,
    ptr: &Tile,
    value: &Tile,
    mask: Option<&Tile>,
) -> Result<Data, String> {
    let addrs = addresses(ptr)?;
    let mask = mask_lanes(mask, addrs.len())?;
    fits(ptr, value)?;
    let d = ptr.dtype();
    let size = d.size_bytes();
    let mut old = Data::splat(value.scalar, Scalar::Int(0), addrs.len())?;
    for (i, &addr) in addrs.iter().enumerate() {
        if mask.is_some_and(|m| !m[i]) {
            continue;
        }
        let bytes = mem
            .element_mut(addr, size)
            .map_err(|f| access_error("atomic", d, addr, i, addrs.len(), f))?;
        let before = read_scalar(bytes, d);
        let after = combine(op, before, value.data.get(i), d)?;
        write_scalar(after, d, bytes);
        old.set(i, before);
    }
    Ok(old)
}

pub(crate) fn atomic_cas(
    mem: &mut Memory,
    ptr: &Tile,
    cmp: &Tile,
    value: &Tile,
) -> Result<Data, String> {
    let addrs = addresses(ptr)?;
    fits(ptr, value)?;
    fits(ptr, cmp)?;
    let d = ptr.dtype();
    let size = d.size_bytes();
    let mut old = Data::splat(value.scalar, Scalar::Int(0), addrs.len())?;
    let mut expected = [0u8; 8];
    for (i, &addr) in addrs.iter().enumerate() {
        let bytes = mem
            .element_mut(addr, size)
            .map_err(|f| access_error("atomic compare-and-swap", d, addr, i, addrs.len(), f))?;
        let before = read_scalar(bytes, d);
        write_scalar(cmp.data.get(i), d, &mut expected[..size]);
        if bytes[..] == expected[..size] {
            write_scalar(value.data.get(i), d, bytes);
        }
        old.set(i, before);
    }
    Ok(old)
}

fn fits(ptr: &Tile, value: &Tile) -> Result<(), String> {
    if value.len() != ptr.len() || value.scalar.is_ptr() || value.dtype() != ptr.dtype() {
        return Err(format!("atomic on {} with {}", ptr.ty(), value.ty()));
    }
    Ok(())
}

fn combine(op: AtomicOp, old: Scalar, v: Scalar, d: DType) -> Result<Scalar, String> {
    Ok(match (old, v) {
        (_, v) if op == AtomicOp::Exchange => v,
        (Scalar::Float(a), Scalar::Float(b)) => Scalar::Float(match op {
            // One rounding from the exact f64 sum of two narrower floats.
            AtomicOp::Add => round_f64(a + b, d),
            AtomicOp::Max => a.max(b),
            _ => a.min(b),
        }),
        (Scalar::Int(a), Scalar::Int(b)) => Scalar::Int(match op {
            AtomicOp::Add => wrap_int(a.wrapping_add(b), d),
            AtomicOp::Max => a.max(b),
            _ => a.min(b),
        }),
        (Scalar::Bool(a), Scalar::Bool(b)) if op != AtomicOp::Add => {
            Scalar::Bool(if op == AtomicOp::Max { a | b } else { a & b })
        }
        _ => return Err(format!("atomic {op:?} on {}", d.name())),
    })
}

fn read_scalar(b: &[u8], d: DType) -> Scalar {
    match d {
        DType::I1 => Scalar::Bool(bool::read_le(b)),
        DType::I8 => Scalar::Int(i8::read_le(b) as i64),
        DType::I16 => Scalar::Int(i16::read_le(b) as i64),
        DType::I32 => Scalar::Int(i32::read_le(b) as i64),
        DType::I64 => Scalar::Int(i64::read_le(b)),
        DType::F16 => Scalar::Float(f16::read_le(b).to_f64()),
        DType::BF16 => Scalar::Float(bf16::read_le(b).to_f64()),
        DType::F32 => Scalar::Float(f32::read_le(b) as f64),
        DType::F64 => Scalar::Float(f64::read_le(b)),
    }
}

/// Writes a value already in the stored form of `d` (exact in the type).
fn write_scalar(x: Scalar, d: DType, out: &mut [u8]) {
    match (x, d) {
        (Scalar::Bool(v), _) => v.write_le(out),
        (Scalar::Int(v), DType::I8) => (v as i8).write_le(out),
        (Scalar::Int(v), DType::I16) => (v as i16).write_le(out),
        (Scalar::Int(v), DType::I32) => (v as i32).write_le(out),
        (Scalar::Int(v), _) => v.write_le(out),
        (Scalar::Float(v), DType::F16) => f16::from_f64(v).write_le(out),
        (Scalar::Float(v), DType::BF16) => bf16::from_f64(v).write_le(out),
        (Scalar::Float(v), DType::F32) => (v as f32).write_le(out),
        (Scalar::Float(v), _) => v.write_le(out),
        (Scalar::Ptr(p), _) => (p as i64).write_le(out),
    }
}
