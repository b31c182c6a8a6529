//! Alignment / contiguity / constancy of every tile value, per axis (the
//! legacy Triton "axis info" analysis): what lets codegen vectorize memory ops.
use crate::ir::{Function, ValueId};
use std::collections::HashMap;

/// Facts about one value, one entry per axis (one entry for scalars).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisInfo {
    /// Length of runs of consecutive integers (or consecutive addresses, in
    /// elements, for pointers) along this axis; 1 when nothing is known.
    pub contiguity: Vec<u64>,
    /// Largest power of two dividing the first element of each run (for
    /// pointers: the address in bytes).
    pub divisibility: Vec<u64>,
    /// Length of runs of equal values along this axis.
    pub constancy: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct AxisInfoMap {
    pub info: HashMap<ValueId, AxisInfo>,
}

pub fn analyze(func: &Function) -> AxisInfoMap {
    let _ = func;
    AxisInfoMap::default()
}
