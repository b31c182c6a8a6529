//! `--framework tf`: a TensorFlow custom-op library (`tf.load_op_library`).
//! Renders `templates/tensorflow/` into a build folder (op.cc with
//! REGISTER_OP, the shape function and the GPU/CPU kernels; kernels.cc with
//! the PTX, the same as the torch op's; the Python helper with the gradient;
//! build.sh) and builds it with the flags of the TensorFlow `python` imports.

pub mod context;
mod tf_env;

pub use tf_env::{find_tensorflow, TfEnv};

use crate::generate::{prepare, write_and_build, GenerateError, Prepared, Progress};
use crate::render::Template;
use context::TfContext;
use std::path::{Path, PathBuf};

const OP_CC: &str = include_str!("../../../templates/tensorflow/op.cc.hbs");
const HELPER_PY: &str = include_str!("../../../templates/tensorflow/helper.py.hbs");
const BUILD_SH: &str = include_str!("../../../templates/tensorflow/build.sh.hbs");

/// `--framework tf`'s options; `python` is the interpreter that imports TensorFlow.
pub type TfOptions = crate::generate::FolderOptions;

#[derive(Debug)]
pub struct TfGenerated {
    pub qualified: String,
    /// TensorFlow's op name: `TritonAdd`.
    pub tf_name: String,
    /// The helper module in `out_dir`: `triton_add_tf`.
    pub module: String,
    pub out_dir: PathBuf,
    pub variants: usize,
    pub library: Option<PathBuf>,
    pub warnings: Vec<String>,
}

/// The build folder's rendered files: (name, contents).
pub fn render(
    ctx: &TfContext,
    groups: &[crate::variants::Group],
    tuned: &str,
) -> Result<Vec<(String, String)>, String> {
    let templates = vec![
        Template {
            file: "op.cc".into(),
            path: "templates/tensorflow/op.cc.hbs",
            text: OP_CC,
        },
        Template {
            file: format!("{}.py", ctx.module),
            path: "templates/tensorflow/helper.py.hbs",
            text: HELPER_PY,
        },
        Template {
            file: "build.sh".into(),
            path: "templates/tensorflow/build.sh.hbs",
            text: BUILD_SH,
        },
    ];
    crate::cpp::render_folder(ctx, templates, &ctx.launch, &ctx.source, groups, tuned)
}

pub fn generate(
    opts: &TfOptions,
    mut progress: impl FnMut(Progress),
) -> Result<TfGenerated, GenerateError> {
    // Fails before compiling when there is no TensorFlow to build against.
    let Prepared {
        spec,
        op,
        tuned,
        bridge,
        env,
    } = prepare(opts, find_tensorflow, &mut progress)?;
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
        "compiling the op library against TensorFlow",
        |env| build_library(&out_dir, &ctx, env),
        &mut progress,
    )?;
    Ok(TfGenerated {
        qualified: ctx.qualified.clone(),
        tf_name: ctx.tf_name.clone(),
        module: ctx.module.clone(),
        out_dir,
        variants: op.groups.iter().map(|g| g.variants.len()).sum(),
        library,
        warnings: op.warnings,
    })
}

/// Compiles op.cc (against TensorFlow's headers, the slow one) and
/// kernels.cc at the same time, then links the library.
pub fn build_library(dir: &Path, ctx: &TfContext, env: &TfEnv) -> Result<PathBuf, GenerateError> {
    let mut link_flags = env.link_flags.clone();
    if let Some(lib_dir) = env.lib_dir() {
        link_flags.push(format!("-Wl,-rpath,{lib_dir}"));
    }
    crate::cpp::build_shared_library(&crate::cpp::CppBuild {
        dir,
        sources: &["op.cc", "kernels.cc"],
        compile_flags: &env.compile_flags,
        link_flags: &link_flags,
        lib_file: &ctx.lib_file,
        what: &format!("the TensorFlow op (TensorFlow {})", env.version),
    })
    .map_err(GenerateError)
}
