//! What every framework's generator reads besides its templates: the spec's
//! own text for messages, the macros the grid and requirements read per
//! variant, the gradients. Framework modules (`torch`, `tf`, `ort`, `jax`) import
//! this and `cpp`, never each other.

mod grads;
mod macros;
mod text;

pub use grads::{
    called_ops, grad_python, input_grads, out_grads, render_grad, CalledOp, OutGradCtx,
};
pub use macros::{grid_macros, is_macro, macro_values};
pub use text::{
    backward_text, camel_case, dims_list, expr_text, grad_text, group_label, op_signature,
    py_params, requires_text, shape_text,
};

/// Errors while deriving a framework's context (e.g. a grid macro that is
/// not a number, a dtype the framework has no type for).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ContextError(pub String);
