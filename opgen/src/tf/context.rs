//! The data `templates/tensorflow/*.hbs` render: the op's registration
//! (inputs, outputs, dtype attrs), its shape function, and the GPU launch.
//! The launch itself (variant table, grid, requirements, kernel arguments,
//! input checks) is the C++ the torch op has too ([`crate::cpp::launch`], in
//! TensorFlow's names for dtypes and buffers); this adds the registration,
//! the shape function and the Python helper.

use crate::bind::BoundArg;
use crate::cpp::launch::{self, CppLaunch, CppWords, DerivedVarCtx};
use crate::cpp::{cpp_any, dims_cpp, multiples_cpp, pad_condition};
use crate::plan::{
    backward_text, called_ops, camel_case, grad_python, input_grads, op_signature, out_grads,
    py_params, CalledOp, ContextError, OutGradCtx,
};
use crate::spec::{Dim, OpSpec, Pad};
use crate::variants::Group;
use serde::Serialize;

#[derive(Serialize)]
pub struct TfContext {
    pub source: String,
    pub qualified: String,
    /// TensorFlow's op name (CamelCase): `TritonAdd`.
    pub tf_name: String,
    /// The Python function `tf.load_op_library` makes for it: `triton_add`.
    pub py_fn: String,
    /// The spec's op name, the helper module's function: `add`.
    pub op: String,
    /// The helper module: `triton_add_tf` (file `triton_add_tf.py`).
    pub module: String,
    pub lib_file: String,
    /// `REGISTER_OP` lines: `x: T`, `T: {float, half}`.
    pub reg_inputs: Vec<String>,
    pub reg_outputs: Vec<String>,
    pub reg_attrs: Vec<String>,
    /// The op's signature for docs: `add(x: T[N], y: T[N]) -> z: T[N]; T in {float32, float16}`.
    pub signature: String,
    pub shape_checks: Vec<ShapeCheck>,
    pub outputs: Vec<TfOutput>,
    /// The helper function's parameters: the inputs, then the attributes
    /// (with their defaults).
    pub py_params: String,
    pub py_call: String,
    /// Attributes, read by the GPU kernel when it is built.
    pub attrs: Vec<TfAttr>,
    /// Per input, the dtypes it may have (checked by the helper, so that a
    /// wrong dtype is a TypeError naming the argument in eager mode too).
    pub py_dtypes: Vec<PyDtypes>,
    /// `dtype S from T` variables: a type attr the Python function sets.
    pub derived: Vec<TfDerived>,
    pub backward: Option<TfBackward>,
    /// The launch, in TensorFlow's names (the torch op has the same C++).
    pub launch: CppLaunch,
    /// The kernel's `Launch` parameters (a view per input, then per
    /// output) and the views the unpadded call passes.
    pub launch_params: String,
    pub launch_views: String,
    pub pad: Option<TfPad>,
}

/// The spec's `pad` line in the GPU kernel: when to pad, and per tensor the
/// multiples its twin rounds up to.
#[derive(Serialize)]
pub struct TfPad {
    /// `N, K to 8 if ...`, for a comment.
    pub text: String,
    /// Whether a padded dim is not a multiple (TensorFlow's tensors are
    /// dense: their strides follow from the dims).
    pub needed: String,
    /// The line's condition (`true` without one).
    pub cond: String,
    pub inputs: Vec<TfPadTensor>,
    pub outputs: Vec<TfPadTensor>,
    /// The views the padded call passes: the twins.
    pub views: String,
}

#[derive(Serialize)]
pub struct TfPadTensor {
    pub name: String,
    /// `{int64_t(1), int64_t(8)}`; `None`: no axis of it pads (the tensor is its own twin).
    pub multiples: Option<String>,
}

#[derive(Serialize)]
pub struct TfAttr {
    pub name: String,
    /// What `GetAttr` fills: `float`, `int64_t`, `bool`.
    pub cpp_type: String,
}

/// One dimension the shape function checks beyond the one that binds it.
#[derive(Serialize)]
pub struct ShapeCheck {
    pub tensor: String,
    pub axis: usize,
    /// The symbol (`N`) it must equal, merged with what is known of it.
    pub sym: Option<String>,
    /// The literal it must equal.
    pub lit: Option<i64>,
    /// Where the symbol is bound, for the message: `argument \`x\`, axis 0`.
    pub bound_at: String,
}

#[derive(Serialize)]
pub struct TfOutput {
    pub name: String,
    pub index: usize,
    /// `N, int64_t(4)`: symbols are dims (DimensionHandle in the shape
    /// function, int64_t in the kernel), literals are int64_t.
    pub sizes: String,
}

