//! Structural and type checks of Triton-IR.
