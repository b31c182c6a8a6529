//! Triton-IR: SSA over tiles with structured control flow (regions, like MLIR's
//! `scf`). A kernel is a [`Function`]; its body is a [`Region`] of [`Op`]s.
//!
//! Rules every producer keeps and every consumer may rely on (the verifier checks them):
//! - Each value is defined once, by a region argument or an op result, and is
//!   visible in the rest of its region and in all regions nested below.
//! - Element-wise operands have exactly the same type (shape and element):
//!   sema inserts `Splat`/`Broadcast`/`Reshape`/`Cast` explicitly.
//! - Result types live in [`Function::values`], indexed by [`ValueId`].

use super::types::{DType, Type};
use crate::span::Span;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ValueId(pub u32);

/// Most programs a [`OpKind::ClusterSum`] sums over: 8 CTAs is the largest
/// cluster every Hopper GPU can schedule (the portable cluster size).
pub const MAX_CLUSTER_SPLITS: u32 = 8;

#[derive(Clone, Debug, PartialEq)]
pub struct ValueInfo {
    pub ty: Type,
    /// Source-level name when there is one (`rm`, `pa`): for printing only.
    pub name: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Module {
    pub functions: Vec<Function>,
}

/// Alignment in bytes of a pointer parameter without `__aligned` (what
/// framework allocators give; launchers check it).
pub const DEFAULT_POINTER_ALIGNMENT: u64 = 16;

/// What the kernel author promised about a parameter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamAttrs {
    /// `__multipleof(N)`: an int divisible by N; for a pointer, its address in
    /// elements is (so in bytes it is N * element size).
    pub multiple_of: Option<u64>,
    /// `__aligned(N)`: pointer aligned to N bytes. Pointers with no attribute are
    /// assumed 16-byte aligned (what framework allocators give); launchers must check.
    pub aligned: Option<u64>,
    pub readonly: bool,
    pub writeonly: bool,
    pub noalias: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub value: ValueId,
    pub attrs: ParamAttrs,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    /// Scalar parameters (numbers and pointers), in call order.
    pub params: Vec<Param>,
    /// The body; its `args` are empty (parameters are values of their own) and it
    /// ends with no yields. The kernel returns nothing.
    pub body: Region,
    pub values: Vec<ValueInfo>,
    pub span: Span,
    /// The layout of every tile value, set by the `assign-layouts` pass
    /// (`None` from sema); codegen lowers with it.
    pub layouts: Option<super::layout::LayoutMap>,
    /// Every op's scratch shared memory and the kernel's total, set by the
    /// `allocate-shared-memory` pass (`None` before it).
    pub shared: Option<super::schedule::SharedPlan>,
    /// The tensor-core instructions of each dot that runs on them (by its
    /// result), set by `assign-layouts` (and by `pipeline-dot-loops` for the
    /// loops it pipelines); a dot not here runs on FMA units.
    pub dot_engines: std::collections::BTreeMap<ValueId, super::schedule::DotEngine>,
}

/// Warps of a warp-specialized kernel's producer: one warpgroup (the
/// register reallocation of `setmaxnreg` works in warpgroups).
pub const PRODUCER_WARPS: u32 = 4;

impl Function {
    pub fn ty(&self, v: ValueId) -> &Type {
        &self.values[v.0 as usize].ty
    }

    /// The kernel's tensor-map parameters (after [`Function::params`]), from
    /// the TMA copies of its pipelined loops.
    pub fn tensor_maps(&self) -> Vec<super::schedule::TensorMapParam> {
        let index = |v: ValueId| self.params.iter().position(|p| p.value == v).unwrap_or(0);
        let mut maps = Vec::new();
        for visit in super::walk::walk_ops(self) {
            let OpKind::While {
                pipeline: Some(p), ..
            } = &visit.op.kind
            else {
                continue;
            };
            let Some(t) = &p.tma else { continue };
            let [a, b] = &t.operands;
            let folded_a = t
                .a_folded
                .iter()
                .chain(&t.a_plain)
                .chain(&t.a_boxes)
                .map(|m| (a, m));
            let b_maps = std::iter::once(&t.b_plain)
                .chain(&t.b_folded)
                .map(|m| (b, m));
            for (o, m) in folded_a.chain(b_maps) {
                if maps.len() <= m.map {
                    maps.resize(m.map + 1, None);
                }
                maps[m.map] = Some(super::schedule::TensorMapParam {
                    base: index(o.base),
                    rows: index(o.rows),
                    cols: index(o.cols),
                    row_stride: index(o.row_stride),
                    elem_bytes: self.dtype(o.base).size_bytes(),
                    swizzle_bytes: m.swizzle,
                    dims: m.dims.clone(),
                });
            }
        }
        maps.into_iter().flatten().collect()
    }

