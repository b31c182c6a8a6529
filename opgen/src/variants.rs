//! Compiles every variant of an op: each dtype choice (a group) times each
//! point of the tuning space times each `num_warps`, through tritonc's driver.

use crate::compile_cache::{CompileCache, CompiledKernel};
use crate::spec::{DtypeVar, LaunchOption, OpSpec};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::diagnostics::Diagnostic;
use tritonc::driver::manifest::ParamEntry;
use tritonc::driver::tuning::{self, ConfigPoint};
use tritonc::driver::{CompileError, CompileOptions, Define, DefineValue, Source};
use tritonc::timings::PhaseTimes;

/// One dtype assignment (`T = float16`): the variants a call with those dtypes
/// chooses among.
#[derive(Clone, Debug)]
pub struct Group {
    /// `(dtype variable, dtype)` for each variable, in declaration order.
    pub dtypes: Vec<(String, String)>,
    /// `(derived variable, dtype)`: what `dtype S from T` gives here.
    pub derived: Vec<(String, String)>,
    pub variants: Vec<CompiledVariant>,
}

impl Group {
    /// The dtype of a tensor declared with `dtype` (a variable, chosen or
    /// derived, or a fixed dtype) in this group.
    pub fn resolve<'a>(&'a self, dtype: &'a str) -> &'a str {
        self.dtypes
            .iter()
            .chain(&self.derived)
            .find(|(var, _)| var == dtype)
            .map_or(dtype, |(_, d)| d.as_str())
    }
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
    /// Programs per grid point along z (split-K's cluster), 1 without.
    pub cluster_splits: u32,
    /// Programs per cluster along x (TMA multicast pairs), 1 without.
    pub cluster_x: u32,
    /// Warps launched besides `num_warps` (a producer warpgroup), 0 without.
    pub producer_warps: u32,
    /// Persistent (a last argument, the tile count, added by the runtime).
    pub persistent: bool,
    pub params: Vec<ParamEntry>,
    /// Tensor-map parameters after `params` (TMA copies).
    pub tensor_maps: Vec<tritonc::ir::TensorMapParam>,
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

/// How many kernels `compile` will build (for the progress bar), saturating:
/// the points every macro-only `require` admits, where the space is small
/// enough to walk ([`WALKED_POINTS`]), else the whole product.
pub fn count_points(spec: &OpSpec) -> u64 {
    let product = space_factors(spec)
        .iter()
        .fold(1u64, |n, (_, k)| n.saturating_mul(*k));
    if product > WALKED_POINTS {
        return product;
    }
    let launches = spec.launch_options();
    dtype_assignments(&spec.dtypes)
        .iter()
        .flat_map(|assignment| admitted_points(spec, &point_defines(spec, assignment)))
        .map(|p| {
            launches
                .iter()
                .filter(|o| spec.launch_admitted(&p.defines, o.num_warps))
                .count() as u64
        })
        .sum()
}

/// The points of `defines`' space that every macro-only `require` admits:
/// those compiled (a point failing one could run no input).
fn admitted_points<'a>(
    spec: &'a OpSpec,
    defines: &[Define],
) -> impl Iterator<Item = ConfigPoint> + 'a {
    tuning::expand(defines)
        .into_iter()
        .filter(|p| spec.point_admitted(&p.defines))
}

/// Most points [`count_points`] walks to apply the `require` lines (a few
/// milliseconds); a larger space is judged by its product.
const WALKED_POINTS: u64 = 1 << 16;

/// What the space multiplies: the dtype choices, each tuned macro, the
/// launch options (num_warps x num_stages).
fn space_factors(spec: &OpSpec) -> Vec<(String, u64)> {
    let mut factors = vec![(
        "dtypes".to_string(),
        dtype_assignments(&spec.dtypes).len() as u64,
    )];
    factors.extend(
        spec.tune
            .iter()
            .map(|m| (m.name.clone(), m.values.len() as u64)),
    );
    factors.push((
        "num_warps x num_stages".to_string(),
        spec.launch_options().len() as u64,
    ));
    factors
}

static MAX_POINTS: AtomicU64 = AtomicU64::new(tuning::DEFAULT_MAX_POINTS);

/// Sets the most variants an op may compile (`triton-opgen --max-configs N`).
pub fn set_max_points(max: u64) {
    MAX_POINTS.store(max, Ordering::Relaxed);
}

