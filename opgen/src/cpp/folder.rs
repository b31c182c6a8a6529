//! The build folder of a C++ op (TensorFlow's, JAX's): the rendered files,
//! the bridge's header in `include/` and its prebuilt archive in `lib/`, so
//! that build.sh needs no Rust.

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

/// Writes `files` (name, contents) into `dir` with the bridge's header and
/// archive (`bridge`), and makes build.sh runnable.
pub fn write_build_folder(
    dir: &Path,
    files: &[(String, String)],
    bridge: &crate::bundled::BridgeLib,
) -> Result<(), String> {
    let io = |path: &Path, e: std::io::Error| format!("cannot write {}: {e}", path.display());
    for sub in ["include", "lib"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| io(&dir.join(sub), e))?;
    }
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::write(&path, text).map_err(|e| io(&path, e))?;
    }
    let header = dir.join("include/opgen_bridge.h");
    std::fs::write(&header, super::BRIDGE_HEADER).map_err(|e| io(&header, e))?;
    let lib = dir.join("lib/libopgen_bridge.a");
    bridge.write_to(&lib)?;
    crate::generate::set_executable(&dir.join("build.sh"));
    Ok(())
}
