//! Compiles every variant of an op: each dtype choice (a group) times each
//! point of the tuning space times each `num_warps`, through tritonc's driver.

use crate::spec::{DtypeVar, OpSpec};
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::manifest::ParamEntry;
use tritonc::driver::space::{compile_all, PointResult};
use tritonc::driver::{CompileOptions, Define, DefineValue, Source};

/// One dtype assignment (`T = float16`): the variants a call with those dtypes
/// chooses among.
#[derive(Clone, Debug)]
pub struct Group {
    /// `(dtype variable, dtype)` for each variable, in declaration order.
    pub dtypes: Vec<(String, String)>,
    pub variants: Vec<CompiledVariant>,
}

#[derive(Clone, Debug)]
pub struct CompiledVariant {
    pub kernel: String,
    /// The tuning macros at this point plus num_warps: `SIZE=256 num_warps=4`.
    pub config: String,
    pub tuned: Vec<(String, String)>,
    /// Every macro of this point.
    pub macros: Vec<(String, String)>,
    pub num_warps: u32,
    pub shared_bytes: usize,
    pub params: Vec<ParamEntry>,
    pub ptx: String,
}

/// A failure that stops generation, already rendered for the user.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct VariantError(pub String);

/// One dtype variable set to one choice: `(var, dtype, macros)`.
pub type DtypeBinding = (String, String, Vec<(String, String)>);

/// Every assignment of the dtype variables (first variable slowest).
pub fn dtype_assignments(vars: &[DtypeVar]) -> Vec<Vec<DtypeBinding>> {
    let mut out: Vec<Vec<DtypeBinding>> = vec![Vec::new()];
    for var in vars {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                var.choices.iter().map(move |choice| {
                    let mut next = prefix.clone();
                    next.push((var.var.clone(), choice.dtype.clone(), choice.macros.clone()));
                    next
                })
            })
            .collect();
    }
    out
}

/// How many kernels `compile` will build (for the progress bar).
pub fn count_points(spec: &OpSpec) -> u64 {
    let groups = dtype_assignments(&spec.dtypes).len() as u64;
    let points: u64 = spec.tune.iter().map(|m| m.values.len() as u64).product();
    groups * points * spec.launch_options().len() as u64
}

/// Compiles every variant; `progress` is called once per compiled point with
/// a short label. Points that fail are reported in `warnings`; a group with no
/// variant left is an error.
pub fn compile(
    spec: &OpSpec,
    source: &Source,
    arch: Arch,
    include_dirs: &[std::path::PathBuf],
    mut progress: impl FnMut(&str),
    warnings: &mut Vec<String>,
) -> Result<Vec<Group>, VariantError> {
    let mut groups = Vec::new();
    for assignment in dtype_assignments(&spec.dtypes) {
        let mut defines: Vec<Define> = Vec::new();
        for (_, _, macros) in &assignment {
            for (name, value) in macros {
                defines.push(Define {
                    name: name.clone(),
                    value: DefineValue::Code(value.clone()),
                });
            }
        }
        for m in &spec.defines {
            defines.push(Define {
                name: m.name.clone(),
                value: DefineValue::Code(m.values[0].clone()),
            });
        }
        for m in &spec.tune {
            defines.push(Define {
                name: m.name.clone(),
                value: DefineValue::List(m.values.clone()),
            });
        }
        let label: Vec<String> = assignment
            .iter()
            .map(|(var, dtype, _)| format!("{var}={dtype}"))
            .collect();
        let label = label.join(",");
        let mut variants = Vec::new();
        let mut first_error = None;
        for (num_warps, num_stages) in spec.launch_options() {
            let launch = match num_stages {
                Some(s) => format!("num_warps={num_warps} num_stages={s}"),
                None => format!("num_warps={num_warps}"),
            };
            let options = CompileOptions {
                include_dirs: include_dirs.to_vec(),
                codegen: CodegenOptions {
                    arch,
                    num_warps,
                    num_stages,
                },
            };
            let results = compile_all(source, &defines, &options, |r: &PointResult| {
                progress(&format!(
                    "{} {label} {} {launch}",
                    spec.name,
                    tuned_text(&r.point.tuned(&defines).cloned().collect::<Vec<_>>())
                ));
            });
            for result in results {
                let tuned: Vec<(String, String)> = result.point.tuned(&defines).cloned().collect();
                match result.outcome {
                    Err(e) => {
                        // Over the target's limits: dropped from the space (a note);
                        // anything else is a failed config.
                        let how = if e.is_resource_limit() {
                            " dropped"
                        } else {
                            ""
                        };
                        warnings.push(format!(
                            "{label} {} {launch}{how}: {}",
                            tuned_text(&tuned),
                            e.summary()
                        ));
                        first_error.get_or_insert(e.to_string());
                    }
                    Ok(kernels) => {
                        let chosen = match &spec.kernel {
                            Some(name) => kernels.iter().find(|k| &k.compiled.name == name),
                            None => kernels.first(),
                        };
                        let Some(k) = chosen else {
                            let names: Vec<&str> =
                                kernels.iter().map(|k| k.compiled.name.as_str()).collect();
                            return Err(VariantError(format!(
                                "{}: no kernel `{}` in the file (it has: {})",
                                source.path.display(),
                                spec.kernel.clone().unwrap_or_default(),
                                names.join(", ")
                            )));
                        };
                        // A num_stages value the compiler capped (a loop it
                        // does not pipeline, a depth that does not fit) gives
                        // the same kernel: one variant is enough to time.
                        let same = variants.iter().any(|v: &CompiledVariant| {
                            v.tuned == tuned
                                && v.num_warps == k.compiled.num_warps
                                && v.ptx == k.compiled.ptx
                        });
                        if same {
                            continue;
                        }
                        let mut config = tuned_text(&tuned);
                        if !config.is_empty() {
                            config.push(' ');
                        }
                        config.push_str(&launch);
                        variants.push(CompiledVariant {
                            kernel: k.compiled.name.clone(),
                            config,
                            tuned,
                            macros: result.point.defines.clone(),
                            num_warps: k.compiled.num_warps,
                            shared_bytes: k.compiled.shared_bytes,
                            params: ParamEntry::of(&k.function),
                            ptx: k.compiled.ptx.clone(),
                        });
                    }
                }
            }
        }
        if variants.is_empty() {
            return Err(VariantError(format!(
                "no variant of {} compiled for {label}:\n{}",
                spec.qualified_name(),
                first_error.unwrap_or_default()
            )));
        }
        groups.push(Group {
            dtypes: assignment
                .iter()
                .map(|(v, d, _)| (v.clone(), d.clone()))
                .collect(),
            variants,
        });
    }
    Ok(groups)
}

fn tuned_text(tuned: &[(String, String)]) -> String {
    tuned
        .iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The runtime's manifest entry of one variant.
pub fn variant_json(v: &CompiledVariant) -> String {
    let entry = tritonc::driver::manifest::Variant {
        file: format!("embedded:{}", v.config),
        kernel: v.kernel.clone(),
        macros: v.macros.iter().cloned().collect(),
        num_warps: v.num_warps,
        shared_bytes: v.shared_bytes,
        params: v.params.clone(),
    };
    serde_json::to_string(&entry).unwrap_or_default()
}
