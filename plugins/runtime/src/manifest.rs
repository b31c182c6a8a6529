//! The `manifest.json` that `tritonc --all-configs` writes next to its PTX
//! files: which variants exist, their macros, launch shape and parameters.
//! Our own structs (the runtime does not depend on the compiler).

use crate::error::{Result, RuntimeError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Manifest {
    /// The kernel source the variants came from.
    pub source: String,
    /// `sm_80`, `sm_90`.
    pub arch: String,
    /// The list-valued macros: the tuning knobs.
    #[serde(default)]
    pub tuning_macros: Vec<String>,
    pub variants: Vec<Variant>,
    /// The folder the manifest was read from; variant files are relative to it.
    #[serde(skip)]
    pub dir: PathBuf,
}

/// One kernel compiled at one point of the tuning space.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Variant {
    /// PTX (or cubin) file, relative to the manifest.
    pub file: String,
    /// Entry point name in that file.
    pub kernel: String,
    #[serde(default)]
    pub macros: BTreeMap<String, String>,
    pub num_warps: u32,
    /// Dynamic shared memory to pass at launch, bytes.
    #[serde(default)]
    pub shared_bytes: u32,
    /// Split-K: programs per grid point along z, one cluster (the kernel's
    /// PTX declares it); launches multiply the grid's z, which must be 1.
    #[serde(default = "one")]
    pub cluster_splits: u32,
    /// TMA multicast: programs per cluster along x (the kernel's PTX
    /// declares it); a launch's grid x must be a multiple of it.
    #[serde(default = "one")]
    pub cluster_x: u32,
    /// Warps launched besides `num_warps`: a warp-specialized kernel's
    /// producer warpgroup (its PTX's `.maxntid` counts them).
    #[serde(default)]
    pub producer_warps: u32,
    /// Persistent: launched with at most the programs the device holds at
    /// once (each loops over tiles), the grid's x as asked passed as an
    /// `i32` after the tensor maps ([`crate::Kernel::launch`] does both).
    #[serde(default)]
    pub persistent: bool,
    pub params: Vec<Param>,
    /// TMA tensor maps passed after `params`, encoded at each launch
    /// ([`crate::tensor_map`]).
    #[serde(default)]
    pub tensor_maps: Vec<crate::tensor_map::TensorMapSpec>,
    /// [`image_digest`](crate::digest::image_digest) of the module image, when
    /// the writer recorded it (triton-opgen does); checked before loading.
    #[serde(default)]
    pub image_digest: Option<String>,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Param {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: ParamType,
    /// `__multipleof(N)`: an int divisible by N, or a pointer whose address in
    /// elements is.
    #[serde(default)]
    pub multiple_of: Option<u64>,
    /// `__aligned(N)`: pointer aligned to N bytes.
    #[serde(default)]
    pub aligned: Option<u64>,
    #[serde(default)]
    pub readonly: bool,
    #[serde(default)]
    pub writeonly: bool,
    #[serde(default)]
    pub noalias: bool,
}

/// Element types of Triton-IR, by their IR names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    I1,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl ElemType {
    pub fn parse(name: &str) -> Option<ElemType> {
        Some(match name {
            "i1" => ElemType::I1,
            "i8" => ElemType::I8,
            "i16" => ElemType::I16,
            "i32" => ElemType::I32,
            "i64" => ElemType::I64,
            "f16" => ElemType::F16,
            "bf16" => ElemType::BF16,
            "f32" => ElemType::F32,
            "f64" => ElemType::F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ElemType::I1 => "i1",
            ElemType::I8 => "i8",
            ElemType::I16 => "i16",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F16 => "f16",
            ElemType::BF16 => "bf16",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    /// Bytes per element in memory (i1 is stored as a byte).
    pub fn size_bytes(self) -> u64 {
        match self {
            ElemType::I1 | ElemType::I8 => 1,
            ElemType::I16 | ElemType::F16 | ElemType::BF16 => 2,
            ElemType::I32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::F64 => 8,
        }
    }
}

/// A kernel parameter's type: `f32*` or `i32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamType {
    Scalar(ElemType),
    Pointer(ElemType),
}

impl ParamType {
    pub fn parse(text: &str) -> Option<ParamType> {
        let text = text.trim();
        match text.strip_suffix('*') {
            Some(elem) => ElemType::parse(elem.trim()).map(ParamType::Pointer),
            None => ElemType::parse(text).map(ParamType::Scalar),
        }
    }
}

impl fmt::Display for ParamType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamType::Scalar(e) => write!(f, "{}", e.name()),
            ParamType::Pointer(e) => write!(f, "{}*", e.name()),
        }
    }
}

