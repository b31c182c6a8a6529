//! Structural and type checks of Triton-IR: the rules written in
//! `ir::function` (single definition, scoping, operand and result types of
//! every op, region arity). Sema's output must pass; later passes may call it
//! again after rewriting.
use super::function::*;
use super::printer::{op_name, ValueNames};
use super::schedule::{LoopPipeline, LoopPrefetch, SharedBuffer, SharedPlan};
use super::types::{DType, ScalarType, Type};
use super::walk;
use crate::analysis::smem::PIPELINE_BUFFER_ALIGN;
use crate::span::Span;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub message: String,
    /// The op at fault (the function's span for function-level problems).
    pub span: Span,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VerifyError {}

/// Invalid IR is a compiler bug, but it is still reported at the source.
impl From<VerifyError> for crate::diagnostics::Diagnostic {
    fn from(e: VerifyError) -> Self {
        crate::diagnostics::Diagnostic::error(e.span, format!("invalid Triton-IR: {}", e.message))
            .with_note("this is a bug in the compiler, not in the kernel")
    }
}

/// Checks the rules listed in `ir::function`'s module docs.
pub fn verify_function(func: &Function) -> Result<(), VerifyError> {
    Verifier::new(func).function()
}

/// Checks every function; the first error wins. Function names must be unique.
pub fn verify_module(module: &Module) -> Result<(), VerifyError> {
    let mut seen = std::collections::HashSet::new();
    for func in &module.functions {
        if !seen.insert(func.name.as_str()) {
            return Err(VerifyError {
                message: format!("function @{} is defined twice", func.name),
                span: func.span,
            });
        }
        verify_function(func)?;
    }
    Ok(())
}

/// Where a region sits: `Return` is not allowed inside a loop condition.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RegionContext {
    Normal,
    LoopCondition,
}

struct Verifier<'a> {
    func: &'a Function,
    names: ValueNames,
    /// Defined somewhere already (for the single-definition rule).
    defined: Vec<bool>,
    /// Defined in an enclosing region, before the current point.
    visible: Vec<bool>,
}

type Problem = String;

impl<'a> Verifier<'a> {
    fn new(func: &'a Function) -> Self {
        let n = func.values.len();
        Verifier {
            func,
            names: ValueNames::new(func),
            defined: vec![false; n],
            visible: vec![false; n],
        }
    }

    fn func_error(&self, problem: impl fmt::Display) -> VerifyError {
        VerifyError {
            message: format!("function @{}: {problem}", self.func.name),
            span: self.func.span,
        }
    }

    fn name(&self, v: ValueId) -> String {
        self.names.get(v)
    }

