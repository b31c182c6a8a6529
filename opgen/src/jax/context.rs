//! The data `templates/jax/*.hbs` render: the XLA FFI handlers (the launch
//! is the C++ the torch and TensorFlow ops have, [`crate::cpp::launch`], in
//! XLA FFI's names for dtypes and buffers) and the Python module (the op's
//! shapes and dtypes as data for its trace-time checks, and its gradient).

use crate::bind::BoundArg;
use crate::cpp::dims_cpp;
use crate::cpp::launch::{self, CppLaunch, CppWords};
use crate::plan::{
    backward_text, called_ops, grad_python, group_label, input_grads, op_signature, out_grads,
    py_params, CalledOp, ContextError, OutGradCtx,
};
use crate::spec::{Dim, OpSpec, TensorSpec};
use crate::variants::Group;
use serde::Serialize;

#[derive(Serialize)]
pub struct JaxContext {
    pub source: String,
    pub qualified: String,
    /// The spec's op name, the module's function: `add`.
    pub op: String,
    /// The Python module: `triton_add_jax` (file `triton_add_jax.py`).
    pub module: String,
    pub lib_file: String,
    /// The FFI target name JAX calls: `triton_add`.
    pub target: String,
    pub signature: String,
    pub outputs: Vec<JaxOutput>,
    pub single_output: bool,
    /// The op function's parameters: inputs, then attributes with defaults.
    pub py_params: String,
    /// The inputs alone: `x, y`.
    pub py_inputs_params: String,
    pub attrs: Vec<JaxAttr>,
    /// Python literals of the spec for the module's checks.
    pub py_inputs: String,
    pub py_outputs: String,
    pub py_dtype_vars: String,
    /// `{"S": ["T", {"float16": "float32", ...}]}`: the `dtype S from T` lines.
    pub py_derived: String,
    /// The spec's `pad` line: `(("N", "K"), 8, lambda d: ...)` or `None`.
    pub py_pad: String,
    pub py_groups: String,
    pub supported_dtypes: String,
    pub backward: Option<JaxBackward>,
    pub launch: CppLaunch,
}

#[derive(Serialize)]
pub struct JaxOutput {
    pub name: String,
    pub index: usize,
    pub rank: usize,
    pub shape_text: String,
    /// `N, int64_t(4)`.
    pub sizes: String,
    /// The C++ dtype it must have: `dtype_T` or `xla::ffi::DataType::F32`.
    pub dtype: String,
}

/// An attribute: an FFI attribute of the handlers (`.Attr<float>("alpha")`)
/// and a keyword argument of the op function.
#[derive(Serialize)]
pub struct JaxAttr {
    pub name: String,
    /// What the handlers decode: `float`, `int64_t`, `bool`.
    pub cpp_type: String,
    /// `float`, `int`, `bool`: what the module converts the argument to.
    pub kind: String,
    /// Its position among the op function's parameters (custom_vjp's nondiff_argnums).
    pub position: usize,
}

#[derive(Serialize)]
pub struct JaxBackward {
    /// The spec's backward line: `dx = dz, dy = dz`.
    pub text: String,
    pub saved: Vec<String>,
    pub out_grads: Vec<OutGradCtx>,
    /// One Python expression per input (`None` where the spec gives none).
    pub input_grads: Vec<String>,
    /// Other ops the gradient calls: `triton::dot_nt` with their modules.
    pub calls: Vec<CalledOp>,
}

/// XLA FFI's `DataType` of a spec dtype.
pub fn ffi_dtype(dtype: &str) -> Option<&'static str> {
    Some(match dtype {
        "float32" => "xla::ffi::DataType::F32",
        "float16" => "xla::ffi::DataType::F16",
        "bfloat16" => "xla::ffi::DataType::BF16",
        "float64" => "xla::ffi::DataType::F64",
        "int32" => "xla::ffi::DataType::S32",
        "int64" => "xla::ffi::DataType::S64",
        "int16" => "xla::ffi::DataType::S16",
        "int8" => "xla::ffi::DataType::S8",
        "bool" => "xla::ffi::DataType::PRED",
        _ => return None,
    })
}

/// The Python module of an op: `triton_dot_nt_jax`.
pub fn module_name(namespace: &str, op: &str) -> String {
    format!("{namespace}_{op}_jax")
}

