//! Compiled tuning points kept on disk, so that generating the same op again
//! compiles nothing: `$TRITON_OPGEN_COMPILE_CACHE`, else
//! `<user cache dir>/triton-opgen/compile` (`$XDG_CACHE_HOME` on Linux); the
//! variable set to `off` turns it off. An entry is keyed by everything that
//! changes the output: every source file the point reads after preprocessing
//! (the kernel, its includes, the `-D` values), the arch, warps, pipeline
//! buffers, split-K and the compiler itself (a hash of this program). An entry that
//! does not parse or whose checksum fails is compiled again and rewritten,
//! never used.

use serde::{Deserialize, Serialize};
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::OnceLock;
use tritonc::codegen::CodegenOptions;
use tritonc::driver::manifest::ParamEntry;
use tritonc::driver::Source;
use tritonc::front::FrontOptions;
use tritonc::ir::TensorMapParam;
use tritonc::span::SourceMap;

pub const CACHE_ENV: &str = "TRITON_OPGEN_COMPILE_CACHE";

/// One kernel of a compiled point: what a variant needs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompiledKernel {
    pub name: String,
    pub ptx: String,
    pub shared_bytes: usize,
    pub num_warps: u32,
    /// Split-K's programs per grid point along z (1: none).
    pub cluster_splits: u32,
    /// TMA multicast pairs' programs per cluster along x (1: none).
    #[serde(default = "one")]
    pub cluster_x: u32,
    /// A warp-specialized kernel's producer warps (0: none).
    #[serde(default)]
    pub producer_warps: u32,
    /// Runs persistently (its tile count a last argument).
    #[serde(default)]
    pub persistent: bool,
    pub params: Vec<ParamEntry>,
    #[serde(default)]
    pub tensor_maps: Vec<TensorMapParam>,
}

fn one() -> u32 {
    1
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    checksum: String,
    kernels: Vec<CompiledKernel>,
}

pub struct CompileCache {
    dir: PathBuf,
}

impl CompileCache {
    pub fn at(dir: impl Into<PathBuf>) -> CompileCache {
        CompileCache { dir: dir.into() }
    }

    /// The default cache (see the module doc), or None when turned off or
    /// there is no cache folder.
    pub fn default_location() -> Option<CompileCache> {
        match std::env::var_os(CACHE_ENV) {
            Some(v) if v == "off" => None,
            Some(v) if !v.is_empty() => Some(CompileCache::at(PathBuf::from(v))),
            _ => {
                dirs::cache_dir().map(|d| CompileCache::at(d.join("triton-opgen").join("compile")))
            }
        }
    }

    /// The key of one point, or None when its source does not preprocess
    /// (the compile then reports why).
    pub fn key(
        source: &Source,
        defines: &[(String, String)],
        include_dirs: &[PathBuf],
        codegen: &CodegenOptions,
    ) -> Option<String> {
        let mut sources = SourceMap::new();
        let file = sources.add(source.path.display().to_string(), source.text.clone());
        let options = FrontOptions {
            defines: defines.to_vec(),
            include_dirs: include_dirs.to_vec(),
        };
        tritonc::front::preprocess::preprocess(&mut sources, file, &options).ok()?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        compiler_identity().hash(&mut h);
        // Every switch that changes the kernel (the TMA ones need not show
        // in the preprocessed source).
        format!(
            "{:?} {} {:?} {:?} {} {} {} {}",
            codegen.arch,
            codegen.num_warps,
            codegen.num_stages,
            codegen.split_k,
            codegen.tma,
            codegen.tma_multicast,
            codegen.warp_specialize,
            codegen.misaligned_runs
        )
        .hash(&mut h);
        for (name, text) in sources.all() {
            name.hash(&mut h);
            text.hash(&mut h);
        }
        Some(format!("{:016x}", h.finish()))
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    /// The kernels stored under `key`, if the entry is whole and its own.
    pub fn get(&self, key: &str) -> Option<Vec<CompiledKernel>> {
        let bytes = std::fs::read(self.path(key)).ok()?;
        let entry: Entry = serde_json::from_slice(&bytes).ok()?;
        (entry.key == key && entry.checksum == checksum(&entry.kernels)).then_some(entry.kernels)
    }

    /// Stores `kernels` under `key` (atomically, as the autotune cache writes;
    /// a failure only costs the next run a compile).
    pub fn put(&self, key: &str, kernels: &[CompiledKernel]) {
        let entry = Entry {
            key: key.to_string(),
            checksum: checksum(kernels),
            kernels: kernels.to_vec(),
        };
        let Ok(json) = serde_json::to_vec(&entry) else {
            return;
        };
        let path = self.path(key);
        let _ = opgen_runtime::autotune::write_atomically(&path, &json);
    }
}

fn checksum(kernels: &[CompiledKernel]) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(kernels)
        .unwrap_or_default()
        .hash(&mut h);
    format!("{:016x}", h.finish())
}

/// A hash of this program's file: any rebuild of the compiler changes it.
fn compiler_identity() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        env!("CARGO_PKG_VERSION").hash(&mut h);
        if let Some(bytes) = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::read(p).ok())
        {
            bytes.hash(&mut h);
        }
        format!("{:016x}", h.finish())
    })
}
