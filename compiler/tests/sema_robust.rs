//! Sema never panics: the seed kernels with a line deleted, a word replaced, or
//! another element type either lower to IR that verifies or give a diagnostic.
mod sema_support;
use sema_support::*;

const KERNELS: [(&str, &[(&str, &str)]); 7] = [
    ("add.tc", &[("TYPE", "float"), ("SIZE", "32")]),
    (
        "transpose.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "8")],
    ),
    (
        "transpose_masked.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "8")],
    ),
    ("matrix_ops.tc", &[]),
    ("softmax.tc", &[("TYPE", "float"), ("TN", "64")]),
    (
        "dot.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "16"), ("TK", "8")],
    ),
    (
        "dot_prefetch.tc",
        &[("TYPE", "half"), ("TM", "16"), ("TN", "16"), ("TK", "8")],
    ),
];

/// Parses and lowers; a lowered function must verify. Returns whether it lowered.
fn try_lower(text: &str, defines: &[(&str, &str)]) -> bool {
    let (sources, _, parsed) = parse_text("m.tc", text, &options(defines));
    let Ok(tu) = parsed else {
        return false;
    };
    match tritonc::sema::lower_all(&tu) {
        Ok(m) => {
            m.functions.iter().for_each(check_function);
            true
        }
        Err(errors) => {
            assert!(!errors.is_empty());
            // Diagnostics have messages, point into the file and render.
            for d in errors {
                assert!(!d.message.is_empty());
                assert!(d.render(&sources).contains("m.tc"), "{}", d.message);
            }
            false
        }
    }
}

#[test]
fn deleting_any_line() {
    for (name, defs) in KERNELS {
        let text = kernel_text(name);
        let lines: Vec<&str> = text.lines().collect();
        for i in 0..lines.len() {
            let mut l = lines.clone();
            l.remove(i);
            try_lower(&l.join("\n"), defs);
        }
    }
}

#[test]
fn replacing_any_word() {
    for (name, defs) in KERNELS {
        let text = kernel_text(name);
        let words: Vec<(usize, usize)> = word_ranges(&text);
        for (k, &(s, e)) in words.iter().enumerate() {
            let replacement = ["1", "X", "pa", "1.5", "c"][k % 5];
            let mutated = format!("{}{}{}", &text[..s], replacement, &text[e..]);
            try_lower(&mutated, defs);
        }
    }
}

#[test]
fn every_element_type() {
    let types = [
        "bool", "char", "short", "int", "long", "half", "bf16", "float", "double",
    ];
    let mut lowered = 0;
    for (name, defs) in KERNELS {
        for t in types {
            let d: Vec<(&str, &str)> = defs
                .iter()
                .map(|&(k, v)| if k == "TYPE" { (k, t) } else { (k, v) })
                .collect();
            lowered += try_lower(&kernel_text(name), &d) as usize;
        }
    }
    // Loads, stores and element-wise ops work for every type; products need
    // f16/bf16/f32/f64/i8, so some dot variants are diagnostics.
    assert!(lowered >= 40, "{lowered}");
}

/// Byte ranges of identifier-like words and numbers outside comments.
fn word_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' {
            let s = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push((s, i));
        } else {
            i += 1;
        }
    }
    out
}
