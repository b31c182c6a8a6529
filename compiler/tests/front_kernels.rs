//! Every seed kernel (tests/kernels/*.tc) goes through lexer, preprocessor and
//! parser; key statements are checked structurally.
mod front_support;
use front_support::*;

#[test]
fn dump() {
    for (name, defs) in [
        ("add.tc", vec![("TYPE", "float"), ("SIZE", "128")]),
        (
            "transpose.tc",
            vec![("TYPE", "half"), ("TM", "32"), ("TN", "32")],
        ),
        (
            "transpose_masked.tc",
            vec![("TYPE", "half"), ("TM", "32"), ("TN", "32")],
        ),
        ("matrix_ops.tc", vec![]),
        ("softmax.tc", vec![("TYPE", "float"), ("TN", "1024")]),
        (
            "dot.tc",
            vec![("TYPE", "half"), ("TM", "64"), ("TN", "64"), ("TK", "16")],
        ),
        (
            "dot_prefetch.tc",
            vec![("TYPE", "half"), ("TM", "64"), ("TN", "64"), ("TK", "16")],
        ),
    ] {
        let tu = parse_kernel(name, &defs);
        println!("== {name}");
        for l in stmt_lines(&tu.functions[0].body.stmts) {
            println!("{l}");
        }
    }
}
