//! Alignment / contiguity / constancy of every tile value, per axis (the
//! legacy Triton "axis info" analysis): what lets codegen vectorize memory ops.
//!
//! Facts start at parameters (their attributes), constants and ranges, flow
//! through the ops by the rules in `transfer`, meet at `If` joins, and reach a
//! fixed point over `While` loops (start from the initial values, meet with
//! what the body yields, repeat until nothing changes). See `facts` for what
//! each number means exactly.
mod facts;
mod transfer;

pub use facts::MAX_DIVISIBILITY;

use crate::ir::{Function, OpKind, Region, ScalarType, Type, ValueId};
use std::collections::HashMap;
use transfer::Facts;

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
    /// The value of every element, when it is one known integer (or `i1`).
    pub value: Option<i64>,
}

#[derive(Clone, Debug, Default)]
pub struct AxisInfoMap {
    pub info: HashMap<ValueId, AxisInfo>,
    /// Whether loads may read runs misaligned ([`AxisInfoMap::run_width_along`]
    /// is 1 without): the compile's `misaligned_runs` option.
    pub misaligned_runs: bool,
}

/// Widest vector access, in bytes.
const MAX_VECTOR_BYTES: u64 = 16;

/// Narrowest run read misaligned, in bytes: the shift moves 32-bit words.
pub const MISALIGNED_RUN_MIN_BYTES: u64 = 4;

/// Loops whose facts still change after this many rounds fall back to nothing known.
const MAX_LOOP_ROUNDS: usize = 64;

impl AxisInfoMap {
    pub fn get(&self, v: ValueId) -> Option<&AxisInfo> {
        self.info.get(&v)
    }

    /// Axes of `v` from the most contiguous to the least (ties: the later
    /// axis first, as memory is row-major): the thread order coalescing wants.
    pub fn contiguity_order(&self, v: ValueId) -> Vec<usize> {
        let Some(i) = self.get(v) else {
            return Vec::new();
        };
        let mut axes: Vec<usize> = (0..i.axes()).rev().collect();
        axes.sort_by(|&a, &b| i.contiguity[b].cmp(&i.contiguity[a]));
        axes
    }

    /// One line per analysed value, in id order, for debugging:
    /// `%off: contiguity [1024] divisibility [1024] constancy [1]`.
    pub fn dump(&self, func: &Function) -> String {
        let names = crate::ir::printer::ValueNames::new(func);
        let mut ids: Vec<&ValueId> = self.info.keys().collect();
        ids.sort();
        let mut out = String::new();
        for v in ids {
            let i = &self.info[v];
            out.push_str(&format!(
                "{}: contiguity {:?} divisibility {:?} constancy {:?}",
                names.get(*v),
                i.contiguity,
                i.divisibility,
                i.constancy
            ));
            if let Some(x) = i.value {
                out.push_str(&format!(" value {x}"));
            }
            out.push('\n');
        }
        out
    }

    /// Elements along the last axis one thread may load or store with one
    /// vector access through the pointer tile `ptr`: the largest power of two
    /// that fits in a run of consecutive addresses, keeps the access aligned,
    /// is at most 16 bytes, and (with a mask) stays inside a run of equal
    /// mask lanes. At least 1.
    pub fn vector_width(&self, ptr: ValueId, mask: Option<ValueId>, func: &Function) -> u32 {
        let rank = func
            .values
            .get(ptr.0 as usize)
            .map_or(0, |v| v.ty.shape.len());
        if rank == 0 {
            return 1;
        }
        self.vector_width_along(ptr, mask, rank - 1, func)
    }

    /// [`AxisInfoMap::vector_width`] along any `axis` (for layouts whose
    /// fastest axis is not the last, see [`AxisInfoMap::contiguity_order`]).
    pub fn vector_width_along(
        &self,
        ptr: ValueId,
        mask: Option<ValueId>,
        axis: usize,
        func: &Function,
    ) -> u32 {
        // Runs must split into whole vectors: a power of two dividing them.
        let Some((p, elem, mut runs)) = self.pointer_runs(ptr, axis, func) else {
            return 1;
        };
        if let Some(m) = mask {
            match self.get(m) {
                Some(mi) if mi.axes() == p.axes() => {
                    runs = facts::gcd(runs, mi.constancy[axis]);
                }
                _ => return 1,
            }
        }
        let limit = runs
            .min(p.divisibility[axis] / elem)
            .min(MAX_VECTOR_BYTES / elem)
            .max(1);
        whole_vector_width(runs, limit)
    }

    /// Elements along `axis` one thread may read as one run of consecutive
    /// addresses through `ptr`, however the run is aligned and whatever the
    /// mask: the largest power of two dividing the contiguity, at most 16
    /// bytes; 1 under 4 bytes (the shift works on 32-bit words). Where it
    /// exceeds [`AxisInfoMap::vector_width_along`] the load reads the run
    /// misaligned (two aligned accesses and a shift, see
    /// `codegen::lower::misaligned_runs`). 1 unless [`AxisInfoMap::misaligned_runs`].
    pub fn run_width_along(&self, ptr: ValueId, axis: usize, func: &Function) -> u32 {
        if !self.misaligned_runs {
            return 1;
        }
        let Some((_, elem, runs)) = self.pointer_runs(ptr, axis, func) else {
            return 1;
        };
        let width = whole_vector_width(runs, (MAX_VECTOR_BYTES / elem).max(1));
        if (width as u64) * elem < MISALIGNED_RUN_MIN_BYTES {
            return 1;
        }
        width
    }

