//! The spec's `backward` line as data: the incoming gradient of each output
//! and each input's gradient expression, which every framework renders in
//! its own calls.

use crate::spec::{Backward, GradExpr, OpSpec};
use serde::Serialize;

#[derive(Serialize)]
pub struct OutGradCtx {
    pub name: String,
    pub output: String,
    pub index: usize,
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

/// A gradient as Python: tensors by name, other ops through the generated
/// module's `_op`, which finds their modules.
pub fn grad_python(e: &GradExpr) -> String {
    render_grad(e, &|namespace, op, args| {
        format!("_op(\"{namespace}::{op}\")({})", args.join(", "))
    })
}

/// Another generated op a gradient calls, and the module that loads it.
#[derive(serde::Serialize, Clone, Debug, PartialEq)]
pub struct CalledOp {
    /// `triton::dot_nt`
    pub qualified: String,
    /// `triton_dot_nt` (torch), `triton_dot_nt_tf`, ...: from `module(namespace, op)`.
    pub module: String,
}

/// The other ops the gradient calls, each once, in order of first use.
pub fn called_ops(backward: &Backward, module: impl Fn(&str, &str) -> String) -> Vec<CalledOp> {
    fn walk(e: &GradExpr, out: &mut Vec<(String, String)>) {
        if let GradExpr::Call {
            namespace,
            op,
            args,
        } = e
        {
            let call = (namespace.clone(), op.clone());
            if !out.contains(&call) {
                out.push(call);
            }
            args.iter().for_each(|a| walk(a, out));
        }
    }
    let mut out = Vec::new();
    for g in &backward.grads {
        walk(&g.value, &mut out);
    }
    out.into_iter()
        .map(|(namespace, op)| CalledOp {
            qualified: format!("{namespace}::{op}"),
            module: module(&namespace, &op),
        })
        .collect()
}
