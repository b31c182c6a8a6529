//! The NVPTX target: target machine, module setup, the kernel declaration with
//! its `nvvm.annotations`, optimization and PTX emission.
use crate::codegen::Arch;
use crate::codegen::CodegenError;
use crate::ir::Function;
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::context::Context;
use inkwell::module::Module;
use inkwell::passes::PassBuilderOptions;
use inkwell::targets::{
    CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
};
use inkwell::types::AnyType;
use inkwell::values::FunctionValue;
use inkwell::AddressSpace;
use inkwell::OptimizationLevel;
use std::sync::Once;

pub const TRIPLE: &str = "nvptx64-nvidia-cuda";
/// PTX ISA 8.0: accepted by ptxas 13.0 for sm_80 and sm_90.
pub const PTX_FEATURES: &str = "+ptx80";
pub fn cpu_name(arch: Arch) -> &'static str {
    match arch {
        Arch::Sm80 => "sm_80",
        Arch::Sm90 => "sm_90",
        Arch::Sm90a => "sm_90a",
    }
}

pub fn target_machine(arch: Arch) -> Result<TargetMachine, CodegenError> {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        Target::initialize_nvptx(&InitializationConfig::default());
        set_llvm_options();
    });
    let triple = TargetTriple::create(TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::Llvm(e.to_string()))?;
    target
        .create_target_machine(
            &triple,
            cpu_name(arch),
            PTX_FEATURES,
            // `Default`, not `Aggressive`: NVPTX then runs early CSE instead of GVN
            // after splitting GEPs, ~80 ms less on a 128x128 dot, and the PTX of all
            // 136 test and tensor-core kernels stayed the same up to register numbers.
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| CodegenError::Llvm("cannot create the NVPTX target machine".into()))
}

/// LLVM's own options, set once per process: `TRITONC_LLVM_ARGS` (space
/// separated, e.g. `-disable-lsr`), for measuring; none by default.
fn set_llvm_options() {
    let Ok(args) = std::env::var("TRITONC_LLVM_ARGS") else {
        return;
    };
    let owned: Vec<std::ffi::CString> = std::iter::once("tritonc")
        .chain(args.split_whitespace())
        .filter_map(|a| std::ffi::CString::new(a).ok())
        .collect();
    let argv: Vec<*const std::ffi::c_char> = owned.iter().map(|a| a.as_ptr()).collect();
    // SAFETY: argv points into `owned`, alive for the call; LLVM copies what it keeps.
    unsafe {
        inkwell::llvm_sys::support::LLVMParseCommandLineOptions(
            argv.len() as i32,
            argv.as_ptr(),
            c"tritonc".as_ptr(),
        );
    }
}

pub fn new_module<'ctx>(ctx: &'ctx Context, name: &str, tm: &TargetMachine) -> Module<'ctx> {
    let module = ctx.create_module(name);
    module.set_triple(&tm.get_triple());
    module.set_data_layout(&tm.get_target_data().get_data_layout());
    module
}

