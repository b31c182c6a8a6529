//! Textual form of Triton-IR.