    /// For a pointer tile `ptr`: its facts, its element's size in bytes, and
    /// the length of its runs of consecutive addresses along `axis` (at most
    /// the tile's extent there). `None` for anything else.
    fn pointer_runs(
        &self,
        ptr: ValueId,
        axis: usize,
        func: &Function,
    ) -> Option<(&AxisInfo, u64, u64)> {
        let ty = func.values.get(ptr.0 as usize).map(|v| &v.ty)?;
        let (ScalarType::Ptr(elem), Some(&dim)) = (ty.scalar, ty.shape.get(axis)) else {
            return None;
        };
        let p = self.get(ptr).filter(|p| axis < p.axes())?;
        Some((
            p,
            elem.size_bytes() as u64,
            facts::gcd(p.contiguity[axis], dim as u64),
        ))
    }
}

/// The largest power of two at most `limit` that divides `runs`: vectors
/// that split runs into whole accesses.
fn whole_vector_width(runs: u64, limit: u64) -> u32 {
    let mut width = 1u64;
    while width * 2 <= limit && runs % (width * 2) == 0 {
        width *= 2;
    }
    width as u32
}

pub fn analyze(func: &Function) -> AxisInfoMap {
    let mut solver = Solver {
        func,
        map: AxisInfoMap::default(),
    };
    for p in &func.params {
        let info = param_info(func, p);
        solver.map.info.insert(p.value, info);
    }
    solver.region(&func.body);
    solver.map
}

fn param_info(func: &Function, p: &crate::ir::Param) -> AxisInfo {
    // `__multipleof(0)` promises nothing useful: treat it as 1.
    let pow2 = |n: u64| facts::pow2_divisor(n.clamp(1, i64::MAX as u64) as i64);
    let div = match func.values.get(p.value.0 as usize).map(|v| v.ty.scalar) {
        Some(ScalarType::Ptr(elem)) => {
            let elem = elem.size_bytes() as u64;
            let from_multiple = p.attrs.multiple_of.map(|n| facts::mul_div(pow2(n), elem));
            let from_aligned = p.attrs.aligned.map(pow2);
            match (from_multiple, from_aligned) {
                (None, None) => crate::ir::DEFAULT_POINTER_ALIGNMENT,
                (a, b) => a.unwrap_or(1).max(b.unwrap_or(1)),
            }
        }
        _ => p.attrs.multiple_of.map(pow2).unwrap_or(1),
    };
    AxisInfo::uniform(&[], div, None)
}

struct Solver<'a> {
    func: &'a Function,
    map: AxisInfoMap,
}

impl Facts for Solver<'_> {
    fn info(&self, v: ValueId) -> AxisInfo {
        match self.map.get(v) {
            Some(i) => i.clone(),
            None => AxisInfo::unknown(self.ty(v).map_or(1, |t| t.rank())),
        }
    }

    fn ty(&self, v: ValueId) -> Option<&Type> {
        self.func.values.get(v.0 as usize).map(|i| &i.ty)
    }
}

impl Solver<'_> {
    fn set(&mut self, v: ValueId, info: AxisInfo) {
        self.map.info.insert(v, info);
    }

    fn region(&mut self, region: &Region) {
        for op in &region.ops {
            match &op.kind {
                OpKind::If {
                    then_region,
                    else_region,
                    ..
                } => {
                    self.region(then_region);
                    self.region(else_region);
                    for (i, &r) in op.results.iter().enumerate() {
                        let joined = match (then_region.yields.get(i), else_region.yields.get(i)) {
                            (Some(&a), Some(&b)) => self.info(a).meet(&self.info(b)),
                            _ => self.unknown_of(r),
                        };
                        self.set(r, joined);
                    }
                }
                OpKind::While {
                    inits,
                    cond_region,
                    body_region,
                    ..
                } => self.while_loop(&op.results, inits, cond_region, body_region),
                kind => {
                    if let [r] = op.results[..] {
                        let info = match self.ty(r) {
                            Some(t) => transfer::transfer(kind, t, self),
                            None => AxisInfo::unknown(1),
                        };
                        self.set(r, info);
                    }
                }
            }
        }
    }

    fn unknown_of(&self, v: ValueId) -> AxisInfo {
        AxisInfo::unknown(self.ty(v).map_or(1, |t| t.rank()))
    }

    /// Carried facts: the meet of the initial values and every value the body
    /// may yield, found by iterating until stable.
    fn while_loop(&mut self, results: &[ValueId], inits: &[ValueId], cond: &Region, body: &Region) {
        let mut carried: Vec<AxisInfo> = inits.iter().map(|&v| self.info(v)).collect();
        for round in 0..=MAX_LOOP_ROUNDS {
            if round == MAX_LOOP_ROUNDS {
                carried = inits.iter().map(|&v| self.unknown_of(v)).collect();
            }
            for region in [cond, body] {
                for (&arg, info) in region.args.iter().zip(&carried) {
                    self.set(arg, info.clone());
                }
                self.region(region);
            }
            let next: Vec<AxisInfo> = carried
                .iter()
                .zip(&body.yields)
                .map(|(c, &y)| c.meet(&self.info(y)))
                .collect();
            if next == carried || round == MAX_LOOP_ROUNDS {
                break;
            }
            carried = next;
        }
        for (&r, info) in results.iter().zip(carried) {
            self.set(r, info);
        }
    }
}
