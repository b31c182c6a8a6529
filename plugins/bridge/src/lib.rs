//! # opgen-bridge
//!
//! What generated framework bindings call: an op owns its embedded variants,
//! loads them per device on first use, autotunes among the candidates a call
//! allows, and launches on the framework's stream through `opgen-runtime`.
//!
//! C++ bindings (torch, TensorFlow, JAX) reach it through the
//! `#[cxx::bridge]` of `ffi.rs` (feature `cxx`), built as a static library
//! with the bridge's C++ shim and cxx's runtime inside, so that a machine
//! with only a C++ compiler can link it. The ONNX Runtime crate calls the
//! functions below as Rust.
//!
//! Every entry point catches panics: a panic becomes an error (or an op that
//! reports one at launch), never an unwind into the caller.

mod decided;
#[cfg(feature = "cxx")]
mod ffi;
mod launch;
mod per_device;
mod pin;

pub use launch::{Call, LaunchGrid, Op, VariantRef};
pub use opgen_runtime::KernelArg;
use std::panic::{catch_unwind, AssertUnwindSafe, UnwindSafe};

/// The op `name` over `variants` (copied: the op keeps no borrow). Never
/// fails: what is wrong with a variant is reported by every launch.
pub fn new_op(name: &str, variants: &[VariantRef]) -> Op {
    catch_unwind(AssertUnwindSafe(|| Op::new(name, variants)))
        .unwrap_or_else(|_| Op::broken("panic while creating the op"))
}

/// Launches one of `call.candidates`: the pinned config, the only one, or the
/// autotuner's pick (keyed by op, dtype group, bucketed dims, device and
/// candidates; remembered in memory and in its JSON cache).
pub fn launch(op: &Op, call: &Call) -> Result<(), String> {
    guarded(|| op.launch(call))
}

/// Repeats the launch decided for a call with `call_key` (see
/// [`Call::call_key`]) on `device`, without its candidates: `Ok(false)`
/// where none is decided yet (the caller then computes the candidates and
/// calls [`launch`], which decides and remembers it).
pub fn launch_known(
    op: &Op,
    device: i32,
    stream: *mut std::ffi::c_void,
    call_key: &[i64],
    args: &[KernelArg],
) -> Result<bool, String> {
    guarded(|| op.launch_known(device, stream, call_key, args))
}

/// Takes the choices of a pre-tuned table for this op: the JSON of an
/// autotune cache file. Entries of other ops are skipped; returns how many
/// were taken (0 for "" or bad JSON).
pub fn preload(op: &Op, json: &str) -> usize {
    catch_unwind(AssertUnwindSafe(|| op.preload(json))).unwrap_or(0)
}

/// The config the last launch used ("" before any).
pub fn last_config(op: &Op) -> String {
    catch_unwind(AssertUnwindSafe(|| op.last_config())).unwrap_or_default()
}

/// The op's distinct configs, in variant order.
pub fn configs(op: &Op) -> Vec<String> {
    catch_unwind(AssertUnwindSafe(|| {
        op.configs().into_iter().map(str::to_string).collect()
    }))
    .unwrap_or_default()
}

/// Pins `config` (one of [`configs`]): later launches run it instead of the
/// autotuner's pick, and fail for inputs it does not accept. "" unpins.
pub fn pin_config(op: &Op, config: &str) -> Result<(), String> {
    guarded(|| op.pin(config))
}

/// Configs `op` benchmarked in this process: 0 while every call was decided
/// from the autotune cache or a pre-tuned table.
pub fn benchmark_calls(op: &Op) -> u64 {
    catch_unwind(AssertUnwindSafe(|| op.benchmark_calls())).unwrap_or(0)
}

/// The device a framework names by its ordinal.
fn open_device(device: i32) -> Result<std::sync::Arc<opgen_runtime::Device>, String> {
    let ordinal = usize::try_from(device).map_err(|_| format!("device {device} is not one"))?;
    opgen_runtime::Device::open(ordinal).map_err(|e| e.to_string())
}

