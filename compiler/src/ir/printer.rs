//! Textual form of Triton-IR, for debugging, `--emit ir` and snapshot tests.
//!
//! ```text
//! func @add(%X: f32* __multipleof(4), %N: i32) {
//!   %pid = program_id 0 : i32
//!   %2 = make_range 0..128 : i32[128]
//!   %3 = splat %pid : i32 -> i32[128]
//!   %k.1, %acc.1 = while (%k, %acc) : (i32, f32[128])
//!   cond(%6: i32, %7: f32[128]) {
//!     ...
//!     yield %c
//!   } body(%8: i32, %9: f32[128]) {
//!     ...
//!     yield %10, %11
//!   }
//! }
//! ```
//! Values print as `%name` when they carry a source name (made unique with a
//! `.N` suffix) and as `%N` (their [`ValueId`]) otherwise.

use super::function::*;
use super::index_poly::{Atom, Poly};
use super::layout::Layout;
use super::schedule::{
    DotEngine, LoopPipeline, LoopPrefetch, MapExtent, MapStride, TmaCopies, TmaMap,
};
use std::collections::HashMap;
use std::fmt::Write;

/// One op a line, values as `%N` (or `%name`), regions indented.
pub fn print_function(func: &Function) -> String {
    let names = ValueNames::new(func);
    let mut p = Printer {
        func,
        names,
        out: String::new(),
        layout_names: Vec::new(),
    };
    p.layout_aliases();
    p.function();
    p.out
}

/// Every function of the module, separated by a blank line.
pub fn print_module(module: &Module) -> String {
    module
        .functions
        .iter()
        .map(print_function)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The op's mnemonic as printed (`add`, `cmp lt`, `reduce sum`, `load`).
pub fn op_name(kind: &OpKind) -> String {
    use OpKind::*;
    match kind {
        Constant { .. } => "constant".into(),
        ProgramId { .. } => "program_id".into(),
        NumPrograms { .. } => "num_programs".into(),
        MakeRange { .. } => "make_range".into(),
        Splat { .. } => "splat".into(),
        Broadcast { .. } => "broadcast".into(),
        Reshape { .. } => "reshape".into(),
        Binary { op, .. } => bin_op_name(*op).into(),
        Cmp { pred, .. } => format!("cmp {}", cmp_pred_name(*pred)),
        Unary { op, .. } => un_op_name(*op).into(),
        Cast { .. } => "cast".into(),
        AddPtr { .. } => "addptr".into(),
        Select { .. } => "select".into(),
        Load { .. } => "load".into(),
        Store { .. } => "store".into(),
        Trans { .. } => "trans".into(),
        ConvertLayout { .. } => "convert_layout".into(),
        ClusterSum { .. } => "cluster_sum".into(),
        Reduce { kind, .. } => format!("reduce {}", reduce_name(*kind)),
        Dot { .. } => "dot".into(),
        AtomicRmw { op, .. } => format!("atomic_rmw {}", atomic_name(*op)),
        AtomicCas { .. } => "atomic_cas".into(),
        If { .. } => "if".into(),
        While { .. } => "while".into(),
        Return => "return".into(),
    }
}

pub fn bin_op_name(op: BinOp) -> &'static str {
    match op {
        BinOp::Add => "add",
        BinOp::Sub => "sub",
        BinOp::Mul => "mul",
        BinOp::Div => "div",
        BinOp::Rem => "rem",
        BinOp::And => "and",
        BinOp::Or => "or",
        BinOp::Xor => "xor",
        BinOp::Shl => "shl",
        BinOp::Shr => "shr",
        BinOp::Min => "min",
        BinOp::Max => "max",
    }
}

pub fn cmp_pred_name(pred: CmpPred) -> &'static str {
    match pred {
        CmpPred::Lt => "lt",
        CmpPred::Le => "le",
        CmpPred::Gt => "gt",
        CmpPred::Ge => "ge",
        CmpPred::Eq => "eq",
        CmpPred::Ne => "ne",
    }
}

pub fn un_op_name(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "neg",
        UnOp::Not => "not",
        UnOp::Abs => "abs",
        UnOp::Exp => "exp",
        UnOp::Exp2 => "exp2",
        UnOp::Log => "log",
        UnOp::Sqrt => "sqrt",
        UnOp::Sin => "sin",
        UnOp::Cos => "cos",
    }
}

