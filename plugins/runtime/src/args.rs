//! Typed kernel arguments, checked against the manifest's parameter types
//! and attributes, then packed for `cuLaunchKernel`.

use crate::error::{Result, RuntimeError};
use crate::manifest::{ElemType, Param, ParamType, Variant};
use std::ffi::c_void;
use std::fmt;

/// One argument of a launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KernelArg {
    /// A device address (`CUdeviceptr`), for any `T*` parameter.
    Ptr(u64),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl fmt::Display for KernelArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelArg::Ptr(p) => write!(f, "pointer 0x{p:x}"),
            KernelArg::I32(v) => write!(f, "i32 {v}"),
            KernelArg::I64(v) => write!(f, "i64 {v}"),
            KernelArg::F32(v) => write!(f, "f32 {v}"),
            KernelArg::F64(v) => write!(f, "f64 {v}"),
        }
    }
}

/// Pointers with no `__aligned` are assumed 16-byte aligned by the compiler.
pub const DEFAULT_POINTER_ALIGNMENT: u64 = 16;

/// Checks `args` against the variant's parameters: count, types, and the
/// `__multipleof` / `__aligned` promises the compiled code relies on.
pub fn check_args(variant: &Variant, args: &[KernelArg]) -> Result<()> {
    if args.len() != variant.params.len() {
        return Err(RuntimeError::ArgCount {
            kernel: variant.kernel.clone(),
            signature: variant.signature(),
            expected: variant.params.len(),
            got: args.len(),
        });
    }
    for (index, (param, arg)) in variant.params.iter().zip(args).enumerate() {
        check_one(param, arg).map_err(|expected| RuntimeError::ArgType {
            kernel: variant.kernel.clone(),
            index,
            param: param.name.clone(),
            expected,
            got: arg.to_string(),
        })?;
    }
    Ok(())
}

fn check_one(param: &Param, arg: &KernelArg) -> std::result::Result<(), String> {
    match (param.ty, *arg) {
        (ParamType::Pointer(elem), KernelArg::Ptr(addr)) => {
            let align = param.aligned.unwrap_or(DEFAULT_POINTER_ALIGNMENT);
            if align > 1 && addr % align != 0 {
                return Err(format!("a {} pointer aligned to {align} bytes", param.ty));
            }
            if let Some(n) = param.multiple_of {
                let bytes = n.saturating_mul(elem.size_bytes());
                if bytes > 1 && addr % bytes != 0 {
                    return Err(format!(
                        "a {} pointer whose address is a multiple of {n} elements ({bytes} bytes)",
                        param.ty
                    ));
                }
            }
            Ok(())
        }
        (ParamType::Scalar(ElemType::I32), KernelArg::I32(v)) => check_multiple(param, v as i64),
        (ParamType::Scalar(ElemType::I64), KernelArg::I64(v)) => check_multiple(param, v),
        (ParamType::Scalar(ElemType::F32), KernelArg::F32(_)) => Ok(()),
        (ParamType::Scalar(ElemType::F64), KernelArg::F64(_)) => Ok(()),
        (ParamType::Scalar(e), _)
            if !matches!(
                e,
                ElemType::I32 | ElemType::I64 | ElemType::F32 | ElemType::F64
            ) =>
        {
            Err(format!(
                "{} (a scalar type the runtime cannot pass yet: use i32, i64, f32 or f64)",
                param.ty
            ))
        }
        (ty, _) => Err(ty.to_string()),
    }
}

fn check_multiple(param: &Param, value: i64) -> std::result::Result<(), String> {
    match param.multiple_of {
        Some(n) if n > 1 && value.rem_euclid(n as i64) != 0 => {
            Err(format!("{} that is a multiple of {n}", param.ty))
        }
        _ => Ok(()),
    }
}

/// Argument values laid out for `cuLaunchKernel`: one 8-byte slot each
/// (the driver reads the parameter's own size from the slot's start), and a
/// pointer to each slot.
pub struct PackedArgs {
    slots: Vec<u64>,
}

