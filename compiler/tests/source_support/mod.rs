//! The one way every test suite reaches Triton-C source: the seed kernels of
//! `tests/kernels/*.tc` (path and text), front-end options for a `-D` set,
//! text through the front end, and the `-D` sets of `dot_trans.tc`.
//!
//! Included by `front_support`, `sema_support` and `e2e_util` (each re-exports it).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use tritonc::diagnostics::Result;
use tritonc::front::ast::TranslationUnit;
use tritonc::front::{parse_file, FrontOptions};
use tritonc::span::{FileId, SourceMap};

/// `tests/kernels/` of the workspace.
pub fn kernels_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/kernels")
}

pub fn kernel_path(name: &str) -> PathBuf {
    kernels_dir().join(name)
}

/// The `.tc` files directly in `dir`, sorted by name.
pub fn tc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "tc"))
        .collect();
    files.sort();
    files
}

/// The text of `tests/kernels/<name>`.
pub fn kernel_text(name: &str) -> String {
    std::fs::read_to_string(kernel_path(name)).expect("kernel file")
}

/// Front-end options that define each `(name, value)` macro, as `-Dname=value`.
pub fn options(defines: &[(&str, &str)]) -> FrontOptions {
    FrontOptions {
        defines: defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect(),
        include_dirs: Vec::new(),
    }
}

/// Parses `text` as file `name`; returns the sources too, for diagnostics.
pub fn parse_text(
    name: &str,
    text: &str,
    options: &FrontOptions,
) -> (SourceMap, FileId, Result<TranslationUnit>) {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    let result = parse_file(&mut sources, file, options);
    (sources, file, result)
}

/// Parses `tests/kernels/<name>` with these macros; the file is named by its path.
pub fn parse_kernel_file(
    name: &str,
    defines: &[(&str, &str)],
) -> (SourceMap, FileId, Result<TranslationUnit>) {
    let path = kernel_path(name).display().to_string();
    parse_text(&path, &kernel_text(name), &options(defines))
}

/// The `-D` set of one `dot_trans.tc` variant (seed 003): `a_t` / `b_t`
/// transpose A / B inside the product. The tile sizes (`TM`, `TN`, `TK`) and
/// `TYPE` are the caller's.
pub fn dot_trans_defines(a_t: bool, b_t: bool) -> Vec<(&'static str, &'static str)> {
    let mut d = if a_t {
        vec![
            ("USE_A", "^a"),
            ("STRIDE_AK", "lda"),
            ("STRIDE_AM", "1"),
            ("BROADCAST_AK", ":,newaxis"),
            ("BROADCAST_AM", "newaxis,:"),
            ("SHAPE_A", "TK,TM"),
        ]
    } else {
        vec![
            ("USE_A", "a"),
            ("STRIDE_AK", "1"),
            ("STRIDE_AM", "lda"),
            ("BROADCAST_AK", "newaxis,:"),
            ("BROADCAST_AM", ":,newaxis"),
            ("SHAPE_A", "TM,TK"),
        ]
    };
    d.extend(if b_t {
        [
            ("USE_B", "^b"),
            ("STRIDE_BK", "1"),
            ("STRIDE_BN", "ldb"),
            ("BROADCAST_BK", "newaxis,:"),
            ("BROADCAST_BN", ":,newaxis"),
            ("SHAPE_B", "TN,TK"),
        ]
    } else {
        [
            ("USE_B", "b"),
            ("STRIDE_BK", "ldb"),
            ("STRIDE_BN", "1"),
            ("BROADCAST_BK", ":,newaxis"),
            ("BROADCAST_BN", "newaxis,:"),
            ("SHAPE_B", "TK,TN"),
        ]
    });
    d
}
