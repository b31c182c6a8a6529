//! Compiles every point of a tuning space and names its outputs.

use super::manifest::{Manifest, ParamEntry, Variant};
use super::pipeline::{self, CompileError, CompileOptions, KernelOutput, Source};
use super::tuning::{self, ConfigPoint, Define};
use crate::timings::PhaseTimes;

/// What one point gave: its kernels, or the error that stopped it.
pub struct PointResult {
    pub point: ConfigPoint,
    pub outcome: Result<Vec<KernelOutput>, CompileError>,
    /// Wall time of each phase of this point's compile.
    pub times: PhaseTimes,
}

/// Compiles each point (in order) to PTX, calling `progress` after each one
/// (the kernels' `llvm_ir` is not kept).
pub fn compile_all(
    source: &Source,
    defines: &[Define],
    options: &CompileOptions,
    mut progress: impl FnMut(&PointResult),
) -> Vec<PointResult> {
    tuning::expand(defines)
        .into_iter()
        .map(|point| {
            let mut times = PhaseTimes::new();
            let outcome =
                pipeline::compile_timed(source, &point.defines, options, false, &mut times);
            let result = PointResult {
                point,
                outcome,
                times,
            };
            progress(&result);
            result
        })
        .collect()
}

/// `add_SIZE-64.ptx`, or `add_TM-64_TN-32.ptx`; the kernel name joins the file
/// stem when the file holds several kernels. Characters that do not belong in a
/// file name are replaced by `_`.
pub fn ptx_file_name(
    stem: &str,
    kernel: &str,
    several: bool,
    point: &ConfigPoint,
    lists: &[Define],
) -> String {
    let mut name = stem.to_string();
    if several {
        name.push('_');
        name.push_str(kernel);
    }
    for (macro_name, value) in point.tuned(lists) {
        name.push('_');
        name.push_str(macro_name);
        name.push('-');
        name.push_str(value);
    }
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{clean}.ptx")
}

/// The manifest of the points that compiled, with the file name each variant
/// was (or will be) written to.
pub fn manifest(
    source: &Source,
    stem: &str,
    defines: &[Define],
    options: &CompileOptions,
    results: &[PointResult],
) -> Manifest {
    let mut variants = Vec::new();
    for result in results {
        let Ok(kernels) = &result.outcome else {
            continue;
        };
        for k in kernels {
            variants.push(Variant {
                file: ptx_file_name(
                    stem,
                    &k.compiled.name,
                    kernels.len() > 1,
                    &result.point,
                    defines,
                ),
                kernel: k.compiled.name.clone(),
                macros: result.point.defines.iter().cloned().collect(),
                num_warps: k.compiled.num_warps,
                shared_bytes: k.compiled.shared_bytes,
                cluster_splits: k.compiled.cluster_splits,
                cluster_x: k.compiled.cluster_x,
                producer_warps: k.compiled.producer_warps,
                persistent: k.compiled.persistent,
                params: ParamEntry::of(&k.function),
                tensor_maps: k.compiled.tensor_maps.clone(),
            });
        }
    }
    Manifest {
        source: source.path.display().to_string(),
        arch: arch_name(options.codegen.arch).to_string(),
        tuning_macros: defines
            .iter()
            .filter(|d| d.is_list())
            .map(|d| d.name.clone())
            .collect(),
        variants,
    }
}

pub fn arch_name(arch: crate::codegen::Arch) -> &'static str {
    match arch {
        crate::codegen::Arch::Sm80 => "sm_80",
        crate::codegen::Arch::Sm90 => "sm_90",
        crate::codegen::Arch::Sm90a => "sm_90a",
    }
}
