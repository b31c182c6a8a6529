//! The C preprocessor subset Triton-C uses: `#define` (object- and function-like),
//! `#if/#ifdef/#ifndef/#elif/#else/#endif`, `#include`, `-D` values that are code.
use super::token::Token;
use super::FrontOptions;
use crate::diagnostics::{Diagnostic, Result};
use crate::span::{FileId, SourceMap, Span};

/// Lexes `file` and expands every directive and macro; ends with `Eof`.
pub fn preprocess(
    sources: &mut SourceMap,
    file: FileId,
    options: &FrontOptions,
) -> Result<Vec<Token>> {
    let _ = (sources, options);
    Err(Diagnostic::error(
        Span::new(file, 0, 0),
        "preprocessor not implemented yet",
    ))
}
