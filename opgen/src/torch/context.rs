//! The data `templates/torch/*.hbs` render: the C++ launch shared with the
//! TensorFlow op ([`crate::cpp::launch`], in torch's names for dtypes and
//! data pointers) plus what only PyTorch has: the schema, the Meta kernel's
//! SymInt output sizes and the autograd function.

use crate::bind::BoundArg;
use crate::cpp::launch::{self, CppLaunch, CppWords};
use crate::cpp::{cpp_any, dims_cpp, multiples_cpp, pad_condition};
use crate::plan::{
    backward_text, called_ops, camel_case, input_grads, out_grads, render_grad, CalledOp,
    ContextError, OutGradCtx,
};
use crate::spec::{AttrType, GradExpr, OpSpec, Pad};
use crate::variants::Group;
use serde::Serialize;

#[derive(Serialize)]
pub struct TorchContext {
    #[serde(flatten)]
    pub launch: CppLaunch,
    pub source: String,
    pub ns: String,
    pub op: String,
    pub qualified: String,
    pub lib_file: String,
    pub schema: String,
    /// The op function's parameters: tensors (`x_arg`), then attributes.
    pub cpp_params: String,
    /// The tensors only (the input checks take them).
    pub tensor_params: String,
    pub call_args: String,
    pub attrs: Vec<TorchAttr>,
    pub fn_type: String,
    pub return_type: String,
    pub return_expr: String,
    pub first_input: String,
    pub outputs: Vec<OutputCtx>,
    pub single_output: bool,
    pub backward: Option<BackwardCtx>,
    pub pad: Option<PadCtx>,
}

/// The spec's `pad` line in C++: when to pad, the padded call, the cut outputs.
#[derive(Serialize)]
pub struct PadCtx {
    /// `N, K to 8 if ...`, for a comment.
    pub text: String,
    /// Whether some input needs a padded copy.
    pub needed: String,
    /// The line's condition (`true` without one).
    pub cond: String,
    /// The launch's arguments: each input, padded where it has a padded dim.
    pub call_args: String,
    /// The op's result from the padded launch's (`opgen_out`).
    pub result: String,
}

/// An attribute: a schema argument (`float alpha=1.0`) and a C++ parameter.
#[derive(Serialize)]
pub struct TorchAttr {
    pub name: String,
    /// `double`, `int64_t`, `bool`.
    pub cpp_type: String,
}

#[derive(Serialize)]
pub struct OutputCtx {
    pub name: String,
    pub sizes: String,
    pub sym_sizes: String,
    pub dtype: String,
}

#[derive(Serialize)]
pub struct BackwardCtx {
    pub class: String,
    pub saved: Vec<SavedCtx>,
    pub out_grads: Vec<OutGradCtx>,
    pub input_grads: Vec<String>,
    pub text: String,
    /// Other ops the gradient calls (`triton::dot_nt`), loaded by `load()`
    /// from their modules (`triton_dot_nt`) when those are importable.
    pub calls: Vec<CalledOp>,
}

