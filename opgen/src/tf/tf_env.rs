//! Finding the TensorFlow to build against: the one `python` imports, with
//! the compile and link flags it reports (`tf.sysconfig`).

use crate::python_probe::{self, Probe};

/// What `tf.sysconfig` says about the installed TensorFlow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TfEnv {
    pub version: String,
    /// `tf.sysconfig.get_compile_flags()`: include folder, C++ ABI, standard.
    pub compile_flags: Vec<String>,
    /// `tf.sysconfig.get_link_flags()`: `-L<dir> -l:libtensorflow_framework.so.2`.
    pub link_flags: Vec<String>,
}

impl TfEnv {
    /// The folder of libtensorflow_framework (the `-L` flag), for the rpath.
    pub fn lib_dir(&self) -> Option<&str> {
        self.link_flags.iter().find_map(|f| f.strip_prefix("-L"))
    }
}

const SCRIPT: &str = "import tensorflow as tf, json; print(json.dumps([tf.__version__, tf.sysconfig.get_compile_flags(), tf.sysconfig.get_link_flags()]))";

/// Asks `python` for TensorFlow's version and flags.
pub fn find_tensorflow(python: &str) -> Result<TfEnv, String> {
    let hint = "install it (`pip install tensorflow-cpu==2.21.0` is enough to build), pass --python for another interpreter, or --no-build to write the build folder only";
    let stdout = python_probe::run(
        python,
        &Probe {
            framework: "TensorFlow",
            module: "tensorflow",
            script: SCRIPT,
            // Keeps TF's start-up banner out of the way; errors still print.
            env: &[("TF_CPP_MIN_LOG_LEVEL", "2")],
            hint,
        },
    )?;
    let line = stdout.lines().last().unwrap_or("");
    let (version, compile_flags, link_flags): (String, Vec<String>, Vec<String>) =
        serde_json::from_str(line).map_err(|e| {
            format!(
                "TensorFlow's tf.sysconfig answered `{line}`, which is not the expected JSON ({e})"
            )
        })?;
    Ok(TfEnv {
        version,
        compile_flags,
        link_flags,
    })
}
