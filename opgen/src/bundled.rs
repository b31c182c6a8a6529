//! What the tool carries so that it works away from this repository (see
//! build.rs): the runtime bridge archive that torch, TensorFlow and JAX
//! libraries link, and the runtime crates' sources for ONNX Runtime crates.

use crate::GenerateError;
use std::io::Read;
use std::path::{Path, PathBuf};

/// gzip of `libopgen_bridge.a`, built with this tool.
const BRIDGE_ARCHIVE_GZ: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libopgen_bridge.a.gz"));

include!(concat!(env!("OUT_DIR"), "/plugin_sources.rs"));

/// Where a build folder's `lib/libopgen_bridge.a` comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BridgeLib {
    /// The archive built with this tool.
    Embedded,
    /// One given by `--bridge-lib` or `$OPGEN_BRIDGE_LIB`.
    File(PathBuf),
}

impl BridgeLib {
    /// Writes the archive to `dest`.
    pub fn write_to(&self, dest: &Path) -> Result<(), String> {
        let result = match self {
            BridgeLib::File(path) => std::fs::copy(path, dest)
                .map(|_| ())
                .map_err(|e| format!("cannot copy {} to {}: {e}", path.display(), dest.display())),
            BridgeLib::Embedded => {
                let mut bytes = Vec::new();
                flate2::read::GzDecoder::new(BRIDGE_ARCHIVE_GZ)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("the embedded bridge archive is damaged: {e}"))?;
                std::fs::write(dest, bytes)
                    .map_err(|e| format!("cannot write {}: {e}", dest.display()))
            }
        };
        result?;
        // Debug info is most of the archive; drop it when `strip` is at hand.
        let _ = std::process::Command::new("strip")
            .arg("-g")
            .arg(dest)
            .status();
        Ok(())
    }
}

/// `--bridge-lib`, else `$OPGEN_BRIDGE_LIB`, else the embedded archive.
pub fn find_bridge_lib(given: Option<&Path>) -> Result<BridgeLib, GenerateError> {
    let Some(path) = given
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("OPGEN_BRIDGE_LIB").map(PathBuf::from))
    else {
        return Ok(BridgeLib::Embedded);
    };
    if path.is_file() {
        Ok(BridgeLib::File(path))
    } else {
        Err(GenerateError(format!(
            "the runtime bridge library {} does not exist; leave out --bridge-lib (and $OPGEN_BRIDGE_LIB) to use the one built into triton-opgen",
            path.display()
        )))
    }
}

/// Writes the runtime and bridge crates (`runtime/`, `bridge/`, each with a
/// standalone Cargo.toml) into `dir`.
pub fn write_plugin_sources(dir: &Path) -> Result<(), GenerateError> {
    crate::generate::write_files(dir, PLUGIN_SOURCES.iter().copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_archive_is_the_bridge() {
        let tmp = tempfile::tempdir().unwrap();
        let dest = tmp.path().join("libopgen_bridge.a");
        BridgeLib::Embedded.write_to(&dest).unwrap();
        let bytes = std::fs::read(&dest).unwrap();
        assert!(bytes.starts_with(b"!<arch>\n"), "not an ar archive");
        let nm = std::process::Command::new("nm")
            .args(["--defined-only", "-g", "-C"])
            .arg(&dest)
            .output()
            .unwrap();
        let symbols = String::from_utf8_lossy(&nm.stdout);
        // The C++ shim of the cxx bridge, the Rust functions it calls, and
        // cxx's own runtime (rust::Error's what(), rust::String's Rust side).
        for entry in [
            "opgen::new_op(",
            "opgen::launch(",
            "$cxxbridge1$",
            "rust::cxxbridge1::Error::what()",
            "cxxbridge1$string$new",
        ] {
            assert!(symbols.contains(entry), "{entry} missing from the archive");
        }
    }

    #[test]
    fn plugin_sources_are_standalone_crates() {
        let names: Vec<&str> = PLUGIN_SOURCES.iter().map(|(p, _)| *p).collect();
        for required in [
            "runtime/Cargo.toml",
            "runtime/src/lib.rs",
            "runtime/kernels/copy_fill_b16_generic.ptx",
            "runtime/kernels/copy_fill_b32_vec16.ptx",
            "bridge/Cargo.toml",
            "bridge/build.rs",
            "bridge/src/lib.rs",
            "bridge/src/ffi.rs",
        ] {
            assert!(
                names.contains(&required),
                "{required} not bundled: {names:?}"
            );
        }
        assert!(!names.iter().any(|n| n.contains("/bin/")), "{names:?}");
        for (path, text) in PLUGIN_SOURCES.iter().filter(|(p, _)| p.ends_with(".toml")) {
            assert!(
                !text.contains("workspace"),
                "{path} still inherits:\n{text}"
            );
            assert!(text.contains("edition = \"2021\""), "{path}:\n{text}");
        }
        let bridge = PLUGIN_SOURCES
            .iter()
            .find(|(p, _)| *p == "bridge/Cargo.toml")
            .unwrap()
            .1;
        assert!(bridge.contains("path = \"../runtime\""), "{bridge}");
        // Its C++ boundary is a feature the ONNX Runtime crate turns off.
        assert!(
            bridge.contains("cxx = [\"dep:cxx\", \"dep:cxx-build\"]"),
            "{bridge}"
        );
        assert!(bridge.contains("[build-dependencies"), "{bridge}");
    }

    #[test]
    fn a_missing_given_archive_names_the_fallback() {
        let e = find_bridge_lib(Some(Path::new("/nope/libopgen_bridge.a")))
            .unwrap_err()
            .0;
        assert!(
            e.contains("/nope/libopgen_bridge.a") && e.contains("built into"),
            "{e}"
        );
    }
}
