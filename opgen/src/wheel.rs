//! `--wheel`: the generated op as a pip-installable wheel. One package named
//! after the op's module (`triton_add`, `triton_add_tf`, ...) holding the
//! module as `__init__.py` and the shared library beside it (the module finds
//! it next to `__file__`, as in the build folder), plus the `.dist-info`
//! metadata; Requires-Dist pins the framework where its ABI needs it.

use base64::Engine;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What goes into one wheel.
pub struct WheelSpec {
    /// The import name, also the distribution name: `triton_add_tf`.
    pub package: String,
    pub version: String,
    pub summary: String,
    /// `Requires-Dist` lines: `torch==2.11.0`.
    pub requires: Vec<String>,
    /// The package's files: (name inside the package, contents).
    pub files: Vec<(String, Vec<u8>)>,
}

/// The wheel's platform: the library is a Linux shared object for this
/// machine's architecture (built against glibc 2.28 or later).
fn platform_tag() -> String {
    format!("manylinux_2_28_{}", std::env::consts::ARCH)
}

/// The wheel's file name: `triton_add_tf-0.1.0-py3-none-manylinux_2_28_x86_64.whl`.
pub fn file_name(spec: &WheelSpec) -> String {
    format!(
        "{}-{}-py3-none-{}.whl",
        spec.package,
        spec.version,
        platform_tag()
    )
}

/// `sha256=<urlsafe base64, no padding>` as RECORD writes hashes.
fn record_hash(data: &[u8]) -> String {
    let digest = Sha256::digest(data);
    format!(
        "sha256={}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest)
    )
}

/// Writes the wheel into `dist_dir` and returns its path.
pub fn write_wheel(dist_dir: &Path, spec: &WheelSpec) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dist_dir)
        .map_err(|e| format!("cannot create {}: {e}", dist_dir.display()))?;
    let info = format!("{}-{}.dist-info", spec.package, spec.version);
    let mut metadata = format!(
        "Metadata-Version: 2.1\nName: {}\nVersion: {}\nSummary: {}\n",
        spec.package, spec.version, spec.summary
    );
    for r in &spec.requires {
        metadata.push_str(&format!("Requires-Dist: {r}\n"));
    }
    let wheel = format!(
        "Wheel-Version: 1.0\nGenerator: triton-opgen {}\nRoot-Is-Purelib: false\nTag: py3-none-{}\n",
        env!("CARGO_PKG_VERSION"),
        platform_tag()
    );
    let mut entries: Vec<(String, Vec<u8>)> = spec
        .files
        .iter()
        .map(|(name, data)| (format!("{}/{name}", spec.package), data.clone()))
        .collect();
    entries.push((format!("{info}/METADATA"), metadata.into_bytes()));
    entries.push((format!("{info}/WHEEL"), wheel.into_bytes()));
    let mut record: String = entries
        .iter()
        .map(|(name, data)| format!("{name},{},{}\n", record_hash(data), data.len()))
        .collect();
    record.push_str(&format!("{info}/RECORD,,\n"));
    entries.push((format!("{info}/RECORD"), record.into_bytes()));

    let path = dist_dir.join(file_name(spec));
    let io = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", path.display());
    let file = std::fs::File::create(&path).map_err(|e| io(&e))?;
    let mut zip = zip::ZipWriter::new(file);
    for (name, data) in &entries {
        let executable = name.ends_with(".so");
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .unix_permissions(if executable { 0o755 } else { 0o644 });
        zip.start_file(name.as_str(), options).map_err(|e| io(&e))?;
        zip.write_all(data).map_err(|e| io(&e))?;
    }
    zip.finish().map_err(|e| io(&e))?;
    Ok(path)
}

/// The wheel of an op whose framework module sits in its build folder
/// (torch, tf, jax): package `module` with `out_dir/<module>.py` as
/// `__init__.py` and the library beside it (the module finds it next to
/// `__file__`, as in the build folder).
pub fn module_wheel(
    module: &str,
    out_dir: &Path,
    library: Option<&PathBuf>,
    summary: String,
    requires: Vec<String>,
) -> Result<WheelSpec, String> {
    let library = library.ok_or("--wheel needs the built library (drop --no-build)")?;
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("cannot read {}: {e}", p.display()));
    let lib_name = library
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| format!("{} has no file name", library.display()))?;
    Ok(WheelSpec {
        package: module.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        summary,
        requires,
        files: vec![
            (
                "__init__.py".to_string(),
                read(&out_dir.join(format!("{module}.py")))?,
            ),
            (lib_name, read(library)?),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn wheels_carry_the_package_metadata_and_a_verifiable_record() {
        let tmp = tempfile::tempdir().unwrap();
        let spec = WheelSpec {
            package: "triton_add_tf".into(),
            version: "0.1.0".into(),
            summary: "TensorFlow op triton::add".into(),
            requires: vec!["torch==2.11.0".into()],
            files: vec![
                ("__init__.py".into(), b"X = 1\n".to_vec()),
                ("libtriton_add_tf.so".into(), vec![0x7f, b'E', b'L', b'F']),
            ],
        };
        let path = write_wheel(tmp.path(), &spec).unwrap();
        assert!(
            path.to_string_lossy()
                .ends_with("triton_add_tf-0.1.0-py3-none-manylinux_2_28_x86_64.whl")
                || std::env::consts::ARCH != "x86_64"
        );
        let mut zip = zip::ZipArchive::new(std::fs::File::open(&path).unwrap()).unwrap();
        let mut read = |name: &str| {
            let mut text = String::new();
            zip.by_name(name)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        };
        assert_eq!(read("triton_add_tf/__init__.py"), "X = 1\n");
        let metadata = read("triton_add_tf-0.1.0.dist-info/METADATA");
        assert!(metadata.contains("Name: triton_add_tf\n"), "{metadata}");
        assert!(
            metadata.contains("Requires-Dist: torch==2.11.0\n"),
            "{metadata}"
        );
        let record = read("triton_add_tf-0.1.0.dist-info/RECORD");
        // sha256 of "X = 1\n", urlsafe base64 without padding, and its size.
        assert!(
            record.contains(&format!(
                "triton_add_tf/__init__.py,{},6\n",
                record_hash(b"X = 1\n")
            )),
            "{record}"
        );
        assert!(record.ends_with("triton_add_tf-0.1.0.dist-info/RECORD,,\n"));
        assert_eq!(record.lines().count(), 5);
    }
}
