//! # opgen-bridge
//!
//! The C ABI (`include/opgen_bridge.h`) that generated framework bindings call:
//! an op owns its embedded variants, loads them per device on first use,
//! autotunes among the candidates a call allows, and launches on the
//! framework's stream through `opgen-runtime`. Built as a static library so
//! that a machine with only a C++ compiler can link it.
//!
//! Every entry point catches panics and turns every failure into a message.

mod launch;
mod per_device;
mod pin;

use launch::Op;
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

#[repr(C)]
pub struct OpgenVariant {
    pub kernel: *const c_char,
    pub config: *const c_char,
    pub variant_json: *const c_char,
    pub image: *const u8,
    pub image_len: usize,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct OpgenArg {
    pub kind: u32,
    pub reserved: u32,
    pub bits: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpgenGrid {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    pub persistent: u32,
}

pub const ARG_PTR: u32 = 0;
pub const ARG_I32: u32 = 1;
pub const ARG_I64: u32 = 2;
pub const ARG_F32: u32 = 3;
pub const ARG_F64: u32 = 4;

/// # Safety
/// `name` is a C string; `variants` points to `count` entries whose strings
/// and images stay valid for the life of the process.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_new(
    name: *const c_char,
    variants: *const OpgenVariant,
    count: usize,
) -> *mut Op {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let name = cstr(name);
        let entries: &[OpgenVariant] = if variants.is_null() || count == 0 {
            &[]
        } else {
            std::slice::from_raw_parts(variants, count)
        };
        Op::new(name, entries)
    }));
    let op = result.unwrap_or_else(|_| Op::broken("panic while creating the op"));
    Box::into_raw(Box::new(op))
}

/// # Safety
/// Pointers as described in `opgen_bridge.h`: `op` from `opgen_op_new`,
/// `candidates` and `grids` of `count` entries, `args` of `nargs`, `dims` of
/// `ndims`, `err` writable for `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_launch(
    op: *mut Op,
    device: i32,
    stream: *mut c_void,
    candidates: *const u32,
    grids: *const OpgenGrid,
    count: usize,
    args: *const OpgenArg,
    nargs: usize,
    dtype_key: *const c_char,
    dims: *const i64,
    ndims: usize,
    err: *mut c_char,
    err_len: usize,
) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let Some(op) = op.as_ref() else {
            return Err("null op handle".to_string());
        };
        let call = launch::Call {
            device,
            stream,
            candidates: slice(candidates, count),
            grids: slice(grids, count),
            args: slice(args, nargs),
            dtype_key: cstr(dtype_key),
            dims: slice(dims, ndims),
        };
        op.launch(&call)
    }));
    status(outcome, err, err_len)
}

/// # Safety
/// `op` from `opgen_op_new`; `json` a C string or null.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_preload(op: *mut Op, json: *const c_char) -> usize {
    let text = cstr(json);
    catch_unwind(AssertUnwindSafe(|| {
        op.as_ref().map(|op| op.preload(&text)).unwrap_or(0)
    }))
    .unwrap_or(0)
}

/// # Safety
/// `op` from `opgen_op_new`; `buf` writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_last_config(op: *mut Op, buf: *mut c_char, len: usize) {
    let text = op.as_ref().map(|op| op.last_config()).unwrap_or_default();
    write_c_string(&text, buf, len);
}

/// The op's distinct configs, one a line, copied into `buf`; returns the
/// bytes the whole list needs (without its NUL), so a caller can retry.
///
/// # Safety
/// `op` from `opgen_op_new` (or null: 0); `buf` writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_configs(op: *mut Op, buf: *mut c_char, len: usize) -> usize {
    let text = catch_unwind(AssertUnwindSafe(|| {
        op.as_ref()
            .map(|op| op.configs().join("\n"))
            .unwrap_or_default()
    }))
    .unwrap_or_default();
    write_c_string(&text, buf, len);
    text.len()
}

