//! The autotune key of the dot op (tests/ops/dot.tc) over its real
//! candidates: the spec's `require` lines admit `ALIGN = 8` only where N, K
//! and the strides are multiples of 8, and a choice tuned at 1001^3 (masked
//! variants only) must not be reused at 1024^3 (same power-of-two bucket,
//! aligned variants admitted). (The 1000^3 and 3000^3 now admit the
//! aligned variants themselves.) Tuned through opgen-runtime's `Chooser`, the code the
//! generated op's bridge runs per call, with a mock timer instead of a GPU.

mod dot_support;

use dot_support::{candidates, macro_value, op_path};
use opgen_runtime::autotune::{BenchSettings, Chooser, KernelTimer, ModelTimer, TuneCache};
use opgen_runtime::{Autotuner, Result};
use std::sync::OnceLock;
use triton_opgen::read_spec;
use triton_opgen::spec::OpSpec;
use triton_opgen::variants::compile;
use tritonc::codegen::Arch;

/// The float16 variants of the op as `triton-opgen --arch sm_90a` compiles
/// them (a num_stages value that changes nothing gives no variant): config
/// ids and tuning points, compiled once.
fn compiled_variants() -> &'static [(String, Vec<(String, String)>)] {
    static VARIANTS: OnceLock<Vec<(String, Vec<(String, String)>)>> = OnceLock::new();
    VARIANTS.get_or_init(|| {
        float16_group()
            .variants
            .iter()
            .map(|v| (v.config.clone(), v.tuned.clone()))
            .collect()
    })
}

/// The float16 group of the op's variants for sm_90a, compiled once.
fn float16_group() -> &'static triton_opgen::variants::Group {
    static GROUP: OnceLock<triton_opgen::variants::Group> = OnceLock::new();
    GROUP.get_or_init(|| {
        let (spec, source) = read_spec(&op_path("dot")).unwrap();
        let groups = compile(&spec, &source, Arch::Sm90a, &[], |_| {}, &mut Vec::new()).unwrap();
        let group = groups
            .into_iter()
            .find(|g| g.dtypes == [("T".to_string(), "float16".to_string())])
            .unwrap();
        group
    })
}

/// `tma [0, 1, 2]`: a TMA variant exists only where its kernel copies by TMA
/// (aligned, wgmma) and takes its tensor maps; the cp.async twin stays.
#[test]
fn tma_variants_are_the_aligned_ones_that_take_tensor_maps() {
    let group = float16_group();
    let with_tma = |value: u32| -> Vec<_> {
        group
            .variants
            .iter()
            .filter(|v| macro_value(&v.tuned, "TMA") == value)
            .collect()
    };
    let tma = with_tma(1);
    assert!(!tma.is_empty());
    for v in &tma {
        assert_eq!(macro_value(&v.tuned, "ALIGN"), 8, "{}", v.config);
        assert!(!v.tensor_maps.is_empty(), "{} has no tensor map", v.config);
        assert!(v.ptx.contains("cp.async.bulk.tensor"), "{}", v.config);
        let twin = v.config.replace("TMA=1", "TMA=0");
        let plain = group.variants.iter().find(|p| p.config == twin);
        // 192x192 tiles take TMA only (their accumulator leaves the
        // cp.async copies no registers): no twin.
        if macro_value(&v.tuned, "TM") == 192 {
            assert!(plain.is_none(), "{twin}");
            continue;
        }
        let plain = plain.unwrap_or_else(|| panic!("no {twin}"));
        assert!(plain.tensor_maps.is_empty() && !plain.ptx.contains("cp.async.bulk.tensor"));
    }
    // TMA=2: tiles of 128 columns or more, unsplit, run in clusters of two
    // that share b, each beside its TMA=1 twin.
    let pairs = with_tma(2);
    assert!(pairs.iter().any(|v| macro_value(&v.tuned, "TM") == 64));
    for v in &pairs {
        assert_eq!(v.cluster_x, 2, "{}", v.config);
        assert!(macro_value(&v.tuned, "TN") >= 128, "{}", v.config);
        assert_eq!(macro_value(&v.tuned, "SPLIT_K"), 1, "{}", v.config);
        assert!(v.ptx.contains(".multicast::cluster"), "{}", v.config);
        let twin = v.config.replace("TMA=2", "TMA=1");
        assert!(group
            .variants
            .iter()
            .any(|p| p.config == twin && p.cluster_x == 1));
    }
    // TMA=3: tiles of 128 columns or more, unsplit, a producer warpgroup
    // and a persistent grid; TMA=4 the same in clusters of two sharing b.
    // Two consumer warpgroups (128 rows) take the producer's registers,
    // one (64 rows, 4 warps) keeps its own.
    for (value, cluster) in [(3, 1), (4, 2)] {
        let producers = with_tma(value);
        for rows in [64, 128] {
            assert!(producers
                .iter()
                .any(|v| macro_value(&v.tuned, "TM") == rows));
        }
        for v in &producers {
            assert_eq!((v.producer_warps, v.persistent), (4, true), "{}", v.config);
            assert_eq!(v.cluster_x, cluster, "{}", v.config);
            assert!(macro_value(&v.tuned, "TN") >= 128, "{}", v.config);
            assert_eq!(macro_value(&v.tuned, "SPLIT_K"), 1, "{}", v.config);
            let two_groups = macro_value(&v.tuned, "TM") == 128;
            assert_eq!(v.ptx.contains("setmaxnreg.inc"), two_groups, "{}", v.config);
            assert_eq!(
                v.ptx.contains(".multicast::cluster"),
                value == 4,
                "{}",
                v.config
            );
        }
    }
    // Unaligned configs never copy by TMA: no TMA=1 twin of theirs.
    assert!(group
        .variants
        .iter()
        .filter(|v| macro_value(&v.tuned, "ALIGN") == 1)
        .all(|v| macro_value(&v.tuned, "TMA") == 0));
}