#[derive(Serialize)]
pub struct SavedCtx {
    pub name: String,
    pub index: usize,
}

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
    let words = CppWords {
        dtype: &|d| Ok(torch_scalar_type(d).to_string()),
        data_ptr: &|t| format!("reinterpret_cast<uint64_t>({t}.data_ptr())"),
    };
    let launch = launch::build(spec, groups, kinds, &words)?;
    let inputs: Vec<String> = spec.inputs.iter().map(|t| t.name.clone()).collect();
    let mut schema_args: Vec<String> = inputs.iter().map(|n| format!("Tensor {n}")).collect();
    let attrs: Vec<TorchAttr> = spec
        .attrs
        .iter()
        .map(|a| TorchAttr {
            name: a.name.clone(),
            cpp_type: attr_cpp_type(a.ty).to_string(),
        })
        .collect();
    for a in &spec.attrs {
        let default = a
            .default
            .map(|v| format!("={}", v.literal(("True", "False"))))
            .unwrap_or_default();
        schema_args.push(format!("{} {}{default}", a.ty.name(), a.name));
    }
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
    let outputs = spec
        .outputs
        .iter()
        .map(|t| {
            // The same dims as C++ expressions: plain sizes, and SymInts for the Meta kernel.
            OutputCtx {
                name: t.name.clone(),
                sizes: dims_cpp(&t.dims, Some("int64_t")),
                sym_sizes: dims_cpp(&t.dims, Some("c10::SymInt")),
                dtype: match spec.is_dtype_var(&t.dtype) {
                    true => format!("dtype_{}", t.dtype),
                    false => torch_scalar_type(&t.dtype).to_string(),
                },
            }
        })
        .collect();
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
            text: backward_text(b),
            calls: called_ops(b, launch::symbol_prefix),
        }
    });
    let tensor_params: Vec<String> = inputs
        .iter()
        .map(|n| format!("const at::Tensor& {n}_arg"))
        .collect();
    let mut cpp_params = tensor_params.clone();
    let mut param_types = vec!["const at::Tensor&".to_string(); inputs.len()];
    let mut call_args = inputs.clone();
    for a in &attrs {
        cpp_params.push(format!("{} {}", a.cpp_type, a.name));
        param_types.push(a.cpp_type.clone());
        call_args.push(a.name.clone());
    }
    let fn_type = format!("{return_type}({})", param_types.join(", "));
    let pad = spec.pad.as_ref().map(|p| pad_ctx(spec, p, &attrs));
    Ok(TorchContext {
        source: source.to_string(),
        ns: spec.namespace.clone(),
        op: spec.name.clone(),
        qualified: spec.qualified_name(),
        lib_file: format!("lib{}.so", launch.prefix),
        schema: format!("{}({}) -> {returns}", spec.name, schema_args.join(", ")),
        cpp_params: cpp_params.join(", "),
        tensor_params: tensor_params.join(", "),
        call_args: call_args.join(", "),
        attrs,
        fn_type,
        return_type,
        return_expr,
        first_input: inputs.first().cloned().unwrap_or_default(),
        outputs,
        single_output: spec.outputs.len() == 1,
        backward,
        pad,
        launch,
    })
}

fn pad_ctx(spec: &OpSpec, pad: &Pad, attrs: &[TorchAttr]) -> PadCtx {
    let mut needed = Vec::new();
    let mut call_args = Vec::new();
    for t in &spec.inputs {
        match multiples_cpp(pad, &t.dims) {
            Some(m) => {
                needed.push(format!("opgen_pad_needed({}_arg, {m})", t.name));
                call_args.push(format!("opgen_pad_input({}_arg, {m})", t.name));
            }
            None => call_args.push(format!("{}_arg", t.name)),
        }
    }
    call_args.extend(attrs.iter().map(|a| a.name.clone()));
    let single = spec.outputs.len() == 1;
    let results: Vec<String> = spec
        .outputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let out = match single {
                true => "opgen_out".to_string(),
                false => format!("std::get<{i}>(opgen_out)"),
            };
            match multiples_cpp(pad, &t.dims) {
                Some(_) => format!(
                    "opgen_crop({out}, {{ {} }})",
                    dims_cpp(&t.dims, Some("int64_t"))
                ),
                None => out,
            }
        })
        .collect();
    let (text, cond) = pad_condition(pad);
    PadCtx {
        text,
        needed: cpp_any(&needed),
        cond,
        call_args: call_args.join(", "),
        result: match single {
            true => results[0].clone(),
            false => format!("std::make_tuple({})", results.join(", ")),
        },
    }
}

/// The C++ type torch passes an attribute as (its schema's `float`, `int`, `bool`).
fn attr_cpp_type(ty: AttrType) -> &'static str {
    match ty {
        AttrType::Float => "double",
        AttrType::Int => "int64_t",
        AttrType::Bool => "bool",
    }
}

/// A gradient as C++: tensors by name, other ops through `opgen_call`.
fn grad_cpp(e: &GradExpr) -> String {
    render_grad(e, &|namespace, op, args| {
        format!("opgen_call(\"{namespace}::{op}\", {{{}}})", args.join(", "))
    })
}
