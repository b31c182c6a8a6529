//! Semantic analysis: AST -> Triton-IR (types, shapes, broadcasting, control flow).
