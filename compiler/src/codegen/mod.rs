//! Code generation: Triton-IR -> LLVM IR (inkwell) -> PTX.