/// Zeroes `bytes` at device address `ptr` in the order of `stream` (a
/// `CUstream`; null: the default one) of device `device`: the outputs an op
/// returns where an input is empty and its kernel has nothing to read (a
/// matmul over K = 0 is zeros).
pub fn zero_fill(
    device: i32,
    stream: *mut std::ffi::c_void,
    ptr: u64,
    bytes: u64,
) -> Result<(), String> {
    if bytes == 0 {
        return Ok(());
    }
    let stream = stream as usize;
    guarded(move || {
        let device = open_device(device)?;
        // SAFETY: the framework hands over an output it allocated on this
        // device, `bytes` long, and the stream it runs the op on.
        unsafe { opgen_runtime::memory::raw::zero_async(&device, ptr, bytes as usize, stream as _) }
            .map_err(|e| e.to_string())
    })
}

/// Copies the matrix `src` into `dst` with the runtime's `copy_fill`
/// kernel, in the order of `stream` of device `device`: `dst` gets `src`
/// where both have the element and zeros where only `dst` has it (an odd
/// input into its zero-padded twin; a padded output's corner back into a
/// dense output). Elements of `elem_bytes`. Ok(false), with nothing done,
/// where the kernel does not take these matrices (element widths other
/// than 2 or a multiple of 4; past 32-bit indices): copy another way.
pub fn copy_fill(
    device: i32,
    stream: *mut std::ffi::c_void,
    src: opgen_runtime::copy_fill::Matrix,
    dst: opgen_runtime::copy_fill::Matrix,
    elem_bytes: usize,
) -> Result<bool, String> {
    if !opgen_runtime::copy_fill::supports(src, dst, elem_bytes) {
        return Ok(false);
    }
    let stream = stream as usize;
    guarded(move || {
        let device = open_device(device)?;
        // SAFETY: the framework hands over tensors it allocated on this
        // device, as large as the matrices say, and the stream it runs on.
        unsafe {
            opgen_runtime::copy_fill::copy_fill_async(&device, stream as _, src, dst, elem_bytes)
        }
        .map(|()| true)
        .map_err(|e| e.to_string())
    })
}

/// Moves a dense row-major tensor of `shape` (elements of `elem_bytes`) at
/// `dense` to or from its twin at `twin`, `shape` rounded up per axis to
/// `multiples` (missing entries: 1), in the order of `stream` of device
/// `device`: the runtime's `copy_fill` kernel where it takes the slabs,
/// else a memset and 2-D driver copies (`opgen_runtime::pad`). For a
/// framework that allocates the twins itself (TensorFlow's op).
#[allow(clippy::too_many_arguments)] // the tensor's layout, as C++ passes it
pub fn pad_copy(
    device: i32,
    stream: *mut std::ffi::c_void,
    direction: opgen_runtime::pad::PadDirection,
    dense: u64,
    twin: u64,
    shape: &[i64],
    multiples: &[i64],
    elem_bytes: usize,
) -> Result<(), String> {
    if let Some(n) = shape.iter().chain(multiples).find(|&&n| n < 0) {
        return Err(format!("padding: a size or multiple of {n} is negative"));
    }
    let layout = opgen_runtime::pad::PaddedLayout::new(shape, multiples, elem_bytes);
    if !layout.is_padded() || shape.contains(&0) {
        return Ok(());
    }
    let stream = stream as usize;
    guarded(move || {
        let device = open_device(device)?;
        // SAFETY: the framework hands over a tensor and a twin it allocated
        // on this device, of the layout's sizes, and the stream it runs on.
        unsafe {
            opgen_runtime::pad::copy_twin(&device, stream as _, &layout, direction, dense, twin)
        }
        .map_err(|e| e.to_string())
    })
}

