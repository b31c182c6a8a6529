//! PTX-level facts of seed 004's matmul (`matmul_grouped.tc`) as the GPU
//! benchmark builds it (`-DDIV=__multipleof(16)`, fp16): the masked loads
//! are still pipelined through `cp.async`, the fused leaky ReLU costs no extra
//! trip of the accumulator through shared memory, and the configs the tuner
//! picks do not spill (`ptxas -v`, where ptxas is installed).
mod common;

const DIV: &str = "-DDIV=__multipleof(16)";

/// PTX of `tests/kernels/matmul_grouped.tc` for fp16 with these tiles.
fn grouped_ptx(tiles: (usize, usize, usize), warps: usize, leaky: bool) -> String {
    let (tm, tn, tk) = tiles;
    common::tritonc_ptx(
        &[
            "tests/kernels/matmul_grouped.tc".to_string(),
            "-DTYPE=half".to_string(),
            format!("-DTM={tm}"),
            format!("-DTN={tn}"),
            format!("-DTK={tk}"),
            "-DGROUP_M=8".to_string(),
            format!("-DLEAKY_RELU={}", u8::from(leaky)),
            DIV.to_string(),
            "--num-warps".to_string(),
            warps.to_string(),
            "--arch".to_string(),
            "sm_90".to_string(),
        ],
        &format!("matmul_grouped.tc {tiles:?}"),
    )
}

fn count(ptx: &str, needle: &str) -> usize {
    ptx.matches(needle).count()
}

#[test]
fn masked_loads_are_pipelined_and_vectorized() {
    let ptx = grouped_ptx((128, 128, 32), 4, false);
    assert!(count(&ptx, "cp.async.cg.shared.global") > 0, "no cp.async");
    assert!(count(&ptx, "cp.async.wait_group") > 0);
    assert!(count(&ptx, "mma.sync.aligned.m16n8k16") > 0);
    // The masked epilogue stores 16 bytes at a time.
    assert!(count(&ptx, "st.global.v4.b32") > 0, "no vector stores");
}

#[test]
fn leaky_relu_converts_the_accumulator_once() {
    // `c >= 0 ? c : alpha * c` reads `c` three times; each read in the store
    // layout must reuse one conversion out of the accumulator layout.
    for (tiles, warps) in [((128, 128, 32), 4), ((128, 256, 32), 8)] {
        let plain = grouped_ptx(tiles, warps, false);
        let leaky = grouped_ptx(tiles, warps, true);
        for op in ["st.shared", "ld.shared", "bar.sync"] {
            assert_eq!(
                count(&leaky, op),
                count(&plain, op),
                "{tiles:?} w{warps}: {op} with and without the leaky ReLU"
            );
        }
        assert!(count(&leaky, "selp.f32") + count(&leaky, "max.f32") > 0);
    }
}

#[test]
fn picked_configs_do_not_spill() {
    for (tiles, warps) in [
        ((128, 128, 32), 4),
        ((128, 128, 64), 8),
        ((128, 256, 32), 8),
        ((64, 128, 64), 4),
    ] {
        for leaky in [false, true] {
            let ptx = grouped_ptx(tiles, warps, leaky);
            let name = format!(
                "grouped_{}x{}x{}_w{warps}_{leaky}",
                tiles.0, tiles.1, tiles.2
            );
            match common::ptxas_usage(&ptx, &name) {
                Some(usage) => assert_eq!(usage.spill_bytes, 0, "{name} spills"),
                None => eprintln!("NOTE: ptxas not found; {name} not checked for spills"),
            }
        }
    }
}