/// Pins `config` (one of `opgen_op_configs`): later launches run it instead
/// of the autotuner's pick, and fail for inputs it does not accept. NULL or
/// "" unpins. Returns 0, or non-zero with a message in `err`.
///
/// # Safety
/// `op` from `opgen_op_new`; `config` a C string or null; `err` writable for
/// `err_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn opgen_op_pin_config(
    op: *mut Op,
    config: *const c_char,
    err: *mut c_char,
    err_len: usize,
) -> i32 {
    let config = cstr(config);
    let outcome = catch_unwind(AssertUnwindSafe(|| match op.as_ref() {
        Some(op) => op.pin(&config),
        None => Err("null op handle".to_string()),
    }));
    status(outcome, err, err_len)
}

/// # Safety
/// `op` from `opgen_op_new` (or null: 0).
#[no_mangle]
pub unsafe extern "C" fn opgen_op_benchmark_calls(op: *mut Op) -> u64 {
    op.as_ref().map_or(0, Op::benchmark_calls)
}

/// What makes `op` unusable on every device (its embedded variants: an image
/// that does not match its digest, an invalid description), found without a
/// GPU; `None` when nothing does. For Rust callers (the ONNX Runtime crate),
/// which check it before opening a device.
///
/// # Safety
/// `op` from `opgen_op_new` (or null: `None`).
pub unsafe fn opgen_op_problem(op: *mut Op) -> Option<String> {
    op.as_ref().and_then(Op::problem)
}

/// 0 for success, else 1 with the message (or the panic) written to `err`.
unsafe fn status(
    outcome: std::thread::Result<Result<(), String>>,
    err: *mut c_char,
    err_len: usize,
) -> i32 {
    let message = match outcome {
        Ok(Ok(())) => return 0,
        Ok(Err(message)) => message,
        Err(_) => "internal error: panic in the opgen runtime".to_string(),
    };
    write_c_string(&message, err, err_len);
    1
}

unsafe fn cstr(p: *const c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        CStr::from_ptr(p).to_string_lossy().into_owned()
    }
}

unsafe fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        std::slice::from_raw_parts(p, n)
    }
}

