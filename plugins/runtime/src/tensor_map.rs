//! TMA tensor maps: a variant whose loops copy tiles with the tensor memory
//! accelerator takes, after its parameters, one 128-byte `CUtensorMap` per
//! copied tensor (manifest `tensor_maps`), passed by value. Each is encoded
//! at launch (`cuTensorMapEncodeTiled`, host only) from the arguments it
//! names: the tensor's base pointer, rows, columns and row stride.
//!
//! What the hardware demands of a tensor is checked first
//! ([`TensorMapSpec::shape`]): a base aligned to 16 bytes, a row stride of a
//! multiple of 16 bytes at least as long as a row, at least one row and
//! column. Inputs that fail it cannot run the variant; the bridge drops it
//! from the call's candidates ([`admits`]).
use crate::args::KernelArg;
use crate::driver::CallContext;
use crate::error::{Result, RuntimeError};
use crate::manifest::Variant;
use cudarc::driver::sys;
use serde::Deserialize;

/// One tensor-map parameter as the manifest describes it (the compiler's
/// `TensorMapParam`): the tensor's parameters by index among the kernel's,
/// and the map's dimensions over it, innermost first.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct TensorMapSpec {
    pub base: usize,
    pub rows: usize,
    pub cols: usize,
    pub row_stride: usize,
    pub elem_bytes: usize,
    /// 128, 64, 32 (rows of a box swizzled in that span) or 0.
    pub swizzle_bytes: u32,
    pub dims: Vec<MapDim>,
}

/// One dimension of a map over a row-major `[rows, cols]` tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub struct MapDim {
    pub extent: MapExtent,
    pub stride: MapStride,
    pub box_size: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapExtent {
    Fixed(u64),
    /// `ceil(rows / n)`.
    RowsOver(u64),
    /// `ceil(cols / n)`.
    ColsOver(u64),
}

/// Steps of a dimension: elements, or rows (times the row stride).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MapStride {
    Elements(u64),
    Rows(u64),
}

/// What one map is encoded from, for one launch (no allocation: every
/// launch checks each candidate's maps).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorShape {
    pub address: u64,
    rank: usize,
    dims: [u64; MAX_RANK],
    strides: [u64; MAX_RANK - 1],
    box_dims: [u32; MAX_RANK],
    pub elem_bytes: usize,
    pub swizzle_bytes: u32,
}

impl TensorShape {
    /// Elements of each dimension, innermost (contiguous) first.
    pub fn dims(&self) -> &[u64] {
        &self.dims[..self.rank]
    }

    /// Bytes between steps of each dimension but the first.
    pub fn strides(&self) -> &[u64] {
        &self.strides[..self.rank - 1]
    }

    pub fn box_dims(&self) -> &[u32] {
        &self.box_dims[..self.rank]
    }
}

/// Most dimensions a tensor map has.
const MAX_RANK: usize = 5;

/// Bytes of a stride TMA takes (exclusive bound).
const MAX_STRIDE: u64 = 1 << 40;

