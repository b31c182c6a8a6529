//! The values `templates/onnxruntime/op_spec.rs.hbs` renders: the op's
//! tensors, dtype groups and variants as Rust constants.

use super::rust_expr::{require_to_rust, to_rust, NameUse};
use crate::bind::{ArgKind, BoundArg};
use crate::plan::{grid_macros, group_label, is_macro, macro_values, requires_text};
use crate::spec::{Dim, OpSpec, TensorSpec};
use crate::variants::{variant_json, Group};
use serde::Serialize;

#[derive(Debug, Serialize)]
pub struct OrtContext {
    pub qualified: String,
    pub domain: String,
    pub name: String,
    pub crate_name: String,
    pub source: String,
    pub dtype_vars: Vec<String>,
    /// ONNX element type codes, one row per group, one column per variable.
    pub groups: Vec<Vec<i32>>,
    /// `(derived variable, its source)` as columns of the groups (`dtype S from T`).
    pub derived: Vec<(usize, usize)>,
    pub inputs: Vec<TensorContext>,
    pub outputs: Vec<TensorContext>,
    /// `AttrDesc { .. }` rows of op_spec::ATTRS, in the spec's order.
    pub attrs: Vec<String>,
    pub launch: LaunchContext,
    /// The pre-tuned table (`--tuned`) as a NUL-terminated Rust literal, or `""`.
    pub tuned: String,
}

/// How the GPU path launches the kernel: the embedded variants and the
/// spec's arguments, grid and requirements as Rust.
#[derive(Debug, Serialize)]
pub struct LaunchContext {
    /// Absolute paths of `plugins/runtime` and `plugins/bridge`.
    pub runtime_dir: String,
    pub bridge_dir: String,
    pub variants: Vec<VariantRow>,
    pub groups: Vec<GroupRow>,
    /// The macros the grid and the requirements read, one column each.
    pub cfg_names: Vec<String>,
    pub args: Vec<ArgRow>,
    /// Three Rust expressions (missing axes are 1).
    pub grid: Vec<String>,
    /// Rust `bool`: whether a variant's grid x is a persistent work count
    /// (reads its macros: `persistent(W, on)`).
    pub persistent: String,
    pub requires: Vec<String>,
    pub requires_text: String,
    /// The spec's `pad` line: the dims it rounds up (none: no line), the
    /// multiple, and its condition as a Rust `bool` over the call.
    pub pad_dims: Vec<String>,
    pub pad_multiple: u32,
    pub pad_condition: String,
}

#[derive(Debug, Serialize)]
pub struct VariantRow {
    pub index: usize,
    /// Rust string literals.
    pub kernel: String,
    pub config: String,
    pub json: String,
    /// The variant's macros named in `cfg_names`.
    pub cfg: String,
}

#[derive(Debug, Serialize)]
pub struct GroupRow {
    /// `T=float32`: the autotuner's dtype key (a Rust literal, NUL-terminated).
    pub label: String,
    pub first: usize,
    pub count: usize,
}

#[derive(Debug, Serialize)]
pub struct ArgRow {
    /// A Rust `LaunchArg` expression.
    pub value: String,
    pub label: String,
}

#[derive(Debug, Serialize)]
pub struct TensorContext {
    pub name: String,
    /// A Rust expression: `DtypeDesc::Var(0)` or `DtypeDesc::Fixed(1)`.
    pub dtype: String,
    /// Rust expressions: `DimDesc::Sym("N")` or `DimDesc::Lit(4)`.
    pub dims: Vec<String>,
}

/// ONNX's `TensorProto.DataType` code of a spec dtype.
pub fn onnx_code(dtype: &str) -> Option<i32> {
    Some(match dtype {
        "float32" => 1,
        "int8" => 3,
        "int16" => 5,
        "int32" => 6,
        "int64" => 7,
        "bool" => 9,
        "float16" => 10,
        "float64" => 11,
        "bfloat16" => 16,
        _ => return None,
    })
}