#[derive(Serialize)]
pub struct TfDerived {
    /// As the launch has it: the variable, its source, the C++ value, the
    /// source's input and the inputs declared with it.
    #[serde(flatten)]
    pub launch: DerivedVarCtx,
    /// C++: where the kernel reads the attr's value (an input's or an output's dtype).
    pub actual: String,
    /// Python: a dict from the source's dtype name to this variable's.
    pub py_map: String,
    /// Whether the Python function passes it (TensorFlow infers a type attr
    /// from an input of that type and takes no argument for it then).
    pub passed: bool,
}

#[derive(Serialize)]
pub struct PyDtypes {
    pub name: String,
    /// A Python tuple literal: `("float32", "float16",)`.
    pub allowed: String,
}

#[derive(Serialize)]
pub struct TfBackward {
    /// The spec's backward line, for comments: `dx = dz, dy = dz`.
    pub text: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    /// `dz` per output, with the output it is the gradient of.
    pub out_grads: Vec<OutGradCtx>,
    /// One Python expression per input (`None` where the spec gives none).
    pub input_grads: Vec<String>,
    /// Other ops the gradient calls: `triton::dot_nt`, with their helper modules.
    pub calls: Vec<CalledOp>,
}

/// TensorFlow's name of a spec dtype in `REGISTER_OP` type lists, and its
/// `DataType` enum.
pub fn tf_dtype(dtype: &str) -> Option<(&'static str, &'static str)> {
    Some(match dtype {
        "float32" => ("float", "tensorflow::DT_FLOAT"),
        "float16" => ("half", "tensorflow::DT_HALF"),
        "bfloat16" => ("bfloat16", "tensorflow::DT_BFLOAT16"),
        "float64" => ("double", "tensorflow::DT_DOUBLE"),
        "int32" => ("int32", "tensorflow::DT_INT32"),
        "int64" => ("int64", "tensorflow::DT_INT64"),
        "int16" => ("int16", "tensorflow::DT_INT16"),
        "int8" => ("int8", "tensorflow::DT_INT8"),
        "bool" => ("bool", "tensorflow::DT_BOOL"),
        _ => return None,
    })
}

/// `triton` + `dot_nt` -> `TritonDotNt`: op names must be CamelCase.
pub fn tf_op_name(namespace: &str, op: &str) -> String {
    camel_case(&format!("{namespace}_{op}"))
}

/// The Python name `tf.load_op_library` gives an op (TensorFlow's
/// `GenerateLowerCaseOpName`): an underscore before a capital that follows a
/// lowercase letter or precedes one.
pub fn tf_python_name(tf_name: &str) -> String {
    let chars: Vec<char> = tf_name.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev_lower = chars[i - 1].is_ascii_lowercase();
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_ascii_lowercase());
            if prev_lower || next_lower {
                out.push('_');
            }
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The helper module of an op: `triton_dot_nt_tf`.
pub fn module_name(namespace: &str, op: &str) -> String {
    format!("{namespace}_{op}_tf")
}

