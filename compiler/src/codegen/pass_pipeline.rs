//! The LLVM pass pipeline run on every kernel: LLVM 19's `default<O3>`,
//! written out, without the passes that change nothing the GPU sees in
//! what our lowering emits (issue 17, item 3). Removed, each measured on
//! 857 PTX files (the tensor-core configs of scripts/gpu/mma_build.sh, every
//! `// tritonc:` line of tests/kernels and every variant of every bundled
//! op for sm_90a) to leave spills and occupancy by registers unchanged:
//!
//! - `dse`, `ipsccp` and five of O3's eight `instcombine` runs (the 2nd, 4th
//!   to 7th): our IR stores once per value and has one function; the kept
//!   runs (after `mem2reg`, after the first loop passes, after unrolling)
//!   fold the index math.
//! - `slp-vectorizer`: the tiles are already vector-shaped where it matters
//!   (the NVPTX load/store vectorizer still merges accesses).
//! - `vector-combine` (both runs): it split the vector loads our lowering
//!   emits (the epilogue's shared-memory reads) into scalars, which the NVPTX
//!   load/store vectorizer then merged back: the same PTX (853 of 857 files
//!   byte-identical, the other 4 one instruction shorter), ~10 ms less work.
//!
//! Kept although expensive: `gvn` (without it 86 files lose occupancy or
//! spill), `reassociate`/`sccp`/`bdce` (27 lose occupancy without them). See
//! bench/results/2026-11-26-compile/README.md: the H100's matmul pick
//! compiles in ~100 ms instead of 131 ms, with GPU time unchanged.
//! `TRITONC_LLVM_PASSES` replaces the pipeline (new pass manager syntax), for
//! measuring.

use std::sync::LazyLock;

/// The pipeline's passes in order (joined with commas, nesting included).
const PASSES: &[&str] = &[
    "annotation2metadata",
    "forceattrs",
    "function(nvvm-reflect",
    "nvvm-intr-range)",
    "inferattrs",
    "coro-early",
    "function<eager-inv>(ee-instrument<>",
    "lower-expect",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "sroa<modify-cfg>",
    "early-cse<>",
    "callsite-splitting)",
    "openmp-opt",
    "called-value-propagation",
    "globalopt",
    "function<eager-inv>(mem2reg",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>)",
    "always-inline",
    "require<globals-aa>",
    "function(invalidate<aa>)",
    "require<profile-summary>",
    "cgscc(devirt<4>(inline",
    "function-attrs<skip-non-recursive-function-attrs>",
    "argpromotion",
    "openmp-opt-cgscc",
    "function<eager-inv;no-rerun>(sroa<modify-cfg>",
    "early-cse<memssa>",
    "speculative-execution<only-if-divergent-target>",
    "jump-threading",
    "correlated-propagation",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "aggressive-instcombine",
    "libcalls-shrinkwrap",
    "tailcallelim",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "reassociate",
    "constraint-elimination",
    "loop-mssa(loop-instsimplify",
    "loop-simplifycfg",
    "licm<no-allowspeculation>",
    "loop-rotate<header-duplication;no-prepare-for-lto>",
    "licm<allowspeculation>",
    "simple-loop-unswitch<nontrivial;trivial>)",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "loop(loop-idiom",
    "indvars",
    "simple-loop-unswitch<nontrivial;trivial>",
    "loop-deletion",
    "loop-unroll-full)",
    "sroa<modify-cfg>",
    "mldst-motion<no-split-footer-bb>",
    "gvn<>",
    "sccp",
    "bdce",
    "jump-threading",
    "correlated-propagation",
    "adce",
    "memcpyopt",
    "move-auto-init",
    "loop-mssa(licm<allowspeculation>)",
    "coro-elide",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>)",
    "function-attrs",
    "function(require<should-not-run-function-passes>)",
    "coro-split))",
    "deadargelim",
    "coro-cleanup",
    "globalopt",
    "globaldce",
    "elim-avail-extern",
    "rpo-function-attrs",
    "recompute-globalsaa",
    "function<eager-inv>(float2int",
    "lower-constant-intrinsics",
    "chr",
    "loop(loop-rotate<header-duplication;no-prepare-for-lto>",
    "loop-deletion)",
    "loop-distribute",
    "inject-tli-mappings",
    "loop-vectorize<no-interleave-forced-only;no-vectorize-forced-only;>",
    "infer-alignment",
    "loop-load-elim",
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>",
    "loop-unroll<O3>",
    "transform-warning",
    "sroa<preserve-cfg>",
    "infer-alignment",
    "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>",
    "loop-mssa(licm<allowspeculation>)",
    "alignment-from-assumptions",
    "loop-sink",
    "instsimplify",
    "div-rem-pairs",
    "tailcallelim",
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;speculate-unpredictables>)",
    "globaldce",
    "constmerge",
    "cg-profile",
    "rel-lookup-table-converter",
    "function(annotation-remarks)",
];

/// The pipeline in the new pass manager's syntax.
pub static PASS_PIPELINE: LazyLock<String> = LazyLock::new(|| PASSES.join(","));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipeline_is_o3_without_the_removed_passes() {
        let p = PASS_PIPELINE.as_str();
        assert_eq!(p.matches('(').count(), p.matches(')').count());
        for kept in [
            "gvn<>",
            "reassociate",
            "loop-unroll<O3>",
            "licm<allowspeculation>",
        ] {
            assert!(p.contains(kept), "{kept}");
        }
        for removed in [",dse,", "ipsccp", "slp-vectorizer", "vector-combine"] {
            assert!(!p.contains(removed), "{removed}");
        }
        assert_eq!(p.matches("instcombine<").count(), 3);
    }
}
