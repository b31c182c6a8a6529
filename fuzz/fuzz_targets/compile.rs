//! The whole compile on arbitrary source text: preprocess, parse, sema, IR
//! passes, LLVM and PTX (sm_90, 4 warps). Every input must give PTX or a
//! diagnostic that renders (a config over the target's limits is one), never
//! a panic, an abort or a hang (libFuzzer's -timeout flags slow inputs).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::{compile, CompileOptions, Source};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let source = Source {
        path: PathBuf::from("fuzz.tc"),
        text: text.to_string(),
    };
    // Macros the seed kernels use, kept small so an input compiles quickly.
    let defines: Vec<(String, String)> = [("TYPE", "float"), ("TM", "16"), ("TN", "16"), ("TK", "16"), ("SIZE", "128")]
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    let options = CompileOptions {
        include_dirs: Vec::new(),
        codegen: CodegenOptions {
            arch: Arch::Sm90,
            num_warps: 4,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    };
    match compile(&source, &defines, &options) {
        Ok(kernels) => {
            for k in kernels {
                assert!(k.compiled.ptx.contains(".entry"), "PTX without an entry point");
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
});
