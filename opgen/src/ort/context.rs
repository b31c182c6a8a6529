//! The values `templates/onnxruntime/op_spec.rs.hbs` renders: the op's
//! tensors, dtype groups and variants as Rust constants.

use crate::spec::{Dim, OpSpec, TensorSpec};
use crate::variants::Group;
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
    pub inputs: Vec<TensorContext>,
    pub outputs: Vec<TensorContext>,
    /// The configs of each group's variants.
    pub variants: Vec<Vec<String>>,
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

pub fn build(spec: &OpSpec, groups: &[Group], source: &str) -> Result<OrtContext, String> {
    let dtype_vars: Vec<String> = spec.dtypes.iter().map(|v| v.var.clone()).collect();
    let code = |d: &str| onnx_code(d).ok_or_else(|| format!("dtype `{d}` has no ONNX type"));
    let group_codes = groups
        .iter()
        .map(|g| {
            dtype_vars
                .iter()
                .map(|var| {
                    let dtype = g
                        .dtypes
                        .iter()
                        .find(|(v, _)| v == var)
                        .map(|(_, d)| d.as_str())
                        .unwrap_or_default();
                    code(dtype)
                })
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
        inputs,
        outputs,
        variants: groups
            .iter()
            .map(|g| g.variants.iter().map(|v| v.config.clone()).collect())
            .collect(),
    })
}