/// The space against [`set_max_points`]' limit, counting the points the
/// macro-only `require` lines admit: over it, an error at the longest `tune` line.
pub fn check_space(spec: &OpSpec) -> Result<(), Diagnostic> {
    let max = MAX_POINTS.load(Ordering::Relaxed);
    let Err(mut e) = tuning::check_space(&space_factors(spec), max) else {
        return Ok(());
    };
    // Points no input could run (a macro-only `require` fails) are never
    // compiled: only the admitted ones count against the limit.
    let admitted = count_points(spec);
    if admitted <= max {
        return Ok(());
    }
    if admitted < e.points {
        e.factors = format!(
            "{} = {}, of which the `require` lines admit {admitted}",
            e.factors, e.points
        );
        e.points = admitted;
    }
    let span = spec
        .tune
        .iter()
        .rev() // the first of the longest lists: max_by_key keeps the last
        .max_by_key(|m| m.values.len())
        .map_or(spec.span, |m| m.span);
    Err(Diagnostic::error(
        span,
        format!("the op has too many variants: {e}"),
    ))
}

/// How variants are compiled: threads, the compile cache, and switches of
/// the compiler that are not the spec's to make.
pub struct CompileSettings {
    /// Points compiled at once (0: one per core).
    pub jobs: usize,
    pub cache: Option<CompileCache>,
    /// Misaligned loads read as whole runs (`tritonc --misaligned-runs`).
    pub misaligned_runs: bool,
}

static JOBS: AtomicUsize = AtomicUsize::new(0);
static MISALIGNED_RUNS: AtomicBool = AtomicBool::new(false);

/// Compiles every variant with misaligned runs (`triton-opgen
/// --misaligned-runs`; off by default until checked on a GPU).
pub fn set_misaligned_runs(on: bool) {
    MISALIGNED_RUNS.store(on, Ordering::Relaxed);
}

/// Sets the threads [`compile`] uses (`triton-opgen -j N`; 0: one per core).
pub fn set_jobs(jobs: usize) {
    JOBS.store(jobs, Ordering::Relaxed);
}

impl Default for CompileSettings {
    /// [`set_jobs`]' and [`set_misaligned_runs`]' values and the default
    /// compile cache.
    fn default() -> Self {
        CompileSettings {
            jobs: JOBS.load(Ordering::Relaxed),
            cache: CompileCache::default_location(),
            misaligned_runs: MISALIGNED_RUNS.load(Ordering::Relaxed),
        }
    }
}

/// Compiles every variant; `progress` is called once per compiled point with
/// a short label. Points that fail are reported in `warnings`; a group with no
/// variant left is an error.
pub fn compile(
    spec: &OpSpec,
    source: &Source,
    arch: Arch,
    include_dirs: &[std::path::PathBuf],
    progress: impl FnMut(&str),
    warnings: &mut Vec<String>,
) -> Result<Vec<Group>, VariantError> {
    compile_with(
        spec,
        source,
        arch,
        include_dirs,
        &CompileSettings::default(),
        progress,
        warnings,
    )
}

/// One point to compile: its dtype group, launch option and macro values.
struct Job {
    group: usize,
    launch: usize,
    point: ConfigPoint,
    options: CompileOptions,
    label: String,
}