fn reduce_name(kind: ReduceKind) -> &'static str {
    match kind {
        ReduceKind::Sum => "sum",
        ReduceKind::Max => "max",
        ReduceKind::Min => "min",
    }
}

fn atomic_name(op: AtomicOp) -> &'static str {
    match op {
        AtomicOp::Add => "add",
        AtomicOp::Max => "max",
        AtomicOp::Min => "min",
        AtomicOp::Exchange => "xchg",
    }
}

/// Unique printed names, assigned in definition order.
pub struct ValueNames {
    names: HashMap<ValueId, String>,
}

impl ValueNames {
    pub fn new(func: &Function) -> Self {
        let mut namer = ValueNames {
            names: HashMap::new(),
        };
        let mut taken: HashMap<String, usize> = HashMap::new();
        let mut define = |v: ValueId, names: &mut HashMap<ValueId, String>| {
            if names.contains_key(&v) {
                return;
            }
            let source = func
                .values
                .get(v.0 as usize)
                .and_then(|info| info.name.as_deref());
            let name = match source {
                Some(base) => {
                    let count = taken.entry(base.to_string()).or_insert(0);
                    let name = if *count == 0 {
                        base.to_string()
                    } else {
                        format!("{base}.{count}")
                    };
                    *count += 1;
                    name
                }
                None => v.0.to_string(),
            };
            names.insert(v, name);
        };
        for p in &func.params {
            define(p.value, &mut namer.names);
        }
        for v in definition_order(&func.body) {
            define(v, &mut namer.names);
        }
        namer
    }

    /// `%name`; values defined nowhere (bad IR) print by id.
    pub fn get(&self, v: ValueId) -> String {
        match self.names.get(&v) {
            Some(n) => format!("%{n}"),
            None => format!("%{}", v.0),
        }
    }
}

/// The values `region` defines, in the order they are printed: a region's
/// args, then per op its nested regions' definitions before its results.
fn definition_order(region: &Region) -> Vec<ValueId> {
    fn collect(region: &Region, out: &mut Vec<ValueId>) {
        out.extend(&region.args);
        for op in &region.ops {
            for r in super::walk::regions(&op.kind) {
                collect(r, out);
            }
            out.extend(&op.results);
        }
    }
    let mut out = Vec::new();
    collect(region, &mut out);
    out
}

struct Printer<'a> {
    func: &'a Function,
    names: ValueNames,
    out: String,
    /// Distinct layouts in order of first use; `#L{i}` names entry `i`.
    layout_names: Vec<Layout>,
}

