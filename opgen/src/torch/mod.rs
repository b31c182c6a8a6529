//! PyTorch bindings: renders `templates/torch/` into a build folder (op.cpp,
//! kernels.cpp with the PTX as byte arrays, the loader module, build.sh) and
//! optionally builds the shared library against a local torch.

pub mod context;
mod torch_env;

pub use torch_env::{find_torch, TorchEnv};

use crate::variants::{variant_json, Group};
use context::TorchContext;
use std::path::{Path, PathBuf};

const OP_CPP: &str = include_str!("../../../templates/torch/op.cpp.hbs");
const LOADER_PY: &str = include_str!("../../../templates/torch/loader.py.hbs");
const BUILD_SH: &str = include_str!("../../../templates/torch/build.sh.hbs");

#[derive(Debug, thiserror::Error)]
pub enum TorchError {
    #[error("template {name}: {message}")]
    Template { name: String, message: String },
    #[error("cannot write {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0}")]
    Build(String),
}

/// The rendered sources, by file name in the build folder.
pub struct Rendered {
    pub op_cpp: String,
    pub loader_py: String,
    pub build_sh: String,
    pub kernels_cpp: String,
}

/// `tuned`: a pre-tuned table (autotune cache JSON) to embed, or "".
pub fn render(ctx: &TorchContext, groups: &[Group], tuned: &str) -> Result<Rendered, TorchError> {
    let mut hb = crate::render::handlebars().map_err(|message| TorchError::Template {
        name: "common".to_string(),
        message,
    })?;
    for (name, text) in [
        ("op.cpp", OP_CPP),
        ("loader.py", LOADER_PY),
        ("build.sh", BUILD_SH),
    ] {
        hb.register_template_string(name, text)
            .map_err(|e| TorchError::Template {
                name: name.to_string(),
                message: e.to_string(),
            })?;
    }
    let render = |name: &str| {
        hb.render(name, ctx).map_err(|e| TorchError::Template {
            name: name.to_string(),
            message: e.to_string(),
        })
    };
    Ok(Rendered {
        op_cpp: render("op.cpp")?,
        loader_py: render("loader.py")?,
        build_sh: render("build.sh")?,
        kernels_cpp: crate::cpp::kernels_cpp(&ctx.launch.prefix, &ctx.source, groups, tuned),
    })
}

/// Writes the self-contained build folder: sources, header, the bridge's
/// static library, build.sh and the loader module.
pub fn write_folder(
    dir: &Path,
    ctx: &TorchContext,
    rendered: &Rendered,
    bridge_lib: &crate::bundled::BridgeLib,
    groups: &[Group],
) -> Result<(), TorchError> {
    let loader = format!("{}.py", ctx.launch.prefix);
    let files = [
        ("op.cpp", rendered.op_cpp.as_str()),
        ("kernels.cpp", &rendered.kernels_cpp),
        (&loader, &rendered.loader_py),
        ("build.sh", &rendered.build_sh),
    ];
    crate::cpp::write_build_folder(dir, files, bridge_lib).map_err(TorchError::Build)?;
    write_variants(dir, groups)
}

/// `ptx/<i>.ptx` and `variants.json` (index, dtypes, config, file, kernel,
/// macros, num_warps, shared_bytes, params): the embedded variants as files,
/// for inspection and for timing the raw kernels.
fn write_variants(dir: &Path, groups: &[Group]) -> Result<(), TorchError> {
    let ptx_dir = dir.join("ptx");
    std::fs::create_dir_all(&ptx_dir).map_err(|source| TorchError::Io {
        path: ptx_dir.clone(),
        source,
    })?;
    let mut list = Vec::new();
    let mut index = 0;
    for g in groups {
        let dtypes = crate::plan::group_label(g);
        for v in &g.variants {
            let file = format!("ptx/{index}.ptx");
            let path = dir.join(&file);
            std::fs::write(&path, &v.ptx).map_err(|source| TorchError::Io { path, source })?;
            let mut entry: serde_json::Value =
                serde_json::from_str(&variant_json(v)).unwrap_or_default();
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("index".into(), index.into());
                obj.insert("dtypes".into(), dtypes.clone().into());
                obj.insert("config".into(), v.config.clone().into());
                obj.insert("file".into(), file.into());
            }
            list.push(entry);
            index += 1;
        }
    }
    let path = dir.join("variants.json");
    let json = serde_json::to_string_pretty(&list).unwrap_or_default();
    std::fs::write(&path, json + "\n").map_err(|source| TorchError::Io { path, source })
}