pub fn build(
    spec: &OpSpec,
    groups: &[Group],
    kinds: &[BoundArg],
    source: &str,
) -> Result<TfContext, ContextError> {
    let type_of = |dtype: &str| {
        tf_dtype(dtype)
            .ok_or_else(|| ContextError(format!("dtype `{dtype}` has no TensorFlow type")))
    };
    // Pointers are TF buffers; integers the C++ expressions over sizes and
    // strides, which the kernel's tensor views answer too.
    let words = CppWords {
        dtype: &|d| type_of(d).map(|(_, e)| e.to_string()),
        data_ptr: &|t| format!("reinterpret_cast<uint64_t>({t}.data())"),
    };
    let launch = launch::build(spec, groups, kinds, &words)?;
    // Attributes: one type attr per dtype variable, over its choices.
    let mut reg_attrs: Vec<String> = spec
        .attrs
        .iter()
        .map(|a| {
            let default = a
                .default
                .map(|v| format!(" = {}", v.literal(("true", "false"))))
                .unwrap_or_default();
            format!("{}: {}{default}", a.name, a.ty.name())
        })
        .collect();
    for var in &spec.dtypes {
        let names = var
            .choices
            .iter()
            .map(|c| type_of(&c.dtype).map(|(n, _)| n))
            .collect::<Result<Vec<_>, _>>()?;
        reg_attrs.push(format!("{}: {{{}}}", var.var, names.join(", ")));
    }
    // A derived variable is a type attr too (TensorFlow types an output only
    // by an attr); the op's Python function sets it from its source, and the
    // default is what the source's first choice gives.
    for d in &spec.derived_dtypes {
        let names = d
            .targets()
            .iter()
            .map(|t| type_of(t).map(|(n, _)| n))
            .collect::<Result<Vec<_>, _>>()?;
        let default = d
            .map
            .first()
            .map(|(_, to)| type_of(to).map(|(_, e)| e.trim_start_matches("tensorflow::")))
            .transpose()?
            .map(|e| format!(" = {e}"))
            .unwrap_or_default();
        reg_attrs.push(format!("{}: {{{}}}{default}", d.var, names.join(", ")));
    }
    let tensor_type = |dtype: &str| -> Result<String, ContextError> {
        match spec.is_dtype_var(dtype) {
            true => Ok(dtype.to_string()),
            false => Ok(type_of(dtype)?.0.to_string()),
        }
    };
    let reg_inputs = spec
        .inputs
        .iter()
        .map(|t| Ok(format!("{}: {}", t.name, tensor_type(&t.dtype)?)))
        .collect::<Result<Vec<_>, ContextError>>()?;
    let reg_outputs = spec
        .outputs
        .iter()
        .map(|t| Ok(format!("{}: {}", t.name, tensor_type(&t.dtype)?)))
        .collect::<Result<Vec<_>, ContextError>>()?;

    let bindings = spec.dim_bindings();
    let mut shape_checks = Vec::new();
    for t in &spec.inputs {
        for (axis, dim) in t.dims.iter().enumerate() {
            match dim {
                Dim::Sym(s) => {
                    let Some((_, src, src_axis)) = bindings.iter().find(|(b, _, _)| b == s) else {
                        continue;
                    };
                    if src == &t.name && *src_axis == axis {
                        continue;
                    }
                    shape_checks.push(ShapeCheck {
                        tensor: t.name.clone(),
                        axis,
                        sym: Some(s.clone()),
                        lit: None,
                        bound_at: format!("argument `{src}`, axis {src_axis}"),
                    });
                }
                Dim::Lit(v) => shape_checks.push(ShapeCheck {
                    tensor: t.name.clone(),
                    axis,
                    sym: None,
                    lit: Some(*v),
                    bound_at: String::new(),
                }),
            }
        }
    }
    let outputs = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(index, t)| TfOutput {
            name: t.name.clone(),
            index,
            sizes: dims_cpp(&t.dims, Some("int64_t")),
        })
        .collect();
    let tf_name = tf_op_name(&spec.namespace, &spec.name);
    let inputs: Vec<String> = spec.inputs.iter().map(|t| t.name.clone()).collect();
    let backward = spec.backward.as_ref().map(|b| {
        let calls = called_ops(b, module_name);
        TfBackward {
            text: backward_text(b),
            inputs: inputs.clone(),
            outputs: spec.outputs.iter().map(|t| t.name.clone()).collect(),
            out_grads: out_grads(spec),
            input_grads: input_grads(spec, b, grad_python, "None"),
            calls,
        }
    });
    let signature = op_signature(spec);
    let py_dtypes = spec
        .inputs
        .iter()
        .map(|t| {
            let allowed: Vec<String> =
                match (spec.dtype_var(&t.dtype), spec.derived_dtype(&t.dtype)) {
                    (Some(var), _) => var.choices.iter().map(|c| c.dtype.clone()).collect(),
                    (None, Some(d)) => d.targets().iter().map(|t| t.to_string()).collect(),
                    (None, None) => vec![t.dtype.clone()],
                };
            let quoted: Vec<String> = allowed.iter().map(|d| format!("\"{d}\"")).collect();
            PyDtypes {
                name: t.name.clone(),
                allowed: format!("({},)", quoted.join(", ")),
            }
        })
        .collect();
    let derived = spec
        .derived_dtypes
        .iter()
        .zip(&launch.derived_vars)
        .filter_map(|(d, base)| {
            let input = spec.inputs.iter().position(|t| t.dtype == d.var);
            let output = spec.outputs.iter().position(|t| t.dtype == d.var);
            let actual = match (input, output) {
                (Some(i), _) => format!("opgen_kctx->input_dtype({i})"),
                (None, Some(o)) => format!("opgen_kctx->expected_output_dtype({o})"),
                (None, None) => return None,
            };
            let entries: Vec<String> = d
                .map
                .iter()
                .map(|(from, to)| format!("\"{from}\": tf.{to}"))
                .collect();
            Some(TfDerived {
                actual,
                py_map: format!("{{{}}}", entries.join(", ")),
                passed: base.inputs.is_empty(),
                launch: base.clone(),
            })
        })
        .collect();
    let views: Vec<&str> = spec
        .inputs
        .iter()
        .chain(&spec.outputs)
        .map(|t| t.name.as_str())
        .collect();
    Ok(TfContext {
        launch_params: views
            .iter()
            .map(|v| format!("const OpgenDenseView& {v}"))
            .collect::<Vec<_>>()
            .join(", "),
        launch_views: views.join(", "),
        pad: spec.pad.as_ref().map(|p| pad_ctx(spec, p)),
        derived,
        source: source.to_string(),
        qualified: spec.qualified_name(),
        py_fn: tf_python_name(&tf_name),
        tf_name,
        op: spec.name.clone(),
        module: module_name(&spec.namespace, &spec.name),
        lib_file: format!("lib{}_tf.so", launch.prefix),
        reg_inputs,
        reg_outputs,
        reg_attrs,
        signature,
        shape_checks,
        outputs,
        py_params: py_params(spec),
        py_call: inputs
            .iter()
            .chain(spec.attrs.iter().map(|a| &a.name))
            .map(|n| format!("{n}={n}"))
            .collect::<Vec<_>>()
            .join(", "),
        attrs: spec
            .attrs
            .iter()
            .map(|a| TfAttr {
                name: a.name.clone(),
                cpp_type: crate::cpp::attr_cpp_type(a.ty).to_string(),
            })
            .collect(),
        py_dtypes,
        backward,
        launch,
    })
}

