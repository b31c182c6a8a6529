//! Textual form of Triton-IR.
use super::function::Function;

/// One op a line, values as `%N` (or `%name.N`), regions indented.
pub fn print_function(func: &Function) -> String {
    format!("func @{}\n", func.name)
}