/// Compiles the folder's sources with the cc crate's C++ compiler and links
/// the op library against `torch`.
pub fn build_library(
    dir: &Path,
    ctx: &TorchContext,
    torch: &TorchEnv,
) -> Result<PathBuf, TorchError> {
    let target = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let obj_dir = dir.join("obj");
    std::fs::create_dir_all(&obj_dir).map_err(|source| TorchError::Io {
        path: obj_dir.clone(),
        source,
    })?;
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .target(&target)
        .host(&target)
        .opt_level(2)
        .debug(false)
        .pic(true)
        .cargo_metadata(false)
        .cargo_warnings(false)
        .warnings(false)
        .out_dir(&obj_dir)
        .define(
            "_GLIBCXX_USE_CXX11_ABI",
            torch.cxx11_abi.to_string().as_str(),
        )
        .include(torch.dir.join("include"))
        .include(torch.dir.join("include/torch/csrc/api/include"))
        .include(dir.join("include"))
        .file(dir.join("op.cpp"))
        .file(dir.join("kernels.cpp"));
    let objects = build
        .try_compile_intermediates()
        .map_err(|e| TorchError::Build(format!("compiling the op's C++ failed:\n{e}")))?;
    let lib = dir.join(&ctx.lib_file);
    let compiler = build
        .try_get_compiler()
        .map_err(|e| TorchError::Build(e.to_string()))?;
    let mut link = compiler.to_command();
    link.arg("-shared")
        .args(&objects)
        .arg(dir.join("lib/libopgen_bridge.a"));
    let torch_lib = torch.dir.join("lib");
    // --as-needed: only the torch libraries the op uses (torch_cpu, c10) are
    // recorded; the rest are loaded by `import torch` anyway.
    link.arg(format!("-L{}", torch_lib.display()))
        .arg("-Wl,--as-needed");
    // -lstdc++ before -ltorch: libtorch.so re-exports a few libstdc++ symbols;
    // resolved from libstdc++ first, --as-needed keeps libtorch (and the
    // torch_cuda it loads) out of the library's dependencies.
    for l in ["torch_cpu", "c10", "stdc++", "torch"] {
        link.arg(format!("-l{l}"));
    }
    if torch_lib.join("libc10_cuda.so").exists() {
        link.arg("-lc10_cuda");
    }
    link.arg(format!("-Wl,-rpath,{}", torch_lib.display()))
        .args(["-Wl,--exclude-libs,ALL", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&lib);
    let output = link
        .output()
        .map_err(|e| TorchError::Build(format!("cannot run the linker: {e}")))?;
    if !output.status.success() {
        return Err(TorchError::Build(format!(
            "linking {} failed:\n{}",
            lib.display(),
            String::from_utf8_lossy(&output.stderr)
        )));
    }
    Ok(lib)
}

/// The op as a wheel (`--wheel`): package `NS_NAME` with the loader module
/// as `__init__.py` and the library; pinned to the torch it was built
/// against (the op links torch's C++ ABI).
pub fn wheel_spec(done: &crate::generate::Generated) -> Result<crate::wheel::WheelSpec, String> {
    crate::wheel::module_wheel(
        &format!("{}_{}", done.spec.namespace, done.spec.name),
        &done.out_dir,
        done.library.as_ref(),
        format!(
            "PyTorch op {} generated by triton-opgen",
            done.spec.qualified_name()
        ),
        done.torch_version
            .iter()
            .map(|v| format!("torch=={v}"))
            .collect(),
    )
}