/// [`compile`] with explicit settings: the points of every group and launch
/// option compile on `settings.jobs` threads (results are put back in their
/// order, so the output does not depend on the threads), each looked up in
/// and stored to the compile cache.
pub fn compile_with(
    spec: &OpSpec,
    source: &Source,
    arch: Arch,
    include_dirs: &[std::path::PathBuf],
    settings: &CompileSettings,
    mut progress: impl FnMut(&str),
    warnings: &mut Vec<String>,
) -> Result<Vec<Group>, VariantError> {
    let assignments = dtype_assignments(&spec.dtypes);
    let launches = spec.launch_options();
    let mut group_defines = Vec::new();
    let mut jobs = Vec::new();
    for (group, assignment) in assignments.iter().enumerate() {
        let defines = point_defines(spec, assignment);
        let points: Vec<ConfigPoint> = admitted_points(spec, &defines).collect();
        let label = group_label_of(assignment);
        for (launch, option) in launches.iter().enumerate() {
            let options = CompileOptions {
                include_dirs: include_dirs.to_vec(),
                codegen: CodegenOptions {
                    arch,
                    num_warps: option.num_warps,
                    num_stages: option.num_stages,
                    split_k: None,
                    tma: false,
                    tma_multicast: false,
                    warp_specialize: false,
                    misaligned_runs: settings.misaligned_runs,
                },
            };
            for point in points
                .iter()
                .filter(|p| spec.launch_admitted(&p.defines, option.num_warps))
            {
                let mut options = options.clone();
                options.codegen.split_k = spec.split_k_of(&point.defines);
                options.codegen.tma = spec.tma_of(&point.defines);
                options.codegen.tma_multicast = spec.tma_multicast_of(&point.defines);
                options.codegen.warp_specialize = spec.warp_specialize_of(&point.defines);
                let tuned: Vec<(String, String)> = point.tuned(&defines).cloned().collect();
                jobs.push(Job {
                    group,
                    launch,
                    label: format!(
                        "{} {label} {} {}",
                        spec.name,
                        tuned_text(&tuned),
                        launch_text(option)
                    ),
                    point: point.clone(),
                    options,
                });
            }
        }
        group_defines.push(defines);
    }
    let results = run_jobs(source, &jobs, settings, &mut progress);
    let mut groups = Vec::new();
    for (group, assignment) in assignments.iter().enumerate() {
        let defines = &group_defines[group];
        let label = group_label_of(assignment);
        let mut variants: Vec<CompiledVariant> = Vec::new();
        let mut first_error = None;
        let mut tma_not_taken_anywhere = false;
        for (job, outcome) in jobs.iter().zip(&results).filter(|(j, _)| j.group == group) {
            let launch = launch_text(&launches[job.launch]);
            let tuned: Vec<(String, String)> = job.point.tuned(defines).cloned().collect();
            let kernels = match outcome {
                // Tiles the compiler does not generate on this point's
                // engine: left out quietly (said only if nothing compiles).
                Err(e) if e.is_declined() => {
                    first_error.get_or_insert(e.to_string());
                    continue;
                }
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
                    continue;
                }
                Ok(kernels) => kernels,
            };
            let chosen = match &spec.kernel {
                Some(name) => kernels.iter().find(|k| &k.name == name),
                None => kernels.first(),
            };
            if chosen.is_none() && job.options.codegen.tma && kernels.is_empty() {
                tma_not_taken_anywhere = true; // see `compile_point`
                continue;
            }
            let Some(k) = chosen else {
                let names: Vec<&str> = kernels.iter().map(|k| k.name.as_str()).collect();
                return Err(VariantError(format!(
                    "{}: no kernel `{}` in the file (it has: {})",
                    source.path.display(),
                    spec.kernel.clone().unwrap_or_default(),
                    names.join(", ")
                )));
            };
            // A num_stages value the compiler capped (a loop it does not
            // pipeline, a depth that does not fit), or a split-K or TMA
            // copies the kernel does not take, gives the same kernel: one
            // variant is enough to time.
            let same = variants
                .iter()
                .any(|v| v.tuned == tuned && v.num_warps == k.num_warps && v.ptx == k.ptx);
            let split_not_taken =
                job.options.codegen.split_k.is_some_and(|s| s > 1) && k.cluster_splits == 1;
            let tma_not_taken = job.options.codegen.tma && k.tensor_maps.is_empty();
            let multicast_not_taken = job.options.codegen.tma_multicast && k.cluster_x == 1;
            let producer_not_taken = job.options.codegen.warp_specialize && k.producer_warps == 0;
            if same || split_not_taken || tma_not_taken || multicast_not_taken || producer_not_taken
            {
                continue;
            }
            let mut config = tuned_text(&tuned);
            if !config.is_empty() {
                config.push(' ');
            }
            config.push_str(&launch);
            variants.push(CompiledVariant {
                kernel: k.name.clone(),
                config,
                tuned,
                macros: job.point.defines.clone(),
                num_warps: k.num_warps,
                shared_bytes: k.shared_bytes,
                cluster_splits: k.cluster_splits,
                cluster_x: k.cluster_x,
                producer_warps: k.producer_warps,
                persistent: k.persistent,
                params: k.params.clone(),
                tensor_maps: k.tensor_maps.clone(),
                ptx: k.ptx.clone(),
            });
        }
        if variants.is_empty() {
            let why = match first_error {
                Some(e) => e,
                None if tma_not_taken_anywhere => {
                    "no loop of the kernel copies its tiles by TMA (a pipelined wgmma dot on \
                     sm_90a whose loads are boxes of tensors), and the spec's `tma` line asks \
                     for nothing else: list `tma [0, 1]`, or drop the line"
                        .to_string()
                }
                None if !jobs.iter().any(|j| j.group == group) => {
                    "every point of the tuning space fails a `require` line that reads \
                     only macros"
                        .to_string()
                }
                None => String::new(),
            };
            return Err(VariantError(format!(
                "no variant of {} compiled for {label}:\n{why}",
                spec.qualified_name()
            )));
        }
        let dtypes: Vec<(String, String)> = assignment
            .iter()
            .map(|(v, d, _)| (v.clone(), d.clone()))
            .collect();
        let derived = spec
            .derived_dtypes
            .iter()
            .filter_map(|d| {
                let (_, source) = dtypes.iter().find(|(v, _)| *v == d.source)?;
                Some((d.var.clone(), d.of(source)?.to_string()))
            })
            .collect();
        groups.push(Group {
            dtypes,
            derived,
            variants,
        });
    }
    Ok(groups)
}

