// Copied verbatim by triton-opgen: counters of the GPU path (host<->device
// copies, launches, their times), and the embedded variants, readable with
// ctypes from the process that loaded the library:
//   lib = ctypes.CDLL(path); buf = (ctypes.c_uint64 * 16)()
//   n = lib.opgen_ort_stats(buf, 16)      # see STAT_NAMES for the order
use std::ffi::c_char;
use std::sync::atomic::{AtomicU64, Ordering};

pub const CALLS: usize = 0;
pub const H2D_COPIES: usize = 1;
pub const H2D_BYTES: usize = 2;
pub const H2D_NS: usize = 3;
pub const D2H_COPIES: usize = 4;
pub const D2H_BYTES: usize = 5;
pub const D2H_NS: usize = 6;
pub const LAUNCHES: usize = 7;
/// GPU time of the launches (CUDA events), nanoseconds.
pub const KERNEL_NS: usize = 8;
/// Wall time inside the op's compute (checks, copies, launch), nanoseconds.
pub const COMPUTE_NS: usize = 9;
/// Allocations by the execution provider's device allocator.
pub const DEVICE_ALLOCS: usize = 10;
/// Launches on a framework's stream, not waited for (the CUDA EP's nodes).
pub const STREAM_LAUNCHES: usize = 11;
/// Configs the autotuner benchmarked in this process (read from the runtime;
/// stays 0 when every shape came from the cache or the pre-tuned table).
const TUNE_BENCHMARKS: usize = 12;
/// Launches run on zero-padded copies (the spec's `pad` line).
pub const PADDED_LAUNCHES: usize = 13;
const COUNT: usize = 14;

/// The names, in order, for tools (`opgen_ort_stat_names`).
const STAT_NAMES: &str = "calls h2d_copies h2d_bytes h2d_ns d2h_copies d2h_bytes d2h_ns launches kernel_ns compute_ns device_allocs stream_launches tune_benchmarks padded_launches\0";

static STATS: [AtomicU64; COUNT] = [const { AtomicU64::new(0) }; COUNT];

pub fn add(which: usize, value: u64) {
    STATS[which].fetch_add(value, Ordering::Relaxed);
}

/// Copies up to `len` counters into `out`; returns how many exist.
///
/// # Safety
/// `out` is writable for `len` u64 (or null).
#[no_mangle]
pub unsafe extern "C" fn opgen_ort_stats(out: *mut u64, len: usize) -> usize {
    if !out.is_null() {
        for i in 0..COUNT.min(len) {
            *out.add(i) = match i {
                TUNE_BENCHMARKS => opgen_runtime::benchmark_calls_total(),
                _ => STATS[i].load(Ordering::Relaxed),
            };
        }
    }
    COUNT
}

#[no_mangle]
pub extern "C" fn opgen_ort_stats_reset() {
    for s in &STATS {
        s.store(0, Ordering::Relaxed);
    }
}

#[no_mangle]
pub extern "C" fn opgen_ort_stat_names() -> *const c_char {
    STAT_NAMES.as_ptr().cast()
}

/// The embedded variants, one line each: `dtypes<TAB>config<TAB>kernel<TAB>PTX bytes`.
/// Writes a NUL-terminated prefix into `buf`; returns the full length.
///
/// # Safety
/// `buf` is writable for `len` bytes (or null).
#[no_mangle]
pub unsafe extern "C" fn opgen_ort_variants(buf: *mut c_char, len: usize) -> usize {
    write_c_text(&crate::gpu::variant_listing(), buf, len)
}

/// Entries of the pre-tuned table (`triton-opgen --tuned`) the op took.
#[no_mangle]
pub extern "C" fn opgen_ort_tuned_entries() -> usize {
    crate::gpu::tuned_entries()
}

/// Writes a NUL-terminated prefix of `text` into `buf`; returns its full length.
///
/// # Safety
/// `buf` is writable for `len` bytes (or null).
pub unsafe fn write_c_text(text: &str, buf: *mut c_char, len: usize) -> usize {
    if !buf.is_null() && len > 0 {
        let n = text.len().min(len - 1);
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), n);
        *buf.add(n) = 0;
    }
    text.len()
}
