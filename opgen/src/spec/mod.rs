//! The op spec: `#pragma opgen ...` lines inside the kernel's `.tc` file that
//! say how a framework calls the kernel (inputs, outputs, kernel arguments,
//! grid, tuning space, dtype variants, backward). One spec serves every
//! framework; the templates turn it into bindings.

mod active_lines;
mod expr;
mod lex;
mod names;
mod parse;
mod validate;

pub use expr::{BinOp, Expr};
pub use parse::{parse_attr_value, parse_spec};

use tritonc::span::Span;

/// A whole op: everything the `#pragma opgen` lines of one file say.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSpec {
    pub namespace: String,
    pub name: String,
    /// The kernel to call; `None` means the file's only (or first) kernel.
    pub kernel: Option<String>,
    pub dtypes: Vec<DtypeVar>,
    /// Dtypes another variable's choice sets (`dtype S from T {...}`).
    pub derived_dtypes: Vec<DerivedDtype>,
    pub inputs: Vec<TensorSpec>,
    pub outputs: Vec<TensorSpec>,
    /// Scalars the caller passes (`attr alpha: float = 1.0`), after the inputs.
    pub attrs: Vec<AttrSpec>,
    pub args: Vec<ArgSpec>,
    pub grid: Vec<GridDim>,
    /// Conditions a config must meet to be a candidate (`require N <= TN`).
    pub requires: Vec<Require>,
    /// Conditions on macros and the warps of a launch (`require (KX - 1) *
    /// (8 - num_warps) == 0`): decided for each variant when the op is
    /// generated (a variant failing one is not compiled), never at a call.
    pub launch_requires: Vec<Require>,
    /// List macros (`tune TM = [32, 64]`): the tuning space.
    pub tune: Vec<MacroSpec>,
    /// Fixed macros (`define NEG_INF = -1e30f`).
    pub defines: Vec<MacroSpec>,
    /// Warps per program; several values widen the tuning space.
    pub num_warps: Vec<u32>,
    /// Pipeline buffers (`num_stages 3` or `[3, 8]`); empty: the compiler's
    /// choice. Several values widen the tuning space.
    pub num_stages: Vec<u32>,
    /// Split-K factors (`split_k [1, 4]`: programs sharing a dot loop, 1 to
    /// 8); empty: no split. They are also the tuning macro
    /// [`SPLIT_K_MACRO`] (last of `tune`), so `require` lines can read them.
    pub split_k: Vec<u32>,
    /// TMA copies (`tma [0, 1]`: each variant compiled without and with the
    /// compiler's `--tma`); empty: without. Also the tuning macro
    /// [`TMA_MACRO`] (after `SPLIT_K`), so `require` lines can read it.
    pub tma: Vec<u32>,
    /// Dims the op may round up with zeros (`pad N, K to 8 if ...`).
    pub pad: Option<Pad>,
    pub backward: Option<Backward>,
    /// The `op` line, for errors about the op as a whole.
    pub span: Span,
}

/// How one variant is compiled besides its macros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchOption {
    pub num_warps: u32,
    pub num_stages: Option<u32>,
}

/// The tuning macro a `split_k [1, 4]` line declares (the runtime's, which
/// finds a split variant's unsplit sibling by it).
pub use opgen_runtime::split_launch::SPLIT_K_MACRO;

/// The tuning macro a `tma [0, 1]` line declares.
pub const TMA_MACRO: &str = "TMA";

/// `dtype T in {float32: TYPE=float, float16: TYPE=half}`.
#[derive(Clone, Debug, PartialEq)]
pub struct DtypeVar {
    pub var: String,
    pub choices: Vec<DtypeChoice>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DtypeChoice {
    /// Framework-neutral dtype name: `float32`, `float16`, `bfloat16`, ...
    pub dtype: String,
    /// Macros this choice defines, e.g. `TYPE=float`.
    pub macros: Vec<(String, String)>,
    pub span: Span,
}

/// `dtype S from T {float16: float32, float64: float64}`: a dtype that
/// follows another variable's choice, for tensors a kernel keeps in a wider
/// type than its inputs (a layer norm's statistics: float32 for half inputs,
/// float64 for float64 ones). Not a dimension of the tuning space: each
/// choice of `T` has one `S`.
#[derive(Clone, Debug, PartialEq)]
pub struct DerivedDtype {
    pub var: String,
    /// The dtype variable it follows.
    pub source: String,
    /// `(choice of source, dtype)`, one per choice of the source.
    pub map: Vec<(String, String)>,
    pub span: Span,
}

impl DerivedDtype {
    /// The dtype this variable has where its source is `source_dtype`.
    pub fn of(&self, source_dtype: &str) -> Option<&str> {
        self.map
            .iter()
            .find(|(from, _)| from == source_dtype)
            .map(|(_, to)| to.as_str())
    }

