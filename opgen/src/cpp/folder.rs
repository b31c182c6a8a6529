//! The build folder of a C++ op (torch's, TensorFlow's, JAX's): the rendered
//! files, the bridge's headers in `include/` (`opgen_bridge.h` and cxx's
//! `rust/cxx.h`) and its prebuilt archive in `lib/`, so that build.sh needs
//! no Rust.

use super::CppLaunch;
use crate::render::{render_templates, Template};
use crate::variants::Group;
use serde::Serialize;
use std::path::Path;

/// The folder's sources: the framework's templates rendered with `ctx`,
/// then kernels.cc with the PTX of every variant (and the pre-tuned table).
pub fn render_folder<T: Serialize>(
    ctx: &T,
    templates: Vec<Template>,
    launch: &CppLaunch,
    source: &str,
    groups: &[Group],
    tuned: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut files = render_templates(ctx, templates)?;
    files.push((
        "kernels.cc".to_string(),
        super::kernels_cpp(&launch.prefix, source, groups, tuned),
    ));
    Ok(files)
}

/// Writes `files` (name, contents) into `dir` with the bridge's headers and
/// archive (`bridge`), and makes build.sh runnable.
pub fn write_build_folder<'a>(
    dir: &Path,
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    bridge: &crate::bundled::BridgeLib,
) -> Result<(), String> {
    let headers = [
        ("include/opgen_bridge.h", super::BRIDGE_HEADER),
        ("include/rust/cxx.h", super::CXX_HEADER),
    ];
    crate::generate::write_files(dir, files.into_iter().chain(headers)).map_err(|e| e.0)?;
    let lib = dir.join("lib");
    std::fs::create_dir_all(&lib).map_err(|e| format!("cannot create {}: {e}", lib.display()))?;
    bridge.write_to(&lib.join("libopgen_bridge.a"))?;
    crate::generate::set_executable(&dir.join("build.sh"));
    Ok(())
}
