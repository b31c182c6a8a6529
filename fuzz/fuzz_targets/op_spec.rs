//! The op-spec reader (`#pragma opgen` lines: scanning active lines, lexing,
//! parsing, validation and name checks) on arbitrary text: every input gives
//! a spec, no spec, or a diagnostic that renders; never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tritonc::span::SourceMap;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = SourceMap::new();
    let file = sources.add("k.tc", text.to_string());
    if let Err(diag) = triton_opgen::spec::parse_spec(file, text) {
        let _ = diag.render(&sources);
    }
});
