//! `--framework jax`: an XLA FFI handler library and a Python module that
//! calls it through `jax.ffi.ffi_call`. Renders `templates/jax/` into a build
//! folder (op.cc with the GPU and CPU handlers; kernels.cc with the PTX, the
//! same as the other C++ ops'; the module with the trace-time checks, the
//! result shapes and the custom_vjp gradient; build.sh) and builds it against
//! the XLA FFI headers that jaxlib ships.

pub mod context;
mod jax_env;

pub use jax_env::{find_jax, JaxEnv};

use crate::generate::{compile_op, find_bridge_lib, read_spec, CompiledOp, GenerateError, Progress};
use context::JaxContext;
use handlebars::Handlebars;
use std::path::{Path, PathBuf};
use tritonc::codegen::Arch;

const OP_CC: &str = include_str!("../../../templates/jax/op.cc.hbs");
const MODULE_PY: &str = include_str!("../../../templates/jax/module.py.hbs");
const BUILD_SH: &str = include_str!("../../../templates/jax/build.sh.hbs");

#[derive(Clone, Debug)]
pub struct JaxOptions {
    pub input: PathBuf,
    /// Default: out/<namespace>_<op>_jax.
    pub out_dir: Option<PathBuf>,
    pub arch: Arch,
    /// Write the build folder only (for a machine with JAX but no Rust).
    pub no_build: bool,
    /// The Python whose jax has the XLA FFI headers.
    pub python: String,
    /// The prebuilt `libopgen_bridge.a`; found next to the executable when `None`.
    pub bridge_lib: Option<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// A pre-tuned table to embed (an autotune cache file).
    pub tuned: Option<PathBuf>,
}

#[derive(Debug)]
pub struct JaxGenerated {
    pub qualified: String,
    /// The Python module in `out_dir`: `triton_add_jax`.
    pub module: String,
    /// The XLA FFI target: `triton_add`.
    pub target: String,
    pub out_dir: PathBuf,
    pub variants: usize,
    pub library: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// The build folder's rendered files: (name, contents).
pub fn render(
    ctx: &JaxContext,
    groups: &[crate::variants::Group],
    tuned: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    let render = |name: &str, text: &str| {
        hb.render_template(text, ctx)
            .map_err(|e| format!("templates/jax/{name}.hbs: {e}"))
    };
    Ok(vec![
        ("op.cc".to_string(), render("op.cc", OP_CC)?),
        (format!("{}.py", ctx.module), render("module.py", MODULE_PY)?),
        ("build.sh".to_string(), render("build.sh", BUILD_SH)?),
        (
            "kernels.cc".to_string(),
            crate::cpp::kernels_cpp(&ctx.launch.prefix, &ctx.source, groups, tuned),
        ),
    ])
}

pub fn generate(
    opts: &JaxOptions,
    mut progress: impl FnMut(Progress),
) -> Result<JaxGenerated, GenerateError> {
    let (spec, source) = read_spec(&opts.input)?;
    let tuned = crate::generate::read_tuned(opts.tuned.as_deref())?;
    let bridge = find_bridge_lib(opts.bridge_lib.as_deref())?;
    // Fail before compiling when there are no headers to build against.
    let env = if opts.no_build {
        None
    } else {
        Some(find_jax(&opts.python).map_err(GenerateError)?)
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
    let files = render(&ctx, &groups, &tuned.text).map_err(GenerateError)?;
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&ctx.module));
    progress(Progress::Step("writing the build folder"));
    crate::cpp::write_build_folder(&out_dir, &files, &bridge).map_err(GenerateError)?;
    let library = match &env {
        None => None,
        Some(env) => {
            progress(Progress::Step("compiling the XLA FFI handlers"));
            Some(build_library(&out_dir, &ctx, env)?)
        }
    };
    Ok(JaxGenerated {
        qualified: ctx.qualified.clone(),
        module: ctx.module.clone(),
        target: ctx.target.clone(),
        out_dir,
        variants: groups.iter().map(|g| g.variants.len()).sum(),
        library,
        warnings,
    })
}

/// Compiles op.cc (against the XLA FFI headers) and kernels.cc at the same
/// time, then links the library. It needs no JAX library: XLA passes the
/// FFI's function table with every call.
pub fn build_library(
    dir: &Path,
    ctx: &JaxContext,
    env: &JaxEnv,
) -> Result<PathBuf, GenerateError> {
    crate::cpp::build_shared_library(&crate::cpp::CppBuild {
        dir,
        sources: &["op.cc", "kernels.cc"],
        compile_flags: &[
            "-std=c++17".to_string(),
            "-isystem".to_string(),
            env.include_dir.display().to_string(),
        ],
        link_flags: &[],
        lib_file: &ctx.lib_file,
        what: "the JAX op's XLA FFI handlers",
    })
    .map_err(GenerateError)
}