impl<'de> Deserialize<'de> for ParamType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        ParamType::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown parameter type `{text}` (expected a scalar like i32, f32 or a pointer like f16*)"
            ))
        })
    }
}

impl Manifest {
    /// Reads `path` (a `manifest.json`, or the folder holding one).
    pub fn load(path: impl AsRef<Path>) -> Result<Manifest> {
        let mut path = path.as_ref().to_path_buf();
        if path.is_dir() {
            path.push("manifest.json");
        }
        let text = std::fs::read_to_string(&path).map_err(|source| RuntimeError::Io {
            path: path.clone(),
            source,
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut manifest = Manifest::parse(&text).map_err(|message| RuntimeError::Manifest {
            path: path.clone(),
            message,
        })?;
        manifest.dir = dir;
        Ok(manifest)
    }

    /// Parses manifest JSON; the error says where and why.
    pub fn parse(text: &str) -> std::result::Result<Manifest, String> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| e.to_string())?;
        for (i, v) in manifest.variants.iter().enumerate() {
            if v.num_warps == 0 || v.num_warps > 32 {
                return Err(format!(
                    "variant {i} (`{}` in {}): num_warps {} is not 1 to 32",
                    v.kernel, v.file, v.num_warps
                ));
            }
        }
        Ok(manifest)
    }

    /// The full path of a variant's file.
    pub fn file_path(&self, variant: &Variant) -> PathBuf {
        self.dir.join(&variant.file)
    }

    /// The variants of one kernel (a file may hold several kernels).
    pub fn variants_of<'a>(&'a self, kernel: &'a str) -> impl Iterator<Item = &'a Variant> + 'a {
        self.variants.iter().filter(move |v| v.kernel == kernel)
    }
}

impl Variant {
    /// A stable name for the variant among its kernel's: the values of the
    /// tuning macros plus the warp count, e.g. `SIZE=512,num_warps=4`.
    pub fn config_id(&self, tuning_macros: &[String]) -> String {
        let mut parts: Vec<String> = tuning_macros
            .iter()
            .filter_map(|m| self.macros.get(m).map(|v| format!("{m}={v}")))
            .collect();
        parts.push(format!("num_warps={}", self.num_warps));
        parts.join(",")
    }