    fn ty(&self, v: ValueId) -> &'a Type {
        // Only called on ids already checked by `in_range`.
        &self.func.values[v.0 as usize].ty
    }

    fn in_range(&self, v: ValueId) -> bool {
        (v.0 as usize) < self.func.values.len()
    }

    /// `v`'s index in the value table; `doing` ("defines", "uses") words the
    /// error when it has none.
    fn table_index(&self, v: ValueId, doing: &str) -> Result<usize, Problem> {
        match self.in_range(v) {
            true => Ok(v.0 as usize),
            false => Err(format!(
                "{doing} %{} which has no entry in the value table",
                v.0
            )),
        }
    }

    /// Defines `v` in the current scope; `scope` collects it for un-scoping.
    fn define(&mut self, v: ValueId, scope: &mut Vec<ValueId>) -> Result<(), Problem> {
        let i = self.table_index(v, "defines")?;
        if self.defined[i] {
            return Err(format!("{} is defined more than once", self.name(v)));
        }
        well_formed(self.ty(v))
            .map_err(|p| format!("{} has type {}: {p}", self.name(v), self.ty(v)))?;
        self.defined[i] = true;
        self.visible[i] = true;
        scope.push(v);
        Ok(())
    }

    fn check_use(&self, v: ValueId) -> Result<(), Problem> {
        let i = self.table_index(v, "uses")?;
        if self.visible[i] {
            Ok(())
        } else if self.defined[i] {
            Err(format!(
                "uses {} outside the region that defines it",
                self.name(v)
            ))
        } else {
            Err(format!("uses {} before its definition", self.name(v)))
        }
    }

    fn function(&mut self) -> Result<(), VerifyError> {
        let mut scope = Vec::new();
        for p in &self.func.params {
            self.define(p.value, &mut scope)
                .map_err(|e| self.func_error(format!("parameter {}: {e}", p.name)))?;
            if !self.ty(p.value).is_scalar() {
                return Err(self.func_error(format!(
                    "parameter {} must be a scalar, not {}",
                    p.name,
                    self.ty(p.value)
                )));
            }
        }
        let body = &self.func.body;
        if !body.args.is_empty() {
            return Err(self.func_error("the body region takes no arguments"));
        }
        if !body.yields.is_empty() {
            return Err(self.func_error("the body region yields nothing (kernels return no value)"));
        }
        self.region(body, RegionContext::Normal, self.func.span)?;
        self.layouts()?;
        self.dot_engines()?;
        self.shared_plan()
    }

    /// Tensor-core engines are given to dots only.
    fn dot_engines(&self) -> Result<(), VerifyError> {
        let dots: std::collections::HashSet<ValueId> = crate::ir::walk::walk_ops(self.func)
            .iter()
            .filter(|visit| matches!(visit.op.kind, OpKind::Dot { .. }))
            .filter_map(|visit| visit.op.results.first().copied())
            .collect();
        match self.func.dot_engines.keys().find(|v| !dots.contains(v)) {
            Some(v) => Err(self.func_error(format!(
                "a tensor-core engine is given to %{}, which is not a dot's result",
                v.0
            ))),
            None => Ok(()),
        }
    }

    /// The shared-memory plan, when made, keeps every buffer inside the
    /// kernel's shared memory and gives buffers only to defined values.
    fn shared_plan(&self) -> Result<(), VerifyError> {
        let Some(plan) = &self.func.shared else {
            return Ok(());
        };
        for (v, b) in &plan.buffers {
            if !self.defined.get(v.0 as usize).copied().unwrap_or(false) {
                return Err(self.func_error(format!(
                    "the shared-memory plan gives a buffer to %{}, which no op defines",
                    v.0
                )));
            }
            if b.end() > plan.total_bytes {
                return Err(self.func_error(format!(
                    "the shared-memory buffer of {} ends at byte {}, past the kernel's {} bytes",
                    self.names.get(*v),
                    b.end(),
                    plan.total_bytes
                )));
            }
        }
        self.loop_buffers_below_their_ops(&self.func.body, plan, None)
    }

    /// A pipelined loop's operand buffers live through the whole loop, so no
    /// op inside it may have a buffer over them (`within`: the innermost
    /// enclosing pipelined loop and its buffer).
    fn loop_buffers_below_their_ops(
        &self,
        region: &Region,
        plan: &SharedPlan,
        within: Option<(ValueId, SharedBuffer)>,
    ) -> Result<(), VerifyError> {
        for op in &region.ops {
            let buffer = op.results.first().and_then(|r| plan.buffers.get(r));
            if let (Some((owner, outer)), Some(b)) = (within, buffer) {
                if b.offset < outer.end() && outer.offset < b.end() {
                    return Err(self.func_error(format!(
                        "the shared-memory buffer of {} [{}, {}) overlaps the operand buffers \
                         [{}, {}) of the pipelined loop defining {} it sits in",
                        self.names.get(op.results[0]),
                        b.offset,
                        b.end(),
                        outer.offset,
                        outer.end(),
                        self.names.get(owner)
                    )));
                }
            }
            let inner = match buffer {
                Some(b) if op.is_scheduled_loop() => {
                    if b.offset % PIPELINE_BUFFER_ALIGN != 0 {
                        return Err(self.func_error(format!(
                            "the operand buffers of the pipelined loop defining {} start at byte \
                             {}, not a multiple of {PIPELINE_BUFFER_ALIGN}",
                            self.names.get(op.results[0]),
                            b.offset
                        )));
                    }
                    Some((op.results[0], *b))
                }
                _ => within,
            };
            for nested in walk::regions(&op.kind) {
                self.loop_buffers_below_their_ops(nested, plan, inner)?;
            }
        }
        Ok(())
    }

    /// Layouts, when assigned, give every tile a layout of its rank over the
    /// threads of a power-of-two number of warps.
    fn layouts(&self) -> Result<(), VerifyError> {
        let Some(layouts) = &self.func.layouts else {
            return Ok(());
        };
        if !layouts.num_warps.is_power_of_two() {
            return Err(self.func_error(format!(
                "layouts for {} warps (not a power of two)",
                layouts.num_warps
            )));
        }
        for (i, info) in self.func.values.iter().enumerate() {
            let v = ValueId(i as u32);
            if info.ty.shape.is_empty() || !self.defined[i] {
                continue;
            }
            let layout = layouts.get(self.func, v);
            if layout.rank() != info.ty.shape.len() {
                return Err(self.func_error(format!(
                    "{} ({}) has a layout of rank {}: {layout}",
                    self.names.get(v),
                    info.ty,
                    layout.rank()
                )));
            }
        }
        Ok(())
    }

    /// Checks a region; `owner` is the span of the op owning it (for errors
    /// about its args and yields).
    fn region(
        &mut self,
        region: &Region,
        ctx: RegionContext,
        owner: Span,
    ) -> Result<(), VerifyError> {
        let mut scope = Vec::new();
        let at = |message: String| VerifyError {
            message,
            span: owner,
        };
        for &a in &region.args {
            self.define(a, &mut scope)
                .map_err(|p| at(format!("region argument: {p}")))?;
        }
        for (i, op) in region.ops.iter().enumerate() {
            let last = i + 1 == region.ops.len();
            self.op(op, ctx, last)?;
            for &r in &op.results {
                self.define(r, &mut scope).map_err(|p| op_error(op, p))?;
            }
        }
        for &y in &region.yields {
            self.check_use(y).map_err(|p| at(format!("yield {p}")))?;
        }
        for v in scope {
            self.visible[v.0 as usize] = false;
        }
        Ok(())
    }

    fn op(&mut self, op: &Op, ctx: RegionContext, last_in_region: bool) -> Result<(), VerifyError> {
        for v in walk::operands(&op.kind) {
            self.check_use(v).map_err(|p| op_error(op, p))?;
        }
        for &r in &op.results {
            if !self.in_range(r) {
                return Err(op_error(
                    op,
                    format!("result %{} has no entry in the value table", r.0),
                ));
            }
        }
        let expected = match &op.kind {
            OpKind::Store { .. } | OpKind::Return => Some(0),
            OpKind::If { .. } => None,
            OpKind::While { inits, .. } => Some(inits.len()),
            _ => Some(1),
        };
        if let Some(n) = expected {
            if op.results.len() != n {
                return Err(op_error(
                    op,
                    format!("has {} results, expected {n}", op.results.len()),
                ));
            }
        }
        if let OpKind::Return = op.kind {
            if ctx == RegionContext::LoopCondition {
                return Err(op_error(op, "not allowed in a loop condition region"));
            }
            if !last_in_region {
                return Err(op_error(op, "must be the last op of its region"));
            }
        }
        self.types(op).map_err(|p| op_error(op, p))?;
        match &op.kind {
            OpKind::If {
                then_region,
                else_region,
                ..
            } => {
                self.region(then_region, ctx, op.span)?;
                self.region(else_region, ctx, op.span)?;
            }
            OpKind::While {
                cond_region,
                body_region,
                ..
            } => {
                self.region(cond_region, RegionContext::LoopCondition, op.span)?;
                self.region(body_region, RegionContext::Normal, op.span)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Operand and result types. Operands are in range (checked before).
    fn types(&self, op: &Op) -> Result<(), Problem> {
        use OpKind::*;
        let result = op.results.first().map(|&r| self.ty(r));
        // Ops with exactly one result (checked before) read it through `res`.
        let res = || result.expect("one result");
        match &op.kind {
            Constant { value } => {
                let t = res();
                let ok = match (value, t.scalar) {
                    // An int constant of an int type must fit it (a float type takes any).
                    (Const::Int(i), ScalarType::Num(d)) if d.is_int() && d != DType::I1 => {
                        let bits = d.bits();
                        bits == 64 || (*i >= -(1i64 << (bits - 1)) && *i < (1i64 << (bits - 1)))
                    }
                    (Const::Int(i), ScalarType::Num(DType::I1)) => *i == 0 || *i == 1,
                    (Const::Int(_), ScalarType::Num(_)) => true,
                    (Const::Float(_), ScalarType::Num(d)) => d.is_float(),
                    (Const::Bool(_), ScalarType::Num(d)) => d == DType::I1,
                    _ => false,
                };
                if !ok {
                    return Err(format!("cannot make a constant of type {t} from {value:?}"));
                }
            }
            ProgramId { axis } | NumPrograms { axis } => {
                if *axis > 2 {
                    return Err(format!("axis {axis} out of range 0..3"));
                }
                expect_type(res(), &Type::num(DType::I32), "result")?;
            }
            MakeRange { start, end } => {
                if end <= start {
                    return Err(format!("empty range {start}..{end}"));
                }
                let len = (*end as i128 - *start as i128) as usize;
                expect_type(
                    res(),
                    &Type::tile(ScalarType::Num(DType::I32), vec![len]),
                    "result",
                )?;
            }
            Splat { src } => {
                let (s, t) = (self.ty(*src), res());
                if !s.is_scalar() {
                    return Err(format!("source must be a scalar, not {s}"));
                }
                if t.is_scalar() {
                    return Err(format!("result must be a tile, not {t}"));
                }
                same_scalar(s, t)?;
            }
            Broadcast { src } => {
                let (s, t) = (self.ty(*src), res());
                same_scalar(s, t)?;
                if s.rank() != t.rank() {
                    return Err(format!("cannot broadcast {s} to {t}: ranks differ"));
                }
                for (axis, (a, b)) in s.shape.iter().zip(&t.shape).enumerate() {
                    if a != b && *a != 1 {
                        return Err(format!(
                            "cannot broadcast {s} to {t}: axis {axis} has size {a}, not 1 or {b}"
                        ));
                    }
                }
            }
            Reshape { src } => {
                let (s, t) = (self.ty(*src), res());
                same_scalar(s, t)?;
                if s.num_elements() != t.num_elements() {
                    return Err(format!(
                        "cannot reshape {s} to {t}: {} elements vs {}",
                        s.num_elements(),
                        t.num_elements()
                    ));
                }
            }
            Binary { op: bop, lhs, rhs } => {
                let (l, r) = (self.ty(*lhs), self.ty(*rhs));
                same_operands(l, r)?;
                expect_type(res(), l, "result")?;
                let d = match l.scalar {
                    ScalarType::Ptr(_) => {
                        return Err(format!(
                            "operands are pointers ({l}); pointer arithmetic uses addptr"
                        ))
                    }
                    ScalarType::Num(d) => d,
                };
                let int_only = matches!(
                    bop,
                    BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr
                );
                if int_only && d.is_float() {
                    return Err(format!("needs integer operands, not {l}"));
                }
            }
            Cmp { lhs, rhs, .. } => {
                let (l, r) = (self.ty(*lhs), self.ty(*rhs));
                same_operands(l, r)?;
                expect_type(res(), &l.with_scalar(ScalarType::Num(DType::I1)), "result")?;
            }
            Unary { op: uop, src } => {
                let s = self.ty(*src);
                expect_type(res(), s, "result")?;
                let d = match s.scalar {
                    ScalarType::Ptr(_) => return Err(format!("operand is a pointer ({s})")),
                    ScalarType::Num(d) => d,
                };
                match uop {
                    UnOp::Exp | UnOp::Exp2 | UnOp::Log | UnOp::Sqrt | UnOp::Sin | UnOp::Cos
                        if !d.is_float() =>
                    {
                        return Err(format!("needs a float operand, not {s}"))
                    }
                    UnOp::Not if d.is_float() => {
                        return Err(format!("needs an integer or i1 operand, not {s}"))
                    }
                    _ => {}
                }
            }
            Cast { src } => {
                let (s, t) = (self.ty(*src), res());
                if s.shape != t.shape {
                    return Err(format!("cannot cast {s} to {t}: shapes differ"));
                }
                if s.scalar.is_ptr() != t.scalar.is_ptr() {
                    return Err(format!(
                        "cannot cast between pointer and number ({s} to {t})"
                    ));
                }
            }
            AddPtr { ptr, offset } => {
                let (p, o) = (self.ty(*ptr), self.ty(*offset));
                if !p.scalar.is_ptr() {
                    return Err(format!("first operand must be a pointer, not {p}"));
                }
                match o.scalar {
                    ScalarType::Num(d) if d.is_int() && d != DType::I1 => {}
                    _ => return Err(format!("offset must be an integer, not {o}")),
                }
                if p.shape != o.shape {
                    return Err(format!("pointer {p} and offset {o} differ in shape"));
                }
                expect_type(res(), p, "result")?;
            }
            Select {
                cond,
                on_true,
                on_false,
            } => {
                let (c, a, b) = (self.ty(*cond), self.ty(*on_true), self.ty(*on_false));
                if a != b {
                    return Err(format!("branches differ in type: {a} and {b}"));
                }
                expect_type(c, &a.with_scalar(ScalarType::Num(DType::I1)), "condition")?;
                expect_type(res(), a, "result")?;
            }
            Load { ptr, mask, other } => {
                let p = self.ty(*ptr);
                let elem = pointee(p)?;
                let value_ty = p.with_scalar(elem);
                expect_type(res(), &value_ty, "result")?;
                self.check_mask(*mask, p)?;
                if let Some(o) = other {
                    if mask.is_none() {
                        return Err("has `other` values but no mask".into());
                    }
                    expect_type(self.ty(*o), &value_ty, "other")?;
                }
            }
            Store { ptr, value, mask } => {
                let p = self.ty(*ptr);
                let elem = pointee(p)?;
                expect_type(self.ty(*value), &p.with_scalar(elem), "stored value")?;
                self.check_mask(*mask, p)?;
            }
            ConvertLayout { src } => {
                if self.ty(*src).is_scalar() {
                    return Err(format!("converts a scalar ({})", self.ty(*src)));
                }
                expect_type(res(), self.ty(*src), "result")?;
            }
            ClusterSum { src, splits } => {
                let s = self.ty(*src);
                if s.is_scalar() || s.scalar != ScalarType::Num(DType::F32) {
                    return Err(format!("sums an f32 tile, not {s}"));
                }
                if !(2..=MAX_CLUSTER_SPLITS).contains(splits) {
                    return Err(format!(
                        "sums over {splits} programs (2 to {MAX_CLUSTER_SPLITS})"
                    ));
                }
                expect_type(res(), s, "result")?;
            }
            Trans { src } => {
                let s = self.ty(*src);
                if s.rank() != 2 {
                    return Err(format!("needs a 2-D tile, not {s}"));
                }
                let expect = Type::tile(s.scalar, vec![s.shape[1], s.shape[0]]);
                expect_type(res(), &expect, "result")?;
            }
            Reduce { src, axis, .. } => {
                let s = self.ty(*src);
                if s.scalar.is_ptr() {
                    return Err(format!("cannot reduce pointers ({s})"));
                }
                if *axis >= s.rank() {
                    return Err(format!("axis {axis} out of range for {s}"));
                }
                let mut shape = s.shape.clone();
                shape.remove(*axis);
                expect_type(res(), &Type::tile(s.scalar, shape), "result")?;
            }
            Dot { a, b, acc } => {
                let (ta, tb, tc) = (self.ty(*a), self.ty(*b), self.ty(*acc));
                if ta.rank() != 2 || tb.rank() != 2 {
                    return Err(format!("operands must be 2-D, not {ta} and {tb}"));
                }
                if ta.scalar != tb.scalar {
                    return Err(format!("operands differ in element type: {ta} and {tb}"));
                }
                if ta.shape[1] != tb.shape[0] {
                    return Err(format!("inner dimensions differ: {ta} @ {tb}"));
                }
                let acc_elem = match ta.scalar {
                    ScalarType::Num(DType::F16 | DType::BF16 | DType::F32) => DType::F32,
                    ScalarType::Num(DType::F64) => DType::F64,
                    ScalarType::Num(DType::I8) => DType::I32,
                    _ => return Err(format!("unsupported operand type {ta}")),
                };
                let expect = Type::tile(ScalarType::Num(acc_elem), vec![ta.shape[0], tb.shape[1]]);
                expect_type(tc, &expect, "accumulator")?;
                expect_type(res(), &expect, "result")?;
            }
            AtomicRmw {
                op: aop,
                ptr,
                value,
                mask,
            } => {
                let p = self.ty(*ptr);
                let elem = pointee(p)?;
                let value_ty = p.with_scalar(elem);
                expect_type(self.ty(*value), &value_ty, "value")?;
                self.check_mask(*mask, p)?;
                if *aop != AtomicOp::Exchange && elem.dtype() == DType::I1 {
                    return Err("arithmetic atomics need numbers, not i1".into());
                }
                expect_type(res(), &value_ty, "result")?;
            }
            AtomicCas { ptr, cmp, value } => {
                let p = self.ty(*ptr);
                let elem = pointee(p)?;
                let value_ty = p.with_scalar(elem);
                expect_type(self.ty(*cmp), &value_ty, "compared value")?;
                expect_type(self.ty(*value), &value_ty, "new value")?;
                expect_type(res(), &value_ty, "result")?;
            }
            If {
                cond,
                then_region,
                else_region,
            } => {
                expect_type(self.ty(*cond), &Type::num(DType::I1), "condition")?;
                for (which, r) in [("then", then_region), ("else", else_region)] {
                    if !r.args.is_empty() {
                        return Err(format!("{which} region must take no arguments"));
                    }
                    self.yields_match(which, &r.yields, &op.results)?;
                }
            }
            While {
                inits,
                cond_region,
                body_region,
                pipeline,
                prefetch,
            } => {
                if let Some(p) = pipeline {
                    check_pipeline(p, body_region)?;
                }
                if let Some(p) = prefetch {
                    if pipeline.is_some() {
                        return Err("a loop both pipelined and prefetched".to_string());
                    }
                    check_prefetch(p, body_region)?;
                }
                for (which, r) in [("condition", cond_region), ("body", body_region)] {
                    self.args_match(which, &r.args, inits)?;
                }
                match cond_region.yields.as_slice() {
                    [c] if self.in_range(*c) && *self.ty(*c) == Type::num(DType::I1) => {}
                    [c] if self.in_range(*c) => {
                        return Err(format!(
                            "condition region must yield a scalar i1, not {}",
                            self.ty(*c)
                        ))
                    }
                    ys => {
                        return Err(format!(
                            "condition region must yield one scalar i1, yields {} values",
                            ys.len()
                        ))
                    }
                }
                self.yields_match("body", &body_region.yields, inits)?;
                for (i, (&r, &init)) in op.results.iter().zip(inits).enumerate() {
                    if self.ty(r) != self.ty(init) {
                        return Err(format!(
                            "result {i} has type {}, but the carried value is {}",
                            self.ty(r),
                            self.ty(init)
                        ));
                    }
                }
            }
            Return => {}
        }
        Ok(())
    }

    /// A load/store/atomic mask, when there is one, is i1 of the pointers' shape.
    fn check_mask(&self, mask: Option<ValueId>, ptr: &Type) -> Result<(), Problem> {
        match mask {
            Some(m) => expect_type(
                self.ty(m),
                &ptr.with_scalar(ScalarType::Num(DType::I1)),
                "mask",
            ),
            None => Ok(()),
        }
    }

    /// `yields` have the types of `expected`, one for one.
    fn yields_match(
        &self,
        which: &str,
        yields: &[ValueId],
        expected: &[ValueId],
    ) -> Result<(), Problem> {
        self.types_one_for_one(
            yields,
            expected,
            |n, want| format!("{which} region yields {n} values, expected {want}"),
            |y| {
                format!(
                    "{which} region yields %{} which has no entry in the value table",
                    y.0
                )
            },
            |i, got, want| format!("{which} region yield {i} has type {got}, expected {want}"),
        )
    }

    /// Region arguments have the types of the carried values, one for one.
    fn args_match(&self, which: &str, args: &[ValueId], inits: &[ValueId]) -> Result<(), Problem> {
        self.types_one_for_one(
            args,
            inits,
            |n, carried| {
                format!("{which} region takes {n} arguments, but {carried} values are carried")
            },
            |a| format!("{which} region argument %{} has no entry in the value table", a.0),
            |i, got, carried| {
                format!("{which} region argument {i} has type {got}, but the carried value is {carried}")
            },
        )
    }

    /// `values[i]` exists and has the type of `expected[i]`, for as many values
    /// as `expected` has; the three closures word the count, missing-entry and
    /// type errors.
    fn types_one_for_one(
        &self,
        values: &[ValueId],
        expected: &[ValueId],
        count: impl Fn(usize, usize) -> Problem,
        missing: impl Fn(ValueId) -> Problem,
        mismatch: impl Fn(usize, &Type, &Type) -> Problem,
    ) -> Result<(), Problem> {
        if values.len() != expected.len() {
            return Err(count(values.len(), expected.len()));
        }
        for (i, (&v, &e)) in values.iter().zip(expected).enumerate() {
            if !self.in_range(v) {
                return Err(missing(v));
            }
            if self.ty(v) != self.ty(e) {
                return Err(mismatch(i, self.ty(v), self.ty(e)));
            }
        }
        Ok(())
    }
}

/// A loop's pipeline names the body's dot, the loads of its operands (each
/// defined in the body) and the carried accumulator the dot adds to.
fn check_pipeline(p: &LoopPipeline, body: &Region) -> Result<(), Problem> {
    let defined_by = |v: ValueId| body.defining_op(v);
    let Some(Op {
        kind: OpKind::Dot { a, b, acc },
        ..
    }) = defined_by(p.dot)
    else {
        return Err(format!(
            "pipeline: %{} is not a dot of the loop body",
            p.dot.0
        ));
    };
    if [*a, *b] != [p.operand(0), p.operand(1)] {
        return Err(format!(
            "pipeline: the dot multiplies %{} and %{}, not the pipelined %{} and %{}",
            a.0,
            b.0,
            p.operand(0).0,
            p.operand(1).0
        ));
    }
    for (t, load) in p.transposes.iter().zip(p.loads) {
        let Some(t) = *t else { continue };
        if !matches!(
            defined_by(t),
            Some(Op { kind: OpKind::Trans { src }, .. }) if *src == load
        ) {
            return Err(format!(
                "pipeline: %{} is not the transpose of the pipelined load %{}",
                t.0, load.0
            ));
        }
    }
    for v in p.loads {
        if !matches!(
            defined_by(v),
            Some(Op {
                kind: OpKind::Load { .. },
                ..
            })
        ) {
            return Err(format!("pipeline: %{} is not a load of the loop body", v.0));
        }
    }
    if body.args.get(p.acc) != Some(acc) {
        return Err(format!(
            "pipeline: carried value #{} is not the dot's accumulator %{}",
            p.acc, acc.0
        ));
    }
    if p.stages < 2 || p.copy_widths.iter().any(|w| !w.is_power_of_two()) {
        return Err(format!(
            "pipeline: {} buffers and copies of {:?} elements (need 2+ buffers, power-of-two copies)",
            p.stages, p.copy_widths
        ));
    }
    Ok(())
}

/// Each prefetched operand is a load of the body (its top level) that only
/// its dot reads, as `b`; the dots come in the operands' order and the
/// buffers lie side by side within the loop's bytes.
fn check_prefetch(p: &LoopPrefetch, body: &Region) -> Result<(), Problem> {
    let at = |v: ValueId| body.position_of(v);
    let mut last_dot = None;
    let mut end = 0;
    for o in &p.operands {
        let (Some(load_at), Some(dot_at)) = (at(o.load), at(o.dot)) else {
            return Err(format!(
                "prefetch: %{} or %{} is not an op of the loop body",
                o.load.0, o.dot.0
            ));
        };
        if !matches!(body.ops[load_at].kind, OpKind::Load { .. }) {
            return Err(format!("prefetch: %{} is not a load", o.load.0));
        }
        match body.ops[dot_at].kind {
            OpKind::Dot { a, b, .. } if b == o.load && a != o.load => {}
            _ => {
                return Err(format!(
                    "prefetch: %{} is not a dot multiplying %{} as its b",
                    o.dot.0, o.load.0
                ))
            }
        }
        let readers = body
            .ops
            .iter()
            .filter(|op| walk::operands(&op.kind).contains(&o.load))
            .count()
            + body.yields.iter().filter(|&&y| y == o.load).count();
        if readers != 1 {
            return Err(format!(
                "prefetch: %{} is read {readers} times, not by its dot alone",
                o.load.0
            ));
        }
        if last_dot.is_some_and(|d| d >= dot_at) || load_at > dot_at {
            return Err(format!(
                "prefetch: the dot %{} does not come after its load and the previous operand's dot",
                o.dot.0
            ));
        }
        last_dot = Some(dot_at);
        if o.offset < end || !o.copy_width.is_power_of_two() || o.copy_width > 8 {
            return Err(format!(
                "prefetch: the buffers of %{} overlap the previous operand's or its copies of {} elements are not 2, 4 or 8",
                o.load.0, o.copy_width
            ));
        }
        end = o.offset + 2 * o.stage_bytes;
    }
    if end > p.shared_bytes || p.operands.is_empty() {
        return Err(format!(
            "prefetch: the buffers end at byte {end}, past the loop's {} bytes (or there are none)",
            p.shared_bytes
        ));
    }
    Ok(())
}

fn op_error(op: &Op, problem: impl fmt::Display) -> VerifyError {
    VerifyError {
        message: format!("{}: {problem}", op_name(&op.kind)),
        span: op.span,
    }
}

/// Tiles have no empty axis.
fn well_formed(t: &Type) -> Result<(), Problem> {
    if t.shape.contains(&0) {
        return Err("a tile axis has size 0".into());
    }
    Ok(())
}

fn expect_type(got: &Type, want: &Type, what: &str) -> Result<(), Problem> {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what} has type {got}, expected {want}"))
    }
}

fn same_operands(l: &Type, r: &Type) -> Result<(), Problem> {
    if l == r {
        Ok(())
    } else {
        Err(format!("operand types differ: {l} and {r}"))
    }
}

fn same_scalar(src: &Type, dst: &Type) -> Result<(), Problem> {
    if src.scalar == dst.scalar {
        Ok(())
    } else {
        Err(format!("element types differ: {src} to {dst}"))
    }
}

/// The loaded/stored element type of a pointer tile.
fn pointee(p: &Type) -> Result<ScalarType, Problem> {
    match p.scalar {
        ScalarType::Ptr(d) => Ok(ScalarType::Num(d)),
        ScalarType::Num(_) => Err(format!("address must be a pointer, not {p}")),
    }
}