pub fn build(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    source: &str,
) -> Result<JaxContext, ContextError> {
    let type_of = |dtype: &str| {
        ffi_dtype(dtype)
            .map(str::to_string)
            .ok_or_else(|| ContextError(format!("dtype `{dtype}` has no XLA FFI type")))
    };
    // XLA's buffers are dense and row-major: the views answer size/stride.
    let words = CppWords {
        dtype: &type_of,
        data_ptr: &|t| format!("reinterpret_cast<uint64_t>({t}.data())"),
    };
    let launch = launch::build(spec, groups, kinds, &words)?;
    let outputs = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(index, t)| {
            Ok(JaxOutput {
                name: t.name.clone(),
                index,
                rank: t.dims.len(),
                shape_text: crate::plan::shape_text(&t.dims),
                sizes: dims_cpp(&t.dims, Some("int64_t")),
                dtype: match spec.is_dtype_var(&t.dtype) {
                    true => format!("dtype_{}", t.dtype),
                    false => type_of(&t.dtype)?,
                },
            })
        })
        .collect::<Result<Vec<_>, ContextError>>()?;
    let inputs: Vec<String> = spec.inputs.iter().map(|t| t.name.clone()).collect();
    let backward = spec.backward.as_ref().map(|b| JaxBackward {
        text: backward_text(b),
        saved: spec
            .inputs
            .iter()
            .chain(spec.outputs.iter())
            .map(|t| t.name.clone())
            .collect(),
        out_grads: out_grads(spec),
        input_grads: input_grads(spec, b, grad_python, "None"),
        calls: called_ops(b, module_name),
    });
    let dtype_vars: serde_json::Map<String, serde_json::Value> = spec
        .dtypes
        .iter()
        .map(|v| {
            let choices: Vec<&str> = v.choices.iter().map(|c| c.dtype.as_str()).collect();
            (v.var.clone(), choices.into())
        })
        .collect();
    let derived: serde_json::Map<String, serde_json::Value> = spec
        .derived_dtypes
        .iter()
        .map(|d| {
            let table: serde_json::Map<String, serde_json::Value> = d
                .map
                .iter()
                .map(|(from, to)| (from.clone(), to.clone().into()))
                .collect();
            (d.var.clone(), serde_json::json!([d.source, table]))
        })
        .collect();
    let group_list: Vec<serde_json::Map<String, serde_json::Value>> = groups
        .iter()
        .map(|g| {
            g.dtypes
                .iter()
                .map(|(var, dtype)| (var.clone(), dtype.clone().into()))
                .collect()
        })
        .collect();
    Ok(JaxContext {
        source: source.to_string(),
        qualified: spec.qualified_name(),
        op: spec.name.clone(),
        module: module_name(&spec.namespace, &spec.name),
        lib_file: format!("lib{}_jax.so", launch.prefix),
        target: launch.prefix.clone(),
        signature: op_signature(spec),
        single_output: outputs.len() == 1,
        outputs,
        py_params: py_params(spec),
        py_inputs_params: inputs.join(", "),
        attrs: spec
            .attrs
            .iter()
            .enumerate()
            .map(|(i, a)| JaxAttr {
                name: a.name.clone(),
                cpp_type: crate::cpp::attr_cpp_type(a.ty).to_string(),
                kind: a.ty.name().to_string(),
                position: spec.inputs.len() + i,
            })
            .collect(),
        py_inputs: py_tensors(&spec.inputs),
        py_outputs: py_tensors(&spec.outputs),
        py_dtype_vars: serde_json::Value::Object(dtype_vars).to_string(),
        py_derived: serde_json::Value::Object(derived).to_string(),
        py_pad: match &spec.pad {
            None => "None".to_string(),
            Some(pad) => {
                let dims: Vec<String> =
                    pad.dims.iter().map(|(d, _)| format!("\"{d}\", ")).collect();
                let dim = |n: &str| format!("d[\"{n}\"]");
                let condition = match &pad.conditions[..] {
                    [] => "True".to_string(),
                    all => all
                        .iter()
                        .map(|c| {
                            format!("{} {} {}", c.left.to_py(&dim), c.cmp, c.right.to_py(&dim))
                        })
                        .collect::<Vec<_>>()
                        .join(" and "),
                };
                format!(
                    "(({}), {}, lambda d: {condition})",
                    dims.concat(),
                    pad.multiple
                )
            }
        },
        py_groups: serde_json::to_string(&group_list).unwrap_or_default(),
        supported_dtypes: groups
            .iter()
            .map(group_label)
            .collect::<Vec<_>>()
            .join("; "),
        backward,
        launch,
    })
}

/// `[["x", ["N", 4], "T"], ...]`: name, dims (symbols as strings, literals
/// as ints) and dtype (a variable or a fixed dtype) of each tensor, as a
/// Python literal (JSON's lists, strings and ints read the same in Python).
fn py_tensors(tensors: &[TensorSpec]) -> String {
    let list: Vec<serde_json::Value> = tensors
        .iter()
        .map(|t| {
            let dims: Vec<serde_json::Value> = t
                .dims
                .iter()
                .map(|d| match d {
                    Dim::Sym(s) => s.clone().into(),
                    Dim::Lit(v) => (*v).into(),
                })
                .collect();
            serde_json::json!([t.name, dims, t.dtype])
        })
        .collect();
    serde_json::Value::Array(list).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtypes_and_modules_follow_xla_names() {
        assert_eq!(ffi_dtype("bfloat16"), Some("xla::ffi::DataType::BF16"));
        assert_eq!(ffi_dtype("bool"), Some("xla::ffi::DataType::PRED"));
        assert_eq!(ffi_dtype("complex64"), None);
        assert_eq!(module_name("triton", "dot_nt"), "triton_dot_nt_jax");
    }
}
