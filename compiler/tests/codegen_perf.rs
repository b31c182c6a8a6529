//! PTX-level performance facts of the benchmark kernels (transpose, softmax)
//! as launched with the usual divisibility promises (`-DDIV=__multipleof(16)`):
//! vector global accesses on both sides of a transpose, vector shared-memory
//! stores, and no register spills (`ptxas -v`).
mod common;

const DIV: &str = "-DDIV=__multipleof(16)";

/// PTX of `tests/kernels/<file>` compiled by the `tritonc` binary.
fn ptx(file: &str, args: &[&str]) -> String {
    let path = format!("tests/kernels/{file}");
    let all = [&[path.as_str()], args, &["--arch", "sm_90"]].concat();
    common::tritonc_ptx(&all, &format!("{file} {args:?}"))
}

fn count(ptx: &str, needle: &str) -> usize {
    ptx.matches(needle).count()
}

fn assert_no_spills(ptx: &str, name: &str, max_regs: usize) {
    if let Some(usage) = common::ptxas_usage(ptx, name) {
        assert_eq!(usage.spill_bytes, 0, "{name} spills");
        let regs = usage.registers;
        assert!(regs <= max_regs, "{name} uses {regs} registers");
    }
}

#[test]
fn transpose_f16_is_vectorized_on_both_sides() {
    for (file, warps) in [("transpose_masked.tc", "4"), ("transpose_masked.tc", "8")] {
        let p = ptx(
            file,
            &[
                "-DTYPE=half",
                "-DTM=64",
                "-DTN=64",
                DIV,
                "--num-warps",
                warps,
            ],
        );
        let vectors = 64 * 64 / (32 * warps.parse::<usize>().unwrap()) / 8;
        // 64x64 halves, 8 per 16-byte vector.
        assert_eq!(count(&p, "ld.global.v4"), vectors, "{file}:\n{p}");
        assert_eq!(count(&p, "st.global.v4"), vectors, "{file}:\n{p}");
        assert!(!p.contains("ld.global.b16") && !p.contains("st.global.b16"));
        // Each thread writes its 8 contiguous source elements as one vector.
        assert!(count(&p, "st.shared.v4") >= vectors, "{file}:\n{p}");
        assert!(!p.contains("st.shared.b16") && !p.contains("st.shared.u16"));
        assert_no_spills(&p, "transpose_f16", 64);
    }
}

#[test]
fn transpose_f32_masked_is_vectorized() {
    let p = ptx(
        "transpose_masked.tc",
        &["-DTYPE=float", "-DTM=32", "-DTN=64", DIV],
    );
    assert!(p.contains("ld.global.v4.b32"), "{p}");
    assert!(p.contains("st.global.v4.b32"), "{p}");
    assert!(p.contains("st.shared.v4"), "{p}");
    assert_no_spills(&p, "transpose_f32", 64);
}

#[test]
fn transpose_without_promises_stays_scalar_and_correct_width() {
    // Without DIV the strides are unknown: element accesses, still no spills.
    let p = ptx(
        "transpose_masked.tc",
        &["-DTYPE=half", "-DTM=64", "-DTN=64"],
    );
    assert!(!p.contains("ld.global.v"), "{p}");
    assert_no_spills(&p, "transpose_plain", 128);
}

#[test]
fn softmax_16k_row_vectorized_exp2_and_shuffles() {
    for warps in ["8", "16"] {
        let p = ptx(
            "softmax.tc",
            &["-DTYPE=float", "-DTN=16384", DIV, "--num-warps", warps],
        );
        let per_thread = 16384 / (32 * warps.parse::<usize>().unwrap());
        assert_eq!(count(&p, "ld.global.v4.b32"), per_thread / 4, "{p}");
        assert_eq!(count(&p, "st.global.v4.b32"), per_thread / 4, "{p}");
        assert!(p.contains("ex2.approx"), "{p}");
        assert!(p.contains("shfl.sync.bfly"), "{p}");
        // One cross-warp step per reduction: two reductions, four barriers.
        assert!(count(&p, "bar.sync") <= 4, "{p}");
        assert_no_spills(&p, &format!("softmax_w{warps}"), 128);
    }
}
