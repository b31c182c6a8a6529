//! Front end: lexer, preprocessor (with list macros = tuning space), parser.
pub mod ast;
pub mod lexer;
pub mod parser;
pub mod preprocess;
pub(crate) mod stack;
pub mod token;

use crate::diagnostics::Result;
use crate::span::{FileId, SourceMap};
use std::path::PathBuf;

/// What the preprocessor needs besides the main file.
#[derive(Clone, Debug, Default)]
pub struct FrontOptions {
    /// `-DNAME=VALUE`, in command-line order. VALUE is source text (`float`,
    /// `^a`, `TM,TK`); list values (`[32, 64]`) are expanded by the driver
    /// before they get here, so each point of a tuning space is one call.
    pub defines: Vec<(String, String)>,
    /// `-I` folders searched by `#include "..."`, after the including file's folder.
    pub include_dirs: Vec<PathBuf>,
}

/// Preprocesses and parses `file` (already added to `sources`). Included files
/// and the `-D` values are added to `sources` so diagnostics can point into them.
pub fn parse_file(
    sources: &mut SourceMap,
    file: FileId,
    options: &FrontOptions,
) -> Result<ast::TranslationUnit> {
    let tokens = preprocess::preprocess(sources, file, options)?;
    parser::parse(&tokens)
}