/// The candidates' config ids as the generated op names them, in variant
/// order, with each one's ALIGN.
fn candidate_configs(spec: &OpSpec, (m, n, k): (usize, usize, usize)) -> Vec<(String, u32)> {
    let points = candidates(spec, (m, n, k), (k, n));
    compiled_variants()
        .iter()
        // A point holds the fixed macros too; the variant's tuned ones must be in it.
        .filter(|(_, tuned)| points.iter().any(|p| tuned.iter().all(|m| p.contains(m))))
        .map(|(config, tuned)| (config.clone(), macro_value(tuned, "ALIGN")))
        .collect()
}

/// One float16 call of the op: its candidates, the key, the chooser; aligned
/// variants run pipelined, twice as fast in the model. Returns the picked
/// config's ALIGN.
fn call(chooser: &Chooser, spec: &OpSpec, (m, n, k): (usize, usize, usize)) -> u32 {
    let (configs, aligns): (Vec<String>, Vec<u32>) =
        candidate_configs(spec, (m, n, k)).into_iter().unzip();
    let key = chooser.key(
        &[m as i64, k as i64, n as i64],
        "T=float16",
        "Mock H100",
        &configs,
    );
    let modelled = aligns.clone();
    let timer = ModelTimer::new(move |pos| if modelled[pos] > 1 { 1.0 } else { 2.0 });
    let factory = timer.clone();
    let mut make_timer = move || -> Result<Box<dyn KernelTimer>> { Ok(Box::new(factory.clone())) };
    let pos = chooser
        .choose(&key, &configs, &mut make_timer, &mut |pos| {
            timer.launched(pos);
            Ok(())
        })
        .unwrap();
    aligns[pos]
}

