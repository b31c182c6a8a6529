//! `--framework ort`: an ONNX Runtime custom-op library, written in Rust
//! against the `ort-sys` bindings (no ORT headers), one small cdylib crate
//! per op. The op's spec becomes Rust constants (`op_spec.rs`); the rest of
//! the crate is the same for every op (`templates/onnxruntime/*.rs`).

pub mod context;
pub mod rust_expr;

use crate::generate::{compile_op, read_spec, read_tuned, CompiledOp, GenerateError, Progress};
use crate::render::{render_templates, Template};
use context::OrtContext;
use std::path::{Path, PathBuf};
use std::process::Command;
use tritonc::codegen::Arch;

const CARGO_TOML: &str = include_str!("../../../templates/onnxruntime/Cargo.toml.hbs");
const OP_SPEC_RS: &str = include_str!("../../../templates/onnxruntime/op_spec.rs.hbs");
/// The op-independent sources, copied as they are.
const STATIC_FILES: &[(&str, &str)] = &[
    (
        "lib.rs",
        include_str!("../../../templates/onnxruntime/lib.rs"),
    ),
    (
        "attrs.rs",
        include_str!("../../../templates/onnxruntime/attrs.rs"),
    ),
    (
        "check.rs",
        include_str!("../../../templates/onnxruntime/check.rs"),
    ),
    (
        "call.rs",
        include_str!("../../../templates/onnxruntime/call.rs"),
    ),
    (
        "cuda_ep.rs",
        include_str!("../../../templates/onnxruntime/cuda_ep.rs"),
    ),
    (
        "domain.rs",
        include_str!("../../../templates/onnxruntime/domain.rs"),
    ),
    (
        "ep.rs",
        include_str!("../../../templates/onnxruntime/ep.rs"),
    ),
    (
        "ep_abi.rs",
        include_str!("../../../templates/onnxruntime/ep_abi.rs"),
    ),
    (
        "gpu.rs",
        include_str!("../../../templates/onnxruntime/gpu.rs"),
    ),
    (
        "pad.rs",
        include_str!("../../../templates/onnxruntime/pad.rs"),
    ),
    (
        "stats.rs",
        include_str!("../../../templates/onnxruntime/stats.rs"),
    ),
    (
        "spec_types.rs",
        include_str!("../../../templates/onnxruntime/spec_types.rs"),
    ),
];

#[derive(Clone, Debug)]
pub struct OrtOptions {
    pub input: PathBuf,
    /// Default: out/<namespace>_<op>_ort.
    pub out_dir: Option<PathBuf>,
    pub arch: Arch,
    pub include_dirs: Vec<PathBuf>,
    /// Write the crate only.
    pub no_build: bool,
    /// Cargo's target folder (default: `<out_dir>/target`); sharing one
    /// between ops compiles `ort-sys` once.
    pub target_dir: Option<PathBuf>,
    /// A pre-tuned table to embed (an autotune cache file).
    pub tuned: Option<PathBuf>,
}