    /// Its dtypes, each once, in the order the map first gives them.
    pub fn targets(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for (_, to) in &self.map {
            if !out.contains(&to.as_str()) {
                out.push(to);
            }
        }
        out
    }
}

/// `pad N, K to 8 if M * N * K >= 1048576`: where one of these dims is not
/// a multiple of 8 (or an input whose last axis is one has a leading stride
/// that is not), the op runs the kernel on copies of its inputs zero-padded
/// to the next multiple along these dims, with outputs of the padded sizes,
/// and returns the outputs cut back to the real ones: the kernel's aligned
/// variants (`require N / ALIGN * ALIGN == N`) then serve odd shapes. Only
/// for kernels whose cut outputs do not change when these dims grow with
/// zeros (a matmul's K and N); the condition, on dims only, keeps small
/// calls, where the copies cost more than they save, unpadded. It is one or
/// more comparisons joined by `&&` (`if M >= 192 && M * N * K >= 2000000000`).
#[derive(Clone, Debug, PartialEq)]
pub struct Pad {
    pub dims: Vec<(String, Span)>,
    pub multiple: u32,
    /// The comparisons that must all hold (none: always pad).
    pub conditions: Vec<Require>,
    pub span: Span,
}

impl Pad {
    /// Whether the condition holds for these dims (`None`: a name without a
    /// value, or a division by zero).
    pub fn holds(&self, value: &dyn Fn(&str) -> Option<i64>) -> Option<bool> {
        self.conditions.iter().try_fold(true, |all, c| {
            Some(all && c.holds(c.left.eval(value)?, c.right.eval(value)?))
        })
    }

    /// Per axis of `dims`, the multiple that axis is padded to (1: none).
    pub fn multiples(&self, dims: &[Dim]) -> Vec<u32> {
        dims.iter()
            .map(|d| match d {
                Dim::Sym(s) if self.dims.iter().any(|(p, _)| p == s) => self.multiple,
                _ => 1,
            })
            .collect()
    }
}

/// `input x: T[M, N] contiguous`.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSpec {
    pub name: String,
    /// A dtype variable (`T`) or a fixed dtype (`float32`).
    pub dtype: String,
    pub dims: Vec<Dim>,
    /// Copy to a dense row-major layout when the kernel cannot take the
    /// tensor's strides (instead of raising an error).
    pub contiguous: bool,
    pub span: Span,
}

/// `attr alpha: float = 1.0`: a scalar the caller passes with the inputs
/// (a schema argument in PyTorch, an op attr in TensorFlow, a node attribute
/// in ONNX, a keyword argument in JAX). Float attributes go whole to float
/// kernel parameters; int and bool ones may also appear in integer
/// expressions (arguments, grid, requirements), a bool as 0 or 1.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrSpec {
    pub name: String,
    pub ty: AttrType,
    /// Used when the caller leaves the attribute out; without one it is required.
    pub default: Option<AttrValue>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrType {
    Float,
    Int,
    Bool,
}

