//! Small C++ expressions.

use crate::plan::dims_list;
use crate::spec::Dim;

/// A C++ condition that holds when every one of `conds` does (`true` for none).
pub fn cpp_all(conds: &[String]) -> String {
    if conds.is_empty() {
        "true".to_string()
    } else {
        conds.join(" && ")
    }
}

/// A C++ condition that holds when one of `conds` does (`false` for none).
pub fn cpp_any(conds: &[String]) -> String {
    if conds.is_empty() {
        "false".to_string()
    } else {
        conds.join(" || ")
    }
}

/// Dims joined by `, `: symbols by name, literals plain or as
/// `literal_type(v)` (a C++ cast such as `int64_t`).
pub fn dims_cpp(dims: &[Dim], literal_type: Option<&str>) -> String {
    dims_list(dims, &|v| match literal_type {
        None => v.to_string(),
        Some(ty) => format!("{ty}({v})"),
    })
}