impl PackedArgs {
    pub fn new(args: &[KernelArg]) -> PackedArgs {
        let slots = args
            .iter()
            .map(|arg| {
                let mut bytes = [0u8; 8];
                match *arg {
                    KernelArg::Ptr(v) => bytes = v.to_ne_bytes(),
                    KernelArg::I64(v) => bytes = v.to_ne_bytes(),
                    KernelArg::F64(v) => bytes = v.to_ne_bytes(),
                    KernelArg::I32(v) => bytes[..4].copy_from_slice(&v.to_ne_bytes()),
                    KernelArg::F32(v) => bytes[..4].copy_from_slice(&v.to_ne_bytes()),
                }
                u64::from_ne_bytes(bytes)
            })
            .collect();
        PackedArgs { slots }
    }

    /// The `kernelParams` array; valid while `self` is alive and unmoved.
    pub fn pointers(&mut self) -> Vec<*mut c_void> {
        self.slots
            .iter_mut()
            .map(|s| s as *mut u64 as *mut c_void)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::Manifest;

    fn add_variant() -> Variant {
        let m = Manifest::parse(include_str!("../tests/fixtures/add/manifest.json")).unwrap();
        m.variants[0].clone()
    }

    fn good_args() -> Vec<KernelArg> {
        vec![
            KernelArg::I32(1024),
            KernelArg::Ptr(0x7f00_0000_0000),
            KernelArg::Ptr(0x7f00_0000_1000),
            KernelArg::Ptr(0x7f00_0000_2000),
        ]
    }

    #[test]
    fn accepts_matching_arguments() {
        check_args(&add_variant(), &good_args()).unwrap();
    }

    #[test]
    fn wrong_count_names_the_signature() {
        let err = check_args(&add_variant(), &good_args()[..3]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kernel `add`: expected 4 arguments (add(i32 N, f32* a, f32* b, f32* c)), got 3"
        );
    }

    #[test]
    fn wrong_type_names_param_and_expected_type() {
        let mut args = good_args();
        args[0] = KernelArg::I64(1024);
        let err = check_args(&add_variant(), &args).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kernel `add`, parameter 0 `N`: expected i32, got i64 1024"
        );
        let mut args = good_args();
        args[2] = KernelArg::F32(1.0);
        let err = check_args(&add_variant(), &args).unwrap_err();
        assert!(
            err.to_string().contains("parameter 2 `b`: expected f32*"),
            "{err}"
        );
    }

    #[test]
    fn checks_alignment_and_multiple_of() {
        let mut v = add_variant();
        let mut args = good_args();
        args[1] = KernelArg::Ptr(0x7f00_0000_0004);
        let err = check_args(&v, &args).unwrap_err();
        assert!(err.to_string().contains("aligned to 16 bytes"), "{err}");

        v.params[0].multiple_of = Some(1024);
        let mut args = good_args();
        args[0] = KernelArg::I32(1000);
        let err = check_args(&v, &args).unwrap_err();
        assert!(err.to_string().contains("multiple of 1024"), "{err}");

        v.params[1].aligned = Some(4);
        v.params[1].multiple_of = Some(8);
        let mut args = good_args();
        args[1] = KernelArg::Ptr(0x7f00_0000_0010); // 16 bytes: not 8 f32s
        let err = check_args(&v, &args).unwrap_err();
        assert!(
            err.to_string()
                .contains("multiple of 8 elements (32 bytes)"),
            "{err}"
        );
    }

    #[test]
    fn packs_each_value_at_the_start_of_its_slot() {
        let mut packed = PackedArgs::new(&[
            KernelArg::I32(-2),
            KernelArg::F32(1.5),
            KernelArg::Ptr(0xdead_beef_0000),
            KernelArg::F64(0.25),
        ]);
        let ptrs = packed.pointers();
        unsafe {
            assert_eq!(*(ptrs[0] as *const i32), -2);
            assert_eq!(*(ptrs[1] as *const f32), 1.5);
            assert_eq!(*(ptrs[2] as *const u64), 0xdead_beef_0000);
            assert_eq!(*(ptrs[3] as *const f64), 0.25);
        }
    }
}
