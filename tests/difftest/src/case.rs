//! A generated kernel made into a test case: compiled to PTX by the real
//! driver, run by the CPU interpreter on its inputs; the interpreter's
//! outputs are what the GPU must reproduce.

use crate::kernel::{Kernel, Param};
use crate::rng::input_values;
use half::{bf16, f16};
use std::path::PathBuf;
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::{compile, lower, CompileError, CompileOptions, Source};
use tritonc::interp::{run, ArgValue, Memory};
use tritonc::ir::DType;

/// What one seed gave.
pub enum Outcome {
    /// Compiled and interpreted: the case for the GPU.
    Case(Case),
    /// The config needs more than the target gives (a tuning space would
    /// drop it): not a finding.
    OverLimit,
    /// A generated kernel, well-typed by construction, that the compiler or
    /// the interpreter refused or failed on: a finding.
    Failed {
        stage: &'static str,
        message: String,
        kernel: Kernel,
    },
}

#[derive(serde::Serialize)]
pub struct Case {
    pub seed: u64,
    #[serde(flatten)]
    pub kernel: Kernel,
    pub ptx: String,
    pub shared_bytes: usize,
    /// Per output buffer (by parameter name): the interpreter's result, raw
    /// little-endian bytes.
    #[serde(skip)]
    pub expected: Vec<(String, Vec<u8>)>,
}

pub fn arch(name: &str) -> Arch {
    match name {
        "sm_80" => Arch::Sm80,
        "sm_90a" => Arch::Sm90a,
        _ => Arch::Sm90,
    }
}

fn dtype(name: &str) -> DType {
    match name {
        "f32" => DType::F32,
        "f16" => DType::F16,
        "bf16" => DType::BF16,
        _ => DType::I32,
    }
}

pub fn build(seed: u64, kernel: Kernel) -> Outcome {
    let source = Source {
        path: PathBuf::from(format!("difftest_{seed}.tc")),
        text: kernel.source.clone(),
    };
    let options = CompileOptions {
        include_dirs: Vec::new(),
        codegen: CodegenOptions {
            arch: arch(kernel.arch),
            num_warps: kernel.num_warps,
            num_stages: kernel.num_stages,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    };
    let compiled = match compile(&source, &[], &options) {
        Ok(mut k) if k.len() == 1 => k.remove(0).compiled,
        Ok(_) => return failed("compile", "not one kernel".into(), kernel),
        Err(CompileError::ResourceLimit { .. }) => return Outcome::OverLimit,
        Err(e) => return failed("compile", e.to_string(), kernel),
    };
    // The interpreter runs sema's IR, before the IR passes the PTX went
    // through: a pass that changes the meaning shows as a mismatch.
    let lowered = match lower(&source, &[], &[]) {
        Ok(l) => l,
        Err(e) => return failed("lower", e.to_string(), kernel),
    };
    match interpret(&lowered.module.functions[0], &kernel) {
        Ok(expected) => Outcome::Case(Case {
            seed,
            ptx: compiled.ptx,
            shared_bytes: compiled.shared_bytes,
            kernel,
            expected,
        }),
        Err(message) => failed("interpret", message, kernel),
    }
}

fn failed(stage: &'static str, message: String, kernel: Kernel) -> Outcome {
    Outcome::Failed {
        stage,
        message,
        kernel,
    }
}

fn interpret(
    func: &tritonc::ir::Function,
    kernel: &Kernel,
) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut mem = Memory::new();
    let mut args = Vec::new();
    let mut outputs = Vec::new();
    for p in &kernel.params {
        match p {
            Param::Buffer {
                name,
                dtype: d,
                len,
                seed,
            } => {
                let addr = match seed {
                    Some(s) => alloc_input(&mut mem, d, *s, *len),
                    None => {
                        let addr = mem.alloc(dtype(d), *len);
                        outputs.push((name.clone(), addr, *d, *len));
                        addr
                    }
                };
                args.push(ArgValue::Ptr(addr));
            }
            Param::Int { value, .. } => args.push(ArgValue::Int(*value)),
            Param::Float { value, .. } => args.push(ArgValue::Float(*value)),
        }
    }
    run(func, kernel.grid, &args, &mut mem).map_err(|e| e.to_string())?;
    outputs
        .into_iter()
        .map(|(name, addr, d, len)| Ok((name, read_bytes(&mem, addr, d, len)?)))
        .collect()
}

fn alloc_input(mem: &mut Memory, d: &str, seed: u64, len: usize) -> u64 {
    let values = input_values(seed, len, d != "i32");
    match d {
        "f32" => mem.alloc_slice(&values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        "f16" => mem.alloc_slice(&values.iter().map(|&v| f16::from_f64(v)).collect::<Vec<_>>()),
        "bf16" => mem.alloc_slice(
            &values
                .iter()
                .map(|&v| bf16::from_f64(v))
                .collect::<Vec<_>>(),
        ),
        _ => mem.alloc_slice(&values.iter().map(|&v| v as i32).collect::<Vec<_>>()),
    }
}

fn read_bytes(mem: &Memory, addr: u64, d: &str, len: usize) -> Result<Vec<u8>, String> {
    let e = |e: tritonc::interp::InterpError| e.to_string();
    Ok(match d {
        "f32" => mem
            .read::<f32>(addr, len)
            .map_err(e)?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        "f16" => mem
            .read::<f16>(addr, len)
            .map_err(e)?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        "bf16" => mem
            .read::<bf16>(addr, len)
            .map_err(e)?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
        _ => mem
            .read::<i32>(addr, len)
            .map_err(e)?
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect(),
    })
}
