//! `--framework jax`: an XLA FFI handler library and a Python module that
//! calls it through `jax.ffi.ffi_call`. Renders `templates/jax/` into a build
//! folder (op.cc with the GPU and CPU handlers; kernels.cc with the PTX, the
//! same as the other C++ ops'; the module with the trace-time checks, the
//! result shapes and the custom_vjp gradient; build.sh) and builds it against
//! the XLA FFI headers that jaxlib ships.

pub mod context;
mod jax_env;

pub use jax_env::{find_jax, JaxEnv};

use crate::generate::{prepare, write_and_build, GenerateError, Prepared, Progress};
use crate::render::Template;
use context::JaxContext;
use std::path::{Path, PathBuf};

const OP_CC: &str = include_str!("../../../templates/jax/op.cc.hbs");
const MODULE_PY: &str = include_str!("../../../templates/jax/module.py.hbs");
const BUILD_SH: &str = include_str!("../../../templates/jax/build.sh.hbs");

/// `--framework jax`'s options; `python` is the interpreter whose jax has
/// the XLA FFI headers.
pub type JaxOptions = crate::generate::FolderOptions;

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
    let templates = vec![
        Template {
            file: "op.cc".into(),
            path: "templates/jax/op.cc.hbs",
            text: OP_CC,
        },
        Template {
            file: format!("{}.py", ctx.module),
            path: "templates/jax/module.py.hbs",
            text: MODULE_PY,
        },
        Template {
            file: "build.sh".into(),
            path: "templates/jax/build.sh.hbs",
            text: BUILD_SH,
        },
    ];
    crate::cpp::render_folder(ctx, templates, &ctx.launch, &ctx.source, groups, tuned)
}

pub fn generate(
    opts: &JaxOptions,
    mut progress: impl FnMut(Progress),
) -> Result<JaxGenerated, GenerateError> {
    // Fails before compiling when there are no headers to build against.
    let Prepared {
        spec,
        op,
        tuned,
        bridge,
        env,
    } = prepare(opts, find_jax, &mut progress)?;
    let ctx = context::build(&spec, &op.groups, &op.kinds, &op.source_name)
        .map_err(|e| GenerateError(e.to_string()))?;
    let files = render(&ctx, &op.groups, &tuned).map_err(GenerateError)?;
    let out_dir = opts
        .out_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&ctx.module));
    let library = write_and_build(
        &out_dir,
        &files,
        &bridge,
        env.as_ref(),
        "compiling the XLA FFI handlers",
        |env| build_library(&out_dir, &ctx, env),
        &mut progress,
    )?;
    Ok(JaxGenerated {
        qualified: ctx.qualified.clone(),
        module: ctx.module.clone(),
        target: ctx.target.clone(),
        out_dir,
        variants: op.groups.iter().map(|g| g.variants.len()).sum(),
        library,
        warnings: op.warnings,
    })
}

/// Compiles op.cc (against the XLA FFI headers) and kernels.cc at the same
/// time, then links the library. It needs no JAX library: XLA passes the
/// FFI's function table with every call.
pub fn build_library(dir: &Path, ctx: &JaxContext, env: &JaxEnv) -> Result<PathBuf, GenerateError> {
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
