//! Preprocess + parse + sema on arbitrary source text: every input must give
//! a module or a diagnostic (that renders), never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tritonc::front::{self, FrontOptions};
use tritonc::span::SourceMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut sources = SourceMap::new();
    let file = sources.add("fuzz.tc", text);
    // Macros the seed kernels use, so the fuzzer reaches deep into sema.
    let options = FrontOptions {
        defines: vec![
            ("TYPE".into(), "float".into()),
            ("TM".into(), "16".into()),
            ("TN".into(), "16".into()),
            ("TK".into(), "8".into()),
        ],
        include_dirs: Vec::new(),
    };
    let result = front::parse_file(&mut sources, file, &options).and_then(|tu| tritonc::sema::lower(&tu));
    match result {
        Ok(module) => {
            for func in &module.functions {
                // Sema's output must always be valid IR.
                if let Err(e) = tritonc::ir::verifier::verify_function(func) {
                    panic!("sema produced invalid IR: {}", e.message);
                }
            }
        }
        Err(diag) => {
            let _ = diag.render(&sources);
        }
    }
});
