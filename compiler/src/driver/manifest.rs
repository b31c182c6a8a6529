//! The JSON manifest written next to the PTX of a tuning space: what a
//! launcher needs to pick, load and call each variant.

use crate::ir::{Function, ParamAttrs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The kernel source, as given on the command line.
    pub source: String,
    /// `sm_80` or `sm_90`.
    pub arch: String,
    /// Names of the list-valued macros: the tuning knobs.
    pub tuning_macros: Vec<String>,
    pub variants: Vec<Variant>,
}

/// One kernel compiled for one point of the tuning space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Variant {
    /// PTX file, relative to the manifest.
    pub file: String,
    /// Entry point in the PTX.
    pub kernel: String,
    /// Every `-D` macro of this point (list macros at their value here).
    pub macros: BTreeMap<String, String>,
    pub num_warps: u32,
    /// Dynamic shared memory to pass at launch, bytes.
    pub shared_bytes: usize,
    /// Programs per grid point along axis 2 (a split-K cluster): launchers
    /// multiply the grid's z (which must be 1) by it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub cluster_splits: u32,
    /// Programs per cluster along axis 0 (TMA multicast pairs): a launch's
    /// grid x must be a multiple of it.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub cluster_x: u32,
    /// Warps launched besides `num_warps` (a warp-specialized kernel's
    /// producer warpgroup): a launch's block has `32 (num_warps +
    /// producer_warps)` threads.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub producer_warps: u32,
    /// Persistent: a launch runs at most the programs the GPU holds at
    /// once and passes the grid's x as asked as a last argument, after the
    /// tensor maps (the programs loop over the tiles).
    #[serde(default, skip_serializing_if = "is_false")]
    pub persistent: bool,
    pub params: Vec<ParamEntry>,
    /// 128-byte `CUtensorMap` parameters after `params` (TMA copies), each
    /// encoded at launch from the parameters it names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tensor_maps: Vec<crate::ir::TensorMapParam>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamEntry {
    pub name: String,
    /// Triton-IR type: `f32*`, `i32`, `f16*`.
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(flatten)]
    pub attrs: ParamAttrs,
}

impl ParamEntry {
    pub fn of(func: &Function) -> Vec<ParamEntry> {
        func.params
            .iter()
            .map(|p| ParamEntry {
                name: p.name.clone(),
                ty: func.ty(p.value).to_string(),
                attrs: p.attrs.clone(),
            })
            .collect()
    }
}