pub fn build(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    source: &str,
    plugins_dir: &std::path::Path,
    tuned: &str,
) -> Result<OrtContext, String> {
    // Derived variables are columns of the groups too: an input of one is
    // checked against the group, an output gets its dtype from it.
    let dtype_vars: Vec<String> = spec
        .dtypes
        .iter()
        .map(|v| v.var.clone())
        .chain(spec.derived_dtypes.iter().map(|d| d.var.clone()))
        .collect();
    let column = |v: &str| dtype_vars.iter().position(|x| x == v);
    let derived = spec
        .derived_dtypes
        .iter()
        .filter_map(|d| Some((column(&d.var)?, column(&d.source)?)))
        .collect();
    let code = |d: &str| onnx_code(d).ok_or_else(|| format!("dtype `{d}` has no ONNX type"));
    let group_codes = groups
        .iter()
        .map(|g| {
            dtype_vars
                .iter()
                .map(|var| code(g.resolve(var)))
                .collect::<Result<Vec<i32>, String>>()
        })
        .collect::<Result<Vec<_>, String>>()?;
    let tensor = |t: &TensorSpec| -> Result<TensorContext, String> {
        let dtype = match dtype_vars.iter().position(|v| *v == t.dtype) {
            Some(i) => format!("DtypeDesc::Var({i})"),
            None => format!("DtypeDesc::Fixed({})", code(&t.dtype)?),
        };
        let dims = t
            .dims
            .iter()
            .map(|d| match d {
                Dim::Sym(s) => format!("DimDesc::Sym({s:?})"),
                Dim::Lit(n) => format!("DimDesc::Lit({n})"),
            })
            .collect();
        Ok(TensorContext {
            name: t.name.clone(),
            dtype,
            dims,
        })
    };
    let inputs = spec.inputs.iter().map(tensor).collect::<Result<_, _>>()?;
    let outputs = spec.outputs.iter().map(tensor).collect::<Result<_, _>>()?;
    Ok(OrtContext {
        qualified: spec.qualified_name(),
        domain: spec.namespace.clone(),
        name: spec.name.clone(),
        crate_name: format!("opgen_ort_{}_{}", spec.namespace, spec.name),
        source: source.to_string(),
        dtype_vars,
        groups: group_codes,
        derived,
        inputs,
        outputs,
        attrs: spec.attrs.iter().map(attr_desc).collect(),
        launch: launch_context(spec, groups, kinds, plugins_dir)?,
        tuned: rust_literal(tuned),
    })
}

/// An attribute as the crate describes it (attrs.rs's `AttrDesc`).
fn attr_desc(a: &crate::spec::AttrSpec) -> String {
    use crate::spec::{AttrType, AttrValue};
    let kind = match a.ty {
        AttrType::Float => "Float",
        AttrType::Int => "Int",
        AttrType::Bool => "Bool",
    };
    let default = match a.default {
        None => "None".to_string(),
        Some(AttrValue::Float(v)) => format!("Some(AttrValue::Float({v:?}))"),
        Some(AttrValue::Int(v)) => format!("Some(AttrValue::Int({v}))"),
        Some(AttrValue::Bool(b)) => format!("Some(AttrValue::Int({}))", i64::from(b)),
    };
    format!(
        "AttrDesc {{ name: {:?}, kind: AttrKind::{kind}, default: {default} }}",
        a.name
    )
}

/// The position of attribute `name` among the spec's (bound arguments name only its attributes).
fn attr_index(spec: &OpSpec, name: &str) -> usize {
    spec.attrs.iter().position(|a| a.name == name).unwrap_or(0)
}

/// A Rust string literal of `text`.
fn rust_literal(text: &str) -> String {
    format!("{text:?}")
}

