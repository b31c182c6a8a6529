//! The one error type of the interpreter: a message and the span of the op at fault.

use crate::diagnostics::Diagnostic;
use crate::span::Span;

/// Why a kernel could not run to its end: a bad memory access, a wrong
/// argument, an integer division by zero, a loop over its step limit, or IR
/// the interpreter cannot evaluate. `span` points at the op at fault (the
/// kernel's span for argument errors, the default span for host accesses).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct InterpError {
    pub message: String,
    pub span: Span,
}

impl InterpError {
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        InterpError {
            message: message.into(),
            span,
        }
    }

    /// As a compile-style diagnostic, to render with the source line and caret.
    pub fn to_diagnostic(&self) -> Diagnostic {
        Diagnostic::error(self.span, self.message.clone())
    }
}

pub type InterpResult<T> = Result<T, InterpError>;