impl AttrType {
    /// As the spec writes it: `float`, `int`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Float => "float",
            AttrType::Int => "int",
            AttrType::Bool => "bool",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrValue {
    Float(f64),
    Int(i64),
    Bool(bool),
}

impl AttrValue {
    /// A C++ literal (and Python, with `bool_words` = ("True", "False")).
    pub fn literal(self, bool_words: (&str, &str)) -> String {
        match self {
            AttrValue::Float(v) => {
                let text = format!("{v:?}");
                if text.contains(['.', 'e', 'E']) {
                    text
                } else {
                    format!("{text}.0")
                }
            }
            AttrValue::Int(v) => v.to_string(),
            AttrValue::Bool(true) => bool_words.0.to_string(),
            AttrValue::Bool(false) => bool_words.1.to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Sym(String),
    Lit(i64),
}

/// One kernel argument: the value passed for the kernel's parameter at this
/// position (`ldx = stride(x, 0)`, or just `x`).
#[derive(Clone, Debug, PartialEq)]
pub struct ArgSpec {
    /// The parameter name when written `name = expr`; checked against the kernel.
    pub param: Option<String>,
    pub value: Expr,
    pub span: Span,
}

/// One grid dimension: a number of programs, or `persistent(work)`: as many
/// programs as fit on the device at once (SMs x occupancy), at most `work`;
/// `persistent(work, on)`: so where `on` (macros) is nonzero, one program
/// per work item elsewhere (a tuning choice).
#[derive(Clone, Debug, PartialEq)]
pub struct GridDim {
    pub value: Expr,
    pub persistent: bool,
    /// `on` of `persistent(work, on)`.
    pub persistent_if: Option<Expr>,
    pub span: Span,
}

impl GridDim {
    /// The expressions a launcher computes for this dimension.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        std::iter::once(&self.value).chain(&self.persistent_if)
    }
}

/// The name a `require` line reads for the warps of a launch.
pub const NUM_WARPS_NAME: &str = "num_warps";

/// `require N <= TN`: a config whose macros fail it is skipped for these inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct Require {
    pub left: Expr,
    /// `<=`, `<`, `>=`, `>`, `==` or `!=`, as written.
    pub cmp: &'static str,
    pub right: Expr,
    pub span: Span,
}

/// Whether every line of `requires` holds for the names `value` knows; a
/// line reading a name it does not know is decided elsewhere (holds here).
fn all_hold(requires: &[Require], value: &dyn Fn(&str) -> Option<i64>) -> bool {
    requires
        .iter()
        .all(|r| match (r.left.eval(value), r.right.eval(value)) {
            (Some(left), Some(right)) => r.holds(left, right),
            _ => true,
        })
}

/// The value of macro `name` at a point of the tuning space, read as a
/// number (`None`: absent, or not one).
fn point_value<T: std::str::FromStr>(point: &[(String, String)], name: &str) -> Option<T> {
    point
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.trim().parse().ok())
}

impl Require {
    /// Whether `left cmp right` holds for these values.
    pub fn holds(&self, left: i64, right: i64) -> bool {
        match self.cmp {
            "<=" => left <= right,
            "<" => left < right,
            ">=" => left >= right,
            ">" => left > right,
            "==" => left == right,
            _ => left != right,
        }
    }
}

/// `tune TM = [32, 64]` or `define X = value`.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroSpec {
    pub name: String,
    pub values: Vec<String>,
    pub span: Span,
}

/// `backward da = triton::dot_nt(dc, b), db = dc`.
#[derive(Clone, Debug, PartialEq)]
pub struct Backward {
    pub grads: Vec<GradSpec>,
    pub span: Span,
}

/// The gradient of one input, in terms of other ops.
#[derive(Clone, Debug, PartialEq)]
pub struct GradSpec {
    /// The input this is the gradient of (`a` for `da`).
    pub input: String,
    pub value: GradExpr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GradExpr {
    /// An input, an output or an output's gradient (`dc`), passed through.
    Tensor(String),
    /// A call of another op: `ns::name(args)`.
    Call {
        namespace: String,
        op: String,
        args: Vec<GradExpr>,
    },
}

impl OpSpec {
    /// Every (warps, pipeline buffers) pair a variant is compiled with;
    /// `None` buffers: the compiler's choice.
    pub fn launch_options(&self) -> Vec<LaunchOption> {
        let stages: Vec<Option<u32>> = if self.num_stages.is_empty() {
            vec![None]
        } else {
            self.num_stages.iter().map(|&s| Some(s)).collect()
        };
        self.num_warps
            .iter()
            .flat_map(|&num_warps| {
                stages.iter().map(move |&num_stages| LaunchOption {
                    num_warps,
                    num_stages,
                })
            })
            .collect()
    }

    /// The split-K factor of a point of the tuning space (its
    /// [`SPLIT_K_MACRO`] value); `None` when the spec has no `split_k` line.
    pub fn split_k_of(&self, point: &[(String, String)]) -> Option<u32> {
        if self.split_k.is_empty() {
            return None;
        }
        point_value(point, SPLIT_K_MACRO)
    }

    /// Whether a point of the tuning space asks for TMA copies (its
    /// [`TMA_MACRO`] value is 1, 2: with multicast, 3: warp-specialized, or
    /// 4: both).
    pub fn tma_of(&self, point: &[(String, String)]) -> bool {
        self.tma_value(point) >= 1
    }

