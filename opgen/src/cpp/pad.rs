//! The spec's `pad` line in C++ (the torch and TensorFlow ops): the line as
//! written, its condition over the op's dims, and each tensor's per-axis
//! multiples.

use crate::plan::expr_text;
use crate::spec::{Dim, Pad};

/// `N, K to 8 if M >= 192 && ...` (for comments) and the condition as C++
/// over the dims in scope by their names (`true` without one).
pub fn pad_condition(pad: &Pad) -> (String, String) {
    let plain = |n: &str| n.to_string();
    let dims: Vec<&str> = pad.dims.iter().map(|(d, _)| d.as_str()).collect();
    let mut text = format!("{} to {}", dims.join(", "), pad.multiple);
    if pad.conditions.is_empty() {
        return (text, "true".to_string());
    }
    let written: Vec<String> = pad
        .conditions
        .iter()
        .map(|c| format!("{} {} {}", expr_text(&c.left), c.cmp, expr_text(&c.right)))
        .collect();
    text += &format!(" if {}", written.join(" && "));
    let cond = pad
        .conditions
        .iter()
        .map(|c| {
            let (l, r) = (c.left.to_cpp(&plain), c.right.to_cpp(&plain));
            format!("({l} {} {r})", c.cmp)
        })
        .collect::<Vec<_>>()
        .join(" && ");
    (text, cond)
}

/// The C++ `{int64_t(1), int64_t(8)}` of a tensor's per-axis pad multiples,
/// `None` where no axis is padded.
pub fn multiples_cpp(pad: &Pad, dims: &[Dim]) -> Option<String> {
    let multiples = pad.multiples(dims);
    multiples.iter().any(|&m| m > 1).then(|| {
        let items: Vec<String> = multiples.iter().map(|m| format!("int64_t({m})")).collect();
        format!("{{{}}}", items.join(", "))
    })
}
