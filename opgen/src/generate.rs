//! The whole pipeline behind the CLI: spec -> variants -> bindings -> folder
//! (-> shared library).

use crate::bind::{bind_args, BoundArg};
pub use crate::bundled::{find_bridge_lib, BridgeLib};
use crate::spec::{parse_spec, OpSpec};
use crate::torch::{self, context, TorchEnv};
use crate::variants;
use opgen_runtime::autotune::read_tuned_table;
use std::path::{Path, PathBuf};
use tritonc::codegen::Arch;
use tritonc::driver::Source;
use tritonc::span::{SourceMap, Span};

#[derive(Clone, Debug)]
pub struct GenerateOptions {
    pub input: PathBuf,
    pub out_dir: Option<PathBuf>,
    pub arch: Arch,
    /// Write the build folder only (for a machine with torch but no Rust).
    pub no_build: bool,
    pub torch_dir: Option<PathBuf>,
    pub python: String,
    /// The prebuilt `libopgen_bridge.a`; found next to the executable when `None`.
    pub bridge_lib: Option<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// A pre-tuned table to embed: an autotune cache file
    /// (`$TRITON_OPGEN_CACHE`) from a machine that ran the op.
    pub tuned: Option<PathBuf>,
}

/// Options of the generators whose build folder builds with g++ against a
/// framework that a Python interpreter finds (TensorFlow, JAX).
#[derive(Clone, Debug)]
pub struct FolderOptions {
    pub input: PathBuf,
    /// Default: out/<namespace>_<op>_<framework>.
    pub out_dir: Option<PathBuf>,
    pub arch: Arch,
    /// Write the build folder only (for a machine with the framework but no Rust).
    pub no_build: bool,
    /// The Python that finds the framework.
    pub python: String,
    /// The prebuilt `libopgen_bridge.a`; found next to the executable when `None`.
    pub bridge_lib: Option<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// A pre-tuned table to embed (an autotune cache file).
    pub tuned: Option<PathBuf>,
}

/// What such a generator has before it renders: the spec, its variants
/// compiled, the pre-tuned table's text, the bridge archive, and the
/// framework's build environment (`None` with --no-build).
pub struct Prepared<E> {
    pub spec: OpSpec,
    pub op: CompiledOp,
    pub tuned: String,
    pub bridge: BridgeLib,
    pub env: Option<E>,
}

/// Reads the spec and the tuned table, finds the bridge and (unless
/// --no-build) the framework with `find_env(python)`, all before compiling
/// the variants, so that a missing piece fails fast.
pub fn prepare<E>(
    opts: &FolderOptions,
    find_env: impl FnOnce(&str) -> Result<E, String>,
    progress: &mut impl FnMut(Progress),
) -> Result<Prepared<E>, GenerateError> {
    let (spec, source) = read_spec(&opts.input)?;
    let tuned = read_tuned(opts.tuned.as_deref())?;
    let bridge = find_bridge_lib(opts.bridge_lib.as_deref())?;
    let env = if opts.no_build {
        None
    } else {
        Some(find_env(&opts.python).map_err(GenerateError)?)
    };
    let mut op = compile_op(
        &spec,
        &source,
        &opts.input,
        opts.arch,
        &opts.include_dirs,
        progress,
    )?;
    op.warnings.extend(tuned.warnings);
    Ok(Prepared {
        spec,
        op,
        tuned: tuned.text,
        bridge,
        env,
    })
}

/// Writes a C++ op's build folder into `out_dir` and, when the framework
/// was found (`env`), builds its library with `build` (progress: `building`).
pub fn write_and_build<E>(
    out_dir: &Path,
    files: &[(String, String)],
    bridge: &BridgeLib,
    env: Option<&E>,
    building: &str,
    build: impl FnOnce(&E) -> Result<PathBuf, GenerateError>,
    progress: &mut impl FnMut(Progress),
) -> Result<Option<PathBuf>, GenerateError> {
    progress(Progress::Step("writing the build folder"));
    let files = files
        .iter()
        .map(|(name, text)| (name.as_str(), text.as_str()));
    crate::cpp::write_build_folder(out_dir, files, bridge).map_err(GenerateError)?;
    match env {
        None => Ok(None),
        Some(env) => {
            progress(Progress::Step(building));
            build(env).map(Some)
        }
    }
}

/// What a run produced.
#[derive(Debug)]
pub struct Generated {
    pub spec: OpSpec,
    pub out_dir: PathBuf,
    pub variants: usize,
    pub library: Option<PathBuf>,
    /// The torch the library was built against (`2.11.0+cu130`).
    pub torch_version: Option<String>,
    pub warnings: Vec<String>,
}

