//! Ill-typed and ill-shaped programs give a diagnostic with the right message,
//! the exact `file:line:col`, and a rendered caret.
mod sema_support;
use sema_support::*;

/// Wraps statements in a kernel; the first statement is on line 2, column 3.
fn kernel(body: &str) -> String {
    format!("__global__ void k(float* X, half* H, int N, float s) {{\n  {body}\n}}\n")
}

/// Checks message (substring), location, and that the render has a caret line.
fn expect(body: &str, defines: &[(&str, &str)], message: &str, location: &str) {
    let (msg, loc, rendered) = lower_err(&kernel(body), defines);
    assert!(
        msg.contains(message),
        "message {msg:?} lacks {message:?}\n{rendered}"
    );
    assert_eq!(loc, location, "{rendered}");
    assert!(rendered.contains('^'), "no caret:\n{rendered}");
    assert!(
        rendered.contains(location),
        "render lacks the location:\n{rendered}"
    );
}

#[test]
fn initializer_shape_mismatch() {
    let body = "float x[16, 8] = 3.14;\n  float y[16, 8] = 5.17;\n  float z[8, 8] = x + y;";
    expect(
        body,
        &[],
        "cannot initialize `z` of shape [8, 8] with a tile of shape [16, 8]",
        "test.tc:4:19",
    );
}

#[test]
fn binary_shape_mismatch_labels_both_operands() {
    let body = "float x[16, 8] = 0;\n  float y[8, 16] = 0;\n  x + y;";
    let (msg, loc, rendered) = lower_err(&kernel(body), &[]);
    assert_eq!(msg, "incompatible shapes for `+`: [16, 8] and [8, 16]");
    assert_eq!(loc, "test.tc:4:3");
    assert!(rendered.contains("this has shape [16, 8]"), "{rendered}");
    assert!(rendered.contains("this has shape [8, 16]"), "{rendered}");
}

#[test]
fn undeclared_identifier() {
    expect(
        "int a = b + 1;",
        &[],
        "use of undeclared identifier `b`",
        "test.tc:2:11",
    );
}

#[test]
fn redeclaration_in_same_scope() {
    let (msg, loc, rendered) = lower_err(&kernel("int a = 1;\n  float a = 2;"), &[]);
    assert_eq!(msg, "redeclaration of `a` in the same scope");
    assert_eq!(loc, "test.tc:3:9");
    assert!(rendered.contains("first declared here"), "{rendered}");
    // Shadowing in an inner block is fine.
    lower_ok(&kernel("int a = 1;\n  { float a = 2; }"), &[]);
}

#[test]
fn redeclaring_a_parameter() {
    expect("int N = 3;", &[], "redeclaration of `N`", "test.tc:2:7");
}

#[test]
fn assigning_to_non_lvalue() {
    expect(
        "int a = 1;\n  a + 1 = 2;",
        &[],
        "cannot assign to this expression",
        "test.tc:3:3",
    );
}

#[test]
fn float_in_bitwise_op() {
    expect(
        "float f = s & 3;",
        &[],
        "operator `&` needs integer operands, not `f32`",
        "test.tc:2:13",
    );
}

#[test]
fn pointer_minus_pointer() {
    expect(
        "X - X;",
        &[],
        "subtracting pointers is not supported",
        "test.tc:2:3",
    );
}

#[test]
fn pointer_times_int() {
    expect(
        "X * 2;",
        &[],
        "operator `*` cannot be applied to `f32*`",
        "test.tc:2:3",
    );
}

#[test]
fn float_pointer_offset() {
    expect(
        "X + s;",
        &[],
        "pointer offsets must be integers, not `f32`",
        "test.tc:2:7",
    );
}

#[test]
fn deref_of_non_pointer() {
    expect(
        "float v = *N;",
        &[],
        "needs a pointer, but this is `i32`",
        "test.tc:2:14",
    );
}

#[test]
fn tile_condition_in_if() {
    let body = "int r[4] = 0 ... 4;\n  if (r < N) { N = 1; }";
    expect(
        body,
        &[],
        "the condition of `if` must be a scalar, but this is a tile of shape [4]",
        "test.tc:3:7",
    );
}

#[test]
fn tile_condition_in_while() {
    let body = "int r[4] = 0 ... 4;\n  while (r < N) { N = N - 1; }";
    expect(
        body,
        &[],
        "the condition of `while` must be a scalar",
        "test.tc:3:10",
    );
}

#[test]
fn non_constant_tile_dimension() {
    expect(
        "float t[N] = 0;",
        &[],
        "a tile dimension must be a compile-time constant, but `N` is not one",
        "test.tc:2:11",
    );
}

#[test]
fn missing_macro_for_tile_dimension() {
    expect("float t[TM] = 0;", &[], "`TM` is not one", "test.tc:2:11");
}

#[test]
fn non_positive_tile_dimension() {
    expect(
        "float t[SIZE - 8] = 0;",
        &[("SIZE", "8")],
        "tile dimensions must be positive, but this one is 0",
        "test.tc:2:11",
    );
}

#[test]
fn transpose_of_1d_tile() {
    expect(
        "float t[8] = 0;\n  float u[8] = ^t;",
        &[],
        "`^` transposes 2-D tiles, but this has shape [8]",
        "test.tc:3:16",
    );
}

#[test]
fn matmul_inner_dims_differ() {
    let body = "half a[16, 8] = 0;\n  half b[16, 8] = 0;\n  float c[16, 8] = a @ b;";
    expect(
        body,
        &[],
        "`@` needs [M, K] @ [K, N], but the shapes are [16, 8] @ [16, 8]",
        "test.tc:4:20",
    );
}

