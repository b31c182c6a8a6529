//! Snapshots of the textual IR of sample kernels (`cargo insta review` to update).
mod ir_support;

use ir_support::*;
use tritonc::ir::printer::{print_function, print_module};
use tritonc::ir::*;

#[test]
fn add_kernel_text() {
    let f = add_kernel(
        1024,
        ParamAttrs {
            multiple_of: Some(16),
            ..Default::default()
        },
    );
    insta::assert_snapshot!(print_function(&f));
}

#[test]
fn loop_with_carried_values_text() {
    insta::assert_snapshot!(print_function(&sum_loop_kernel()));
}

#[test]
fn reduction_text() {
    insta::assert_snapshot!(print_function(&softmax_kernel()));
}

#[test]
fn if_and_return_text() {
    insta::assert_snapshot!(print_function(&if_kernel()));
}

#[test]
fn names_are_unique_and_module_joins_functions() {
    let f = sum_loop_kernel();
    let text = print_function(&f);
    // `acc` is the name of the init, the body arg and the loop result.
    assert!(text.contains("%acc = constant 0.0 : f32[128]"), "{text}");
    assert!(text.contains("%acc.1: f32[128]"), "{text}");
    assert!(text.contains("%acc.2 = while"), "{text}");
    let m = Module {
        functions: vec![f.clone(), f],
    };
    let both = print_module(&m);
    assert_eq!(both.matches("func @sum_rows(").count(), 2);
    assert!(both.contains("}\n\nfunc @sum_rows"));
}
