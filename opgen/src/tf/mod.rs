//! `--framework tf`: a TensorFlow custom-op library (`tf.load_op_library`).
//! Renders `templates/tensorflow/` into a build folder (op.cc with
//! REGISTER_OP, the shape function and the GPU/CPU kernels; kernels.cc with
//! the PTX, the same as the torch op's; the Python helper with the gradient;
//! build.sh) and builds it with the flags of the TensorFlow `python` imports.

pub mod context;
mod tf_env;

pub use tf_env::{find_tensorflow, TfEnv};

use crate::generate::{
    compile_op, find_bridge_lib, read_spec, CompiledOp, GenerateError, Progress,
};
use context::TfContext;
use handlebars::Handlebars;
use std::path::{Path, PathBuf};
use tritonc::codegen::Arch;

const OP_CC: &str = include_str!("../../../templates/tensorflow/op.cc.hbs");
const HELPER_PY: &str = include_str!("../../../templates/tensorflow/helper.py.hbs");
const BUILD_SH: &str = include_str!("../../../templates/tensorflow/build.sh.hbs");

#[derive(Clone, Debug)]
pub struct TfOptions {
    pub input: PathBuf,
    /// Default: out/<namespace>_<op>_tf.
    pub out_dir: Option<PathBuf>,
    pub arch: Arch,
    /// Write the build folder only (for a machine with TensorFlow but no Rust).
    pub no_build: bool,
    /// The Python that imports TensorFlow (for its flags).
    pub python: String,
    /// The prebuilt `libopgen_bridge.a`; found next to the executable when `None`.
    pub bridge_lib: Option<PathBuf>,
    pub include_dirs: Vec<PathBuf>,
    /// A pre-tuned table to embed (an autotune cache file).
    pub tuned: Option<PathBuf>,
}

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
    let mut hb = Handlebars::new();
    hb.set_strict_mode(true);
    hb.register_escape_fn(handlebars::no_escape);
    let render = |name: &str, text: &str| {
        hb.render_template(text, ctx)
            .map_err(|e| format!("templates/tensorflow/{name}.hbs: {e}"))
    };
    Ok(vec![
        ("op.cc".to_string(), render("op.cc", OP_CC)?),
        (
            format!("{}.py", ctx.module),
            render("helper.py", HELPER_PY)?,
        ),
        ("build.sh".to_string(), render("build.sh", BUILD_SH)?),
        (
            "kernels.cc".to_string(),
            crate::cpp::kernels_cpp(&ctx.launch.prefix, &ctx.source, groups, tuned),
        ),
    ])
}

pub fn generate(
    opts: &TfOptions,
    mut progress: impl FnMut(Progress),
) -> Result<TfGenerated, GenerateError> {
    let (spec, source) = read_spec(&opts.input)?;
    let tuned = crate::generate::read_tuned(opts.tuned.as_deref())?;
    let bridge = find_bridge_lib(opts.bridge_lib.as_deref())?;
    // Fail before compiling when there is no TensorFlow to build against.
    let env = if opts.no_build {
        None
    } else {
        Some(find_tensorflow(&opts.python).map_err(GenerateError)?)
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
            progress(Progress::Step(
                "compiling the op library against TensorFlow",
            ));
            Some(build_library(&out_dir, &ctx, env)?)
        }
    };
    Ok(TfGenerated {
        qualified: ctx.qualified.clone(),
        tf_name: ctx.tf_name.clone(),
        module: ctx.module.clone(),
        out_dir,
        variants: groups.iter().map(|g| g.variants.len()).sum(),
        library,
        warnings,
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