#[test]
fn subscript_rank_mismatch() {
    expect(
        "int r[4] = 0 ... 4;\n  int q[4, 1, 1] = r[:, :, newaxis];",
        &[],
        "subscript names 2 axes",
        "test.tc:3:20",
    );
}

#[test]
fn unknown_function() {
    expect(
        "float v = expf(s);",
        &[],
        "unknown function `expf`",
        "test.tc:2:13",
    );
}

#[test]
fn wrong_builtin_arity() {
    expect(
        "float v = max(s);",
        &[],
        "`max` takes 2 arguments, but 1 was given",
        "test.tc:2:13",
    );
}

#[test]
fn program_id_axis_out_of_range() {
    expect(
        "int p = get_program_id(3);",
        &[],
        "grid axis must be 0, 1 or 2, not 3",
        "test.tc:2:26",
    );
}

#[test]
fn program_id_axis_not_constant() {
    expect(
        "int p = get_program_id(N);",
        &[],
        "the grid axis must be a compile-time constant",
        "test.tc:2:26",
    );
}

#[test]
fn break_outside_a_loop() {
    expect(
        "if (N > 0) { break; }",
        &[],
        "`break` outside of a loop",
        "test.tc:2:16",
    );
}

#[test]
fn continue_in_do_while_is_not_supported() {
    expect(
        "do { if (N > 2) continue; N = N - 1; } while (N > 0);",
        &[],
        "`continue` inside `do ... while` is not supported yet",
        "test.tc:2:19",
    );
}

#[test]
fn store_shape_mismatch() {
    let body = "int r[8] = 0 ... 8;\n  float v[4] = 0;\n  *(X + r) = v;";
    expect(
        body,
        &[],
        "cannot store a tile of shape [4] through pointers of shape [8]",
        "test.tc:4:14",
    );
}

#[test]
fn assign_tile_to_scalar() {
    let body = "int r[8] = 0 ... 8;\n  int a = 0;\n  a = r;";
    expect(
        body,
        &[],
        "cannot assign a tile of shape [8] to scalar `a`",
        "test.tc:4:7",
    );
}

#[test]
fn pointer_from_number() {
    expect(
        "float* p = s;",
        &[],
        "cannot initialize `p` of type `f32*` with `f32`",
        "test.tc:2:14",
    );
}

#[test]
fn pointer_types_differ() {
    expect(
        "float* p = H;",
        &[],
        "cannot initialize `p` of type `f32*` with `f16*`",
        "test.tc:2:14",
    );
}

#[test]
fn use_of_unset_pointer() {
    expect(
        "float* p;\n  float v = *p;",
        &[],
        "`p` is used before it is given a value",
        "test.tc:3:14",
    );
}

#[test]
fn return_with_value() {
    expect("return 1;", &[], "kernels return nothing", "test.tc:2:10");
}

#[test]
fn empty_range() {
    expect(
        "int r[1] = 4 ... 4;",
        &[],
        "empty range `4 ... 4`",
        "test.tc:2:14",
    );
}

#[test]
fn mask_shape_mismatch() {
    let body = "int r[8] = 0 ... 8;\n  bool m[4] = 1;\n  float v[8] = *?(m) (X + r);";
    expect(
        body,
        &[],
        "incompatible shapes for `*?()`: [8] and [4]",
        "test.tc:4:16",
    );
}

#[test]
fn ternary_arms_mismatch() {
    expect(
        "float v = N > 0 ? X : s;",
        &[],
        "the arms of `?:` have incompatible types",
        "test.tc:2:13",
    );
}

#[test]
fn non_void_kernel() {
    let (msg, loc, _) = lower_err("int k() { }", &[]);
    assert_eq!(msg, "kernel `k` must return `void`");
    assert_eq!(loc, "test.tc:1:1");
}

#[test]
fn newaxis_outside_subscript() {
    expect(
        "int a = newaxis;",
        &[],
        "`newaxis` is only meaningful inside a subscript",
        "test.tc:2:11",
    );
}

#[test]
fn assignment_in_loop_condition() {
    expect(
        "int i = 0;\n  while ((i = i + 1) < N) { }",
        &[],
        "assigning `i` in a loop condition is not supported",
        "test.tc:3:10",
    );
}

/// `lower_all` goes on after an error, and a failed declaration does not make
/// every later use of the name an error too.
#[test]
fn every_error_of_a_function_is_reported_once() {
    let text = "void k(float* X) {
  float a[4] = X + 1.5;
  a = a + 1;
  int b = c;
  float d[4] = 0;
  d = d @ d;
  for (int i = 0; i < 4; i++) { d = d + a; }
  d = d + 1;
}
";
    let (sources, _, parsed) = parse_text("test.tc", text, &options(&[]));
    let tu = parsed.unwrap();
    let errors = tritonc::sema::lower_all(&tu).unwrap_err();
    let got: Vec<(String, String)> = errors
        .iter()
        .map(|d| (d.message.clone(), d.location(&sources)))
        .collect();
    assert_eq!(got.len(), 3, "{got:#?}");
    assert!(got[0].0.contains("pointer offsets must be integers"));
    assert_eq!(got[0].1, "test.tc:2:20");
    assert_eq!(got[1].0, "use of undeclared identifier `c`");
    assert_eq!(got[1].1, "test.tc:4:11");
    assert!(got[2].0.contains("`@` multiplies 2-D tiles"), "{got:#?}");
    assert_eq!(got[2].1, "test.tc:6:7");
    // `lower` gives the first one.
    assert_eq!(tritonc::sema::lower(&tu).unwrap_err().message, got[0].0);
}