/// Copies `text` into `buf`, truncated on a char boundary, NUL-terminated.
unsafe fn write_c_string(text: &str, buf: *mut c_char, len: usize) {
    if buf.is_null() || len == 0 {
        return;
    }
    let mut n = text.len().min(len - 1);
    while !text.is_char_boundary(n) {
        n -= 1;
    }
    std::ptr::copy_nonoverlapping(text.as_ptr(), buf as *mut u8, n);
    *buf.add(n) = 0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_text_is_truncated_and_terminated() {
        let mut buf = [1 as c_char; 6];
        unsafe { write_c_string("héllo world", buf.as_mut_ptr(), buf.len()) };
        let s = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
        assert_eq!(s, "héll");
    }

    #[test]
    fn launch_without_gpu_reports_an_error_not_a_panic() {
        let kernel = c"add".as_ptr();
        let config = c"SIZE=128 num_warps=4".as_ptr();
        let json = c"{\"file\":\"x\",\"kernel\":\"add\",\"num_warps\":4,\"params\":[{\"name\":\"N\",\"type\":\"i32\"}]}".as_ptr();
        let image = b".version 8.0\n";
        let variants = [OpgenVariant {
            kernel,
            config,
            variant_json: json,
            image: image.as_ptr(),
            image_len: image.len(),
        }];
        let op = unsafe { opgen_op_new(c"t::add".as_ptr(), variants.as_ptr(), 1) };
        let candidates = [0u32];
        let grids = [OpgenGrid {
            x: 1,
            y: 1,
            z: 1,
            persistent: 0,
        }];
        let args = [OpgenArg {
            kind: ARG_I32,
            reserved: 0,
            bits: 7,
        }];
        let mut err = [0 as c_char; 512];
        let rc = unsafe {
            opgen_op_launch(
                op,
                0,
                std::ptr::null_mut(),
                candidates.as_ptr(),
                grids.as_ptr(),
                1,
                args.as_ptr(),
                1,
                c"T=float32".as_ptr(),
                [7i64].as_ptr(),
                1,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        if opgen_runtime::driver::is_available() {
            return; // a machine with a GPU fails differently (bad PTX); not this test's point
        }
        assert_eq!(rc, 1);
        assert!(msg.contains("no CUDA device"), "{msg}");
        // One candidate: nothing to tune, nothing benchmarked.
        assert_eq!(unsafe { opgen_op_benchmark_calls(op) }, 0);
        assert_eq!(unsafe { opgen_op_benchmark_calls(std::ptr::null_mut()) }, 0);
    }

    #[test]
    fn preloads_only_this_ops_entries() {
        let op = unsafe { opgen_op_new(c"t::add".as_ptr(), std::ptr::null(), 0) };
        let json = c"{\"format_version\": 2, \"entries\": {
            \"t::add|[1024]|T=float32|H100|cands=2:7d2ba1b1\": {\"config\": \"SIZE=256 num_warps=4\", \"time_ms\": 0.1},
            \"t::add|[2048]|T=float32|H100|cands=2:7d2ba1b1\": {\"config\": \"SIZE=1024 num_warps=4\", \"time_ms\": 0.2},
            \"t::sub|[1024]|T=float32|H100|cands=2:7d2ba1b1\": {\"config\": \"SIZE=256 num_warps=4\", \"time_ms\": 0.1},
            \"t::add|[4096]|T=float32|H100|cands=2:7d2ba1b1\": {\"time_ms\": 0.1}}}";
        assert_eq!(unsafe { opgen_op_preload(op, json.as_ptr()) }, 2);
        // Version 1 keys do not name the candidates: kept only with timings.
        let legacy = c"{\"format_version\": 1, \"entries\": {
            \"t::add|[1024]|T=float32|H100\": {\"config\": \"SIZE=256 num_warps=4\", \"time_ms\": 0.1},
            \"t::add|[2048]|T=float32|H100\": {\"config\": \"SIZE=256 num_warps=4\", \"time_ms\": 0.1,
                \"timings_ms\": {\"SIZE=256 num_warps=4\": 0.1, \"SIZE=1024 num_warps=4\": 0.2}}}}";
        assert_eq!(unsafe { opgen_op_preload(op, legacy.as_ptr()) }, 1);
        assert_eq!(unsafe { opgen_op_preload(op, c"not json".as_ptr()) }, 0);
        assert_eq!(unsafe { opgen_op_preload(op, c"".as_ptr()) }, 0);
        assert_eq!(unsafe { opgen_op_preload(op, std::ptr::null()) }, 0);
        assert_eq!(
            unsafe { opgen_op_preload(std::ptr::null_mut(), json.as_ptr()) },
            0
        );
    }

    #[test]
    fn a_bad_variant_entry_is_reported_at_launch() {
        let variants = [OpgenVariant {
            kernel: c"k".as_ptr(),
            config: c"c".as_ptr(),
            variant_json: c"{not json".as_ptr(),
            image: std::ptr::null(),
            image_len: 0,
        }];
        let op = unsafe { opgen_op_new(c"t::k".as_ptr(), variants.as_ptr(), 1) };
        let mut err = [0 as c_char; 256];
        let rc = unsafe {
            opgen_op_launch(
                op,
                0,
                std::ptr::null_mut(),
                [0u32].as_ptr(),
                [OpgenGrid {
                    x: 1,
                    y: 1,
                    z: 1,
                    persistent: 0,
                }]
                .as_ptr(),
                1,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) }
            .to_string_lossy()
            .into_owned();
        assert_eq!(rc, 1);
        assert!(msg.contains("variant 0"), "{msg}");
    }

    /// Two dtypes' variants of two configs, as a generated op embeds them.
    fn op_of_configs(configs: &[&'static CStr]) -> *mut Op {
        let json = c"{\"file\":\"x\",\"kernel\":\"add\",\"num_warps\":4,\"params\":[]}";
        let variants: Vec<OpgenVariant> = configs
            .iter()
            .map(|config| OpgenVariant {
                kernel: c"add".as_ptr(),
                config: config.as_ptr(),
                variant_json: json.as_ptr(),
                image: b".version 8.0\n".as_ptr(),
                image_len: 13,
            })
            .collect();
        // Leaked: an op's variants are static data of its library.
        let variants = Box::leak(variants.into_boxed_slice());
        unsafe { opgen_op_new(c"t::add".as_ptr(), variants.as_ptr(), variants.len()) }
    }

    fn text(buf: &[c_char]) -> String {
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn configs_are_listed_once_each_with_the_length_they_need() {
        let op = op_of_configs(&[c"SIZE=128", c"SIZE=256", c"SIZE=128", c"SIZE=256"]);
        let mut buf = [0 as c_char; 64];
        let needed = unsafe { opgen_op_configs(op, buf.as_mut_ptr(), buf.len()) };
        assert_eq!(text(&buf), "SIZE=128\nSIZE=256");
        assert_eq!(needed, 17);
        let mut small = [0 as c_char; 5];
        assert_eq!(
            unsafe { opgen_op_configs(op, small.as_mut_ptr(), small.len()) },
            17
        );
        assert_eq!(text(&small), "SIZE");
        assert_eq!(
            unsafe { opgen_op_configs(std::ptr::null_mut(), buf.as_mut_ptr(), buf.len()) },
            0
        );
    }

    #[test]
    fn pinning_takes_a_known_config_or_nothing_and_refuses_others() {
        let op = op_of_configs(&[c"SIZE=128", c"SIZE=256"]);
        let mut err = [0 as c_char; 256];
        let pin = |config: *const c_char, err: &mut [c_char]| unsafe {
            opgen_op_pin_config(op, config, err.as_mut_ptr(), err.len())
        };
        assert_eq!(pin(c"SIZE=256".as_ptr(), &mut err), 0);
        assert_eq!(pin(std::ptr::null(), &mut err), 0);
        assert_eq!(pin(c"SIZE=512".as_ptr(), &mut err), 1);
        assert!(
            text(&err).contains("no variant has the config `SIZE=512`"),
            "{}",
            text(&err)
        );
        let rc = unsafe {
            opgen_op_pin_config(
                std::ptr::null_mut(),
                c"SIZE=128".as_ptr(),
                err.as_mut_ptr(),
                err.len(),
            )
        };
        assert_eq!(rc, 1);
        assert_eq!(text(&err), "null op handle");
    }

    #[test]
    fn a_launch_the_pinned_config_does_not_accept_fails_naming_op_and_config() {
        let op = op_of_configs(&[c"SIZE=128", c"SIZE=256"]);
        let mut err = [0 as c_char; 512];
        assert_eq!(
            unsafe { opgen_op_pin_config(op, c"SIZE=256".as_ptr(), err.as_mut_ptr(), err.len()) },
            0
        );
        let grid = OpgenGrid {
            x: 1,
            y: 1,
            z: 1,
            persistent: 0,
        };
        // The call admits variant 0 (SIZE=128) only.
        let rc = unsafe {
            opgen_op_launch(
                op,
                0,
                std::ptr::null_mut(),
                [0u32].as_ptr(),
                [grid].as_ptr(),
                1,
                std::ptr::null(),
                0,
                c"T=float32".as_ptr(),
                [7i64].as_ptr(),
                1,
                err.as_mut_ptr(),
                err.len(),
            )
        };
        assert_eq!(rc, 1);
        let msg = text(&err);
        assert!(
            msg.starts_with("t::add: the pinned config `SIZE=256` does not accept these inputs")
                && msg.contains("the configs that do: SIZE=128"),
            "{msg}"
        );
    }
}
