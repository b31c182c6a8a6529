//! Matches the spec's `args` against the compiled kernel's parameters: count,
//! names written as `name = expr`, tensors to pointers of their dtype, numbers
//! to integer parameters.

use crate::spec::{ir_elem_type, ArgSpec, AttrType, Expr, OpSpec};
use crate::variants::Group;
use tritonc::diagnostics::Diagnostic;

/// How one argument is passed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// The data pointer of this tensor.
    Ptr(String),
    I32,
    I64,
    /// A float attribute, by name, to an `f32` or `f64` parameter.
    F32(String),
    F64(String),
}

/// One argument, matched to its kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundArg {
    pub kind: ArgKind,
    pub param: String,
}

/// Checks every group's first variant (all variants of a group share the
/// signature) and returns how each argument is passed.
pub fn bind_args(spec: &OpSpec, groups: &[Group]) -> Result<Vec<BoundArg>, Diagnostic> {
    let mut kinds: Vec<BoundArg> = Vec::new();
    let mut first_group = String::new();
    for group in groups {
        let Some(variant) = group.variants.first() else {
            continue;
        };
        let params = &variant.params;
        if params.len() != spec.args.len() {
            let names: Vec<String> = params
                .iter()
                .map(|p| format!("{} {}", p.ty, p.name))
                .collect();
            return Err(Diagnostic::error(
                spec.args.first().map(|a| a.span).unwrap_or(spec.span),
                format!(
                    "the spec passes {} argument{} but kernel `{}` takes {}: ({})",
                    spec.args.len(),
                    if spec.args.len() == 1 { "" } else { "s" },
                    variant.kernel,
                    params.len(),
                    names.join(", ")
                ),
            ));
        }
        let mut group_kinds = Vec::new();
        for (arg, param) in spec.args.iter().zip(params) {
            if let Some(name) = &arg.param {
                if name != &param.name {
                    return Err(Diagnostic::error(
                        arg.span,
                        format!(
                            "argument `{name}` is at the position of the kernel's parameter `{}`",
                            param.name
                        ),
                    ));
                }
            }
            group_kinds.push(BoundArg {
                kind: bind_one(spec, group, arg, &param.name, &param.ty)?,
                param: param.name.clone(),
            });
        }
        // The launchers pass one argument list for every group: a parameter
        // whose type follows the dtype (`ACC eps`) would be passed wrong.
        if let Some((arg, (first, here))) = spec
            .args
            .iter()
            .zip(kinds.iter().zip(&group_kinds))
            .find(|(_, (first, here))| first.kind != here.kind)
        {
            return Err(Diagnostic::error(
                arg.span,
                format!(
                    "parameter `{}` is passed as {} for {} but as {} for {}; give it one type in every variant (e.g. `double` for a float attribute)",
                    here.param,
                    kind_text(&first.kind),
                    first_group,
                    kind_text(&here.kind),
                    crate::plan::group_label(group),
                ),
            ));
        }
        if kinds.is_empty() {
            kinds = group_kinds;
            first_group = crate::plan::group_label(group);
        }
    }
    Ok(kinds)
}

/// How an argument is passed, for messages: `f32`, `a pointer`.
fn kind_text(kind: &ArgKind) -> &'static str {
    match kind {
        ArgKind::Ptr(_) => "a pointer",
        ArgKind::I32 => "i32",
        ArgKind::I64 => "i64",
        ArgKind::F32(_) => "f32",
        ArgKind::F64(_) => "f64",
    }
}

fn bind_one(
    spec: &OpSpec,
    group: &Group,
    arg: &ArgSpec,
    param: &str,
    ty: &str,
) -> Result<ArgKind, Diagnostic> {
    let tensor = match &arg.value {
        Expr::Name(n, _) => spec.tensor(n),
        _ => None,
    };
    match (tensor, ty.strip_suffix('*')) {
        (Some(t), Some(elem)) => {
            let dtype = group.resolve(&t.dtype);
            let want = ir_elem_type(dtype).unwrap_or("?");
            if want != elem {
                return Err(Diagnostic::error(
                    arg.span,
                    format!(
                        "tensor `{}` ({dtype}, `{want}*`) is passed to parameter `{param}` of type `{ty}`",
                        t.name
                    ),
                )
                .with_note(format!(
                    "for dtypes {}",
                    group
                        .dtypes
                        .iter()
                        .map(|(v, d)| format!("{v}={d}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            Ok(ArgKind::Ptr(t.name.clone()))
        }
        (Some(t), None) => Err(Diagnostic::error(
            arg.span,
            format!("tensor `{}` is passed to parameter `{param}` of type `{ty}`, which is not a pointer", t.name),
        )),
        (None, Some(_)) => Err(Diagnostic::error(
            arg.span,
            format!("parameter `{param}` is a pointer (`{ty}`); pass a tensor of the op"),
        )),
        (None, None) => {
            let float_attr = match &arg.value {
                Expr::Name(n, _) => spec.attr(n).filter(|a| a.ty == AttrType::Float),
                _ => None,
            };
            match (ty, float_attr) {
                ("f32", Some(a)) => Ok(ArgKind::F32(a.name.clone())),
                ("f64", Some(a)) => Ok(ArgKind::F64(a.name.clone())),
                ("i32", None) => Ok(ArgKind::I32),
                ("i64", None) => Ok(ArgKind::I64),
                (other, Some(a)) => Err(Diagnostic::error(
                    arg.span,
                    format!("float attribute `{}` is passed to parameter `{param}` of type `{other}`; it needs a `float` or `double` parameter", a.name),
                )),
                ("f32" | "f64", None) => Err(Diagnostic::error(
                    arg.span,
                    format!("parameter `{param}` is a float (`{ty}`); pass a float attribute of the op (`#pragma opgen attr NAME: float`)"),
                )),
                (other, None) => Err(Diagnostic::error(
                    arg.span,
                    format!("parameter `{param}` has type `{other}`; opgen passes integer expressions to `int` or `long` parameters and float attributes to `float` or `double` ones"),
                )),
            }
        }
    }
}