/// Declares the kernel with its parameters in IR order (pointers as
/// `ptr addrspace(1)`) and marks it as a kernel with `maxntid` threads.
pub fn declare_kernel<'ctx>(
    ctx: &'ctx Context,
    module: &Module<'ctx>,
    func: &Function,
    num_threads: u32,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let mut params: Vec<_> = func
        .params
        .iter()
        .map(|p| {
            crate::codegen::lower::types::llvm_scalar_type(ctx, func.ty(p.value).scalar).into()
        })
        .collect();
    let maps = func.tensor_maps().len();
    params.extend((0..maps).map(|_| -> inkwell::types::BasicMetadataTypeEnum {
        ctx.ptr_type(AddressSpace::default()).into()
    }));
    // A persistent kernel's tile count (`num_programs(0)` as launched
    // before the grid shrank to the resident programs), last.
    let persistent = func.persistent();
    if persistent {
        params.push(ctx.i32_type().into());
    }
    let fn_type = ctx.void_type().fn_type(&params, false);
    let kernel = module.add_function(&func.name, fn_type, None);
    for (i, p) in func.params.iter().enumerate() {
        if let Some(v) = kernel.get_nth_param(i as u32) {
            v.set_name(&p.name);
        }
    }
    if let (true, Some(v)) = (persistent, kernel.get_last_param()) {
        v.set_name(PERSISTENT_TILES_PARAM);
    }
    let fn_ptr = kernel.as_global_value().as_pointer_value();
    let i32t = ctx.i32_type();
    let annotate = |node: inkwell::values::MetadataValue<'ctx>| {
        module
            .add_global_metadata("nvvm.annotations", &node)
            .map_err(|e| CodegenError::Llvm(e.to_string()))
    };
    for (key, value) in [("kernel", 1u64), ("maxntidx", num_threads as u64)] {
        annotate(ctx.metadata_node(&[
            fn_ptr.into(),
            ctx.metadata_string(key).into(),
            i32t.const_int(value, false).into(),
        ]))?;
    }
    if maps > 0 {
        // Tensor maps: 128 bytes by value, 64-aligned, read in place by the
        // TMA unit (`grid_constant`: their addresses are taken, not copied).
        let map_ty = ctx.i8_type().array_type(TENSOR_MAP_BYTES);
        let byval = ctx.create_type_attribute(
            Attribute::get_named_enum_kind_id("byval"),
            map_ty.as_any_type_enum(),
        );
        let align =
            ctx.create_enum_attribute(Attribute::get_named_enum_kind_id("align"), TENSOR_MAP_ALIGN);
        let first = func.params.len();
        let mut indices = Vec::with_capacity(maps);
        for i in first..first + maps {
            kernel.add_attribute(AttributeLoc::Param(i as u32), byval);
            kernel.add_attribute(AttributeLoc::Param(i as u32), align);
            if let Some(v) = kernel.get_nth_param(i as u32) {
                v.set_name(&format!("tensor_map_{}", i - first));
            }
            // 1-based parameter numbers.
            indices.push(i32t.const_int(i as u64 + 1, false).into());
        }
        annotate(ctx.metadata_node(&[
            fn_ptr.into(),
            ctx.metadata_string("grid_constant").into(),
            ctx.metadata_node(&indices).into(),
        ]))?;
    }
    Ok(kernel)
}

/// Name of a persistent kernel's last parameter: its tile count.
pub const PERSISTENT_TILES_PARAM: &str = "persistent_tiles";

/// Bytes and alignment of a `CUtensorMap` kernel parameter.
pub const TENSOR_MAP_BYTES: u32 = 128;
pub const TENSOR_MAP_ALIGN: u64 = 64;

pub fn optimize(module: &Module, tm: &TargetMachine) -> Result<(), CodegenError> {
    let custom = std::env::var("TRITONC_LLVM_PASSES").ok();
    let passes = custom
        .as_deref()
        .unwrap_or(crate::codegen::pass_pipeline::PASS_PIPELINE.as_str());
    module
        .run_passes(passes, tm, PassBuilderOptions::create())
        .map_err(|e| CodegenError::Llvm(format!("pass pipeline `{passes}`: {e}")))
}

pub fn emit_ptx(module: &Module, tm: &TargetMachine) -> Result<String, CodegenError> {
    let buf = tm
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| CodegenError::Llvm(e.to_string()))?;
    Ok(String::from_utf8_lossy(buf.as_slice()).into_owned())
}

/// Declares the kernel's cluster (`x` CTAs along x for TMA multicast pairs,
/// `z` along z for split-K) in its PTX: LLVM 19
/// writes no `.reqnctapercluster`, so it goes after the `.maxntid` LLVM
/// writes. A plain launch then runs the kernel in clusters of that shape.
pub fn with_cluster(ptx: String, (x, z): (u32, u32)) -> Result<String, CodegenError> {
    if x <= 1 && z <= 1 {
        return Ok(ptx);
    }
    let Some(at) = ptx.find(".maxntid") else {
        return Err(CodegenError::Llvm(
            "no `.maxntid` in the PTX to put the cluster shape after".into(),
        ));
    };
    let end = ptx[at..].find('\n').map_or(ptx.len(), |n| at + n);
    let mut out = ptx;
    out.insert_str(
        end,
        &format!("\n.reqnctapercluster {}, 1, {}", x.max(1), z.max(1)),
    );
    Ok(out)
}