/// Progress of a run, for the CLI's bar.
pub enum Progress<'a> {
    Start { total: u64 },
    Compiled(&'a str),
    Step(&'a str),
}

/// An error rendered for the user (diagnostics with file:line:col and caret).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct GenerateError(pub String);

/// Reads and validates the spec of a `.tc` file.
pub fn read_spec(path: &Path) -> Result<(OpSpec, Source), GenerateError> {
    let source = Source::read(path).map_err(|e| GenerateError(e.to_string()))?;
    let mut sources = SourceMap::new();
    let file = sources.add(path.display().to_string(), source.text.clone());
    match parse_spec(file, &source.text) {
        Ok(Some(spec)) => Ok((spec, source)),
        Ok(None) => Err(GenerateError(
            tritonc::diagnostics::Diagnostic::error(
                Span::new(file, 0, 0),
                "no `#pragma opgen` lines: the file does not describe an op",
            )
            .with_note("an op spec starts with `#pragma opgen op NAMESPACE::NAME` (see README, \"Op specs\")")
            .render(&sources),
        )),
        Err(diag) => Err(GenerateError(diag.render(&sources))),
    }
}

/// What every framework's generator starts from: the spec's variants,
/// compiled, and its kernel arguments bound to them.
pub struct CompiledOp {
    pub groups: Vec<variants::Group>,
    pub kinds: Vec<BoundArg>,
    /// The .tc file's name, for generated comments.
    pub source_name: String,
    pub warnings: Vec<String>,
}

/// Compiles every dtype x config variant (reporting progress) and checks that
/// the spec's kernel arguments fit the kernel: a spec the kernel cannot take
/// fails here, with the spec's line under a caret.
pub fn compile_op(
    spec: &OpSpec,
    source: &Source,
    input: &Path,
    arch: Arch,
    include_dirs: &[PathBuf],
    progress: &mut impl FnMut(Progress),
) -> Result<CompiledOp, GenerateError> {
    let render = |diag: tritonc::diagnostics::Diagnostic| {
        let mut sources = SourceMap::new();
        sources.add(input.display().to_string(), source.text.clone());
        GenerateError(diag.render(&sources))
    };
    variants::check_space(spec).map_err(render)?;
    progress(Progress::Start {
        total: variants::count_points(spec),
    });
    let mut warnings = Vec::new();
    let groups = variants::compile(
        spec,
        source,
        arch,
        include_dirs,
        |label| progress(Progress::Compiled(label)),
        &mut warnings,
    )
    .map_err(|e| GenerateError(e.to_string()))?;
    let kinds = bind_args(spec, &groups).map_err(render)?;
    let source_name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Ok(CompiledOp {
        groups,
        kinds,
        source_name,
        warnings,
    })
}

pub fn generate(
    opts: &GenerateOptions,
    mut progress: impl FnMut(Progress),
) -> Result<Generated, GenerateError> {
    let (spec, source) = read_spec(&opts.input)?;
    let tuned = read_tuned(opts.tuned.as_deref())?;
    let bridge = find_bridge_lib(opts.bridge_lib.as_deref())?;
    // Fail before compiling when there is no torch to build against.
    let torch_env: Option<TorchEnv> = if opts.no_build {
        None
    } else {
        Some(torch::find_torch(opts.torch_dir.as_deref(), &opts.python).map_err(GenerateError)?)
    };
    let CompiledOp {
        groups,
        kinds,
        source_name,
        mut warnings,
    } = compile_op(
        &spec,
        &source,
        &opts.input,
        opts.arch,
        &opts.include_dirs,
        &mut progress,
    )?;
    warnings.extend(tuned.warnings);
    let ctx = context::build(&spec, &groups, &kinds, &source_name)
        .map_err(|e| GenerateError(e.to_string()))?;
    let rendered =
        torch::render(&ctx, &groups, &tuned.text).map_err(|e| GenerateError(e.to_string()))?;
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&ctx.launch.prefix));
    progress(Progress::Step("writing the build folder"));
    torch::write_folder(&out_dir, &ctx, &rendered, &bridge, &groups)
        .map_err(|e| GenerateError(e.to_string()))?;
    let library = match &torch_env {
        None => None,
        Some(env) => {
            progress(Progress::Step("compiling the op library against torch"));
            Some(
                torch::build_library(&out_dir, &ctx, env)
                    .map_err(|e| GenerateError(e.to_string()))?,
            )
        }
    };
    Ok(Generated {
        torch_version: torch_env.as_ref().and_then(TorchEnv::version),
        variants: groups.iter().map(|g| g.variants.len()).sum(),
        spec,
        out_dir,
        library,
        warnings,
    })
}

/// A pre-tuned table's text (embedded as it is: the op's runtime reads it)
/// and what in it the op will not use.
pub struct TunedTableText {
    pub text: String,
    pub warnings: Vec<String>,
}

/// Reads a pre-tuned table (`--tuned`): an autotune cache file, checked with
/// the runtime's reader so that a table the op would ignore fails here (an
/// older format, whose keys do not name the code they timed), and entries it
/// would skip (no config) are warned about. No table is the empty text.
pub fn read_tuned(path: Option<&Path>) -> Result<TunedTableText, GenerateError> {
    let Some(path) = path else {
        return Ok(TunedTableText {
            text: String::new(),
            warnings: Vec::new(),
        });
    };
    let text = std::fs::read_to_string(path).map_err(|e| {
        GenerateError(format!(
            "cannot read the tuned table {}: {e}",
            path.display()
        ))
    })?;
    let table = read_tuned_table(&text).map_err(|why| {
        GenerateError(format!(
            "the tuned table {} cannot be used: {why}",
            path.display()
        ))
    })?;
    let warnings = table
        .dropped
        .iter()
        .map(|why| format!("tuned table entry ignored: {why}"))
        .collect();
    Ok(TunedTableText { text, warnings })
}

/// Writes `files` (path under `dir`, text), creating folders as needed.
pub fn write_files<'a>(
    dir: &Path,
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(), GenerateError> {
    for (rel, text) in files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| GenerateError(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, text)
            .map_err(|e| GenerateError(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

/// Makes a generated `build.sh` runnable.
#[cfg(unix)]
pub(crate) fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    if let Ok(meta) = std::fs::metadata(path) {
        let mut perms = meta.permissions();
        perms.set_mode(0o755);
        let _ = std::fs::set_permissions(path, perms);
    }
}

#[cfg(not(unix))]
pub(crate) fn set_executable(_: &Path) {}
