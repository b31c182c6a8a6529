//! Picking the fastest config: warm-up runs, timed runs, median, cached.

use super::cache::{TuneCache, TunedChoice};
use super::candidates::CandidateSet;
use super::key::TuneKey;
use crate::error::{Result, RuntimeError};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Times one run of a launch closure, in milliseconds. The GPU version
/// records CUDA events around it ([`crate::EventTimer`]); tests use a fake.
pub trait KernelTimer {
    fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64>;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchSettings {
    /// Untimed runs first (module load, caches, clocks).
    pub warmup: u32,
    /// Timed runs; the median is kept.
    pub runs: u32,
}

impl Default for BenchSettings {
    fn default() -> Self {
        BenchSettings {
            warmup: 3,
            runs: 10,
        }
    }
}

/// The config to use for a key.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Index into the configs given to [`Autotuner::tune`].
    pub index: usize,
    pub config: String,
    /// Median time measured when it was tuned, milliseconds.
    pub time_ms: f64,
    /// True when read from the cache (nothing was benchmarked).
    pub from_cache: bool,
}

static BENCHMARK_CALLS: AtomicU64 = AtomicU64::new(0);

/// Configs benchmarked by every tuner of this process.
pub fn benchmark_calls_total() -> u64 {
    BENCHMARK_CALLS.load(Ordering::Relaxed)
}

pub struct Autotuner {
    cache: TuneCache,
    settings: BenchSettings,
    benchmark_calls: u64,
    warnings: Vec<String>,
}

impl Autotuner {
    pub fn new(cache: TuneCache) -> Autotuner {
        Autotuner {
            cache,
            settings: BenchSettings::default(),
            benchmark_calls: 0,
            warnings: Vec::new(),
        }
    }

    pub fn with_settings(mut self, settings: BenchSettings) -> Autotuner {
        self.settings = settings;
        self
    }

    /// Configs benchmarked by this tuner (zero when every key was cached).
    pub fn benchmark_calls(&self) -> u64 {
        self.benchmark_calls
    }

    pub fn cache(&self) -> &TuneCache {
        &self.cache
    }

    /// Problems that did not stop tuning: a config that failed to launch, a
    /// cache that could not be saved.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The cached choice for `key` when it names one of `configs`; otherwise
    /// benchmarks each config through `launch(index)`, keeps the fastest
    /// median, and saves the cache. Configs that fail are skipped (and
    /// listed in [`Autotuner::warnings`]); if all fail, the error lists why.
    /// `key` must have been built over `configs` (its cached choice is only
    /// valid for them).
    pub fn tune(
        &mut self,
        key: &TuneKey,
        configs: &[String],
        timer: &mut dyn KernelTimer,
        launch: &mut dyn FnMut(usize) -> Result<()>,
    ) -> Result<Choice> {
        let key_text = key.to_string();
        if configs.is_empty() {
            return Err(RuntimeError::Autotune {
                key: key_text,
                reason: "no configs to choose from".to_string(),
            });
        }
        if key.candidates != CandidateSet::of(configs) {
            return Err(RuntimeError::Autotune {
                key: key_text,
                reason: format!(
                    "the key names other candidates than the {} configs given",
                    configs.len()
                ),
            });
        }
        if let Some(cached) = self.cache.get(&key_text) {
            if let Some(index) = configs.iter().position(|c| *c == cached.config) {
                return Ok(Choice {
                    index,
                    config: cached.config.clone(),
                    time_ms: cached.time_ms,
                    from_cache: true,
                });
            }
        }
        self.benchmark_calls += configs.len() as u64;
        BENCHMARK_CALLS.fetch_add(configs.len() as u64, Ordering::Relaxed);
        let (medians, errors) = self.benchmark_interleaved(configs.len(), timer, launch);
        let mut failures: Vec<String> = errors
            .into_iter()
            .map(|(index, e)| format!("{}: {e}", configs[index]))
            .collect();
        let mut timings = BTreeMap::new();
        let mut best: Option<(usize, f64)> = None;
        for (index, ms) in medians.into_iter().enumerate() {
            let Some(ms) = ms else { continue };
            let config = &configs[index];
            if !ms.is_finite() || ms < 0.0 {
                failures.push(format!("{config}: measured time {ms} ms"));
                continue;
            }
            timings.insert(config.clone(), ms);
            if best.is_none_or(|(_, b)| ms < b) {
                best = Some((index, ms));
            }
        }
        for failure in &failures {
            self.warnings.push(format!("{key_text}: skipped {failure}"));
        }
        let Some((index, time_ms)) = best else {
            return Err(RuntimeError::Autotune {
                key: key_text,
                reason: format!("every config failed: {}", failures.join("; ")),
            });
        };
        self.cache.insert(
            key_text.clone(),
            TunedChoice {
                config: configs[index].clone(),
                time_ms,
                timings_ms: timings,
            },
        );
        if let Err(e) = self.cache.save() {
            self.warnings.push(format!("autotune cache not saved: {e}"));
        }
        Ok(Choice {
            index,
            config: configs[index].clone(),
            time_ms,
            from_cache: false,
        })
    }