impl TensorMapSpec {
    /// The tensor these arguments describe, or why TMA cannot copy it.
    pub fn shape(&self, args: &[KernelArg]) -> std::result::Result<TensorShape, String> {
        let int = |i: usize| match args.get(i) {
            Some(KernelArg::I32(v)) => Ok(*v as i64),
            Some(KernelArg::I64(v)) => Ok(*v),
            other => Err(format!("argument {i} is {other:?}, not an int")),
        };
        let Some(KernelArg::Ptr(address)) = args.get(self.base).copied() else {
            return Err(format!("argument {} is not a pointer", self.base));
        };
        let (rows, cols, stride) = (int(self.rows)?, int(self.cols)?, int(self.row_stride)?);
        let elem = self.elem_bytes as i64;
        if rows < 1 || cols < 1 || rows > u32::MAX as i64 || cols > u32::MAX as i64 {
            return Err(format!(
                "a {rows} x {cols} tensor (TMA needs 1 to 2^32 of each)"
            ));
        }
        let stride_bytes = stride.saturating_mul(elem);
        if stride < cols || stride_bytes % 16 != 0 || stride_bytes as u64 >= MAX_STRIDE {
            return Err(format!(
                "a row stride of {stride} elements for {cols} columns (TMA needs a multiple \
                 of 16 bytes, at least a row)"
            ));
        }
        if address % 16 != 0 {
            return Err(format!(
                "a base address 0x{address:x} (TMA needs 16-byte alignment)"
            ));
        }
        let rank = self.dims.len();
        if !(1..=MAX_RANK).contains(&rank) || self.dims[0].stride != MapStride::Elements(1) {
            return Err(format!(
                "a map of {rank} dimensions (TMA takes 1 to 5, the first contiguous)"
            ));
        }
        let (rows, cols) = (rows as u64, cols as u64);
        let mut shape = TensorShape {
            address,
            rank,
            dims: [0; MAX_RANK],
            strides: [0; MAX_RANK - 1],
            box_dims: [0; MAX_RANK],
            elem_bytes: self.elem_bytes,
            swizzle_bytes: self.swizzle_bytes,
        };
        for (i, d) in self.dims.iter().enumerate() {
            shape.dims[i] = match d.extent {
                MapExtent::Fixed(n) => n,
                MapExtent::RowsOver(n) => rows.div_ceil(n.max(1)),
                MapExtent::ColsOver(n) => cols.div_ceil(n.max(1)),
            };
            shape.box_dims[i] = d.box_size;
            if i > 0 {
                let bytes = match d.stride {
                    MapStride::Elements(n) => n * self.elem_bytes as u64,
                    MapStride::Rows(n) => n * stride_bytes as u64,
                };
                if bytes % 16 != 0 || bytes >= MAX_STRIDE {
                    return Err(format!(
                        "a stride of {bytes} bytes (TMA needs a multiple of 16, < 2^40)"
                    ));
                }
                shape.strides[i - 1] = bytes;
            }
        }
        Ok(shape)
    }
}

/// Whether every tensor map of `variant` can be encoded for `args` (a
/// variant without maps admits anything).
pub fn admits(variant: &Variant, args: &[KernelArg]) -> bool {
    variant.tensor_maps.iter().all(|m| m.shape(args).is_ok())
}

/// A `CUtensorMap`, as the kernel parameter takes it.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub struct EncodedTensorMap(pub [u64; 16]);

fn data_type(elem_bytes: usize) -> Option<sys::CUtensorMapDataType> {
    use sys::CUtensorMapDataType::*;
    // The map moves bits: unsigned types of the element's width.
    Some(match elem_bytes {
        1 => CU_TENSOR_MAP_DATA_TYPE_UINT8,
        2 => CU_TENSOR_MAP_DATA_TYPE_UINT16,
        4 => CU_TENSOR_MAP_DATA_TYPE_UINT32,
        8 => CU_TENSOR_MAP_DATA_TYPE_UINT64,
        _ => return None,
    })
}

fn swizzle(bytes: u32) -> Option<sys::CUtensorMapSwizzle> {
    use sys::CUtensorMapSwizzle::*;
    Some(match bytes {
        0 => CU_TENSOR_MAP_SWIZZLE_NONE,
        32 => CU_TENSOR_MAP_SWIZZLE_32B,
        64 => CU_TENSOR_MAP_SWIZZLE_64B,
        128 => CU_TENSOR_MAP_SWIZZLE_128B,
        _ => return None,
    })
}