#[derive(Debug)]
pub struct OrtGenerated {
    pub context: OrtContext,
    pub out_dir: PathBuf,
    pub variants: usize,
    pub library: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// The crate's files: (path relative to the crate, contents).
pub fn render(ctx: &OrtContext) -> Result<Vec<(String, String)>, String> {
    let mut files = render_templates(
        ctx,
        vec![
            Template {
                file: "Cargo.toml".into(),
                path: "templates/onnxruntime/Cargo.toml.hbs",
                text: CARGO_TOML,
            },
            Template {
                file: "src/op_spec.rs".into(),
                path: "templates/onnxruntime/op_spec.rs.hbs",
                text: OP_SPEC_RS,
            },
        ],
    )?;
    for (name, text) in STATIC_FILES {
        files.push((format!("src/{name}"), text.to_string()));
    }
    Ok(files)
}

pub fn generate(
    opts: &OrtOptions,
    mut progress: impl FnMut(Progress),
) -> Result<OrtGenerated, GenerateError> {
    let (spec, source) = read_spec(&opts.input)?;
    let tuned = read_tuned(opts.tuned.as_deref())?;
    // The same compilation and argument checks as the torch path.
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
    let plugins = plugins_dir()?;
    warnings.extend(tuned.warnings);
    // The crate's path to them: the repository's, or a copy inside the crate.
    let plugins_path = plugins
        .clone()
        .unwrap_or_else(|| PathBuf::from(BUNDLED_PLUGINS));
    let ctx = context::build(
        &spec,
        &groups,
        &kinds,
        &source_name,
        &plugins_path,
        &tuned.text,
    )
    .map_err(GenerateError)?;
    let mut files = render(&ctx).map_err(GenerateError)?;
    // The PTX of every variant, embedded with include_str!.
    let ptx = groups.iter().flat_map(|g| &g.variants);
    for (index, v) in ptx.enumerate() {
        files.push((format!("ptx/{index}.ptx"), v.ptx.clone()));
    }
    let out_dir = opts.out_dir.clone().unwrap_or_else(|| {
        PathBuf::from("out").join(format!("{}_{}_ort", spec.namespace, spec.name))
    });
    progress(Progress::Step("writing the crate"));
    crate::generate::write_files(
        &out_dir,
        files
            .iter()
            .map(|(rel, text)| (rel.as_str(), text.as_str())),
    )?;
    if plugins.is_none() {
        crate::bundled::write_plugin_sources(&out_dir.join(BUNDLED_PLUGINS))?;
    }
    let library = if opts.no_build {
        None
    } else {
        progress(Progress::Step("building the custom-op library with cargo"));
        Some(build_library(&out_dir, &ctx, opts.target_dir.as_deref())?)
    };
    Ok(OrtGenerated {
        variants: groups.iter().map(|g| g.variants.len()).sum(),
        context: ctx,
        out_dir,
        library,
        warnings,
    })
}

/// The crate's folder for the bundled runtime and bridge crates.
const BUNDLED_PLUGINS: &str = "opgen-plugins";

/// The folder holding the runtime and bridge crates the library depends on:
/// `$OPGEN_PLUGINS_DIR`, else the repository this binary was built from
/// when it is still there; `None`: the copies built into this tool, written
/// into the crate (also `OPGEN_PLUGINS_DIR=bundled`).
fn plugins_dir() -> Result<Option<PathBuf>, GenerateError> {
    let holds_crates = |dir: &Path| {
        dir.join("runtime/Cargo.toml").is_file() && dir.join("bridge/Cargo.toml").is_file()
    };
    match std::env::var_os("OPGEN_PLUGINS_DIR") {
        Some(v) if v == "bundled" => Ok(None),
        Some(v) => {
            let dir = PathBuf::from(v);
            let dir = dir.canonicalize().unwrap_or(dir);
            if holds_crates(&dir) {
                Ok(Some(dir))
            } else {
                Err(GenerateError(format!(
                    "OPGEN_PLUGINS_DIR={} does not hold the opgen runtime and bridge crates (runtime/, bridge/); unset it to use the copies built into triton-opgen",
                    dir.display()
                )))
            }
        }
        None => {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins");
            Ok(repo.canonicalize().ok().filter(|dir| holds_crates(dir)))
        }
    }
}

/// `cargo build --release` of the crate; returns the shared library.
pub fn build_library(
    out_dir: &Path,
    ctx: &OrtContext,
    target_dir: Option<&Path>,
) -> Result<PathBuf, GenerateError> {
    let target = target_dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("target"));
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(out_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .map_err(|e| GenerateError(format!("cannot run cargo: {e}")))?;
    if !output.status.success() {
        return Err(GenerateError(format!(
            "building the ONNX Runtime library in {} failed:\n{}",
            out_dir.display(),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    let lib = target
        .join("release")
        .join(format!("lib{}.so", ctx.crate_name));
    if lib.is_file() {
        Ok(lib)
    } else {
        Err(GenerateError(format!(
            "cargo succeeded but {} is missing",
            lib.display()
        )))
    }
}

/// The op as a wheel (`--wheel`): package `NS_NAME_ort` whose
/// `get_library_path()` gives the library inside it, for
/// `SessionOptions.register_custom_ops_library` (as onnxruntime-extensions
/// does). No Requires-Dist: onnxruntime and onnxruntime-gpu both serve.
pub fn wheel_spec(done: &OrtGenerated) -> Result<crate::wheel::WheelSpec, String> {
    let library = done
        .library
        .as_ref()
        .ok_or("--wheel needs the built library (drop --no-build)")?;
    let lib_name = library
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let package = format!(
        "{}_ort",
        done.context.crate_name.trim_start_matches("opgen_ort_")
    );
    let init = format!(
        "\"\"\"ONNX Runtime op {q} (domain `{d}`, op `{n}`), generated by triton-opgen.\n\n    import onnxruntime as ort, {package}\n    opts = ort.SessionOptions()\n    opts.register_custom_ops_library({package}.get_library_path())\n\"\"\"\nimport os\n\nLIBRARY = \"{lib_name}\"\n\n\ndef get_library_path():\n    \"\"\"The op library's path, for SessionOptions.register_custom_ops_library.\"\"\"\n    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY)\n",
        q = done.context.qualified,
        d = done.context.domain,
        n = done.context.name,
    );
    let data =
        std::fs::read(library).map_err(|e| format!("cannot read {}: {e}", library.display()))?;
    Ok(crate::wheel::WheelSpec {
        summary: format!(
            "ONNX Runtime op {} generated by triton-opgen",
            done.context.qualified
        ),
        version: env!("CARGO_PKG_VERSION").to_string(),
        requires: Vec::new(),
        files: vec![
            ("__init__.py".to_string(), init.into_bytes()),
            (lib_name, data),
        ],
        package,
    })
}
