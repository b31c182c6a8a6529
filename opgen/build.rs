//! Makes `triton-opgen` self-contained (issue 17): it carries what generated
//! ops link, so `cargo install --path opgen` gives a tool that works away
//! from this repository.
//!
//! - The runtime bridge archive (`libopgen_bridge.a`, linked by the torch,
//!   TensorFlow and JAX libraries), built here by a nested `cargo build
//!   --release -p opgen-bridge` in its own target folder and embedded
//!   gzip-compressed. `OPGEN_BRIDGE_PREBUILT=PATH` at build time embeds a
//!   given archive instead (no nested build).
//! - The sources of `plugins/runtime` and `plugins/bridge` with standalone
//!   manifests (workspace inheritance resolved), which the ONNX Runtime crate
//!   depends on when the repository is not at hand.

use flate2::{write::GzEncoder, Compression};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().unwrap().to_path_buf();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    for watched in [
        "plugins/runtime/src",
        "plugins/runtime/Cargo.toml",
        "plugins/bridge/src",
        "plugins/bridge/Cargo.toml",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    println!("cargo:rerun-if-env-changed=OPGEN_BRIDGE_PREBUILT");

    let archive = match std::env::var_os("OPGEN_BRIDGE_PREBUILT") {
        Some(path) => PathBuf::from(path),
        None => build_bridge(&root, &out),
    };
    compress(&archive, &out.join("libopgen_bridge.a.gz"));
    write_plugin_sources(&root, &out.join("plugin_sources.rs"));
}

/// `cargo build --release -p opgen-bridge` into OUT_DIR/bridge-target (a
/// separate target folder: the outer build holds the lock on its own).
fn build_bridge(root: &Path, out: &Path) -> PathBuf {
    let target_dir = out.join("bridge-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("-p")
        .arg("opgen-bridge")
        .arg("--lib")
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir);
    // A plain host build: not the outer build's flags (cargo-fuzz's
    // sanitizers, clippy's wrapper), whatever they are.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the runtime bridge: {e}"));
    assert!(
        status.success(),
        "building the runtime bridge (cargo build --release -p opgen-bridge) failed"
    );
    target_dir.join("release/libopgen_bridge.a")
}

fn compress(from: &Path, to: &Path) {
    let bytes = std::fs::read(from)
        .unwrap_or_else(|e| panic!("cannot read the bridge archive {}: {e}", from.display()));
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(&bytes).unwrap();
    std::fs::write(to, enc.finish().unwrap()).unwrap();
}

/// `PLUGIN_SOURCES: &[(&str, &str)]`: (path under plugins/, text) of every
/// library source and a standalone manifest for each crate.
fn write_plugin_sources(root: &Path, to: &Path) {
    let workspace: toml::Table = read_toml(&root.join("Cargo.toml"));
    let mut entries = Vec::new();
    for krate in ["runtime", "bridge"] {
        let dir = root.join("plugins").join(krate);
        let manifest = standalone_manifest(&read_toml(&dir.join("Cargo.toml")), &workspace);
        entries.push(format!(
            "({:?}, {:?})",
            format!("{krate}/Cargo.toml"),
            manifest
        ));
        let mut files = Vec::new();
        collect_rs(&dir.join("src"), &mut files);
        files.sort();
        for file in files {
            let rel = file.strip_prefix(root.join("plugins")).unwrap();
            // The runtime's GPU self-check binary is not part of the library.
            if rel.components().any(|c| c.as_os_str() == "bin") {
                continue;
            }
            entries.push(format!(
                "({:?}, include_str!({:?}))",
                rel.to_string_lossy(),
                file.display().to_string()
            ));
        }
    }
    let text = format!(
        "pub const PLUGIN_SOURCES: &[(&str, &str)] = &[\n    {}\n];\n",
        entries.join(",\n    ")
    );
    std::fs::write(to, text).unwrap();
}

fn collect_rs(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_rs(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

fn read_toml(path: &Path) -> toml::Table {
    let text = std::fs::read_to_string(path).unwrap();
    text.parse()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The crate's manifest with `x.workspace = true` replaced by the
/// workspace's values, and without binaries and dev-dependencies.
fn standalone_manifest(manifest: &toml::Table, workspace: &toml::Table) -> String {
    let ws = workspace["workspace"].as_table().unwrap();
    let ws_package = ws["package"].as_table().unwrap();
    let ws_deps = ws["dependencies"].as_table().unwrap();
    let inherits = |v: &toml::Value| {
        v.as_table()
            .and_then(|t| t.get("workspace"))
            .and_then(toml::Value::as_bool)
            == Some(true)
    };
    let mut out = toml::Table::new();
    let mut package = manifest["package"].as_table().unwrap().clone();
    for (key, value) in package.iter_mut() {
        if inherits(value) {
            *value = ws_package[key].clone();
        }
    }
    out.insert("package".into(), package.into());
    if let Some(lib) = manifest.get("lib") {
        let mut lib = lib.as_table().unwrap().clone();
        // Only the ONNX Runtime crate links it, as a Rust library.
        lib.remove("crate-type");
        out.insert("lib".into(), lib.into());
    }
    let mut deps = manifest["dependencies"].as_table().unwrap().clone();
    for (name, value) in deps.iter_mut() {
        if inherits(value) {
            let mut resolved = match &ws_deps[name] {
                toml::Value::String(version) => {
                    let mut t = toml::Table::new();
                    t.insert("version".into(), version.clone().into());
                    t
                }
                other => other.as_table().unwrap().clone(),
            };
            for (k, v) in value.as_table().unwrap() {
                if k != "workspace" {
                    resolved.insert(k.clone(), v.clone());
                }
            }
            *value = resolved.into();
        }
    }
    out.insert("dependencies".into(), deps.into());
    format!(
        "# Written by triton-opgen: a standalone copy of the opgen runtime crate.\n{}",
        toml::to_string(&out).unwrap()
    )
}