fn pad_ctx(spec: &OpSpec, pad: &Pad) -> TfPad {
    let (text, cond) = pad_condition(pad);
    let needed: Vec<String> = pad
        .dims
        .iter()
        .map(|(d, _)| format!("{d} % {} != 0", pad.multiple))
        .collect();
    let tensor = |t: &crate::spec::TensorSpec| TfPadTensor {
        name: t.name.clone(),
        multiples: multiples_cpp(pad, &t.dims),
    };
    let views: Vec<String> = spec
        .inputs
        .iter()
        .chain(&spec.outputs)
        .map(|t| format!("OpgenDenseView{{{}_twin}}", t.name))
        .collect();
    TfPad {
        text,
        needed: cpp_any(&needed),
        cond,
        inputs: spec.inputs.iter().map(tensor).collect(),
        outputs: spec.outputs.iter().map(tensor).collect(),
        views: views.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pad_line_pads_each_tensor_along_its_padded_dims() {
        let spec = crate::spec::parse_spec(
            0,
            "#pragma opgen op t::mm\n\
             #pragma opgen input a: float16[M, K]\n\
             #pragma opgen input b: float16[K, N]\n\
             #pragma opgen input bias: float16[M]\n\
             #pragma opgen output c: float16[M, N]\n\
             #pragma opgen args a, b, c, M, N, K\n\
             #pragma opgen grid M\n\
             #pragma opgen pad N, K to 8 if M >= 192 && M * N * K >= 1000\n\
             __global__ void mm(half* a, half* b, half* c, int M, int N, int K) {}\n",
        )
        .unwrap()
        .unwrap();
        let pad = pad_ctx(&spec, spec.pad.as_ref().unwrap());
        assert_eq!(pad.text, "N, K to 8 if M >= 192 && M * N * K >= 1000");
        assert_eq!(pad.needed, "N % 8 != 0 || K % 8 != 0");
        assert_eq!(
            pad.cond,
            "(M >= int64_t(192)) && (((M * N) * K) >= int64_t(1000))"
        );
        let multiples = |ts: &[TfPadTensor]| -> Vec<(String, Option<String>)> {
            ts.iter()
                .map(|t| (t.name.clone(), t.multiples.clone()))
                .collect()
        };
        let both = Some("{int64_t(1), int64_t(8)}".to_string());
        let b = Some("{int64_t(8), int64_t(8)}".to_string());
        assert_eq!(
            multiples(&pad.inputs),
            [
                ("a".into(), both.clone()),
                ("b".into(), b),
                ("bias".into(), None)
            ]
        );
        assert_eq!(multiples(&pad.outputs), [("c".into(), both)]);
        assert_eq!(
            pad.views,
            "OpgenDenseView{a_twin}, OpgenDenseView{b_twin}, OpgenDenseView{bias_twin}, OpgenDenseView{c_twin}"
        );
    }

    #[test]
    fn op_names_follow_tensorflow_rules() {
        assert_eq!(tf_op_name("triton", "dot_nt"), "TritonDotNt");
        assert_eq!(tf_op_name("my_ns", "add"), "MyNsAdd");
        assert_eq!(tf_python_name("TritonDotNt"), "triton_dot_nt");
        assert_eq!(tf_python_name("TritonAdd"), "triton_add");
        assert_eq!(tf_python_name("MyNsAdd2d"), "my_ns_add2d");
        assert_eq!(tf_python_name("TritonAdd2D"), "triton_add2d");
        assert_eq!(module_name("triton", "dot_tn"), "triton_dot_tn_tf");
    }

    #[test]
    fn dtypes_map_to_tensorflow_names() {
        assert_eq!(tf_dtype("float16"), Some(("half", "tensorflow::DT_HALF")));
        assert_eq!(tf_dtype("float32").map(|d| d.0), Some("float"));
        assert_eq!(tf_dtype("complex64"), None);
    }
}