/// How far L2 widens the map's fetches: `TRITON_OPGEN_TMA_L2` (none, 64,
/// 128, 256), 128 bytes by default; read once (encoding runs every launch).
/// H100: 256 costs where rows are not 128-byte aligned (3000^3 on 128x192
/// TMA tiles 150 µs against 130 with 128 or none) and gains nothing where
/// they are (4096^3, 3008^3 even); bench/results/2026-11-27b-h100-misaligned-rows.
fn l2_promotion() -> sys::CUtensorMapL2promotion {
    use sys::CUtensorMapL2promotion::*;
    static PROMOTION: std::sync::OnceLock<sys::CUtensorMapL2promotion> = std::sync::OnceLock::new();
    *PROMOTION.get_or_init(|| match std::env::var("TRITON_OPGEN_TMA_L2").as_deref() {
        Ok("none") => CU_TENSOR_MAP_L2_PROMOTION_NONE,
        Ok("64") => CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        Ok("256") => CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        _ => CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
    })
}

/// Encodes `shape` (host only: no device or context needed).
pub fn encode(shape: &TensorShape, kernel: &str) -> Result<EncodedTensorMap> {
    let invalid = |reason: String| RuntimeError::InvalidLaunch {
        kernel: kernel.to_string(),
        reason,
    };
    let dtype = data_type(shape.elem_bytes).ok_or_else(|| {
        invalid(format!(
            "a tensor map of {}-byte elements",
            shape.elem_bytes
        ))
    })?;
    let swizzle = swizzle(shape.swizzle_bytes)
        .ok_or_else(|| invalid(format!("a {}-byte swizzle", shape.swizzle_bytes)))?;
    let rank = shape.rank;
    if !(1..=MAX_RANK).contains(&rank) {
        return Err(invalid(format!("a tensor map of rank {rank}")));
    }
    let mut map = EncodedTensorMap([0; 16]);
    let element_strides = [1u32; MAX_RANK];
    // SAFETY: every pointer is to a live local holding as many values as
    // the call reads for `rank` (checked above).
    unsafe {
        sys::cuTensorMapEncodeTiled(
            (&mut map as *mut EncodedTensorMap).cast(),
            dtype,
            rank as u32,
            shape.address as *mut std::ffi::c_void,
            shape.dims.as_ptr(),
            shape.strides.as_ptr(),
            shape.box_dims.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            l2_promotion(),
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .call("cuTensorMapEncodeTiled", || {
        format!(
            "kernel `{kernel}`: tensor at 0x{:x}, dims {:?}, strides {:?} B, box {:?}",
            shape.address,
            shape.dims(),
            shape.strides(),
            shape.box_dims()
        )
    })?;
    Ok(map)
}

/// Every tensor map of `variant` for `args` (the kernel's own arguments).
pub fn encode_all(variant: &Variant, args: &[KernelArg]) -> Result<Vec<EncodedTensorMap>> {
    variant
        .tensor_maps
        .iter()
        .map(|m| {
            let shape = m
                .shape(args)
                .map_err(|reason| RuntimeError::InvalidLaunch {
                    kernel: variant.kernel.clone(),
                    reason: format!("TMA cannot copy {reason}"),
                })?;
            encode(&shape, &variant.kernel)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(box_size: u32) -> MapDim {
        MapDim {
            extent: MapExtent::ColsOver(1),
            stride: MapStride::Elements(1),
            box_size,
        }
    }

    fn rows(box_size: u32) -> MapDim {
        MapDim {
            extent: MapExtent::RowsOver(1),
            stride: MapStride::Rows(1),
            box_size,
        }
    }

    /// `b: f16[K, N]` of the dot kernel: base 0, K 3, N 5, ldb 6.
    fn spec() -> TensorMapSpec {
        TensorMapSpec {
            base: 0,
            rows: 3,
            cols: 5,
            row_stride: 6,
            elem_bytes: 2,
            swizzle_bytes: 128,
            dims: vec![cols(64), rows(64)],
        }
    }

    fn args(addr: u64, k: i32, n: i32, ldb: i32) -> Vec<KernelArg> {
        vec![
            KernelArg::Ptr(addr),
            KernelArg::Ptr(0),
            KernelArg::Ptr(0),
            KernelArg::I32(k),
            KernelArg::I32(7),
            KernelArg::I32(n),
            KernelArg::I32(ldb),
        ]
    }

    #[test]
    fn shape_reads_the_named_arguments() {
        let s = spec().shape(&args(0x7000, 3000, 2999, 3000)).unwrap();
        assert_eq!(s.address, 0x7000);
        assert_eq!(s.dims(), [2999, 3000]);
        assert_eq!(s.strides(), [6000]);
        assert_eq!(s.box_dims(), [64, 64]);
    }

    #[test]
    fn folded_dimensions_follow_rows_and_columns() {
        // a with 8 warps: 8 rows of 1, 2 of 64, 4 of 8, then steps of 32.
        let digit = |n: u64, r: u64| MapDim {
            extent: MapExtent::Fixed(n),
            stride: MapStride::Rows(r),
            box_size: n as u32,
        };
        let a = TensorMapSpec {
            dims: vec![
                cols(64),
                digit(8, 1),
                digit(2, 64),
                digit(4, 8),
                MapDim {
                    extent: MapExtent::RowsOver(32),
                    stride: MapStride::Rows(32),
                    box_size: 1,
                },
            ],
            ..spec()
        };
        let s = a.shape(&args(0x7000, 3000, 2999, 3000)).unwrap();
        assert_eq!(s.dims(), [2999, 8, 2, 4, 94]);
        assert_eq!(s.strides(), [6000, 64 * 6000, 8 * 6000, 32 * 6000]);
        assert_eq!(s.box_dims(), [64, 8, 2, 4, 1]);
        // b in column blocks of 64: the block dimension steps 128 bytes.
        let b = TensorMapSpec {
            dims: vec![
                MapDim {
                    extent: MapExtent::Fixed(64),
                    stride: MapStride::Elements(1),
                    box_size: 64,
                },
                rows(64),
                MapDim {
                    extent: MapExtent::ColsOver(64),
                    stride: MapStride::Elements(64),
                    box_size: 4,
                },
            ],
            ..spec()
        };
        let s = b.shape(&args(0x7000, 3000, 3000, 3008)).unwrap();
        assert_eq!(s.dims(), [64, 3000, 47]);
        assert_eq!(s.strides(), [6016, 128]);
        assert_eq!(s.box_dims(), [64, 64, 4]);
        let too_many = TensorMapSpec {
            dims: vec![cols(64); 6],
            ..spec()
        };
        assert!(too_many
            .shape(&args(0x7000, 64, 64, 64))
            .unwrap_err()
            .contains("dimensions"));
    }

    #[test]
    fn shape_refuses_what_tma_cannot_copy() {
        let bad = [
            (args(0x7008, 64, 64, 64), "16-byte alignment"),
            (args(0x7000, 64, 60, 60), "multiple of 16 bytes"),
            (args(0x7000, 64, 64, 56), "at least a row"),
            (args(0x7000, 0, 64, 64), "1 to 2^32"),
            (args(0x7000, 64, 0, 64), "1 to 2^32"),
        ];
        for (a, why) in bad {
            let err = spec().shape(&a).unwrap_err();
            assert!(err.contains(why), "{err}");
        }
        let mut a = args(0x7000, 64, 64, 64);
        a[0] = KernelArg::I32(1);
        assert!(spec().shape(&a).unwrap_err().contains("not a pointer"));
    }

    #[test]
    fn encoded_map_is_the_parameters_size_and_alignment() {
        assert_eq!(std::mem::size_of::<EncodedTensorMap>(), 128);
        assert_eq!(std::mem::align_of::<EncodedTensorMap>(), 64);
        assert!(data_type(2).is_some() && data_type(3).is_none());
        assert!(swizzle(128).is_some() && swizzle(16).is_none());
    }
}