    /// Warm-up runs of every config, then `runs` rounds that time each
    /// config once in turn: the GPU's clock and temperature drift over a
    /// tuning (hundreds of milliseconds at large shapes) and would otherwise
    /// favour the configs timed first. Configs [`PRUNE_FACTOR`] times slower
    /// than the fastest in the last warm-up round are not timed further.
    /// The median per config, `None` for one pruned or failed (with its
    /// error in the second list).
    fn benchmark_interleaved(
        &self,
        count: usize,
        timer: &mut dyn KernelTimer,
        launch: &mut dyn FnMut(usize) -> Result<()>,
    ) -> (Vec<Option<f64>>, Vec<(usize, String)>) {
        let mut times: Vec<Option<Vec<f64>>> = vec![Some(Vec::new()); count];
        let mut errors: Vec<(usize, String)> = Vec::new();
        let mut warm = vec![f64::INFINITY; count];
        let rounds = self.settings.warmup + self.settings.runs.max(1);
        for round in 0..rounds {
            for (index, slot) in times.iter_mut().enumerate() {
                let Some(list) = slot else { continue };
                match timer.time_ms(&mut || launch(index)) {
                    Ok(ms) if round >= self.settings.warmup => list.push(ms),
                    Ok(ms) => warm[index] = ms,
                    Err(e) => {
                        errors.push((index, e.to_string()));
                        *slot = None;
                    }
                }
            }
            if round + 1 == self.settings.warmup {
                prune_slow(&mut times, &warm);
            }
        }
        let medians = times
            .into_iter()
            .map(|t| t.map(|mut list| median(&mut list)))
            .collect();
        (medians, errors)
    }
}

/// A config this many times slower than the fastest in its last warm-up
/// run is not timed further: its median could not win, and at large shapes
/// narrow tiles take ten times as long as the best (seconds of tuning).
pub const PRUNE_FACTOR: f64 = 2.0;

/// Takes out of `times` (None: out) the configs whose last warm-up time in
/// `warm` exceeds [`PRUNE_FACTOR`] times the fastest still timing (a time
/// that is not finite is kept, to be reported).
fn prune_slow(times: &mut [Option<Vec<f64>>], warm: &[f64]) {
    let best = times
        .iter()
        .zip(warm)
        .filter(|(t, w)| t.is_some() && w.is_finite() && **w >= 0.0)
        .map(|(_, &w)| w)
        .fold(f64::INFINITY, f64::min);
    if !best.is_finite() {
        return;
    }
    for (slot, &w) in times.iter_mut().zip(warm) {
        if slot.is_some() && w.is_finite() && w > PRUNE_FACTOR * best {
            *slot = None; // out of the rounds below, and never chosen
        }
    }
}