/// `f`'s result, or an error for its panic.
fn guarded<T>(f: impl FnOnce() -> Result<T, String> + UnwindSafe) -> Result<T, String> {
    catch_unwind(f)
        .unwrap_or_else(|_| Err("internal error: panic in the opgen runtime".to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD_JSON: &str =
        r#"{"file":"x","kernel":"add","num_warps":4,"params":[{"name":"N","type":"i32"}]}"#;
    const GRID: LaunchGrid = LaunchGrid {
        x: 1,
        y: 1,
        z: 1,
        persistent: false,
    };

    fn call<'a>(candidates: &'a [u32], grids: &'a [LaunchGrid], args: &'a [KernelArg]) -> Call<'a> {
        Call {
            device: 0,
            stream: std::ptr::null_mut(),
            candidates,
            grids,
            args,
            dtype_key: "T=float32",
            dims: &[7],
            call_key: &[],
        }
    }

    #[test]
    fn a_panic_becomes_an_error() {
        let r: Result<(), String> = guarded(|| panic!("boom"));
        assert_eq!(r.unwrap_err(), "internal error: panic in the opgen runtime");
    }

    #[test]
    fn launch_without_gpu_reports_an_error_not_a_panic() {
        let variants = [VariantRef {
            kernel: "add",
            config: "SIZE=128 num_warps=4",
            json: ADD_JSON,
            image: b".version 8.0\n",
        }];
        let op = new_op("t::add", &variants);
        let result = launch(&op, &call(&[0], &[GRID], &[KernelArg::I32(7)]));
        if opgen_runtime::driver::is_available() {
            return; // a machine with a GPU fails differently (bad PTX); not this test's point
        }
        let msg = result.unwrap_err();
        assert!(msg.contains("no CUDA device"), "{msg}");
        // One candidate: nothing to tune, nothing benchmarked.
        assert_eq!(benchmark_calls(&op), 0);
    }

    #[test]
    fn copy_fill_declines_what_its_kernel_cannot_take_and_needs_a_gpu_otherwise() {
        use opgen_runtime::copy_fill::Matrix;
        let m = |rows, cols| Matrix {
            addr: 0x1000,
            rows,
            cols,
            ld: cols,
        };
        // Bytes: not a width the kernel moves; nothing done, no error.
        assert_eq!(
            copy_fill(0, std::ptr::null_mut(), m(3, 5), m(3, 8), 1),
            Ok(false)
        );
        if opgen_runtime::Device::count().unwrap_or(0) == 0 {
            let err = copy_fill(0, std::ptr::null_mut(), m(3, 5), m(3, 8), 2).unwrap_err();
            assert!(!err.is_empty());
        }
        assert!(copy_fill(-1, std::ptr::null_mut(), m(3, 5), m(3, 8), 2)
            .unwrap_err()
            .contains("device -1"));
    }

    #[test]
    fn zero_fill_of_nothing_succeeds_and_without_gpu_is_an_error() {
        assert_eq!(zero_fill(0, std::ptr::null_mut(), 0, 0), Ok(()));
        assert!(zero_fill(-1, std::ptr::null_mut(), 0x1000, 16)
            .unwrap_err()
            .contains("device -1 is not one"));
        if opgen_runtime::driver::is_available() {
            return;
        }
        let msg = zero_fill(0, std::ptr::null_mut(), 0x1000, 16).unwrap_err();
        assert!(msg.contains("no CUDA device"), "{msg}");
    }

    #[test]
    fn pad_copy_does_nothing_for_aligned_or_empty_tensors_and_needs_a_gpu_otherwise() {
        use opgen_runtime::pad::PadDirection::{FromTwin, IntoTwin};
        let null = std::ptr::null_mut();
        let copy = |dir, shape: &[i64], device| {
            pad_copy(device, null, dir, 0x1000, 0x2000, shape, &[1, 8], 2)
        };
        // Nothing to pad (or nothing there): no device is opened.
        assert_eq!(copy(IntoTwin, &[3, 16], -1), Ok(()));
        assert_eq!(copy(FromTwin, &[0, 5], -1), Ok(()));
        let negative = copy(IntoTwin, &[-3, 5], 0).unwrap_err();
        assert!(negative.contains("-3 is negative"), "{negative}");
        for dir in [IntoTwin, FromTwin] {
            assert!(copy(dir, &[3, 5], -1).unwrap_err().contains("device -1"));
        }
        if !opgen_runtime::driver::is_available() {
            let msg = copy(IntoTwin, &[3, 5], 0).unwrap_err();
            assert!(msg.contains("no CUDA device"), "{msg}");
        }
    }

    #[test]
    fn preloads_only_this_ops_entries() {
        let op = new_op("t::add", &[]);
        let json = r#"{"format_version": 3, "entries": {
            "t::add|[1024]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"config": "SIZE=256 num_warps=4", "time_ms": 0.1},
            "t::add|[2048]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"config": "SIZE=1024 num_warps=4", "time_ms": 0.2},
            "t::sub|[1024]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"config": "SIZE=256 num_warps=4", "time_ms": 0.1},
            "t::add|[4096]|T=float32|H100|cands=2:7d2ba1b1|code=0badf00d": {"time_ms": 0.1}}}"#;
        assert_eq!(preload(&op, json), 2);
        // Older formats do not name the code their choices were timed on.
        assert_eq!(
            preload(
                &op,
                &json.replace("\"format_version\": 3", "\"format_version\": 2")
            ),
            0
        );
        assert_eq!(preload(&op, "not json"), 0);
        assert_eq!(preload(&op, ""), 0);
    }

    #[test]
    fn a_bad_variant_entry_is_reported_at_launch() {
        let variants = [VariantRef {
            kernel: "k",
            config: "c",
            json: "{not json",
            image: &[],
        }];
        let op = new_op("t::k", &variants);
        let msg = launch(&op, &call(&[0], &[GRID], &[])).unwrap_err();
        assert!(msg.contains("variant 0"), "{msg}");
        assert_eq!(op.problem(), Some(msg));
    }

    /// Variants of these configs, as a generated op embeds them.
    fn op_of_configs(configs: &[&str]) -> Op {
        let json = r#"{"file":"x","kernel":"add","num_warps":4,"params":[]}"#;
        let variants: Vec<VariantRef> = configs
            .iter()
            .map(|config| VariantRef {
                kernel: "add",
                config,
                json,
                image: b".version 8.0\n",
            })
            .collect();
        new_op("t::add", &variants)
    }

    #[test]
    fn configs_are_listed_once_each() {
        let op = op_of_configs(&["SIZE=128", "SIZE=256", "SIZE=128", "SIZE=256"]);
        assert_eq!(configs(&op), ["SIZE=128", "SIZE=256"]);
        assert_eq!(last_config(&op), "");
    }

    #[test]
    fn pinning_takes_a_known_config_or_nothing_and_refuses_others() {
        let op = op_of_configs(&["SIZE=128", "SIZE=256"]);
        assert_eq!(pin_config(&op, "SIZE=256"), Ok(()));
        assert_eq!(pin_config(&op, ""), Ok(()));
        let err = pin_config(&op, "SIZE=512").unwrap_err();
        assert!(
            err.contains("no variant has the config `SIZE=512`"),
            "{err}"
        );
    }

    #[test]
    fn a_launch_the_pinned_config_does_not_accept_fails_naming_op_and_config() {
        let op = op_of_configs(&["SIZE=128", "SIZE=256"]);
        pin_config(&op, "SIZE=256").unwrap();
        // The call admits variant 0 (SIZE=128) only.
        let msg = launch(&op, &call(&[0], &[GRID], &[])).unwrap_err();
        assert!(
            msg.starts_with("t::add: the pinned config `SIZE=256` does not accept these inputs")
                && msg.contains("the configs that do: SIZE=128"),
            "{msg}"
        );
    }
}