impl Printer<'_> {
    fn v(&self, v: ValueId) -> String {
        self.names.get(v)
    }

    /// The type, and for a tile of a function with layouts its layout's alias.
    fn ty(&self, v: ValueId) -> String {
        let Some(info) = self.func.values.get(v.0 as usize) else {
            return "<undefined>".into();
        };
        match self.layout_of(v) {
            Some(layout) => {
                let alias = self.layout_names.iter().position(|l| *l == layout);
                format!("{} #L{}", info.ty, alias.unwrap_or(usize::MAX))
            }
            None => info.ty.to_string(),
        }
    }

    fn layout_of(&self, v: ValueId) -> Option<Layout> {
        let layouts = self.func.layouts.as_ref()?;
        let info = self.func.values.get(v.0 as usize)?;
        (!info.ty.shape.is_empty()).then(|| layouts.get(self.func, v))
    }

    /// `#L0 = blocked<...>` lines, one per distinct layout of the tiles, in
    /// order of first definition (MLIR prints its layout attributes so).
    fn layout_aliases(&mut self) {
        let params = self.func.params.iter().map(|p| p.value);
        for v in params.chain(definition_order(&self.func.body)) {
            if let Some(layout) = self.layout_of(v) {
                if !self.layout_names.contains(&layout) {
                    self.layout_names.push(layout);
                }
            }
        }
        let lines: Vec<String> = (self.layout_names.iter().enumerate())
            .map(|(i, l)| format!("#L{i} = {l}"))
            .collect();
        for line in lines {
            self.line(0, &line);
        }
    }

    /// `pipeline(stages 3, mma.sync warps 2x2, dot %c, cp.async %a x8 %b x8, acc #1, smem 49152 bytes)`.
    /// A transposed operand reads `^%b`.
    fn pipeline(&self, p: &LoopPipeline) -> String {
        let engine = engine_text(p.engine);
        let transposed = |i: usize| if p.transposes[i].is_some() { "^" } else { "" };
        format!(
            "pipeline(stages {}, {engine}, dot {}, cp.async {}{} x{} {}{} x{}, acc #{}, smem {} bytes)",
            p.stages,
            self.v(p.dot),
            transposed(0),
            self.v(p.loads[0]),
            p.copy_widths[0],
            transposed(1),
            self.v(p.loads[1]),
            p.copy_widths[1],
            p.acc,
            p.shared_bytes
        ) + &p.tma.as_ref().map_or(String::new(), |t| self.tma(t))
    }

    /// `prefetch(cp.async %kt x8 [n][k] for %s, %v x8 [k][n] for %o, smem N bytes)`.
    fn prefetch(&self, p: &LoopPrefetch) -> String {
        let operands: Vec<String> = p
            .operands
            .iter()
            .map(|o| {
                let staged = if o.k_major { "[n][k]" } else { "[k][n]" };
                format!(
                    "{} x{} {staged} for {}",
                    self.v(o.load),
                    o.copy_width,
                    self.v(o.dot)
                )
            })
            .collect();
        format!(
            "prefetch(cp.async {}, smem {} bytes)",
            operands.join(", "),
            p.shared_bytes
        )
    }

    /// ` tma(a %A[%M, %K] row-stride %lda at [row, col] folded map 1 [...], b ... map 0 [...], barriers at N)`.
    fn tma(&self, t: &TmaCopies) -> String {
        let tensor = |i: usize| {
            let o = &t.operands[i];
            format!(
                "{} {}[{}, {}] row-stride {} at [{}, {}]",
                ["a", "b"][i],
                self.v(o.base),
                self.v(o.rows),
                self.v(o.cols),
                self.v(o.row_stride),
                self.poly(&o.row),
                self.poly(&o.col),
            )
        };
        let a = match (&t.a_folded, &t.a_boxes) {
            (Some(m), _) => format!(" folded {}", map_text(m)),
            (None, Some(m)) => format!(" {}", map_text(m)),
            (None, None) => " by cp.async".to_string(),
        };
        let b_folded = t
            .b_folded
            .as_ref()
            .map_or(String::new(), |m| format!(" folded {}", map_text(m)));
        let multicast = if t.multicast {
            " multicast to the cluster's pair"
        } else {
            ""
        };
        let a_plain = t
            .a_plain
            .as_ref()
            .map_or(String::new(), |m| format!(" edge {}", map_text(m)));
        let producer = if t.warp_specialized {
            ", by a producer warpgroup"
        } else {
            ""
        };
        format!(
            " tma({}{a}{a_plain}, {} {}{b_folded}{multicast}{producer}, barriers at {})",
            tensor(0),
            tensor(1),
            map_text(&t.b_plain),
            t.barriers
        )
    }

    /// `128*pm + k`: a polynomial with the printer's value names.
    fn poly(&self, p: &Poly) -> String {
        let terms: Vec<String> = p
            .terms()
            .map(|(m, c)| {
                let factors: Vec<String> = m
                    .iter()
                    .map(|a| match a {
                        Atom::Axis(i) => format!("i{i}"),
                        Atom::Value(v) => self.v(*v),
                    })
                    .collect();
                match (factors.is_empty(), c) {
                    (true, c) => c.to_string(),
                    (false, 1) => factors.join("*"),
                    (false, c) => format!("{c}*{}", factors.join("*")),
                }
            })
            .collect();
        if terms.is_empty() {
            "0".to_string()
        } else {
            terms.join(" + ")
        }
    }

    fn list(&self, vs: &[ValueId]) -> String {
        vs.iter().map(|v| self.v(*v)).collect::<Vec<_>>().join(", ")
    }

    fn typed_list(&self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|v| format!("{}: {}", self.v(*v), self.ty(*v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn types(&self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|v| self.ty(*v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn function(&mut self) {
        let params: Vec<String> = self
            .func
            .params
            .iter()
            .map(|p| {
                let mut s = format!("{}: {}", self.v(p.value), self.ty(p.value));
                s.push_str(&param_attrs(&p.attrs));
                s
            })
            .collect();
        let shared = match &self.func.shared {
            Some(plan) => format!(" smem {} bytes", plan.total_bytes),
            None => String::new(),
        };
        let header = format!("func @{}({}){shared} {{", self.func.name, params.join(", "));
        self.line(0, &header);
        let body = &self.func.body;
        self.region_contents(body, 1);
        self.line(0, "}");
    }

    /// Ops and the final `yield` (omitted when nothing is yielded).
    fn region_contents(&mut self, region: &Region, depth: usize) {
        for op in &region.ops {
            self.op(op, depth);
        }
        if !region.yields.is_empty() {
            let text = format!("yield {}", self.list(&region.yields));
            self.line(depth, &text);
        }
    }

    fn results_prefix(&self, op: &Op) -> String {
        if op.results.is_empty() {
            String::new()
        } else {
            format!("{} = ", self.list(&op.results))
        }
    }

    fn op(&mut self, op: &Op, depth: usize) {
        use OpKind::*;
        let lhs = self.results_prefix(op);
        let name = op_name(&op.kind);
        let res_ty = self.types(&op.results);
        let text = match &op.kind {
            Constant { value } => format!("{lhs}{name} {} : {res_ty}", const_text(value)),
            ProgramId { axis } | NumPrograms { axis } => format!("{lhs}{name} {axis} : {res_ty}"),
            MakeRange { start, end } => format!("{lhs}{name} {start}..{end} : {res_ty}"),
            Splat { src }
            | Broadcast { src }
            | Reshape { src }
            | Cast { src }
            | Trans { src }
            | ConvertLayout { src } => {
                format!(
                    "{lhs}{name} {} : {} -> {res_ty}",
                    self.v(*src),
                    self.ty(*src)
                )
            }
            Unary { src, .. } => format!("{lhs}{name} {} : {res_ty}", self.v(*src)),
            Binary { lhs: a, rhs: b, .. } => {
                format!("{lhs}{name} {}, {} : {res_ty}", self.v(*a), self.v(*b))
            }
            Cmp { lhs: a, rhs: b, .. } => format!(
                "{lhs}{name} {}, {} : {} -> {res_ty}",
                self.v(*a),
                self.v(*b),
                self.ty(*a)
            ),
            AddPtr { ptr, offset } => format!(
                "{lhs}{name} {}, {} : {}, {}",
                self.v(*ptr),
                self.v(*offset),
                self.ty(*ptr),
                self.ty(*offset)
            ),
            Select {
                cond,
                on_true,
                on_false,
            } => format!(
                "{lhs}{name} {}, {}, {} : {res_ty}",
                self.v(*cond),
                self.v(*on_true),
                self.v(*on_false)
            ),
            Load { ptr, mask, other } => {
                let mut s = format!("{lhs}{name} {}", self.v(*ptr));
                if let Some(m) = mask {
                    let _ = write!(s, ", mask {}", self.v(*m));
                }
                if let Some(o) = other {
                    let _ = write!(s, ", other {}", self.v(*o));
                }
                let _ = write!(s, " : {} -> {res_ty}", self.ty(*ptr));
                s
            }
            Store { ptr, value, mask } => {
                let mut s = format!("{lhs}{name} {}, {}", self.v(*ptr), self.v(*value));
                if let Some(m) = mask {
                    let _ = write!(s, ", mask {}", self.v(*m));
                }
                let _ = write!(s, " : {}, {}", self.ty(*ptr), self.ty(*value));
                s
            }
            ClusterSum { src, splits } => format!(
                "{lhs}{name} {} over {splits} programs : {res_ty}",
                self.v(*src)
            ),
            Reduce { src, axis, .. } => format!(
                "{lhs}{name} {}, axis {axis} : {} -> {res_ty}",
                self.v(*src),
                self.ty(*src)
            ),
            Dot { a, b, acc } => {
                let engine = op
                    .results
                    .first()
                    .and_then(|r| self.func.dot_engines.get(r))
                    .map_or(String::new(), |e| format!(" on {}", engine_text(*e)));
                format!(
                    "{lhs}{name} {}, {}, {} : {}, {} -> {res_ty}{engine}",
                    self.v(*a),
                    self.v(*b),
                    self.v(*acc),
                    self.ty(*a),
                    self.ty(*b)
                )
            }
            AtomicRmw {
                ptr, value, mask, ..
            } => {
                let mut s = format!("{lhs}{name} {}, {}", self.v(*ptr), self.v(*value));
                if let Some(m) = mask {
                    let _ = write!(s, ", mask {}", self.v(*m));
                }
                let _ = write!(s, " : {} -> {res_ty}", self.ty(*ptr));
                s
            }
            AtomicCas { ptr, cmp, value } => format!(
                "{lhs}{name} {}, {}, {} : {} -> {res_ty}",
                self.v(*ptr),
                self.v(*cmp),
                self.v(*value),
                self.ty(*ptr)
            ),
            Return => name,
            If {
                cond,
                then_region,
                else_region,
            } => {
                let head = if op.results.is_empty() {
                    format!("if {} {{", self.v(*cond))
                } else {
                    format!("{lhs}if {} : ({res_ty}) {{", self.v(*cond))
                };
                self.line(depth, &head);
                self.region_contents(then_region, depth + 1);
                if else_region.ops.is_empty() && else_region.yields.is_empty() {
                    self.line(depth, "}");
                } else {
                    self.line(depth, "} else {");
                    self.region_contents(else_region, depth + 1);
                    self.line(depth, "}");
                }
                return;
            }
            While {
                inits,
                cond_region,
                body_region,
                pipeline,
                prefetch,
            } => {
                let mut head = format!(
                    "{lhs}while ({}) : ({})",
                    self.list(inits),
                    self.types(inits)
                );
                if let Some(p) = pipeline {
                    head += &format!(" {}", self.pipeline(p));
                }
                if let Some(p) = prefetch {
                    head += &format!(" {}", self.prefetch(p));
                }
                head += &self.shared_buffer(op);
                self.line(depth, &head);
                let cond_head = format!("cond({}) {{", self.typed_list(&cond_region.args));
                self.line(depth, &cond_head);
                self.region_contents(cond_region, depth + 1);
                let body_head = format!("}} body({}) {{", self.typed_list(&body_region.args));
                self.line(depth, &body_head);
                self.region_contents(body_region, depth + 1);
                self.line(depth, "}");
                return;
            }
        };
        let text = text + &self.shared_buffer(op);
        self.line(depth, &text);
    }

    /// ` smem [offset, end)` for an op the shared-memory plan gave a buffer.
    fn shared_buffer(&self, op: &Op) -> String {
        let buffer = self
            .func
            .shared
            .as_ref()
            .zip(op.results.first())
            .and_then(|(plan, r)| plan.buffers.get(r));
        match buffer {
            Some(b) if b.barrier_first => {
                format!(" smem [{}, {}) after barrier", b.offset, b.end())
            }
            Some(b) => format!(" smem [{}, {})", b.offset, b.end()),
            None => String::new(),
        }
    }
}

/// `mma.sync warps 2x2` or `wgmma warpgroups 2`.
fn engine_text(engine: DotEngine) -> String {
    match engine {
        DotEngine::MmaSync { warps } => format!("mma.sync warps {}x{}", warps[0], warps[1]),
        DotEngine::Wgmma { warpgroups } => format!("wgmma warpgroups {warpgroups}"),
    }
}

fn const_text(c: &Const) -> String {
    match c {
        Const::Int(i) => i.to_string(),
        Const::Float(f) => format!("{f:?}"),
        Const::Bool(b) => b.to_string(),
    }
}

/// ` __multipleof(8) __readonly`, in the Triton-C spelling.
fn param_attrs(attrs: &ParamAttrs) -> String {
    let mut s = String::new();
    if let Some(n) = attrs.multiple_of {
        let _ = write!(s, " __multipleof({n})");
    }
    if let Some(n) = attrs.aligned {
        let _ = write!(s, " __aligned({n})");
    }
    if attrs.readonly {
        s.push_str(" __readonly");
    }
    if attrs.writeonly {
        s.push_str(" __writeonly");
    }
    if attrs.noalias {
        s.push_str(" __noalias");
    }
    s
}

/// `map 1 [cols by 1 box 64, 8 by 1 row box 8, rows/32 by 32 rows box 1] sw128`.
fn map_text(m: &TmaMap) -> String {
    let dims: Vec<String> = m
        .dims
        .iter()
        .map(|d| {
            let extent = match d.extent {
                MapExtent::Fixed(n) => n.to_string(),
                MapExtent::RowsOver(1) => "rows".to_string(),
                MapExtent::RowsOver(n) => format!("rows/{n}"),
                MapExtent::ColsOver(1) => "cols".to_string(),
                MapExtent::ColsOver(n) => format!("cols/{n}"),
            };
            let stride = match d.stride {
                MapStride::Elements(n) => n.to_string(),
                MapStride::Rows(1) => "1 row".to_string(),
                MapStride::Rows(n) => format!("{n} rows"),
            };
            format!("{extent} by {stride} box {}", d.box_size)
        })
        .collect();
    format!("map {} [{}] sw{}", m.map, dims.join(", "), m.swizzle)
}
