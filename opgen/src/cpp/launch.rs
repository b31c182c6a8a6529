//! The launch of a C++ op (PyTorch's and TensorFlow's share it): the input
//! ranks, dims and their checks, the dtype groups, the kernel arguments, the
//! variant table with the macros the grid reads, the grid and the `require`
//! lines, as C++ snippets. A framework gives its names for dtypes and data
//! pointers ([`CppWords`]); inputs are views with `size(i)`/`stride(i)`.

use super::text::cpp_all;
use crate::bind::{ArgKind, BoundArg};
use crate::plan::{
    grid_macros, group_label, is_macro, macro_values, requires_text, shape_text, ContextError,
};
use crate::spec::{DerivedDtype, Dim, Expr, OpSpec};
use crate::variants::Group;
use serde::Serialize;
use std::collections::BTreeSet;

/// What differs between C++ frameworks in the launch.
pub struct CppWords<'a> {
    /// The C++ constant of a dtype (`at::kHalf`, `tensorflow::DT_HALF`).
    pub dtype: &'a dyn Fn(&str) -> Result<String, ContextError>,
    /// The data pointer of tensor `t` as a `uint64_t`.
    pub data_ptr: &'a dyn Fn(&str) -> String,
}

#[derive(Serialize)]
pub struct CppLaunch {
    /// C identifier prefix for the library's symbols: `triton_add`.
    pub prefix: String,
    pub inputs: Vec<InputCtx>,
    pub dims: Vec<DimCtx>,
    pub dim_checks: Vec<DimCheck>,
    pub dtype_vars: Vec<DtypeVarCtx>,
    /// `dtype S from T` variables, after the chosen ones they follow.
    pub derived_vars: Vec<DerivedVarCtx>,
    /// Inputs whose dtype the spec fixes.
    pub fixed_dtypes: Vec<FixedDtypeCtx>,
    pub groups: Vec<GroupCtx>,
    pub supported_dtypes: String,
    pub args: Vec<ArgCtx>,
    pub cfg_names: Vec<String>,
    pub cfg_width: usize,
    pub variants: Vec<VariantRow>,
    pub grid_x: String,
    pub grid_y: String,
    pub grid_z: String,
    /// C++ `bool`: whether a variant's grid x is a persistent work count
    /// (reads its macros: `persistent(W, on)`).
    pub persistent: String,
    pub requires: Vec<RequireCtx>,
    pub requires_text: String,
    pub key_dims: String,
    /// C++ values after the dtype group in the call key (`opgen_call_key`):
    /// what decides the candidates, their grids and the tuning key.
    pub call_key: String,
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

#[derive(Clone, Serialize)]
pub struct DerivedVarCtx {
    pub var: String,
    /// C++: its dtype from `dtype_<source>` (a chain of conditionals).
    pub value: String,
    pub source: String,
    /// The input that sets the source variable.
    pub source_input: String,
    /// Inputs declared with it, which must have its dtype.
    pub inputs: Vec<String>,
}

#[derive(Serialize)]
pub struct FixedDtypeCtx {
    pub name: String,
    /// The framework's C++ constant of the dtype.
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

pub fn build(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    words: &CppWords,
) -> Result<CppLaunch, ContextError> {
    let bindings = spec.dim_bindings();
    let strided = referenced_strides(spec);
    let passed: BTreeSet<&str> = kinds
        .iter()
        .filter_map(|k| match &k.kind {
            ArgKind::Ptr(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();

    let inputs = spec
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

    let derived_vars = spec
        .derived_dtypes
        .iter()
        .map(|d| {
            let source_input = dtype_vars
                .iter()
                .find(|v| v.var == d.source)
                .map(|v| v.source.clone())
                .unwrap_or_default();
            let value = derived_value(d, words)?;
            Ok(DerivedVarCtx {
                var: d.var.clone(),
                value,
                source: d.source.clone(),
                source_input,
                inputs: spec
                    .inputs
                    .iter()
                    .filter(|t| t.dtype == d.var)
                    .map(|t| t.name.clone())
                    .collect(),
            })
        })
        .collect::<Result<Vec<_>, ContextError>>()?;

    let fixed_dtypes = spec
        .inputs
        .iter()
        .filter(|t| !spec.is_dtype_var(&t.dtype))
        .map(|t| {
            Ok(FixedDtypeCtx {
                name: t.name.clone(),
                cpp: (words.dtype)(&t.dtype)?,
                dtype: t.dtype.clone(),
            })
        })
        .collect::<Result<Vec<_>, ContextError>>()?;

    let mut first = 0;
    let group_ctx = groups
        .iter()
        .enumerate()
        .map(|(index, g)| {
            let conds = g
                .dtypes
                .iter()
                .map(|(var, dtype)| Ok(format!("dtype_{var} == {}", (words.dtype)(dtype)?)))
                .collect::<Result<Vec<String>, ContextError>>()?;
            let ctx = GroupCtx {
                index,
                cond: cpp_all(&conds),
                label: group_label(g),
                first,
                count: g.variants.len(),
            };
            first += g.variants.len();
            Ok(ctx)
        })
        .collect::<Result<Vec<_>, ContextError>>()?;

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
                    kind: "opgen::ArgKind::Ptr".into(),
                    value: (words.data_ptr)(t),
                    is_int: false,
                    is_i32: false,
                    label,
                },
                ArgKind::I32 | ArgKind::I64 => ArgCtx {
                    index,
                    kind: if *kind == ArgKind::I32 {
                        "opgen::ArgKind::I32".into()
                    } else {
                        "opgen::ArgKind::I64".into()
                    },
                    value: arg.value.to_cpp(&plain),
                    is_int: true,
                    is_i32: *kind == ArgKind::I32,
                    label,
                },
                // The attribute is a local of the op function (a double).
                ArgKind::F32(attr) | ArgKind::F64(attr) => {
                    let single = matches!(kind, ArgKind::F32(_));
                    ArgCtx {
                        index,
                        kind: if single {
                            "opgen::ArgKind::F32"
                        } else {
                            "opgen::ArgKind::F64"
                        }
                        .into(),
                        value: if single {
                            format!("opgen_f32_bits({attr})")
                        } else {
                            format!("opgen_f64_bits({attr})")
                        },
                        is_int: false,
                        is_i32: false,
                        label,
                    }
                }
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
    Ok(CppLaunch {
        prefix: symbol_prefix(&spec.namespace, &spec.name),
        inputs,
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
        derived_vars,
        fixed_dtypes,
        groups: group_ctx,
        supported_dtypes: groups
            .iter()
            .map(group_label)
            .collect::<Vec<_>>()
            .join("; "),
        args,
        cfg_width: cfg_names.len().max(1),
        cfg_names,
        variants,
        grid_x: grid[0].clone(),
        grid_y: grid[1].clone(),
        grid_z: grid[2].clone(),
        persistent: match spec.grid.first() {
            Some(g) if g.persistent => match &g.persistent_if {
                Some(on) => format!("({}) != 0", on.to_cpp(&plain)),
                None => "true".into(),
            },
            _ => "false".into(),
        },
        requires,
        requires_text: requires_text(spec),
        key_dims: bindings
            .iter()
            .map(|(s, _, _)| s.clone())
            .collect::<Vec<_>>()
            .join(", "),
        call_key: call_key_values(spec, &bindings),
    })
}

/// The call key's values after the dtype group, as C++: each dimension,
/// then every stride, size, numel and attribute the grid and the `require`
/// lines read. Equal keys give equal candidates, grids and tuning keys, so
/// a decided launch is repeated without evaluating the requirements
/// (`opgen::launch_known`).
fn call_key_values(spec: &OpSpec, bindings: &[(String, String, usize)]) -> String {
    fn walk(spec: &OpSpec, e: &Expr, out: &mut Vec<String>) {
        let mut add = |value: String| {
            if !out.contains(&value) {
                out.push(value);
            }
        };
        match e {
            Expr::Name(n, _) if !is_macro(spec, n) => add(format!("int64_t({n})")),
            Expr::Call(f, _, _) if matches!(f.as_str(), "stride" | "size" | "numel") => {
                add(format!("int64_t({})", e.to_cpp(&|n: &str| n.to_string())))
            }
            Expr::Call(_, args, _) => args.iter().for_each(|a| walk(spec, a, out)),
            Expr::Neg(inner, _) => walk(spec, inner, out),
            Expr::Bin(_, l, r) => {
                walk(spec, l, out);
                walk(spec, r, out);
            }
            Expr::Int(..) | Expr::Name(..) => {}
        }
    }
    let mut values: Vec<String> = bindings
        .iter()
        .map(|(dim, _, _)| format!("int64_t({dim})"))
        .collect();
    for e in spec.launch_exprs() {
        walk(spec, e, &mut values);
    }
    values.join(", ")
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

/// The C identifier prefix of an op's library symbols, also the name of its
/// torch module: `triton_add` for `triton::add`.
pub fn symbol_prefix(namespace: &str, op: &str) -> String {
    format!("{namespace}_{op}")
}

/// `dtype S from T {float16: float32, float64: float64}` as C++:
/// `(dtype_T == <float16> ? <float32> : <float64>)` (the last entry is the
/// rest, which the group check has already narrowed to it).
fn derived_value(d: &DerivedDtype, words: &CppWords) -> Result<String, ContextError> {
    let Some(((_, last), rest)) = d.map.split_last() else {
        return Err(ContextError(format!("`{}` maps no dtype", d.var)));
    };
    let mut value = (words.dtype)(last)?;
    for (from, to) in rest.iter().rev() {
        value = format!(
            "dtype_{} == {} ? {} : {value}",
            d.source,
            (words.dtype)(from)?,
            (words.dtype)(to)?
        );
    }
    Ok(format!("({value})"))
}