fn launch_context(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    plugins_dir: &std::path::Path,
) -> Result<LaunchContext, String> {
    let dims: Vec<String> = spec.dim_bindings().into_iter().map(|(s, _, _)| s).collect();
    let attr = |n: &str| {
        spec.attrs
            .iter()
            .position(|a| a.name == n)
            .map(NameUse::Attr)
    };
    let classify = |n: &str| {
        if dims.iter().any(|d| d == n) {
            Some(NameUse::Dim)
        } else if is_macro(spec, n) {
            Some(NameUse::Macro)
        } else {
            attr(n)
        }
    };
    let only_dims = |n: &str| {
        if dims.iter().any(|d| d == n) {
            Some(NameUse::Dim)
        } else {
            attr(n)
        }
    };
    let args = spec
        .args
        .iter()
        .zip(kinds)
        .map(|(arg, bound)| {
            let value = match &bound.kind {
                ArgKind::Ptr(t) => {
                    let index = spec
                        .inputs
                        .iter()
                        .chain(spec.outputs.iter())
                        .position(|x| &x.name == t)
                        .ok_or_else(|| format!("`{t}` is not a tensor of the op"))?;
                    format!("LaunchArg::Ptr({index})")
                }
                ArgKind::I32 => {
                    format!("LaunchArg::I32({})", to_rust(&arg.value, spec, &only_dims)?)
                }
                ArgKind::I64 => {
                    format!("LaunchArg::I64({})", to_rust(&arg.value, spec, &only_dims)?)
                }
                ArgKind::F32(a) => format!("LaunchArg::F32(c.attr_f({}))", attr_index(spec, a)),
                ArgKind::F64(a) => format!("LaunchArg::F64(c.attr_f({}))", attr_index(spec, a)),
            };
            Ok(ArgRow {
                value,
                label: bound.param.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    // A name that is a dim too is read as the dim (`classify`).
    let cfg_names: Vec<String> = grid_macros(spec)
        .into_iter()
        .filter(|name| !dims.contains(name))
        .collect();
    let mut variants = Vec::new();
    let mut group_rows = Vec::new();
    for g in groups {
        group_rows.push(GroupRow {
            label: rust_literal(&group_label(g)),
            first: variants.len(),
            count: g.variants.len(),
        });
        for v in &g.variants {
            let cfg = macro_values(v, &cfg_names)?;
            variants.push(VariantRow {
                index: variants.len(),
                kernel: rust_literal(&v.kernel),
                config: rust_literal(&v.config),
                json: rust_literal(&variant_json(v)),
                cfg: cfg.join(", "),
            });
        }
    }
    let mut grid = spec
        .grid
        .iter()
        .map(|g| to_rust(&g.value, spec, &classify))
        .collect::<Result<Vec<_>, String>>()?;
    while grid.len() < 3 {
        grid.push("1i64".to_string());
    }
    let requires = spec
        .requires
        .iter()
        .map(|r| require_to_rust(r, spec, &classify))
        .collect::<Result<Vec<_>, String>>()?;
    let requires_text = requires_text(spec);
    let dir = |name: &str| plugins_dir.join(name).display().to_string();
    Ok(LaunchContext {
        runtime_dir: dir("runtime"),
        bridge_dir: dir("bridge"),
        variants,
        groups: group_rows,
        cfg_names,
        args,
        grid,
        persistent: match spec.grid.first() {
            Some(g) if g.persistent => match &g.persistent_if {
                Some(on) => format!("({}) != 0", to_rust(on, spec, &classify)?),
                None => "true".into(),
            },
            _ => "false".into(),
        },
        requires,
        requires_text,
        pad_dims: spec
            .pad
            .iter()
            .flat_map(|p| p.dims.iter().map(|(d, _)| d.clone()))
            .collect(),
        pad_multiple: spec.pad.as_ref().map_or(1, |p| p.multiple),
        pad_condition: match spec.pad.as_ref().map_or(&[][..], |p| &p.conditions[..]) {
            [] => "true".into(),
            all => all
                .iter()
                .map(|c| Ok(format!("({})", require_to_rust(c, spec, &only_dims)?)))
                .collect::<Result<Vec<_>, String>>()?
                .join(" && "),
        },
    })
}
