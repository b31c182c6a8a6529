//! Code generation: Triton-IR -> LLVM IR (inkwell) -> PTX.
use crate::ir::Function;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Arch {
    Sm80,
    Sm90,
}

#[derive(Clone, Debug)]
pub struct CodegenOptions {
    pub arch: Arch,
    pub num_warps: u32,
}

/// One kernel, compiled.
#[derive(Clone, Debug)]
pub struct CompiledKernel {
    pub name: String,
    pub llvm_ir: String,
    pub ptx: String,
    /// Shared memory the kernel needs, bytes (launchers pass it as dynamic shared memory).
    pub shared_bytes: usize,
    pub num_warps: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum CodegenError {
    #[error("code generation does not support {what} yet")]
    Unsupported {
        what: String,
        span: crate::span::Span,
    },
    #[error("LLVM: {0}")]
    Llvm(String),
}

pub fn compile(func: &Function, options: &CodegenOptions) -> Result<CompiledKernel, CodegenError> {
    let _ = options;
    Err(CodegenError::Unsupported {
        what: "anything".into(),
        span: func.span,
    })
}