    /// CTAs per cluster along grid axis 2: the `splits` of the kernel's
    /// [`OpKind::ClusterSum`] (the `split-k` pass inserts at most one), 1
    /// without one. A launcher runs that many programs per grid point.
    /// Programs per cluster along grid x: 2 where a TMA pipeline shares `b`
    /// between a pair ([`super::schedule::TmaCopies::multicast`]), else 1.
    pub fn cluster_x(&self) -> u32 {
        let multicast = super::walk::walk_ops(self).iter().any(|v| {
            matches!(&v.op.kind, OpKind::While { pipeline: Some(p), .. }
                if p.tma.as_ref().is_some_and(|t| t.multicast))
        });
        if multicast {
            2
        } else {
            1
        }
    }

    /// Warps a launch adds to the kernel's `num_warps` (which the layouts
    /// use): a warpgroup issuing the copies of a warp-specialized TMA
    /// pipeline ([`super::schedule::TmaCopies::warp_specialized`]), else 0.
    pub fn producer_warps(&self) -> u32 {
        match self.warp_specialized_loop() {
            Some(_) => PRODUCER_WARPS,
            None => 0,
        }
    }

    /// The loop whose TMA copies a producer warpgroup issues (the
    /// `tma-loads` pass marks at most one, in the top region), with its
    /// pipeline and copies.
    pub fn warp_specialized_loop(
        &self,
    ) -> Option<(
        &Op,
        &super::schedule::LoopPipeline,
        &super::schedule::TmaCopies,
    )> {
        self.body.ops.iter().find_map(|op| match &op.kind {
            OpKind::While {
                pipeline: Some(p), ..
            } => {
                let t = p.tma.as_deref()?;
                t.warp_specialized.then_some((op, &**p, t))
            }
            _ => None,
        })
    }

    /// Whether the kernel runs persistently (a warp-specialized pipeline):
    /// launched with at most as many programs as the GPU holds at once, each
    /// looping over tiles `program_id(0), + num_programs, ..` below a last,
    /// added parameter, the tile count (the grid's x as asked).
    pub fn persistent(&self) -> bool {
        self.producer_warps() > 0
    }

    pub fn cluster_splits(&self) -> u32 {
        super::walk::walk_ops(self)
            .iter()
            .find_map(|v| match v.op.kind {
                OpKind::ClusterSum { splits, .. } => Some(splits),
                _ => None,
            })
            .unwrap_or(1)
    }
}

/// A straight-line list of ops with block arguments and yielded values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Region {
    pub args: Vec<ValueId>,
    pub ops: Vec<Op>,
    pub yields: Vec<ValueId>,
}

impl Region {
    /// The op of this region (not of nested ones) whose first result is `v`.
    pub fn defining_op(&self, v: ValueId) -> Option<&Op> {
        self.position_of(v).map(|i| &self.ops[i])
    }

    /// The index of [`Region::defining_op`] among this region's ops.
    pub fn position_of(&self, v: ValueId) -> Option<usize> {
        self.ops.iter().position(|o| o.results.first() == Some(&v))
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Op {
    pub kind: OpKind,
    pub results: Vec<ValueId>,
    pub span: Span,
}

impl OpKind {
    /// Element-wise and index ops: computed in registers from their
    /// operands alone, no memory, no regions (what codegen's
    /// `ops::elementwise` lowers; a reshape may still stage through
    /// shared memory).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            OpKind::Constant { .. }
                | OpKind::ProgramId { .. }
                | OpKind::NumPrograms { .. }
                | OpKind::MakeRange { .. }
                | OpKind::Splat { .. }
                | OpKind::Broadcast { .. }
                | OpKind::Reshape { .. }
                | OpKind::Binary { .. }
                | OpKind::Cmp { .. }
                | OpKind::Unary { .. }
                | OpKind::Cast { .. }
                | OpKind::AddPtr { .. }
                | OpKind::Select { .. }
        )
    }
}

