//! The C++ boundary: generated torch, TensorFlow and JAX ops call these
//! through the header cxx generates from this bridge (`opgen_bridge.h` in
//! their build folders, with `rust/cxx.h`). A Rust `Err` arrives in C++ as a
//! thrown `rust::Error` whose `what()` is the message; the functions it
//! calls (lib.rs) catch panics, which cxx would turn into an abort.

use crate::{Call, KernelArg, LaunchGrid, Op, VariantRef};

#[cxx::bridge(namespace = "opgen")]
#[allow(clippy::too_many_arguments)] // launch's, as C++ sees them
mod bridge {
    /// One compiled variant, as kernels.cc embeds it. Borrowed: its strings
    /// and image are static data of the generated library, and `new_op`
    /// copies what the op keeps; cxx holds `&str`/`&[u8]` in a shared struct
    /// as `rust::Str`/`rust::Slice<const uint8_t>`, so no raw pointers.
    struct Variant<'a> {
        /// The entry point in the image.
        kernel: &'a str,
        /// "SIZE=256 num_warps=4": the autotuner's name for it.
        config: &'a str,
        /// The manifest entry: macros, num_warps, shared_bytes, params.
        variant_json: &'a str,
        /// PTX text or a cubin.
        image: &'a [u8],
    }

    #[repr(u32)]
    enum ArgKind {
        Ptr = 0,
        I32 = 1,
        I64 = 2,
        F32 = 3,
        F64 = 4,
    }

    /// A kernel argument: `bits` holds the pointer, or the value's bits
    /// (a float's in the low 32).
    struct Arg {
        kind: ArgKind,
        bits: u64,
    }

    /// Programs per axis; `persistent`: x is a work count, and the runtime
    /// launches min(x, SMs x blocks per SM) programs.
    struct Grid {
        x: u32,
        y: u32,
        z: u32,
        persistent: bool,
    }

    /// A row-major matrix on the device: `rows` rows of `cols` elements,
    /// each row `ld` elements after the one before.
    struct Matrix {
        addr: u64,
        rows: i64,
        cols: i64,
        ld: i64,
    }

    extern "Rust" {
        type Op;

        /// Never fails: what is wrong with a variant is reported by every launch.
        fn new_op(name: &str, variants: &[Variant<'_>]) -> Box<Op>;

        /// Launches one of `candidates` (indices into the variants, with
        /// `grids[i]` for candidate i) on `stream` (a `CUstream` as an
        /// integer: cxx has no `void*`) of `device`. With several candidates
        /// the autotuner picks one, keyed by op, `dtype_key`, the bucketed
        /// `dims` and the device, and remembers it, under `call_key` where
        /// not empty: what decides the candidates, grids and tuning key.
        fn launch(
            op: &Op,
            device: i32,
            stream: usize,
            candidates: &[u32],
            grids: &[Grid],
            args: &[Arg],
            dtype_key: &str,
            dims: &[i64],
            call_key: &[i64],
        ) -> Result<()>;

        /// Repeats the launch decided for `call_key` on `device`, without
        /// the candidates: false where none is (then compute them and call
        /// `launch`).
        fn launch_known(
            op: &Op,
            device: i32,
            stream: usize,
            call_key: &[i64],
            args: &[Arg],
        ) -> Result<bool>;

        /// Takes this op's choices of a pre-tuned table (an autotune cache
        /// file's JSON); returns how many (0 for "" or bad JSON).
        fn preload(op: &Op, tuned_json: &str) -> usize;

        /// The config the last launch used ("" before any).
        fn last_config(op: &Op) -> String;

        /// The op's distinct configs.
        fn configs(op: &Op) -> Vec<String>;

        /// Pins `config` (one of `configs`) for later launches; "" unpins.
        fn pin_config(op: &Op, config: &str) -> Result<()>;

        /// Configs benchmarked in this process: 0 while every call was
        /// decided from the autotune cache or a pre-tuned table.
        fn benchmark_calls(op: &Op) -> u64;

        /// Zeroes `bytes` at device address `ptr` in `stream`'s order: an
        /// op's outputs where an input is empty (a matmul over K = 0).
        fn zero_fill(device: i32, stream: usize, ptr: u64, bytes: u64) -> Result<()>;

        /// Copies `src` into `dst` in `stream`'s order with the runtime's
        /// `copy_fill` kernel, zeros where only `dst` has an element (a
        /// zero-padded twin; a padded output cut back): false, with nothing
        /// done, where that kernel does not take them (copy another way).
        fn copy_fill(
            device: i32,
            stream: usize,
            src: &Matrix,
            dst: &Matrix,
            elem_bytes: u32,
        ) -> Result<bool>;

        /// Moves the dense row-major tensor of `shape` at `dense` into its
        /// twin at `twin` (`shape` rounded up per axis to `multiples`), zeros
        /// in the rest: a `pad` line's odd input; or, not `into_twin`, the
        /// twin's corner back into the tensor: a padded output cut back. In
        /// `stream`'s order.
        fn pad_copy(
            device: i32,
            stream: usize,
            into_twin: bool,
            dense: u64,
            twin: u64,
            shape: &[i64],
            multiples: &[i64],
            elem_bytes: u32,
        ) -> Result<()>;
    }
}

fn new_op(name: &str, variants: &[bridge::Variant<'_>]) -> Box<Op> {
    let variants: Vec<VariantRef> = variants
        .iter()
        .map(|v| VariantRef {
            kernel: v.kernel,
            config: v.config,
            json: v.variant_json,
            image: v.image,
        })
        .collect();
    Box::new(crate::new_op(name, &variants))
}

#[allow(clippy::too_many_arguments)]
fn launch(
    op: &Op,
    device: i32,
    stream: usize,
    candidates: &[u32],
    grids: &[bridge::Grid],
    args: &[bridge::Arg],
    dtype_key: &str,
    dims: &[i64],
    call_key: &[i64],
) -> Result<(), String> {
    let grids: Vec<LaunchGrid> = grids
        .iter()
        .map(|g| LaunchGrid {
            x: g.x,
            y: g.y,
            z: g.z,
            persistent: g.persistent,
        })
        .collect();
    let args = args.iter().map(kernel_arg).collect::<Result<Vec<_>, _>>()?;
    let call = Call {
        device,
        stream: stream as *mut std::ffi::c_void,
        candidates,
        grids: &grids,
        args: &args,
        dtype_key,
        dims,
        call_key,
    };
    crate::launch(op, &call)
}

fn launch_known(
    op: &Op,
    device: i32,
    stream: usize,
    call_key: &[i64],
    args: &[bridge::Arg],
) -> Result<bool, String> {
    let args = args.iter().map(kernel_arg).collect::<Result<Vec<_>, _>>()?;
    crate::launch_known(op, device, stream as *mut std::ffi::c_void, call_key, &args)
}

fn copy_fill(
    device: i32,
    stream: usize,
    src: &bridge::Matrix,
    dst: &bridge::Matrix,
    elem_bytes: u32,
) -> Result<bool, String> {
    let matrix = |m: &bridge::Matrix| -> Result<opgen_runtime::copy_fill::Matrix, String> {
        let size = |n: i64, what: &str| {
            usize::try_from(n).map_err(|_| format!("copy_fill: {what} = {n} is negative"))
        };
        Ok(opgen_runtime::copy_fill::Matrix {
            addr: m.addr,
            rows: size(m.rows, "rows")?,
            cols: size(m.cols, "cols")?,
            ld: size(m.ld, "leading stride")?,
        })
    };
    crate::copy_fill(
        device,
        stream as *mut std::ffi::c_void,
        matrix(src)?,
        matrix(dst)?,
        elem_bytes as usize,
    )
}

#[allow(clippy::too_many_arguments)] // the tensor's layout, as C++ passes it
fn pad_copy(
    device: i32,
    stream: usize,
    into_twin: bool,
    dense: u64,
    twin: u64,
    shape: &[i64],
    multiples: &[i64],
    elem_bytes: u32,
) -> Result<(), String> {
    use opgen_runtime::pad::PadDirection::{FromTwin, IntoTwin};
    let direction = if into_twin { IntoTwin } else { FromTwin };
    let stream = stream as *mut std::ffi::c_void;
    crate::pad_copy(
        device,
        stream,
        direction,
        dense,
        twin,
        shape,
        multiples,
        elem_bytes as usize,
    )
}

fn kernel_arg(a: &bridge::Arg) -> Result<KernelArg, String> {
    use bridge::ArgKind;
    Ok(match a.kind {
        ArgKind::Ptr => KernelArg::Ptr(a.bits),
        ArgKind::I32 => KernelArg::I32(a.bits as u32 as i32),
        ArgKind::I64 => KernelArg::I64(a.bits as i64),
        ArgKind::F32 => KernelArg::F32(f32::from_bits(a.bits as u32)),
        ArgKind::F64 => KernelArg::F64(f64::from_bits(a.bits)),
        other => return Err(format!("unknown argument kind {}", other.repr)),
    })
}

fn preload(op: &Op, tuned_json: &str) -> usize {
    crate::preload(op, tuned_json)
}

fn last_config(op: &Op) -> String {
    crate::last_config(op)
}

fn configs(op: &Op) -> Vec<String> {
    crate::configs(op)
}

fn pin_config(op: &Op, config: &str) -> Result<(), String> {
    crate::pin_config(op, config)
}

fn benchmark_calls(op: &Op) -> u64 {
    crate::benchmark_calls(op)
}

fn zero_fill(device: i32, stream: usize, ptr: u64, bytes: u64) -> Result<(), String> {
    crate::zero_fill(device, stream as *mut std::ffi::c_void, ptr, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_keep_their_bits() {
        let arg = |kind, bits| kernel_arg(&bridge::Arg { kind, bits }).unwrap();
        use bridge::ArgKind;
        assert_eq!(
            arg(ArgKind::Ptr, 0xdead_beef_0000),
            KernelArg::Ptr(0xdead_beef_0000)
        );
        assert_eq!(arg(ArgKind::I32, (-7i32) as u32 as u64), KernelArg::I32(-7));
        assert_eq!(arg(ArgKind::I64, (-7i64) as u64), KernelArg::I64(-7));
        assert_eq!(
            arg(ArgKind::F32, 1.5f32.to_bits() as u64),
            KernelArg::F32(1.5)
        );
        assert_eq!(arg(ArgKind::F64, 2.5f64.to_bits()), KernelArg::F64(2.5));
        let bad = kernel_arg(&bridge::Arg {
            kind: ArgKind { repr: 9 },
            bits: 0,
        });
        assert_eq!(bad.unwrap_err(), "unknown argument kind 9");
    }

    #[test]
    fn an_unknown_pinned_config_is_an_error_through_the_bridge() {
        let variants = [bridge::Variant {
            kernel: "add",
            config: "SIZE=128",
            variant_json: r#"{"file":"x","kernel":"add","num_warps":4,"params":[]}"#,
            image: b".version 8.0\n",
        }];
        let op = new_op("t::add", &variants);
        assert_eq!(configs(&op), ["SIZE=128"]);
        let err = pin_config(&op, "SIZE=512").unwrap_err();
        assert_eq!(
            err,
            "no variant has the config `SIZE=512`; the op's configs are: SIZE=128"
        );
    }
}