    /// `add(i32 N, f32* a, f32* b, f32* c)`, for error messages.
    pub fn signature(&self) -> String {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|p| format!("{} {}", p.ty, p.name))
            .collect();
        format!("{}({})", self.kernel, params.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADD: &str = include_str!("../tests/fixtures/add/manifest.json");

    #[test]
    fn parses_the_manifest_tritonc_writes() {
        let m = Manifest::parse(ADD).unwrap();
        assert_eq!(m.arch, "sm_90");
        assert_eq!(m.tuning_macros, vec!["SIZE"]);
        assert_eq!(m.variants.len(), 4);
        let v = &m.variants[0];
        assert_eq!(v.file, "add_SIZE-128.ptx");
        assert_eq!(v.kernel, "add");
        assert_eq!(v.macros["SIZE"], "128");
        assert_eq!(v.num_warps, 4);
        assert_eq!(v.shared_bytes, 0);
        assert_eq!(v.cluster_splits, 1, "no split-K unless the manifest says");
        assert_eq!(v.params[0].ty, ParamType::Scalar(ElemType::I32));
        assert_eq!(v.params[1].ty, ParamType::Pointer(ElemType::F32));
        assert_eq!(v.signature(), "add(i32 N, f32* a, f32* b, f32* c)");
        assert_eq!(v.config_id(&m.tuning_macros), "SIZE=128,num_warps=4");
        assert_eq!(m.variants_of("add").count(), 4);
        assert_eq!(m.variants_of("sub").count(), 0);
    }

    #[test]
    fn a_persistent_producer_variant_launches_the_resident_programs() {
        use crate::kernel::{persistent_launch, Grid};
        let ws = ADD.replacen(
            "\"num_warps\"",
            "\"producer_warps\": 4, \"persistent\": true, \"num_warps\"",
            1,
        );
        let m = Manifest::parse(&ws).unwrap();
        let (a, b) = (&m.variants[0], &m.variants[1]);
        assert_eq!((a.producer_warps, a.persistent), (4, true));
        assert_eq!((b.producer_warps, b.persistent), (0, false));
        // 512 tiles on 132 resident programs: 132 launched, told 512.
        assert_eq!(
            persistent_launch(Grid(512, 1, 1), 132),
            Some((Grid(132, 1, 1), 512))
        );
        assert_eq!(
            persistent_launch(Grid(40, 2, 1), 132),
            Some((Grid(40, 2, 1), 40))
        );
        assert_eq!(persistent_launch(Grid(u32::MAX, 1, 1), 132), None);
    }

    #[test]
    fn a_split_k_variant_runs_its_programs_along_z() {
        use crate::kernel::{clustered_grid, Grid};
        let split = ADD.replacen("\"num_warps\"", "\"cluster_splits\": 4, \"num_warps\"", 1);
        let m = Manifest::parse(&split).unwrap();
        assert_eq!(m.variants[0].cluster_splits, 4);
        assert_eq!(m.variants[1].cluster_splits, 1);
        // TMA multicast pairs along x: absent means none.
        let pair = ADD.replacen("\"num_warps\"", "\"cluster_x\": 2, \"num_warps\"", 1);
        let m = Manifest::parse(&pair).unwrap();
        assert_eq!((m.variants[0].cluster_x, m.variants[1].cluster_x), (2, 1));
        assert!(!crate::kernel::fits_clusters(&m.variants[0], 3));
        assert!(crate::kernel::fits_clusters(&m.variants[0], 4));
        assert!(crate::kernel::fits_clusters(&m.variants[1], 3));
        assert_eq!(clustered_grid(4, Grid(96, 2, 1)), Ok(Grid(96, 2, 4)));
        assert_eq!(clustered_grid(1, Grid(96, 2, 3)), Ok(Grid(96, 2, 3)));
        let err = clustered_grid(4, Grid(96, 1, 2)).unwrap_err();
        assert!(err.contains("needs z = 1"), "{err}");
    }

    #[test]
    fn param_types_round_trip() {
        for text in [
            "i1", "i32", "i64", "f16", "bf16", "f32", "f64", "f16*", "i64*",
        ] {
            assert_eq!(ParamType::parse(text).unwrap().to_string(), text);
        }
        assert_eq!(ParamType::parse("float*"), None);
        assert_eq!(ParamType::parse("f32**"), None);
    }

    #[test]
    fn bad_manifests_say_why() {
        let bad_type = ADD.replacen("\"f32*\"", "\"float*\"", 1);
        let err = Manifest::parse(&bad_type).unwrap_err();
        assert!(err.contains("unknown parameter type `float*`"), "{err}");

        let zero_warps = ADD.replacen("\"num_warps\": 4", "\"num_warps\": 0", 1);
        let err = Manifest::parse(&zero_warps).unwrap_err();
        assert!(err.contains("num_warps 0"), "{err}");

        assert!(Manifest::parse("{").is_err());
    }

    #[test]
    fn load_reports_the_path_and_resolves_files() {
        let dir = tempfile::tempdir().unwrap();
        let err = Manifest::load(dir.path()).unwrap_err();
        assert!(matches!(err, RuntimeError::Io { .. }), "{err}");
        assert!(err.to_string().contains("manifest.json"), "{err}");

        std::fs::write(dir.path().join("manifest.json"), ADD).unwrap();
        let m = Manifest::load(dir.path()).unwrap();
        assert_eq!(
            m.file_path(&m.variants[1]),
            dir.path().join("add_SIZE-256.ptx")
        );

        std::fs::write(dir.path().join("manifest.json"), "[]").unwrap();
        let err = Manifest::load(dir.path().join("manifest.json")).unwrap_err();
        assert!(matches!(err, RuntimeError::Manifest { .. }), "{err}");
    }
}
