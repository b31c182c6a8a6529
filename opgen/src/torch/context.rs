//! The data `templates/torch/*.hbs` render: every check, allocation, argument
//! and grid of the op, as C++ snippets derived from the spec.

use crate::bind::{ArgKind, BoundArg};
use crate::spec::{Backward, Dim, Expr, GradExpr, OpSpec};
use crate::variants::{CompiledVariant, Group};
use serde::Serialize;
use std::collections::BTreeSet;

#[derive(Serialize)]
pub struct TorchContext {
    pub source: String,
    pub ns: String,
    pub op: String,
    pub qualified: String,
    /// C identifier prefix for the library's symbols: `triton_add`.
    pub prefix: String,
    pub lib_file: String,
    pub schema: String,
    pub cpp_params: String,
    pub call_args: String,
    pub fn_type: String,
    pub return_type: String,
    pub return_expr: String,
    pub first_input: String,
    pub inputs: Vec<InputCtx>,
    pub dims: Vec<DimCtx>,
    pub dim_checks: Vec<DimCheck>,
    pub dtype_vars: Vec<DtypeVarCtx>,
    pub fixed_dtypes: Vec<FixedDtype>,
    pub groups: Vec<GroupCtx>,
    pub supported_dtypes: String,
    pub outputs: Vec<OutputCtx>,
    pub args: Vec<ArgCtx>,
    pub cfg_names: Vec<String>,
    pub cfg_width: usize,
    pub variants: Vec<VariantRow>,
    pub grid_x: String,
    pub grid_y: String,
    pub grid_z: String,
    pub single_output: bool,
    pub persistent: bool,
    pub requires: Vec<RequireCtx>,
    pub requires_text: String,
    pub key_dims: String,
    pub backward: Option<BackwardCtx>,
}

#[derive(Serialize)]
pub struct InputCtx {
    pub name: String,
    pub index: usize,
    pub rank: usize,
    pub shape_text: String,
    pub first: bool,
    /// C++ condition: the strides the kernel does not take are dense.
    pub layout_ok: String,
    /// What the kernel needs, for the error message.
    pub layout_need: String,
    pub contiguous: bool,
    /// Whether a pointer to it is passed (then it must be 16-byte aligned).
    pub passed: bool,
}

#[derive(Serialize)]
pub struct DimCtx {
    pub name: String,
    pub tensor: String,
    pub axis: usize,
}

#[derive(Serialize)]
pub struct DimCheck {
    pub tensor: String,
    pub axis: usize,
    pub expected: String,
    /// `dimension N` or `dimension 4`, for messages.
    pub what: String,
    /// `argument \`x\` has N = ` or empty for literal dims.
    pub bound_by: String,
}

#[derive(Serialize)]
pub struct DtypeVarCtx {
    pub var: String,
    pub source: String,
    pub others: Vec<String>,
    pub choices: String,
}

#[derive(Serialize)]
pub struct FixedDtype {
    pub name: String,
    pub cpp: String,
    pub dtype: String,
}

#[derive(Serialize)]
pub struct GroupCtx {
    pub index: usize,
    pub cond: String,
    pub label: String,
    pub first: usize,
    pub count: usize,
}

#[derive(Serialize)]
pub struct OutputCtx {
    pub name: String,
    pub sizes: String,
    pub sym_sizes: String,
    pub dtype: String,
}

#[derive(Serialize, Clone)]
pub struct ArgCtx {
    pub index: usize,
    pub kind: String,
    pub value: String,
    pub is_int: bool,
    pub is_i32: bool,
    pub label: String,
}

#[derive(Serialize)]
pub struct VariantRow {
    pub index: usize,
    pub values: String,
    pub config: String,
}

#[derive(Serialize)]
pub struct RequireCtx {
    pub cond: String,
}

#[derive(Serialize)]
pub struct BackwardCtx {
    pub class: String,
    pub saved: Vec<SavedCtx>,
    pub out_grads: Vec<OutGradCtx>,
    pub input_grads: Vec<String>,
    pub text: String,
}

#[derive(Serialize)]
pub struct SavedCtx {
    pub name: String,
    pub index: usize,
}

#[derive(Serialize)]
pub struct OutGradCtx {
    pub name: String,
    pub output: String,
    pub index: usize,
}

/// Errors while deriving the context (e.g. a grid macro that is not a number).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ContextError(pub String);

