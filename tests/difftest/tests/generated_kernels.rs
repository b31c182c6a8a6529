//! Every generated kernel is well-typed by construction, so the compiler
//! must take it to PTX (or say it is over the target's limits) and the
//! interpreter must run it; a refusal is a bug in one of them or in the
//! generator. The GPU half of the differential test is
//! scripts/gpu/difftest_check.py (results under bench/results/).

use tritonc_difftest::case::{build, Outcome};
use tritonc_difftest::kernel::{generate, Param};
use tritonc_difftest::rng::input_values;

#[test]
fn generated_kernels_compile_and_interpret() {
    let mut cases = 0;
    let mut findings = Vec::new();
    for seed in 1..=300 {
        match build(seed, generate(seed)) {
            Outcome::Case(case) => {
                assert!(case.ptx.contains(".visible .entry k("), "seed {seed}");
                assert!(!case.expected.is_empty(), "seed {seed}: no outputs");
                cases += 1;
            }
            Outcome::OverLimit => {}
            Outcome::Failed {
                stage,
                message,
                kernel,
            } => findings.push(format!(
                "seed {seed} ({stage}):\n{message}\n{}",
                kernel.source
            )),
        }
    }
    assert!(findings.is_empty(), "{}", findings.join("\n"));
    assert!(cases > 250, "only {cases} of 300 seeds gave a case");
}

#[test]
fn kernels_cover_every_template_and_arch() {
    let kernels: Vec<_> = (1..=300).map(generate).collect();
    for template in ["elementwise", "rows", "columns", "dot"] {
        assert!(kernels.iter().any(|k| k.template == template), "{template}");
    }
    for arch in ["sm_80", "sm_90", "sm_90a"] {
        assert!(kernels.iter().any(|k| k.arch == arch), "{arch}");
    }
    for feature in [
        "for (", "if (", "@", "?", "[:, +]", "newaxis", "exp(", "half", "bf16",
    ] {
        assert!(
            kernels.iter().any(|k| k.source.contains(feature)),
            "{feature}"
        );
    }
}

#[test]
fn a_seed_always_gives_the_same_kernel() {
    for seed in [1, 77, 4096] {
        assert_eq!(generate(seed).source, generate(seed).source);
    }
    assert_ne!(generate(1).source, generate(2).source);
}

/// The expected outputs are the interpreter's results on the promised
/// inputs: a kernel that stores its f32 input as is gives back the input
/// values (the GPU check regenerates them the same way).
#[test]
fn expected_outputs_are_the_inputs_run_through_the_kernel() {
    let (seed, kernel) = (1..20_000)
        .map(|s| (s, generate(s)))
        .find(|(_, k)| {
            k.template == "elementwise"
                && k.source.contains("float* X0")
                && k.source.contains("float* Y")
                && k.source.contains("] = x0;\n  *?(m)(Y + off) = r;")
        })
        .expect("some kernel stores its f32 input x0 as is");
    let (len, input_seed) = match &kernel.params[0] {
        Param::Buffer { len, seed, .. } => (*len, seed.unwrap()),
        other => panic!("{other:?}"),
    };
    let Outcome::Case(case) = build(seed, kernel) else {
        panic!("seed {seed} is not a case")
    };
    let (name, bytes) = &case.expected[0];
    assert_eq!(name, "Y");
    let got: Vec<f32> = bytes
        .chunks(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let want: Vec<f32> = input_values(input_seed, len, true)
        .iter()
        .map(|&v| v as f32)
        .collect();
    assert_eq!(got, want, "seed {seed}");
}
