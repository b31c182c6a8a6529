//! Autotuning: benchmark every config of a tuning space on the real inputs,
//! keep the fastest, and remember the choice in a JSON cache shared by
//! processes. Timing sits behind [`KernelTimer`] so everything but the
//! GPU clock is testable without a GPU.

mod cache;
mod key;
mod tuner;

pub use cache::{default_cache_path, CacheLoad, TuneCache, TunedChoice, CACHE_ENV, FORMAT_VERSION};
pub use key::{bucket_dim, TuneKey};
pub use tuner::{benchmark_calls_total, median, Autotuner, BenchSettings, Choice, KernelTimer};
