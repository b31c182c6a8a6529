//! Every bundled op (tests/ops/*.tc but add, which ort_add.rs covers in
//! depth) as an ONNX Runtime library: generated, built, loaded into the real
//! onnxruntime by scripts/ort/check_loads.py, which checks registration, the
//! outputs' inferred symbolic shapes and the "no CUDA device" error. Skipped
//! like ort_add when onnxruntime cannot be imported outside CI.

use serde_json::json;
use std::path::{Path, PathBuf};
mod ort_support;

use ort_support::{build_options, repo, require_onnxruntime, run_check_script};
use triton_opgen::ort::generate;
use triton_opgen::read_spec;
use triton_opgen::spec::{Dim, TensorSpec};

fn tensors(list: &[TensorSpec]) -> serde_json::Value {
    list.iter()
        .map(|t| {
            let dims: Vec<serde_json::Value> = t
                .dims
                .iter()
                .map(|d| match d {
                    Dim::Sym(s) => json!(s),
                    Dim::Lit(n) => json!(n),
                })
                .collect();
            json!({"name": t.name, "dims": dims})
        })
        .collect()
}

/// Builds and checks one bundled op; returns its library.
fn check_op(file: &str, out: &Path) -> PathBuf {
    check_op_at(&repo().join("tests/ops").join(file), out)
}

/// Builds and checks the op of `input`; returns its library.
fn check_op_at(input: &Path, out: &Path) -> PathBuf {
    let file = input.file_name().unwrap().to_string_lossy().into_owned();
    let file = file.as_str();
    let input = input.to_path_buf();
    let (spec, _) = read_spec(&input).unwrap_or_else(|e| panic!("{e}"));
    let opts = build_options(input, out.join(file));
    let done = generate(&opts, |_| {}).unwrap_or_else(|e| panic!("{file}: {e}"));
    // Rows longer than every config's TN are refused (INVALID_ARGUMENT) by
    // the one-tile softmax (the bundled one loops over longer rows).
    let reject = (file == "softmax_one_tile.tc").then(|| {
        json!({"shapes": {"x": [2, 5000]}, "needles": ["no compiled config accepts these inputs", "N <= TN", "N = 5000"]})
    });
    // An empty K: nothing to launch, zero outputs (no GPU needed to see it).
    let empty = match file {
        "dot.tc" => Some(json!({"shapes": {"a": [3, 0], "b": [0, 5]}, "outputs": [[3, 5]]})),
        "dot_nt.tc" => Some(json!({"shapes": {"a": [3, 0], "b": [5, 0]}, "outputs": [[3, 5]]})),
        "dot_tn.tc" => Some(json!({"shapes": {"a": [0, 3], "b": [0, 5]}, "outputs": [[3, 5]]})),
        _ => None,
    };
    // The spec's `pad` line reaches the crate (which builds: the condition
    // typechecks as Rust over the call); an op without one pads nothing.
    let spec_rs = std::fs::read_to_string(done.out_dir.join("src/op_spec.rs")).unwrap();
    let padded_dims = match file {
        "dot.tc" => Some(r#"&["N", "K", ];"#),
        "dot_nt.tc" => Some(r#"&["K", ];"#),
        "dot_tn.tc" => Some(r#"&["M", "N", ];"#),
        _ => None,
    };
    let pad_lines = match padded_dims {
        Some(dims) => vec![
            format!("pub const PAD_DIMS: &[&str] = {dims}"),
            "pub const PAD_MULTIPLE: i64 = 8;".to_string(),
            concat!(
                r#"(c.dim("M") >= 192i64) && (c.dim("N") >= 192i64) && "#,
                r#"(c.dim("M").wrapping_mul(c.dim("N")).wrapping_mul(c.dim("K"))"#,
                r#" >= 2i64.wrapping_mul(1000i64)"#
            )
            .to_string(),
        ],
        None => vec!["pub const PAD_DIMS: &[&str] = &[];".to_string()],
    };
    for line in &pad_lines {
        assert!(spec_rs.contains(line), "{file}: op_spec.rs lacks `{line}`");
    }
    let lib = done.library.expect("built library");
    let desc = json!({
        "empty": empty,
        "reject": reject,
        "lib": lib,
        "domain": spec.namespace,
        "name": spec.name,
        "qualified": spec.qualified_name(),
        "inputs": tensors(&spec.inputs),
        "outputs": tensors(&spec.outputs),
    });
    let desc_path = out.join(format!("{file}.json"));
    std::fs::write(&desc_path, desc.to_string()).unwrap();
    let stdout = run_check_script(
        &format!("{file}: "),
        "scripts/ort/check_loads.py",
        [&desc_path],
    );
    assert!(
        stdout.contains("run reports no CUDA device"),
        "{file}:\n{stdout}"
    );
    assert_eq!(
        stdout.contains("an empty input gives zero outputs [[3, 5]]"),
        empty.is_some(),
        "{file}:\n{stdout}"
    );
    lib
}

#[test]
fn ort_bundled_ops_load_and_infer_shapes() {
    if !require_onnxruntime("ort_ops") {
        return;
    }
    let out = tempfile::tempdir().expect("temp dir");
    let mut libs = std::collections::HashMap::new();
    for file in [
        "softmax.tc",
        "dot.tc",
        "dot_nt.tc",
        "dot_tn.tc",
        "transpose.tc",
    ] {
        libs.insert(file, check_op(file, out.path()));
    }
    check_op_at(
        &repo().join("opgen/tests/ort_support/softmax_one_tile.tc"),
        out.path(),
    );
    // Two libraries of the `triton` domain in one session (transpose -> softmax).
    let stdout = run_check_script(
        "",
        "scripts/ort/check_shared_domain.py",
        [&libs["transpose.tc"], &libs["softmax.tc"]],
    );
    assert!(stdout.contains("session created"), "{stdout}");
    // A model rewritten for serving (MatMul/Softmax -> triton ops): the right
    // nodes replaced, the reshapes around them exact, the session opens.
    let stdout = run_check_script(
        "",
        "scripts/ort/check_rewrite.py",
        [&libs["dot.tc"], &libs["softmax.tc"]],
    );
    for line in [
        "ok: rewritten 6 nodes, kept 2",
        "ok: with dot_nt, MatMul(x, Transpose(x)) is one dot_nt node",
        "ok: the reshapes around the triton nodes keep every output",
        "ok: the rewritten model opens with the dot and softmax libraries",
        "ok: inferred dims carry the graph's names",
    ] {
        assert!(stdout.contains(line), "missing `{line}` in:\n{stdout}");
    }
}
