//! Building a C++ op's shared library from its build folder with the cc
//! crate's compiler: every source compiled at once (the framework's headers
//! make op.cc the slow one), then linked with the bridge's archive.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

/// How to build one op library.
pub struct CppBuild<'a> {
    /// The build folder (sources, include/, lib/libopgen_bridge.a).
    pub dir: &'a Path,
    pub sources: &'a [&'a str],
    /// The framework's flags: include folders, ABI, standard.
    pub compile_flags: &'a [String],
    pub link_flags: &'a [String],
    /// The library's file name in `dir`.
    pub lib_file: &'a str,
    /// For messages: `the TensorFlow op (TensorFlow 2.21.0)`.
    pub what: &'a str,
}

pub fn build_shared_library(b: &CppBuild) -> Result<PathBuf, String> {
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let compiler = cc::Build::new()
        .cpp(true)
        .target(&target)
        .host(&target)
        .opt_level(2)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .try_get_compiler()
        .map_err(|e| format!("no C++ compiler: {e}"))?;
    let obj_dir = b.dir.join("obj");
    std::fs::create_dir_all(&obj_dir)
        .map_err(|e| format!("cannot create {}: {e}", obj_dir.display()))?;
    let compile = |source: &str| -> Result<(Child, PathBuf), String> {
        let object = obj_dir.join(format!("{source}.o"));
        let child = compiler
            .to_command()
            .args(b.compile_flags)
            .args(["-fPIC", "-w", "-c"])
            .arg(format!("-I{}", b.dir.join("include").display()))
            .arg(b.dir.join(source))
            .arg("-o")
            .arg(&object)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run the C++ compiler: {e}"))?;
        Ok((child, object))
    };
    let jobs = b
        .sources
        .iter()
        .map(|s| compile(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut objects = Vec::new();
    let mut failures = String::new();
    for (child, object) in jobs {
        let output = child
            .wait_with_output()
            .map_err(|e| format!("the C++ compiler did not finish: {e}"))?;
        if !output.status.success() {
            failures.push_str(&String::from_utf8_lossy(&output.stderr));
        }
        objects.push(object);
    }
    if !failures.is_empty() {
        return Err(format!(
            "compiling {} in {} failed:\n{failures}",
            b.what,
            b.dir.display()
        ));
    }
    let lib = b.dir.join(b.lib_file);
    // The compiler's own flags too, as for the objects.
    let output = compiler
        .to_command()
        .arg("-shared")
        .args(&objects)
        .arg(b.dir.join("lib/libopgen_bridge.a"))
        .args(b.link_flags)
        .args(["-Wl,--exclude-libs,ALL", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&lib)
        .output()
        .map_err(|e| format!("cannot run the linker: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "linking {} failed:\n{}",
            lib.display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(lib)
}