#[test]
fn dot_tunes_1001_cubed_then_1024_cubed_and_picks_an_aligned_variant_for_the_second() {
    let (spec, _) = read_spec(&op_path("dot")).unwrap();
    let tuner =
        Autotuner::new(TuneCache::in_memory()).with_settings(BenchSettings { warmup: 0, runs: 1 });
    let chooser = Chooser::with_tuner(&spec.qualified_name(), tuner);
    let masked = candidate_configs(&spec, (1001, 1001, 1001)).len() as u64;
    let all = candidate_configs(&spec, (1024, 1024, 1024)).len() as u64;
    let (masked_3k, all_3k) = (
        candidate_configs(&spec, (2999, 2999, 2999)).len() as u64,
        candidate_configs(&spec, (3008, 3008, 3008)).len() as u64,
    );
    // Every masked variant qualifies for 1024^3 too, and the aligned ones.
    assert!(masked > 0 && all > masked, "{masked} of {all}");

    assert_eq!(call(&chooser, &spec, (1001, 1001, 1001)), 1);
    assert_eq!(chooser.benchmark_calls(), masked);
    assert_eq!(call(&chooser, &spec, (1024, 1024, 1024)), 8);
    assert_eq!(chooser.benchmark_calls(), masked + all);
    // 2999^3 then 3008^3 (the second case, one off 8), and repeats: cached.
    assert_eq!(call(&chooser, &spec, (2999, 2999, 2999)), 1);
    assert_eq!(call(&chooser, &spec, (3008, 3008, 3008)), 8);
    assert_eq!(call(&chooser, &spec, (1001, 1001, 1001)), 1);
    assert_eq!(call(&chooser, &spec, (1024, 1024, 1024)), 8);
    assert_eq!(chooser.benchmark_calls(), masked + all + masked_3k + all_3k);
}

#[test]
fn dot_keys_name_the_bucket_the_alignment_and_the_candidates() {
    let (spec, _) = read_spec(&op_path("dot")).unwrap();
    let chooser = Chooser::new(&spec.qualified_name());
    let key = |shape: (usize, usize, usize)| {
        let configs: Vec<String> = candidate_configs(&spec, shape)
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let (m, n, k) = shape;
        chooser
            .key(
                &[m as i64, k as i64, n as i64],
                "T=float16",
                "H100",
                &configs,
            )
            .to_string()
    };
    let (masked, aligned) = (key((1001, 1001, 1001)), key((1024, 1024, 1024)));
    assert!(
        masked.starts_with("triton::dot|[1024~x1024~x1024~]|T=float16|H100|cands="),
        "{masked}"
    );
    assert!(
        aligned.starts_with("triton::dot|[1024x1024x1024]|T=float16|H100|cands="),
        "{aligned}"
    );
    // 1000³ has 1001³'s bucket and marks but admits the ALIGN=8 variants.
    let thousand = key((1000, 1000, 1000));
    assert!(
        thousand.starts_with("triton::dot|[1024~x1024~x1024~]"),
        "{thousand}"
    );
    assert_ne!(thousand, masked);
    // 3000³ and 3008³: one bucket, the same candidates, told apart by
    // 3008's 128-byte rows (the H100 runs them best on 128x256 and 128x192).
    let (odd, even) = (key((3000, 3000, 3000)), key((3008, 3008, 3008)));
    assert!(odd.starts_with("triton::dot|[3072~x3072~x3072~]"), "{odd}");
    assert!(even.starts_with("triton::dot|[3072x3072x3072]"), "{even}");
    assert_eq!(odd.split("cands=").nth(1), even.split("cands=").nth(1));
    // A quarter octave apart: 3008³ does not reuse 4096³'s pick.
    assert_ne!(
        key((4096, 4096, 4096)).split('|').nth(1),
        even.split('|').nth(1)
    );
}

#[test]
fn dot_key_text_is_the_one_the_readme_and_runtime_docs_show() {
    let (spec, _) = read_spec(&op_path("dot")).unwrap();
    let chooser = Chooser::new(&spec.qualified_name());
    let key = |n: usize| {
        let configs: Vec<String> = candidate_configs(&spec, (n, n, n))
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let dims = [n as i64; 3];
        chooser
            .key(&dims, "T=float16", "NVIDIA H100 80GB HBM3", &configs)
            .to_string()
    };
    let aligned = "triton::dot|[1024x1024x1024]|T=float16|NVIDIA H100 80GB HBM3|cands=120:4e483e67";
    assert_eq!(key(1024), aligned);
    assert!(key(1001).ends_with("|cands=17:1c4f465b"), "{}", key(1001));
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    for doc in ["README.md", "plugins/runtime/src/autotune/key.rs"] {
        let text = std::fs::read_to_string(format!("{root}/{doc}")).unwrap();
        assert!(text.contains(aligned), "{doc} does not show `{aligned}`");
    }
}
