//! One op's choice per call: the key over the call's candidate configs, the
//! choices already made in this process (or preloaded from a pre-tuned
//! table), else the autotuner (its cache file, else benchmarks). What the
//! generated ops' bridge runs on every launch with several candidates.

use super::cache::TuneCache;
use super::key::TuneKey;
use super::table::read_tuned_table;
use super::tuner::{Autotuner, KernelTimer};
use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Makes the timer when benchmarking is needed (creating CUDA events is
/// skipped for calls already decided).
pub type TimerFactory<'a> = dyn FnMut() -> Result<Box<dyn KernelTimer + 'a>> + 'a;

pub struct Chooser {
    op: String,
    /// Key text -> chosen config, so a repeated call skips the tuner.
    choices: Mutex<HashMap<String, String>>,
    /// Opened on first need (the default cache file) unless given.
    tuner: Mutex<Option<Autotuner>>,
}

impl Chooser {
    pub fn new(op: &str) -> Chooser {
        Chooser {
            op: op.to_string(),
            choices: Mutex::new(HashMap::new()),
            tuner: Mutex::new(None),
        }
    }

    /// A chooser tuning with `tuner` (its cache, its settings).
    pub fn with_tuner(op: &str, tuner: Autotuner) -> Chooser {
        let chooser = Chooser::new(op);
        *lock(&chooser.tuner) = Some(tuner);
        chooser
    }

    /// The key of a call: its dims (negative ones read as 0), dtype group,
    /// device and candidate configs.
    pub fn key(&self, dims: &[i64], dtype_key: &str, device: &str, configs: &[String]) -> TuneKey {
        let dims: Vec<u64> = dims.iter().map(|&d| d.max(0) as u64).collect();
        TuneKey::new(&self.op, &[&dims], &[dtype_key], device, configs)
    }

    /// Takes this op's entries of a pre-tuned table (see
    /// [`read_tuned_table`]); returns how many. Unusable tables give 0.
    pub fn preload(&self, json: &str) -> usize {
        let Ok(table) = read_tuned_table(json) else {
            return 0;
        };
        let prefix = format!("{}|", self.op);
        let mut choices = lock(&self.choices);
        let mut taken = 0;
        for (key, config) in table.choices {
            if key.starts_with(&prefix) {
                choices.insert(key, config);
                taken += 1;
            }
        }
        taken
    }

    /// The position in `configs` (built into `key`) to run: decided before
    /// for this key, else tuned through `launch(position)`.
    pub fn choose<'a>(
        &self,
        key: &TuneKey,
        configs: &[String],
        make_timer: &mut TimerFactory<'a>,
        launch: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<usize> {
        let key_text = key.to_string();
        if let Some(config) = lock(&self.choices).get(&key_text) {
            if let Some(pos) = configs.iter().position(|c| c == config) {
                return Ok(pos);
            }
        }
        let mut tuner = lock(&self.tuner);
        let tuner = tuner.get_or_insert_with(|| Autotuner::new(TuneCache::open_default()));
        let mut timer = make_timer()?;
        let choice = tuner.tune(key, configs, timer.as_mut(), launch)?;
        lock(&self.choices).insert(key_text, choice.config);
        Ok(choice.index)
    }

    /// Configs benchmarked by this chooser's tuner.
    pub fn benchmark_calls(&self) -> u64 {
        lock(&self.tuner)
            .as_ref()
            .map_or(0, Autotuner::benchmark_calls)
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autotune::{BenchSettings, ModelTimer};

    /// The dot op's tuning space (tests/ops/dot.tc): TM x TN x ALIGN, with
    /// `require` lines admitting ALIGN = 16 only when M, N, K (and the
    /// leading strides, here dense) are multiples of 16.
    fn dot_configs() -> Vec<String> {
        let mut all = Vec::new();
        for tm in [64, 128] {
            for tn in [64, 128, 256] {
                for align in [1, 16] {
                    all.push(format!("TM={tm} TN={tn} ALIGN={align} num_warps=8"));
                }
            }
        }
        all
    }

    fn dot_candidates(m: i64, n: i64, k: i64) -> Vec<String> {
        dot_configs()
            .into_iter()
            .filter(|c| {
                let align = if c.contains("ALIGN=16") { 16 } else { 1 };
                [m, n, k].iter().all(|d| d % align == 0)
            })
            .collect()
    }

    /// Aligned configs run twice as fast; wider tiles a little faster.
    fn model_ms(config: &str) -> f64 {
        let align = if config.contains("ALIGN=16") {
            1.0
        } else {
            2.0
        };
        let wide = if config.contains("TN=256") { 0.9 } else { 1.0 };
        align * wide
    }

    /// One call of the dot op, as the bridge makes it: its candidates, the
    /// key over them, the chooser. Returns the config picked.
    fn call_dot(chooser: &Chooser, shape: (i64, i64, i64)) -> String {
        call_dot_on(chooser, "Fake H100", shape)
    }

    /// `call_dot` on a device of this model name (the bridge passes the
    /// name of the call's device, never its ordinal).
    fn call_dot_on(chooser: &Chooser, device: &str, shape: (i64, i64, i64)) -> String {
        call_dot_built(chooser, device, shape, None, model_ms)
    }

    /// `call_dot_on` where the bridge knows the code: `build` stands for
    /// the digests of the variants' images, `model` for how fast it runs.
    fn call_dot_built(
        chooser: &Chooser,
        device: &str,
        (m, n, k): (i64, i64, i64),
        build: Option<&str>,
        model: fn(&str) -> f64,
    ) -> String {
        let configs = dot_candidates(m, n, k);
        let mut key = chooser.key(&[m, k, n], "T=float16", device, &configs);
        if let Some(build) = build {
            let images: Vec<String> = configs.iter().map(|c| format!("{build}:{c}")).collect();
            key = key.with_code(&images);
        }
        let modelled = configs.clone();
        let timer = ModelTimer::new(move |pos| model(&modelled[pos]));
        let factory = timer.clone();
        let mut make_timer =
            move || -> Result<Box<dyn KernelTimer>> { Ok(Box::new(factory.clone())) };
        let pos = chooser
            .choose(&key, &configs, &mut make_timer, &mut |pos| {
                timer.launched(pos);
                Ok(())
            })
            .unwrap();
        configs[pos].clone()
    }

    fn fast_tuner(cache: TuneCache) -> Autotuner {
        Autotuner::new(cache).with_settings(BenchSettings { warmup: 0, runs: 1 })
    }

    #[test]
    fn aligned_call_after_unaligned_one_in_the_same_bucket_gets_an_aligned_variant() {
        let chooser = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::in_memory()));
        let first = call_dot(&chooser, (1000, 1000, 1000));
        assert_eq!(first, "TM=64 TN=256 ALIGN=1 num_warps=8");
        assert_eq!(chooser.benchmark_calls(), 6);
        // 1024 shares 1000's bucket (not its alignment mark) and admits
        // ALIGN=16 too.
        let second = call_dot(&chooser, (1024, 1024, 1024));
        assert_eq!(second, "TM=64 TN=256 ALIGN=16 num_warps=8");
        assert_eq!(chooser.benchmark_calls(), 18);
        // Both decided: repeats benchmark nothing and keep their picks.
        assert_eq!(call_dot(&chooser, (1000, 1000, 1000)), first);
        assert_eq!(call_dot(&chooser, (960, 1024, 1024)), second);
        assert_eq!(chooser.benchmark_calls(), 18);
    }

    #[test]
    fn persisted_choices_are_reused_only_for_the_same_candidates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let first = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::open(&path)));
        call_dot(&first, (3000, 3000, 3000));
        assert_eq!(first.benchmark_calls(), 6);
        // Another process: 3000^3 comes from the file, 3008^3 is tuned.
        let second = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::open(&path)));
        assert_eq!(
            call_dot(&second, (3000, 3000, 3000)),
            "TM=64 TN=256 ALIGN=1 num_warps=8"
        );
        assert_eq!(second.benchmark_calls(), 0);
        assert_eq!(
            call_dot(&second, (3008, 3008, 3008)),
            "TM=64 TN=256 ALIGN=16 num_warps=8"
        );
        assert_eq!(second.benchmark_calls(), 12);
    }

    #[test]
    fn a_choice_timed_on_other_code_is_not_reused() {
        // Two builds of the op with the same config names (compiled with
        // and without a compiler option), one cache file; in the second
        // build 128x128 tiles run fastest.
        fn square_tiles_win(config: &str) -> f64 {
            let square = if config.starts_with("TM=128 TN=128") {
                0.5
            } else {
                1.0
            };
            square * model_ms(config)
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let open = || Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::open(&path)));
        let shape = (1000, 777, 1531);
        let old = open();
        let old_pick = call_dot_built(&old, "H100", shape, Some("old"), model_ms);
        assert_eq!(old_pick, "TM=64 TN=256 ALIGN=1 num_warps=8");
        let new = open();
        let new_pick = call_dot_built(&new, "H100", shape, Some("new"), square_tiles_win);
        assert_eq!(new_pick, "TM=128 TN=128 ALIGN=1 num_warps=8");
        assert_eq!(new.benchmark_calls(), 6);
        // Each build, in later processes, finds its own choice.
        let later = open();
        assert_eq!(
            call_dot_built(&later, "H100", shape, Some("old"), model_ms),
            old_pick
        );
        assert_eq!(
            call_dot_built(&later, "H100", shape, Some("new"), square_tiles_win),
            new_pick
        );
        assert_eq!(later.benchmark_calls(), 0);
    }

    #[test]
    fn a_choice_tuned_on_one_gpu_is_reused_on_gpus_of_the_same_model_only() {
        // torchrun: one process per GPU, one cache file.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let h100 = "NVIDIA H100 80GB HBM3";
        let rank0 = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::open(&path)));
        let picked = call_dot_on(&rank0, h100, (1024, 1024, 1024));
        assert_eq!(rank0.benchmark_calls(), 12);
        // The same process on cuda:1 (same model): decided in memory.
        assert_eq!(call_dot_on(&rank0, h100, (1024, 1024, 1024)), picked);
        assert_eq!(rank0.benchmark_calls(), 12);
        // Rank 1's process, started after rank 0 saved: read from the file.
        let rank1 = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::open(&path)));
        assert_eq!(call_dot_on(&rank1, h100, (1024, 1024, 1024)), picked);
        assert_eq!(rank1.benchmark_calls(), 0);
        // Another model is tuned for itself.
        call_dot_on(&rank1, "NVIDIA H200", (1024, 1024, 1024));
        assert_eq!(rank1.benchmark_calls(), 12);
    }

    #[test]
    fn preloaded_choices_apply_to_their_candidate_set_only() {
        let chooser = Chooser::with_tuner("triton::dot", fast_tuner(TuneCache::in_memory()));
        let masked = chooser.key(
            &[1000, 1000, 1000],
            "T=float16",
            "Fake H100",
            &dot_candidates(1000, 1000, 1000),
        );
        let json = format!(
            r#"{{"format_version": 3, "entries": {{
                "{masked}": {{"config": "TM=128 TN=128 ALIGN=1 num_warps=8", "time_ms": 1.0}},
                "triton::other|[1]|T=float16|Fake H100|cands=1:00000000": {{"config": "X", "time_ms": 1.0}}}}}}"#
        );
        assert_eq!(chooser.preload(&json), 1);
        assert_eq!(
            call_dot(&chooser, (1000, 1000, 1000)),
            "TM=128 TN=128 ALIGN=1 num_warps=8"
        );
        assert_eq!(chooser.benchmark_calls(), 0);
        assert_eq!(
            call_dot(&chooser, (1024, 1024, 1024)),
            "TM=64 TN=256 ALIGN=16 num_warps=8"
        );
        assert_eq!(chooser.benchmark_calls(), 12);
    }

    #[test]
    fn bad_tables_preload_nothing() {
        let chooser = Chooser::new("triton::dot");
        let old = r#"{"entries": {"triton::dot|[1024x1024x1024]|T=float16|Fake H100|cands=6:00000000":
            {"config": "TM=128 TN=128 ALIGN=1 num_warps=8", "time_ms": 2.0}}, "format_version": "#;
        for json in [
            "".to_string(),
            "not json".to_string(),
            r#"{"format_version": 9, "entries": {}}"#.to_string(),
            format!("{old}1}}"),
            format!("{old}2}}"),
        ] {
            assert_eq!(chooser.preload(&json), 0, "{json}");
        }
    }
}