impl Op {
    /// Whether this is a loop with buffers of its own through all of it: a
    /// pipelined or a prefetched `While`.
    pub fn is_scheduled_loop(&self) -> bool {
        matches!(
            &self.kind,
            OpKind::While {
                pipeline: Some(_),
                ..
            } | OpKind::While {
                prefetch: Some(_),
                ..
            }
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Const {
    /// Zero, false, or +0.0 (no sign bit: what a zero fill gives).
    pub fn is_zero(self) -> bool {
        match self {
            Const::Int(i) => i == 0,
            Const::Float(f) => f.to_bits() == 0,
            Const::Bool(b) => !b,
        }
    }
}

/// Element-wise binary arithmetic. Integer `Div`/`Rem` truncate toward zero (C),
/// `Shr` is arithmetic. `And`/`Or`/`Xor` on `i1` are the logical operators.
/// `Min`/`Max` on floats follow `fminf`/`fmaxf` (a NaN operand loses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpPred {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Element-wise unary ops. `Not` is logical on `i1` and bitwise on other ints.
/// `Exp`/`Exp2`/`Log`/`Sqrt`/`Sin`/`Cos` are float-only; GPU code may use
/// the fast approximate forms (like `__expf`; `Exp2` is the hardware's own
/// `ex2`, so a kernel that folds `log2(e)` into a scale it multiplies by
/// anyway saves a multiply per element).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    Abs,
    Exp,
    Exp2,
    Log,
    Sqrt,
    Sin,
    Cos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Max,
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Max,
    Min,
    Exchange,
}

#[derive(Clone, Debug, PartialEq)]
pub enum OpKind {
    /// One result; a tile result is the constant splatted. `Int` may feed int
    /// or float results, `Float` float results, `Bool` `i1` results.
    Constant {
        value: Const,
    },
    /// Scalar `i32`: index of this program along `axis` (0..3) of the grid.
    ProgramId {
        axis: u32,
    },
    /// Scalar `i32`: grid size along `axis`.
    NumPrograms {
        axis: u32,
    },
    /// `i32[end - start]` tile `[start, ..., end-1]`.
    MakeRange {
        start: i64,
        end: i64,
    },
    /// Scalar to tile of the result's shape.
    Splat {
        src: ValueId,
    },
    /// Tile to tile of the same rank: every axis of size 1 in `src` repeats to
    /// the result's size on that axis; other axes match.
    Broadcast {
        src: ValueId,
    },
    /// Same elements in the same (row-major) order, other shape: inserts or
    /// removes axes of size 1 (`x[:, newaxis]`).
    Reshape {
        src: ValueId,
    },
    Binary {
        op: BinOp,
        lhs: ValueId,
        rhs: ValueId,
    },
    /// Result is `i1` of the operands' shape.
    Cmp {
        pred: CmpPred,
        lhs: ValueId,
        rhs: ValueId,
    },
    Unary {
        op: UnOp,
        src: ValueId,
    },
    /// Element-wise conversion to the result's element type (same shape).
    /// int→int sign-extends or truncates; float→int truncates toward zero;
    /// `i1`→int gives 0/1; number→`i1` is `!= 0`; pointer→pointer reinterprets.
    Cast {
        src: ValueId,
    },
    /// `ptr + offset` in elements of the pointee; `offset` is any int type of
    /// the same shape as `ptr`.
    AddPtr {
        ptr: ValueId,
        offset: ValueId,
    },
    /// `cond ? on_true : on_false`, element-wise; `cond` is `i1` of the same shape.
    Select {
        cond: ValueId,
        on_true: ValueId,
        on_false: ValueId,
    },
    /// Loads every pointer of `ptr`. Lanes where `mask` is false are not read
    /// and give `other` (zero when `other` is `None`).
    Load {
        ptr: ValueId,
        mask: Option<ValueId>,
        other: Option<ValueId>,
    },
    /// No result. Lanes where `mask` is false are not written.
    Store {
        ptr: ValueId,
        value: ValueId,
        mask: Option<ValueId>,
    },
    /// 2-D transpose: `[m, n]` to `[n, m]`.
    Trans {
        src: ValueId,
    },
    /// The same tile in another thread layout (the result's, in
    /// `Function::layouts`): inserted by the `insert-layout-conversions`
    /// pass where an op reads a tile in a layout other than its producer's.
    ConvertLayout {
        src: ValueId,
    },
    /// Split-K's reduction: `src` summed over the `splits` programs that
    /// share this program's grid point along axis 0 and 1 (`program_id(2)`
    /// is `0 .. splits`, one cluster of CTAs on the GPU). Only the last
    /// (`program_id(2) == splits - 1`) gets the total; the others get
    /// unspecified values. Every program of the cluster must reach it.
    /// Inserted by the `split-k` pass; an f32 tile.
    ClusterSum {
        src: ValueId,
        splits: u32,
    },
    /// Removes `axis`; reducing a 1-D tile gives a scalar.
    Reduce {
        src: ValueId,
        axis: usize,
        kind: ReduceKind,
    },
    /// `acc + a @ b` with `a: [M, K]`, `b: [K, N]`, `acc` and result `[M, N]`.
    /// `a` and `b` share an element type; `acc` is f32 for f16/bf16/f32 inputs
    /// (f64 for f64, i32 for i8).
    Dot {
        a: ValueId,
        b: ValueId,
        acc: ValueId,
    },
    /// Atomic read-modify-write per lane; returns the old values.
    AtomicRmw {
        op: AtomicOp,
        ptr: ValueId,
        value: ValueId,
        mask: Option<ValueId>,
    },
    /// Atomic compare-and-swap per lane; returns the old values.
    AtomicCas {
        ptr: ValueId,
        cmp: ValueId,
        value: ValueId,
    },
    /// `cond` is a scalar `i1`. Both regions take no args and yield values of
    /// the result types.
    If {
        cond: ValueId,
        then_region: Region,
        else_region: Region,
    },
    /// Loop with carried values (MLIR `scf.while`): `carried = inits; loop {
    /// if !cond_region(carried) break; carried = body_region(carried) }`;
    /// results are the final carried values. `cond_region.args` and
    /// `body_region.args` have the types of `inits`; `cond_region` yields one
    /// scalar `i1`; `body_region` yields the next carried values.
    /// `pipeline`: how the loop runs on the GPU, set by the
    /// `pipeline-dot-loops` pass (`None` from sema: a plain loop);
    /// `prefetch`: for a loop without one, the operand loads copied an
    /// iteration ahead, set by the `prefetch-dot-operands` pass.
    While {
        inits: Vec<ValueId>,
        cond_region: Region,
        body_region: Region,
        pipeline: Option<Box<super::schedule::LoopPipeline>>,
        prefetch: Option<Box<super::schedule::LoopPrefetch>>,
    },
    /// Ends the kernel early (only in the body region or nested ifs/loops).
    Return,
}

impl Function {
    /// A new value of type `ty`, for a pass that adds ops.
    pub fn new_value(&mut self, ty: Type, name: Option<String>) -> ValueId {
        let id = ValueId(self.values.len() as u32);
        self.values.push(ValueInfo { ty, name });
        id
    }

    pub fn dtype(&self, v: ValueId) -> DType {
        self.ty(v).scalar.dtype()
    }

    /// The value of the `Constant` op defining `v` (in any region), if that
    /// is what defines it.
    pub fn constant_of(&self, v: ValueId) -> Option<Const> {
        super::walk::walk_ops(self)
            .iter()
            .find_map(|visit| match &visit.op.kind {
                OpKind::Constant { value } if visit.op.results.first() == Some(&v) => Some(*value),
                _ => None,
            })
    }
}