/// The macros of one dtype group: its choices' macros, the `define`s and the
/// `tune` lists.
fn point_defines(spec: &OpSpec, assignment: &[DtypeBinding]) -> Vec<Define> {
    let mut defines: Vec<Define> = Vec::new();
    for (_, _, macros) in assignment {
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
    defines
}

fn group_label_of(assignment: &[DtypeBinding]) -> String {
    assignment
        .iter()
        .map(|(var, dtype, _)| format!("{var}={dtype}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn launch_text(option: &LaunchOption) -> String {
    let mut text = format!("num_warps={}", option.num_warps);
    if let Some(s) = option.num_stages {
        text.push_str(&format!(" num_stages={s}"));
    }
    text
}

type PointOutcome = Result<Vec<CompiledKernel>, CompileError>;

/// Compiles `jobs` on the settings' threads; the outcomes in `jobs`' order.
/// `progress` gets each job's label as it finishes (on this thread).
fn run_jobs(
    source: &Source,
    jobs: &[Job],
    settings: &CompileSettings,
    progress: &mut dyn FnMut(&str),
) -> Vec<PointOutcome> {
    let threads = match settings.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .clamp(1, jobs.len().max(1));
    let next = AtomicUsize::new(0);
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, PointOutcome)>();
    let mut outcomes: Vec<Option<PointOutcome>> = (0..jobs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done = done_tx.clone();
            let next = &next;
            // Deep kernels recurse in sema and codegen: a roomy stack.
            let spawned = std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(scope, move || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    if done
                        .send((i, compile_point(source, job, settings)))
                        .is_err()
                    {
                        break;
                    }
                });
            if spawned.is_err() {
                break; // fewer threads; the ones started (or this one) do the rest
            }
        }
        drop(done_tx);
        for (i, outcome) in done_rx {
            progress(&jobs[i].label);
            outcomes[i] = Some(outcome);
        }
    });
    // Jobs no thread took (none could be started): compile them here.
    outcomes
        .into_iter()
        .enumerate()
        .map(|(i, o)| {
            o.unwrap_or_else(|| {
                let outcome = compile_point(source, &jobs[i], settings);
                progress(&jobs[i].label);
                outcome
            })
        })
        .collect()
}

/// One point: from the cache, else compiled (and stored).
fn compile_point(source: &Source, job: &Job, settings: &CompileSettings) -> PointOutcome {
    let key = settings.cache.as_ref().and_then(|_| {
        CompileCache::key(
            source,
            &job.point.defines,
            &job.options.include_dirs,
            &job.options.codegen,
        )
    });
    if let (Some(cache), Some(key)) = (&settings.cache, &key) {
        if let Some(kernels) = cache.get(key) {
            return Ok(kernels);
        }
    }
    // A TMA point whose kernels copy nothing by TMA (no aligned wgmma loop)
    // would give the point without TMA again: its passes say so before the
    // costly code generation, and the cache keeps the answer (no kernels).
    if job.options.codegen.tma && !takes_tma(source, job)? {
        if let (Some(cache), Some(key)) = (&settings.cache, &key) {
            cache.put(key, &[]);
        }
        return Ok(Vec::new());
    }
    let kernels: Vec<CompiledKernel> = tritonc::driver::compile_timed(
        source,
        &job.point.defines,
        &job.options,
        false,
        &mut PhaseTimes::new(),
    )?
    .into_iter()
    .map(|k| CompiledKernel {
        params: ParamEntry::of(&k.function),
        name: k.compiled.name,
        ptx: k.compiled.ptx,
        shared_bytes: k.compiled.shared_bytes,
        num_warps: k.compiled.num_warps,
        cluster_splits: k.compiled.cluster_splits,
        cluster_x: k.compiled.cluster_x,
        producer_warps: k.compiled.producer_warps,
        persistent: k.compiled.persistent,
        tensor_maps: k.compiled.tensor_maps,
    })
    .collect();
    if let (Some(cache), Some(key)) = (&settings.cache, &key) {
        cache.put(key, &kernels);
    }
    Ok(kernels)
}

/// Whether any kernel of the point copies tiles by TMA after the IR passes.
fn takes_tma(source: &Source, job: &Job) -> Result<bool, tritonc::driver::CompileError> {
    let lowered = tritonc::driver::lower_for_codegen(
        source,
        &job.point.defines,
        &job.options.include_dirs,
        &job.options.codegen,
        &mut PhaseTimes::new(),
        &mut |_| {},
    )?;
    Ok(lowered
        .module
        .functions
        .iter()
        .any(|f| !f.tensor_maps().is_empty()))
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
        cluster_splits: v.cluster_splits,
        cluster_x: v.cluster_x,
        producer_warps: v.producer_warps,
        persistent: v.persistent,
        params: v.params.clone(),
        tensor_maps: v.tensor_maps.clone(),
    };
    let mut json = serde_json::to_value(&entry).unwrap_or_default();
    // The bridge checks the embedded image against it before using it.
    json["image_digest"] = opgen_runtime::image_digest(v.ptx.as_bytes()).into();
    json.to_string()
}