pub fn torch_scalar_type(dtype: &str) -> &'static str {
    match dtype {
        "float32" => "at::kFloat",
        "float16" => "at::kHalf",
        "bfloat16" => "at::kBFloat16",
        "float64" => "at::kDouble",
        "int32" => "at::kInt",
        "int64" => "at::kLong",
        "int16" => "at::kShort",
        "int8" => "at::kChar",
        _ => "at::kBool",
    }
}

pub fn build(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    source: &str,
) -> Result<TorchContext, ContextError> {
    let prefix = format!("{}_{}", spec.namespace, spec.name);
    let inputs: Vec<String> = spec.inputs.iter().map(|t| t.name.clone()).collect();
    let schema_args: Vec<String> = inputs.iter().map(|n| format!("Tensor {n}")).collect();
    let returns = if spec.outputs.len() == 1 {
        "Tensor".to_string()
    } else {
        format!("({})", vec!["Tensor"; spec.outputs.len()].join(", "))
    };
    let out_names: Vec<String> = spec.outputs.iter().map(|t| t.name.clone()).collect();
    let (return_type, return_expr) = if out_names.len() == 1 {
        ("at::Tensor".to_string(), out_names[0].clone())
    } else {
        (
            format!(
                "std::tuple<{}>",
                vec!["at::Tensor"; out_names.len()].join(", ")
            ),
            format!("std::make_tuple({})", out_names.join(", ")),
        )
    };
    let bindings = spec.dim_bindings();
    let strided = referenced_strides(spec);
    let passed: BTreeSet<&str> = kinds
        .iter()
        .filter_map(|k| match &k.kind {
            ArgKind::Ptr(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();

    let input_ctx = spec
        .inputs
        .iter()
        .enumerate()
        .map(|(index, t)| {
            let (layout_ok, layout_need) = layout_condition(&t.name, t.dims.len(), &strided);
            InputCtx {
                name: t.name.clone(),
                index,
                rank: t.dims.len(),
                shape_text: shape_text(&t.dims),
                first: index == 0,
                layout_ok,
                layout_need,
                contiguous: t.contiguous,
                passed: passed.contains(t.name.as_str()),
            }
        })
        .collect();

    let mut dim_checks = Vec::new();
    for t in &spec.inputs {
        for (axis, dim) in t.dims.iter().enumerate() {
            match dim {
                Dim::Sym(s) => {
                    let (_, src, src_axis) =
                        bindings.iter().find(|(b, _, _)| b == s).expect("bound");
                    if src == &t.name && *src_axis == axis {
                        continue;
                    }
                    dim_checks.push(DimCheck {
                        tensor: t.name.clone(),
                        axis,
                        expected: s.clone(),
                        what: format!("dimension {s}"),
                        bound_by: format!("argument `{src}` has {s} = "),
                    });
                }
                Dim::Lit(v) => dim_checks.push(DimCheck {
                    tensor: t.name.clone(),
                    axis,
                    expected: format!("int64_t({v})"),
                    what: format!("dimension {axis}"),
                    bound_by: "the op needs ".to_string(),
                }),
            }
        }
    }

    let dtype_vars: Vec<DtypeVarCtx> = spec
        .dtypes
        .iter()
        .filter_map(|d| {
            let users: Vec<&str> = spec
                .inputs
                .iter()
                .filter(|t| t.dtype == d.var)
                .map(|t| t.name.as_str())
                .collect();
            let source = users.first()?.to_string();
            Some(DtypeVarCtx {
                var: d.var.clone(),
                source,
                others: users[1..].iter().map(|s| s.to_string()).collect(),
                choices: d
                    .choices
                    .iter()
                    .map(|c| c.dtype.clone())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
        })
        .collect();
    for d in &spec.dtypes {
        if !dtype_vars.iter().any(|v| v.var == d.var) {
            return Err(ContextError(format!(
                "dtype variable `{}` is used by no input, so a call cannot choose its dtype",
                d.var
            )));
        }
    }
    let fixed_dtypes = spec
        .inputs
        .iter()
        .filter(|t| spec.dtype_var(&t.dtype).is_none())
        .map(|t| FixedDtype {
            name: t.name.clone(),
            cpp: torch_scalar_type(&t.dtype).to_string(),
            dtype: t.dtype.clone(),
        })
        .collect();

    let mut first = 0;
    let group_ctx: Vec<GroupCtx> = groups
        .iter()
        .enumerate()
        .map(|(index, g)| {
            let conds: Vec<String> = g
                .dtypes
                .iter()
                .map(|(var, dtype)| format!("dtype_{var} == {}", torch_scalar_type(dtype)))
                .collect();
            let ctx = GroupCtx {
                index,
                cond: cpp_all(&conds),
                label: group_label(g),
                first,
                count: g.variants.len(),
            };
            first += g.variants.len();
            ctx
        })
        .collect();

    let outputs = spec
        .outputs
        .iter()
        .map(|t| {
            // The same dims as C++ expressions: plain sizes, and SymInts for the Meta kernel.
            OutputCtx {
                name: t.name.clone(),
                sizes: dims_cpp(&t.dims, Some("int64_t")),
                sym_sizes: dims_cpp(&t.dims, Some("c10::SymInt")),
                dtype: match spec.dtype_var(&t.dtype) {
                    Some(_) => format!("dtype_{}", t.dtype),
                    None => torch_scalar_type(&t.dtype).to_string(),
                },
            }
        })
        .collect();

    let plain = |n: &str| n.to_string();
    let args = spec
        .args
        .iter()
        .zip(kinds)
        .enumerate()
        .map(|(index, (arg, bound))| {
            let label = bound.param.clone();
            let kind = &bound.kind;
            match kind {
                ArgKind::Ptr(t) => ArgCtx {
                    index,
                    kind: "OPGEN_ARG_PTR".into(),
                    value: format!("reinterpret_cast<uint64_t>({t}.data_ptr())"),
                    is_int: false,
                    is_i32: false,
                    label,
                },
                ArgKind::I32 | ArgKind::I64 => ArgCtx {
                    index,
                    kind: if *kind == ArgKind::I32 {
                        "OPGEN_ARG_I32".into()
                    } else {
                        "OPGEN_ARG_I64".into()
                    },
                    value: arg.value.to_cpp(&plain),
                    is_int: true,
                    is_i32: *kind == ArgKind::I32,
                    label,
                },
            }
        })
        .collect();

    // Macros the grid and the requirements read, per variant.
    let cfg_names = grid_macros(spec);
    let mut variants = Vec::new();
    let mut index = 0;
    for g in groups {
        for v in &g.variants {
            let mut values = macro_values(v, &cfg_names).map_err(ContextError)?;
            if values.is_empty() {
                values.push("0".into());
            }
            variants.push(VariantRow {
                index,
                values: values.join(", "),
                config: v.config.clone(),
            });
            index += 1;
        }
    }
    let mut grid: Vec<String> = spec.grid.iter().map(|g| g.value.to_cpp(&plain)).collect();
    while grid.len() < 3 {
        grid.push("int64_t(1)".into());
    }
    let requires = spec
        .requires
        .iter()
        .map(|r| RequireCtx {
            cond: format!(
                "{} {} {}",
                r.left.to_cpp(&plain),
                r.cmp,
                r.right.to_cpp(&plain)
            ),
        })
        .collect();
    let requires_text = requires_text(spec);
    let key_dims = bindings
        .iter()
        .map(|(s, _, _)| s.clone())
        .collect::<Vec<_>>()
        .join(", ");

    let backward = spec.backward.as_ref().map(|b| {
        let saved: Vec<SavedCtx> = spec
            .inputs
            .iter()
            .chain(spec.outputs.iter())
            .enumerate()
            .map(|(index, t)| SavedCtx {
                name: t.name.clone(),
                index,
            })
            .collect();
        BackwardCtx {
            class: format!("{}Function", camel_case(&spec.name)),
            saved,
            out_grads: out_grads(spec),
            input_grads: input_grads(spec, b, grad_cpp, "at::Tensor()"),
            text: b
                .grads
                .iter()
                .map(|g| format!("d{} = {}", g.input, grad_text(&g.value)))
                .collect::<Vec<_>>()
                .join(", "),
        }
    });

    let cpp_params: Vec<String> = inputs
        .iter()
        .map(|n| format!("const at::Tensor& {n}_arg"))
        .collect();
    let fn_type = format!(
        "{return_type}({})",
        vec!["const at::Tensor&"; inputs.len()].join(", ")
    );
    let supported_dtypes = groups
        .iter()
        .map(group_label)
        .collect::<Vec<_>>()
        .join("; ");
    Ok(TorchContext {
        source: source.to_string(),
        ns: spec.namespace.clone(),
        op: spec.name.clone(),
        qualified: spec.qualified_name(),
        lib_file: format!("lib{prefix}.so"),
        prefix,
        schema: format!("{}({}) -> {returns}", spec.name, schema_args.join(", ")),
        cpp_params: cpp_params.join(", "),
        call_args: inputs.join(", "),
        fn_type,
        return_type,
        return_expr,
        first_input: inputs.first().cloned().unwrap_or_default(),
        inputs: input_ctx,
        dims: bindings
            .iter()
            .map(|(name, tensor, axis)| DimCtx {
                name: name.clone(),
                tensor: tensor.clone(),
                axis: *axis,
            })
            .collect(),
        dim_checks,
        dtype_vars,
        fixed_dtypes,
        groups: group_ctx,
        supported_dtypes,
        outputs,
        args,
        cfg_width: cfg_names.len().max(1),
        cfg_names,
        variants,
        grid_x: grid[0].clone(),
        grid_y: grid[1].clone(),
        grid_z: grid[2].clone(),
        single_output: spec.outputs.len() == 1,
        persistent: spec.grid.first().is_some_and(|g| g.persistent),
        requires,
        requires_text,
        key_dims,
        backward,
    })
}

/// The values of `names` (macros the grid and requirements read) in one variant.
pub fn macro_values(v: &CompiledVariant, names: &[String]) -> Result<Vec<String>, String> {
    names
        .iter()
        .map(|name| {
            let text = v
                .macros
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, val)| val.as_str())
                .unwrap_or("");
            let value: i64 = text.trim().parse().map_err(|_| {
                format!(
                    "macro `{name}` = `{text}` is used in the grid or a `require` but is not an integer"
                )
            })?;
            Ok(format!("{value}"))
        })
        .collect()
}

/// The tuning and `#define` macros the grid and the requirements read, in
/// order of first use.
pub fn grid_macros(spec: &OpSpec) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let read = spec
        .grid
        .iter()
        .map(|g| &g.value)
        .chain(spec.requires.iter().flat_map(|r| [&r.left, &r.right]));
    for e in read {
        for (name, _) in e.names() {
            let is_macro = spec.tune.iter().any(|m| m.name == name)
                || spec.defines.iter().any(|m| m.name == name);
            if is_macro && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The requirements as the spec wrote them, for messages: `N % 4 == 0, ...`.
pub fn requires_text(spec: &OpSpec) -> String {
    spec.requires
        .iter()
        .map(|r| format!("{} {} {}", expr_text(&r.left), r.cmp, expr_text(&r.right)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `dot_nt` -> `DotNt`: each `_`-separated word capitalised.
pub fn camel_case(words: &str) -> String {
    let mut out = String::new();
    for part in words.split('_') {
        let mut chars = part.chars();
        if let Some(c) = chars.next() {
            out.push(c.to_ascii_uppercase());
            out.extend(chars);
        }
    }
    out
}

/// The incoming gradient of every output: `dz` for `z`.
pub fn out_grads(spec: &OpSpec) -> Vec<OutGradCtx> {
    spec.outputs
        .iter()
        .enumerate()
        .map(|(index, t)| OutGradCtx {
            name: format!("d{}", t.name),
            output: t.name.clone(),
            index,
        })
        .collect()
}

/// The gradient of every input, rendered by `render`; `missing` where the
/// spec gives none.
pub fn input_grads(
    spec: &OpSpec,
    backward: &Backward,
    render: fn(&GradExpr) -> String,
    missing: &str,
) -> Vec<String> {
    spec.inputs
        .iter()
        .map(|t| {
            backward
                .grads
                .iter()
                .find(|g| g.input == t.name)
                .map(|g| render(&g.value))
                .unwrap_or_else(|| missing.to_string())
        })
        .collect()
}

/// A gradient expression with each call written by `call(namespace, op, args)`.
pub fn render_grad(e: &GradExpr, call: &dyn Fn(&str, &str, Vec<String>) -> String) -> String {
    match e {
        GradExpr::Tensor(n) => n.clone(),
        GradExpr::Call {
            namespace,
            op,
            args,
        } => call(
            namespace,
            op,
            args.iter().map(|a| render_grad(a, call)).collect(),
        ),
    }
}

pub fn group_label(g: &Group) -> String {
    g.dtypes
        .iter()
        .map(|(v, d)| format!("{v}={d}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A C++ condition that holds when every one of `conds` does (`true` for none).
pub fn cpp_all(conds: &[String]) -> String {
    if conds.is_empty() {
        "true".to_string()
    } else {
        conds.join(" && ")
    }
}

/// `[N, 4]`.
pub fn shape_text(dims: &[Dim]) -> String {
    format!("[{}]", dims_cpp(dims, None))
}

/// Dims joined by `, `: symbols by name, literals plain or as
/// `literal_type(v)` (a C++ cast such as `int64_t`).
pub fn dims_cpp(dims: &[Dim], literal_type: Option<&str>) -> String {
    dims.iter()
        .map(|d| match (d, literal_type) {
            (Dim::Sym(s), _) => s.clone(),
            (Dim::Lit(v), None) => v.to_string(),
            (Dim::Lit(v), Some(ty)) => format!("{ty}({v})"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(tensor, axis)` of every `stride(t, axis)` in the kernel arguments.
fn referenced_strides(spec: &OpSpec) -> BTreeSet<(String, usize)> {
    fn walk(e: &Expr, out: &mut BTreeSet<(String, usize)>) {
        match e {
            Expr::Call(f, args, _) => {
                if let (true, [Expr::Name(t, _), Expr::Int(axis, _)]) =
                    (f == "stride", args.as_slice())
                {
                    out.insert((t.clone(), *axis as usize));
                }
                args.iter().for_each(|a| walk(a, out));
            }
            Expr::Neg(inner, _) => walk(inner, out),
            Expr::Bin(_, l, r) => {
                walk(l, out);
                walk(r, out);
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for a in &spec.args {
        walk(&a.value, &mut out);
    }
    out
}

/// Axes whose stride the kernel does not take must be dense row-major
/// (size-1 axes excepted).
fn layout_condition(
    name: &str,
    rank: usize,
    strided: &BTreeSet<(String, usize)>,
) -> (String, String) {
    let mut conds = Vec::new();
    let mut needs = Vec::new();
    for axis in 0..rank {
        if strided.contains(&(name.to_string(), axis)) {
            continue;
        }
        let dense: Vec<String> = ((axis + 1)..rank)
            .map(|b| format!("{name}.size({b})"))
            .collect();
        let dense_cpp = if dense.is_empty() {
            "int64_t(1)".to_string()
        } else {
            dense.join(" * ")
        };
        conds.push(format!(
            "({name}.size({axis}) <= 1 || {name}.stride({axis}) == {dense_cpp})"
        ));
        needs.push(if dense.is_empty() {
            format!("stride 1 along axis {axis}")
        } else {
            format!("a dense stride along axis {axis}")
        });
    }
    (cpp_all(&conds), needs.join(" and "))
}

fn grad_cpp(e: &GradExpr) -> String {
    render_grad(e, &|namespace, op, args| {
        format!("opgen_call(\"{namespace}::{op}\", {{{}}})", args.join(", "))
    })
}

/// The gradient as the spec wrote it: `triton::dot_nt(dz, y)`.
pub fn grad_text(e: &GradExpr) -> String {
    render_grad(e, &|namespace, op, args| {
        format!("{namespace}::{op}({})", args.join(", "))
    })
}

/// The expression as the spec wrote it (for messages).
pub fn expr_text(e: &Expr) -> String {
    match e {
        Expr::Int(v, _) => v.to_string(),
        Expr::Name(n, _) => n.clone(),
        Expr::Neg(inner, _) => format!("-{}", expr_text(inner)),
        Expr::Bin(op, l, r) => {
            let sym = match op {
                crate::spec::BinOp::Add => "+",
                crate::spec::BinOp::Sub => "-",
                crate::spec::BinOp::Mul => "*",
                crate::spec::BinOp::Div => "/",
            };
            format!("{} {sym} {}", expr_text(l), expr_text(r))
        }
        Expr::Call(f, args, _) => format!(
            "{f}({})",
            args.iter().map(expr_text).collect::<Vec<_>>().join(", ")
        ),
    }
}
