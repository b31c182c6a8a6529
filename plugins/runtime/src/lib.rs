//! # opgen-runtime
//!
//! The runtime every generated plugin links: it loads the PTX (or cubin)
//! variants that `tritonc --all-configs` writes, launches them on a
//! framework's stream, sizes persistent grids from occupancy, and autotunes
//! with a persisted cache. No LLVM here; libcuda is opened at run time
//! (through cudarc's driver API), so a machine without a GPU or driver gets
//! [`RuntimeError::NoDevice`] back, never a panic.
//!
//! ## Loading and launching
//! ```no_run
//! use opgen_runtime::{Device, Kernel, KernelArg, Manifest, Stream};
//! # fn main() -> opgen_runtime::Result<()> {
//! let manifest = Manifest::load("out/add")?;          // folder or manifest.json
//! let device = Device::open(0)?;                      // Err(NoDevice) without GPU/driver
//! let kernel = Kernel::load(&device, &manifest, &manifest.variants[0])?;
//! let stream = Stream::new(&device)?;                 // or unsafe { Stream::from_raw(&device, ptr) }
//! let (n, a, b, c) = (1 << 20, 0u64, 0u64, 0u64);     // device addresses from the framework
//! kernel.launch(&stream, (n / 128, 1, 1), &[
//!     KernelArg::I32(n as i32), KernelArg::Ptr(a), KernelArg::Ptr(b), KernelArg::Ptr(c),
//! ])?;
//! # Ok(()) }
//! ```
//! - Modules are cached per device by image hash ([`Device::load_module`]).
//! - The block is `num_warps * 32` threads; dynamic shared memory is the
//!   manifest's `shared_bytes` (or [`Kernel::launch_with_shared`]), opted in
//!   with `cuFuncSetAttribute` above 48 KiB.
//! - A split-K variant (manifest `cluster_splits` S > 1, a cluster declared
//!   in its PTX) runs S programs per grid point along z: the launch's grid
//!   must have z = 1, and z becomes S ([`kernel::clustered_grid`]); its last
//!   argument, `split_tile`, offsets its tiles, and the runtime adds it
//!   ([`Kernel::launch_split_tail`]). A generated op runs the full waves of
//!   tiles with the unsplit sibling and splits only the last, partial one
//!   ([`split_launch`]).
//! - Arguments are checked against the manifest's parameter types and the
//!   `__multipleof` / `__aligned` promises (pointers default to 16-byte
//!   alignment); errors name the kernel, the parameter and the expected type.
//!
//! ## Metadata and occupancy
//! [`Kernel::attributes`] (registers per thread, static shared memory, max
//! threads per block), [`Kernel::max_active_blocks_per_sm`],
//! [`Kernel::persistent_grid`] (`NUM_SM x occupancy`, seed 002) and
//! [`DeviceProperties`] (SM count, registers and shared memory per SM).
//!
//! ## Autotuning
//! [`Autotuner::tune`] takes a [`TuneKey`] (op, shapes bucketed to powers of
//! two, dtypes, device name, and the candidate set: a choice is reused only
//! for calls offering the same configs), the config ids of the candidates
//! ([`Variant::config_id`]), a [`KernelTimer`] ([`EventTimer`] on a GPU) and a
//! closure launching candidate `i` on the real inputs. It returns the cached
//! choice or benchmarks every candidate (warm-up, timed runs, median) and
//! saves the winner to the JSON cache ([`default_cache_path`]:
//! `$TRITON_OPGEN_CACHE`, a `.json` file or a folder, else
//! `<user cache dir>/triton-opgen/autotune.json`). The file is written
//! atomically; a corrupt or other-version file is ignored and rebuilt.
//! [`Autotuner::benchmark_calls`] counts configs benchmarked. [`Chooser`]
//! is what a generated op runs per call: choices made in this process or
//! preloaded from a pre-tuned table, else the tuner.
//! [`KernelSet`] bundles the variants of one kernel with tuning over them:
//! ```no_run
//! # use opgen_runtime::*;
//! # fn main() -> Result<()> {
//! # let (device, manifest, stream, n) = (Device::open(0)?, Manifest::load("out/add")?, (), 1u64 << 20);
//! # let stream = Stream::new(&device)?;
//! let set = KernelSet::load(&device, &manifest, "add")?;
//! let mut tuner = Autotuner::new(TuneCache::open_default());
//! let key = TuneKey::new("add", &[&[n]], &["f32"], device.name(), set.configs());
//! let (kernel, choice) = set.tune(&mut tuner, &key, &stream, |k| {
//!     let size: u64 = k.variant().macros["SIZE"].parse().unwrap();
//!     k.launch(&stream, (n / size) as u32, &[/* args */])
//! })?;
//! # Ok(()) }
//! ```

pub mod args;
pub mod autotune;
pub mod copy_fill;
pub mod device;
pub mod digest;
pub mod driver;
pub mod error;
pub mod kernel;
pub mod kernel_set;
pub mod manifest;
pub mod memory;
pub mod module;
pub mod occupancy;
pub mod pad;
pub mod split_launch;
pub mod stream;
pub mod tensor_map;
pub mod timer;

pub use args::{check_args, KernelArg};
pub use autotune::{
    benchmark_calls_total, default_cache_path, Autotuner, BenchSettings, CacheLoad, Choice,
    Chooser, KernelTimer, TuneCache, TuneKey, TunedChoice,
};
pub use device::{Device, DeviceProperties};
pub use digest::image_digest;
pub use driver::DriverInfo;
pub use error::{Result, RuntimeError};
pub use kernel::{Grid, Kernel, KernelAttributes};
pub use kernel_set::KernelSet;
pub use manifest::{ElemType, Manifest, Param, ParamType, Variant};
pub use memory::{DeviceBuffer, DeviceCopy};
pub use module::{Module, ModuleImage};
pub use occupancy::estimate_blocks_per_sm;
pub use split_launch::{split_plan, SplitPlan};
pub use stream::Stream;
pub use timer::EventTimer;

/// The raw driver API types (`CUstream`, `CUfunction`, ...) that some
/// methods return, for callers that need to name them.
pub use cudarc::driver::sys as cuda_sys;