    /// Whether a point asks for TMA copies whose `b` the two programs of a
    /// cluster share (its [`TMA_MACRO`] value is 2 or 4).
    pub fn tma_multicast_of(&self, point: &[(String, String)]) -> bool {
        matches!(self.tma_value(point), 2 | 4)
    }

    /// Whether a point asks for TMA copies issued by a producer warpgroup
    /// of their own (its [`TMA_MACRO`] value is 3 or 4).
    pub fn warp_specialize_of(&self, point: &[(String, String)]) -> bool {
        matches!(self.tma_value(point), 3 | 4)
    }

    fn tma_value(&self, point: &[(String, String)]) -> u32 {
        if self.tma.is_empty() {
            return 0;
        }
        point_value(point, TMA_MACRO).unwrap_or(0)
    }

    /// Whether a point of the tuning space passes every `require` line that
    /// reads only macros: those are decided when the op is generated, and a
    /// point failing one is never compiled (no input could run it). Lines
    /// that read arguments are decided at each call.
    pub fn point_admitted(&self, point: &[(String, String)]) -> bool {
        all_hold(&self.requires, &|name| point_value::<i64>(point, name))
    }

    /// Whether the variant of `point` launched with `num_warps` warps passes
    /// every `require` line that reads `num_warps`.
    pub fn launch_admitted(&self, point: &[(String, String)], num_warps: u32) -> bool {
        all_hold(&self.launch_requires, &|name| {
            if name == NUM_WARPS_NAME {
                Some(i64::from(num_warps))
            } else {
                point_value::<i64>(point, name)
            }
        })
    }

    pub fn qualified_name(&self) -> String {
        format!("{}::{}", self.namespace, self.name)
    }

    pub fn input(&self, name: &str) -> Option<&TensorSpec> {
        self.inputs.iter().find(|t| t.name == name)
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorSpec> {
        self.inputs
            .iter()
            .chain(self.outputs.iter())
            .find(|t| t.name == name)
    }

    pub fn attr(&self, name: &str) -> Option<&AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    pub fn dtype_var(&self, name: &str) -> Option<&DtypeVar> {
        self.dtypes.iter().find(|d| d.var == name)
    }

    pub fn derived_dtype(&self, name: &str) -> Option<&DerivedDtype> {
        self.derived_dtypes.iter().find(|d| d.var == name)
    }

    /// Whether a tensor's dtype names a variable (chosen or derived) rather
    /// than a fixed dtype.
    pub fn is_dtype_var(&self, name: &str) -> bool {
        self.dtype_var(name).is_some() || self.derived_dtype(name).is_some()
    }

    /// The expressions a launch evaluates per variant: the grid's (with
    /// their persistent conditions) and both sides of each `require`.
    pub fn launch_exprs(&self) -> impl Iterator<Item = &Expr> {
        self.grid
            .iter()
            .flat_map(GridDim::exprs)
            .chain(self.requires.iter().flat_map(|r| [&r.left, &r.right]))
    }

    /// Symbolic dims in the order inputs bind them, with the binding input
    /// and axis: `N` from `x` axis 0.
    pub fn dim_bindings(&self) -> Vec<(String, String, usize)> {
        let mut bound: Vec<(String, String, usize)> = Vec::new();
        for input in &self.inputs {
            for (axis, dim) in input.dims.iter().enumerate() {
                if let Dim::Sym(sym) = dim {
                    if !bound.iter().any(|(s, _, _)| s == sym) {
                        bound.push((sym.clone(), input.name.clone(), axis));
                    }
                }
            }
        }
        bound
    }
}

/// Dtype names the spec accepts, with their Triton-IR element type.
pub const DTYPES: &[(&str, &str)] = &[
    ("float32", "f32"),
    ("float16", "f16"),
    ("bfloat16", "bf16"),
    ("float64", "f64"),
    ("int32", "i32"),
    ("int64", "i64"),
    ("int16", "i16"),
    ("int8", "i8"),
    ("bool", "i1"),
];

/// The Triton-IR element type of a dtype name (`float16` -> `f16`).
pub fn ir_elem_type(dtype: &str) -> Option<&'static str> {
    DTYPES.iter().find(|(d, _)| *d == dtype).map(|(_, e)| *e)
}