/// Median (mean of the middle two for an even count); NaN for none.
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::autotune::CacheLoad;

    /// Each config has a fixed "time"; the timer reads the config that the
    /// launch closure last ran.
    struct FakeTimer {
        times: Vec<f64>,
        last: std::rc::Rc<std::cell::Cell<usize>>,
        calls: usize,
    }

    impl KernelTimer for FakeTimer {
        fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
            run()?;
            self.calls += 1;
            Ok(self.times[self.last.get()] + (self.calls % 3) as f64 * 1e-6)
        }
    }

    fn configs() -> Vec<String> {
        ["SIZE=128", "SIZE=256", "SIZE=512", "SIZE=1024"]
            .map(String::from)
            .to_vec()
    }

    fn key(n: u64) -> TuneKey {
        TuneKey::new("add", &[&[n]], &["f32"], "Fake GPU", &configs())
    }

    fn tune_with(tuner: &mut Autotuner, key: &TuneKey, times: Vec<f64>) -> Result<Choice> {
        let last = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = FakeTimer {
            times,
            last: last.clone(),
            calls: 0,
        };
        tuner.tune(key, &configs(), &mut timer, &mut |i| {
            last.set(i);
            Ok(())
        })
    }

    #[test]
    fn picks_the_fastest_and_counts_benchmarks() {
        let dir = tempfile::tempdir().unwrap();
        let mut tuner = Autotuner::new(TuneCache::open(dir.path().join("a.json")));
        let choice = tune_with(&mut tuner, &key(1 << 20), vec![4.0, 2.0, 1.0, 3.0]).unwrap();
        assert_eq!(choice.index, 2);
        assert_eq!(choice.config, "SIZE=512");
        assert!(!choice.from_cache);
        assert!((choice.time_ms - 1.0).abs() < 1e-3);
        assert_eq!(tuner.benchmark_calls(), 4);
        // Same bucket: served from memory, nothing benchmarked.
        let again = tune_with(&mut tuner, &key((1 << 20) - 64), vec![0.0; 4]).unwrap();
        assert!(again.from_cache);
        assert_eq!(again.index, 2);
        assert_eq!(tuner.benchmark_calls(), 4);
    }

    #[test]
    fn second_process_reuses_the_file_without_benchmarking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let mut first = Autotuner::new(TuneCache::open(&path));
        for (n, times) in [
            (1u64 << 16, vec![1.0, 2.0, 3.0, 4.0]),
            (1 << 26, vec![4.0, 3.0, 2.0, 1.0]),
        ] {
            tune_with(&mut first, &key(n), times).unwrap();
        }
        assert_eq!(first.benchmark_calls(), 8);
        drop(first);

        // A new tuner reading the same file stands for the second process.
        let mut second = Autotuner::new(TuneCache::open(&path));
        assert_eq!(
            second.cache().load_status(),
            &CacheLoad::Loaded { entries: 2 }
        );
        let small = tune_with(&mut second, &key(1 << 16), vec![9.0; 4]).unwrap();
        let large = tune_with(&mut second, &key(1 << 26), vec![9.0; 4]).unwrap();
        assert_eq!(
            (small.config.as_str(), large.config.as_str()),
            ("SIZE=128", "SIZE=1024")
        );
        assert!(small.from_cache && large.from_cache);
        assert_eq!(second.benchmark_calls(), 0);
    }

    #[test]
    fn corrupt_cache_is_survived_and_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        std::fs::write(&path, b"\x7fgarbage{{{").unwrap();
        let mut tuner = Autotuner::new(TuneCache::open(&path));
        assert!(matches!(tuner.cache().load_status(), CacheLoad::Corrupt(_)));
        let choice = tune_with(&mut tuner, &key(1 << 20), vec![2.0, 1.0, 3.0, 4.0]).unwrap();
        assert_eq!(choice.config, "SIZE=256");
        assert_eq!(tuner.benchmark_calls(), 4);
        let reread = TuneCache::open(&path);
        assert_eq!(reread.load_status(), &CacheLoad::Loaded { entries: 1 });
    }

    #[test]
    fn other_candidates_in_the_same_bucket_are_tuned_anew() {
        let mut tuner = Autotuner::new(TuneCache::in_memory());
        tune_with(&mut tuner, &key(64), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
        let last = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = FakeTimer {
            times: vec![5.0, 1.0],
            last: last.clone(),
            calls: 0,
        };
        // SIZE=256 was among the first candidates but lost to SIZE=128 there.
        let other = vec!["SIZE=256".to_string(), "SIZE=2048".to_string()];
        let other_key = TuneKey::new("add", &[&[64]], &["f32"], "Fake GPU", &other);
        let choice = tuner
            .tune(&other_key, &other, &mut timer, &mut |i| {
                last.set(i);
                Ok(())
            })
            .unwrap();
        assert_eq!(choice.config, "SIZE=2048");
        assert!(!choice.from_cache);
        assert_eq!(tuner.benchmark_calls(), 6);
    }

    #[test]
    fn a_key_built_over_other_configs_is_refused() {
        let mut tuner = Autotuner::new(TuneCache::in_memory());
        let mut timer = FakeTimer {
            times: vec![1.0; 4],
            last: std::rc::Rc::new(std::cell::Cell::new(0)),
            calls: 0,
        };
        let err = tuner
            .tune(&key(64), &configs()[..2], &mut timer, &mut |_| Ok(()))
            .unwrap_err();
        assert!(err.to_string().contains("other candidates"), "{err}");
        assert_eq!(tuner.benchmark_calls(), 0);
    }

    #[test]
    fn failing_configs_are_skipped_and_all_failing_is_an_error() {
        let mut tuner = Autotuner::new(TuneCache::in_memory());
        let last = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = FakeTimer {
            times: vec![1.0, 2.0, 3.0, 4.0],
            last: last.clone(),
            calls: 0,
        };
        let choice = tuner
            .tune(&key(8), &configs(), &mut timer, &mut |i| {
                last.set(i);
                if i == 0 {
                    Err(RuntimeError::InvalidLaunch {
                        kernel: "add".into(),
                        reason: "too much shared memory".into(),
                    })
                } else {
                    Ok(())
                }
            })
            .unwrap();
        assert_eq!(choice.config, "SIZE=256");
        assert_eq!(tuner.warnings().len(), 1);
        assert!(
            tuner.warnings()[0].contains("SIZE=128"),
            "{:?}",
            tuner.warnings()
        );

        let err = tuner
            .tune(&key(1 << 30), &configs(), &mut timer, &mut |_| {
                Err(RuntimeError::NoDevice("gone".into()))
            })
            .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("every config failed"), "{text}");
        assert!(text.contains("SIZE=1024: no CUDA device: gone"), "{text}");

        let err = tuner
            .tune(&key(1), &[], &mut timer, &mut |_| Ok(()))
            .unwrap_err();
        assert!(err.to_string().contains("no configs"), "{err}");
    }

    #[test]
    fn warmup_runs_are_not_timed_into_the_median() {
        struct Slowing(f64);
        impl KernelTimer for Slowing {
            fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
                run()?;
                self.0 -= 1.0;
                Ok(self.0.max(1.0) * 100.0)
            }
        }
        let mut tuner = Autotuner::new(TuneCache::in_memory())
            .with_settings(BenchSettings { warmup: 5, runs: 3 });
        // Times 500, 400, 300, 200, 100 in warm-up, then 100 three times.
        let one = &configs()[..1];
        let key = TuneKey::new("add", &[&[2]], &["f32"], "Fake GPU", one);
        let choice = tuner
            .tune(&key, one, &mut Slowing(6.0), &mut |_| Ok(()))
            .unwrap();
        assert_eq!(choice.time_ms, 100.0);
    }

    #[test]
    fn configs_twice_as_slow_as_the_best_after_warm_up_are_not_timed_further() {
        let last = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = FakeTimer {
            times: vec![10.0, 1.0, 1.9, 2.5],
            last: last.clone(),
            calls: 0,
        };
        let mut tuner = Autotuner::new(TuneCache::in_memory());
        let choice = tuner
            .tune(&key(1 << 22), &configs(), &mut timer, &mut |i| {
                last.set(i);
                Ok(())
            })
            .unwrap();
        assert_eq!(choice.config, "SIZE=256");
        // 3 warm-up rounds of all 4, then 10 rounds of the 2 within 2x.
        assert_eq!(timer.calls, 3 * 4 + 10 * 2);
        let cached = tuner.cache().get(&key(1 << 22).to_string()).unwrap();
        let timed: Vec<&String> = cached.timings_ms.keys().collect();
        assert_eq!(timed, ["SIZE=256", "SIZE=512"]);
        // Pruning is not failing: no warnings.
        assert!(tuner.warnings().is_empty(), "{:?}", tuner.warnings());
    }

    #[test]
    fn clock_drift_during_tuning_does_not_favour_the_first_configs() {
        // The GPU slows down as it tunes (clocks, temperature): 0.5% more a
        // run. SIZE=1024 is the fastest by 2%; timed after the others one
        // config at a time, it would have looked slowest.
        struct Drifting {
            last: std::rc::Rc<std::cell::Cell<usize>>,
            runs: u32,
        }
        impl KernelTimer for Drifting {
            fn time_ms(&mut self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
                run()?;
                self.runs += 1;
                let base = [1.0, 1.0, 1.0, 0.98][self.last.get()];
                Ok(base * (1.0 + 0.005 * self.runs as f64))
            }
        }
        let last = std::rc::Rc::new(std::cell::Cell::new(0));
        let mut timer = Drifting {
            last: last.clone(),
            runs: 0,
        };
        let mut tuner = Autotuner::new(TuneCache::in_memory());
        let choice = tuner
            .tune(&key(4096), &configs(), &mut timer, &mut |i| {
                last.set(i);
                Ok(())
            })
            .unwrap();
        assert_eq!(choice.config, "SIZE=1024");
        let settings = BenchSettings::default();
        assert_eq!(timer.runs, 4 * (settings.warmup + settings.runs));
    }

    #[test]
    fn non_finite_times_are_not_chosen_nor_cached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let mut tuner = Autotuner::new(TuneCache::open(&path));
        let choice =
            tune_with(&mut tuner, &key(4), vec![f64::NAN, 2.0, f64::INFINITY, 3.0]).unwrap();
        assert_eq!(choice.config, "SIZE=256");
        assert_eq!(tuner.warnings().len(), 2, "{:?}", tuner.warnings());
        let cached = TuneCache::open(&path);
        assert_eq!(cached.load_status(), &CacheLoad::Loaded { entries: 1 });
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }
}
