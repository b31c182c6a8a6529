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
use std::process::{Child, Command};
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
    write_folder(&out_dir, &files, &bridge)?;
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

fn write_folder(
    dir: &Path,
    files: &[(String, String)],
    bridge: &Path,
) -> Result<(), GenerateError> {
    let io = |path: &Path, e: std::io::Error| {
        GenerateError(format!("cannot write {}: {e}", path.display()))
    };
    for sub in ["include", "lib"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| io(&dir.join(sub), e))?;
    }
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    let header = dir.join("include/opgen_bridge.h");
    std::fs::write(&header, crate::cpp::BRIDGE_HEADER).map_err(|e| io(&header, e))?;
    let lib = dir.join("lib/libopgen_bridge.a");
    std::fs::copy(bridge, &lib).map_err(|e| io(&lib, e))?;
    // Debug info is most of the archive; drop it when `strip` is at hand.
    let _ = Command::new("strip").arg("-g").arg(&lib).status();
    crate::generate::set_executable(&dir.join("build.sh"));
    Ok(())
}

/// Compiles op.cc (against TensorFlow's headers, the slow one) and
/// kernels.cc at the same time, then links the library.
pub fn build_library(dir: &Path, ctx: &TfContext, env: &TfEnv) -> Result<PathBuf, GenerateError> {
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let compiler = cc::Build::new()
        .cpp(true)
        .target(&target)
        .host(&target)
        .opt_level(2)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .map_err(|e| GenerateError(format!("no C++ compiler: {e}")))?;
    let obj_dir = dir.join("obj");
    std::fs::create_dir_all(&obj_dir)
        .map_err(|e| GenerateError(format!("cannot create {}: {e}", obj_dir.display())))?;
    let compile = |source: &str| -> Result<(Child, PathBuf), GenerateError> {
        let object = obj_dir.join(format!("{source}.o"));
        let mut cmd = compiler.to_command();
        cmd.args(&env.compile_flags)
            .args(["-fPIC", "-w", "-c"])
            .arg(format!("-I{}", dir.join("include").display()))
            .arg(dir.join(source))
            .arg("-o")
            .arg(&object)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let child = cmd
            .spawn()
            .map_err(|e| GenerateError(format!("cannot run the C++ compiler: {e}")))?;
        Ok((child, object))
    };
    let jobs = [compile("op.cc")?, compile("kernels.cc")?];
    let mut objects = Vec::new();
    let mut failures = String::new();
    for (child, object) in jobs {
        let output = child
            .wait_with_output()
            .map_err(|e| GenerateError(format!("the C++ compiler did not finish: {e}")))?;
        if !output.status.success() {
            failures.push_str(&String::from_utf8_lossy(&output.stderr));
        }
        objects.push(object);
    }
    if !failures.is_empty() {
        return Err(GenerateError(format!(
            "compiling the TensorFlow op in {} failed (TensorFlow {}):\n{failures}",
            dir.display(),
            env.version
        )));
    }
    let lib = dir.join(&ctx.lib_file);
    let mut link = compiler.to_command();
    link.arg("-shared")
        .args(&objects)
        .arg(dir.join("lib/libopgen_bridge.a"))
        .args(&env.link_flags);
    if let Some(lib_dir) = env.lib_dir() {
        link.arg(format!("-Wl,-rpath,{lib_dir}"));
    }
    link.args(["-Wl,--exclude-libs,ALL", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&lib);
    let output = link
        .output()
        .map_err(|e| GenerateError(format!("cannot run the linker: {e}")))?;
    if !output.status.success() {
        return Err(GenerateError(format!(
            "linking {} failed:\n{}",
            lib.display(),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(lib)
}
