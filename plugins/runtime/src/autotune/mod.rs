//! Autotuning: benchmark every config of a tuning space on the real inputs,
//! keep the fastest, and remember the choice in a JSON cache shared by
//! processes. Timing sits behind [`KernelTimer`] so everything but the
//! GPU clock is testable without a GPU.

mod cache;
mod candidates;
mod chooser;
mod key;
mod model_timer;
mod table;
mod tuner;

pub use cache::{
    default_cache_path, write_atomically, CacheLoad, TuneCache, TunedChoice, CACHE_ENV,
    FORMAT_VERSION,
};
pub use candidates::CandidateSet;
pub use chooser::{Chooser, TimerFactory};
pub use key::{bucket_dim, TuneKey};
pub use model_timer::ModelTimer;
pub use table::{read_tuned_table, TunedTable};
pub use tuner::{benchmark_calls_total, median, Autotuner, BenchSettings, Choice, KernelTimer};
