//! The runtime through its public API, on a machine with or without a GPU.

use opgen_runtime::{
    check_args, Autotuner, BenchSettings, CacheLoad, Device, KernelArg, KernelTimer, Manifest,
    Result, RuntimeError, TuneCache, TuneKey,
};
use std::path::Path;

fn fixture() -> Manifest {
    Manifest::load(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/add")).unwrap()
}

/// CI has no GPU: opening a device is an error value saying so, never a
/// panic, and it stays an error on every later call.
#[test]
fn no_gpu_is_reported_as_no_cuda_device() {
    match Device::open(0) {
        Ok(device) => eprintln!("a GPU is present ({}): nothing to check", device.name()),
        Err(e) => {
            assert!(matches!(e, RuntimeError::NoDevice(_)), "{e:?}");
            assert!(e.to_string().starts_with("no CUDA device: "), "{e}");
            assert!(matches!(Device::count(), Err(RuntimeError::NoDevice(_))));
            assert!(matches!(Device::open(1), Err(RuntimeError::NoDevice(_))));
        }
    }
}

#[test]
fn fixture_variants_exist_and_accept_add_arguments() {
    let manifest = fixture();
    let args = [
        KernelArg::I32(1 << 20),
        KernelArg::Ptr(0x7000_0000),
        KernelArg::Ptr(0x7040_0000),
        KernelArg::Ptr(0x7080_0000),
    ];
    let ids: Vec<String> = manifest
        .variants_of("add")
        .map(|v| v.config_id(&manifest.tuning_macros))
        .collect();
    assert_eq!(
        ids,
        [128, 256, 512, 1024].map(|s| format!("SIZE={s},num_warps=4"))
    );
    for variant in manifest.variants_of("add") {
        assert!(manifest.file_path(variant).is_file(), "{}", variant.file);
        check_args(variant, &args).unwrap();
    }
}

/// Pretends SIZE=512 is fastest for large inputs and SIZE=128 for small.
struct SizeModel {
    n: u64,
    current: std::rc::Rc<std::cell::Cell<usize>>,
}

impl KernelTimer for SizeModel {
    fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        run()?;
        let best = if self.n >= 1 << 20 { 2 } else { 0 };
        Ok(1.0 + (self.current.get() as f64 - best as f64).abs())
    }
}

#[test]
fn autotune_persists_per_size_choices_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("autotune.json");
    let manifest = fixture();
    let configs: Vec<String> = manifest
        .variants_of("add")
        .map(|v| v.config_id(&manifest.tuning_macros))
        .collect();
    let settings = BenchSettings { warmup: 1, runs: 5 };
    let run = |tuner: &mut Autotuner, n: u64| {
        let current = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = SizeModel {
            n,
            current: current.clone(),
        };
        let key = TuneKey::new("add", &[&[n]], &["f32"], "Test GPU", &configs);
        tuner
            .tune(&key, &configs, &mut timer, &mut |i| {
                current.set(i);
                Ok(())
            })
            .unwrap()
    };
    let mut first = Autotuner::new(TuneCache::open(&path)).with_settings(settings);
    assert_eq!(run(&mut first, 1 << 16).config, "SIZE=128,num_warps=4");
    assert_eq!(run(&mut first, 1 << 26).config, "SIZE=512,num_warps=4");
    assert_eq!(first.benchmark_calls(), 8);

    let mut second = Autotuner::new(TuneCache::open(&path)).with_settings(settings);
    assert_eq!(
        second.cache().load_status(),
        &CacheLoad::Loaded { entries: 2 }
    );
    assert_eq!(run(&mut second, 1 << 16).config, "SIZE=128,num_warps=4");
    assert_eq!(run(&mut second, 1 << 26).config, "SIZE=512,num_warps=4");
    assert_eq!(second.benchmark_calls(), 0);

    std::fs::write(&path, "{\"format_version\": 3, \"entries\": ").unwrap();
    let mut third = Autotuner::new(TuneCache::open(&path)).with_settings(settings);
    assert!(matches!(third.cache().load_status(), CacheLoad::Corrupt(_)));
    assert_eq!(run(&mut third, 1 << 26).config, "SIZE=512,num_warps=4");
    assert_eq!(third.benchmark_calls(), 4);
    assert_eq!(
        TuneCache::open(&path).load_status(),
        &CacheLoad::Loaded { entries: 1 }
    );
}
