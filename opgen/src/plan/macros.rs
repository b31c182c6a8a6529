//! The tuning and `#define` macros the grid and the requirements read: which
//! ones, and their values in each compiled variant (the launchers' table).

use crate::spec::OpSpec;
use crate::variants::CompiledVariant;

/// The values of `names` (macros the grid and requirements read) in one variant.
pub fn macro_values(v: &CompiledVariant, names: &[String]) -> Result<Vec<String>, String> {
    names
        .iter()
        .map(|name| {
            let text = v
                .macros
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, val)| val.as_str())
                .unwrap_or("");
            let value: i64 = text.trim().parse().map_err(|_| {
                format!(
                    "macro `{name}` = `{text}` is used in the grid or a `require` but is not an integer"
                )
            })?;
            Ok(format!("{value}"))
        })
        .collect()
}

/// Whether `name` is a `tune` or `define` macro of `spec`.
pub fn is_macro(spec: &OpSpec, name: &str) -> bool {
    spec.tune.iter().any(|m| m.name == name) || spec.defines.iter().any(|m| m.name == name)
}

/// The tuning and `#define` macros the grid and the requirements read, in
/// order of first use.
pub fn grid_macros(spec: &OpSpec) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for e in spec.launch_exprs() {
        for (name, _) in e.names() {
            if is_macro(spec, name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
        }
    }
    names
}
