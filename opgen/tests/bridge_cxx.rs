//! The C++ boundary as a build folder ships it: `include/opgen_bridge.h`
//! (cxx-gen of plugins/bridge/src/ffi.rs) with `include/rust/cxx.h`, and the
//! archive embedded in triton-opgen. A g++-built library calls the bridge:
//! a Rust `Err` arrives as a `rust::Error` whose `what()` is the runtime's
//! message. No GPU needed.

use std::path::Path;
use std::process::Command;
use triton_opgen::bundled::BridgeLib;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The check library built with `abi` (`_GLIBCXX_USE_CXX11_ABI`), loaded by a
/// program; its output.
fn build_and_run(dir: &Path, abi: &str) -> String {
    let lib = dir.join(format!("libcheck{abi}.so"));
    run(Command::new("g++")
        .args(["-std=c++17", "-O1", "-fPIC", "-shared"])
        .arg(format!("-D_GLIBCXX_USE_CXX11_ABI={abi}"))
        .arg("-Iinclude")
        .args(["check.cc", "lib/libopgen_bridge.a"])
        .args(["-Wl,--exclude-libs,ALL", "-lpthread", "-ldl", "-lm", "-o"])
        .arg(&lib)
        .current_dir(dir));
    let main = dir.join("main.cc");
    std::fs::write(
        &main,
        "extern \"C\" int opgen_check();\nint main() { return opgen_check(); }\n",
    )
    .unwrap();
    let exe = dir.join(format!("check{abi}"));
    run(Command::new("g++")
        .arg(&main)
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", dir.display()))
        .arg("-o")
        .arg(&exe));
    run(&mut Command::new(&exe))
}

#[test]
fn rust_errors_arrive_in_cpp_as_exceptions_with_their_message() {
    let tmp = tempfile::tempdir().unwrap();
    let check = include_str!("bridge_cxx/check.cc");
    triton_opgen::cpp::write_build_folder(tmp.path(), [("check.cc", check)], &BridgeLib::Embedded)
        .unwrap();
    assert!(tmp.path().join("include/rust/cxx.h").is_file());
    // Torch and TensorFlow build with the C++11 ABI; an old-ABI build links too
    // (no std::string crosses the boundary).
    for abi in ["1", "0"] {
        let out = build_and_run(tmp.path(), abi);
        let expected = [
            "configs: SIZE=128;SIZE=256;",
            "last_config: ''",
            "preload: 0",
            "known_first launched: 0",
            "known_first: ok",
            "pin_unknown: no variant has the config `SIZE=512`; the op's configs are: SIZE=128, SIZE=256",
            "pin: ok",
            "launch_pinned: t::add: the pinned config `SIZE=256` does not accept these inputs (its dtype or a `require` line rules it out); the configs that do: SIZE=128; pin one of them or unpin with pin_config(None)",
            "unpin: ok",
            "benchmark_calls: 0",
        ];
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[..expected.len()], expected, "ABI {abi}:\n{out}");
        assert!(
            lines[expected.len()]
                .starts_with("launch_broken: variant 0 of the op has an invalid description: "),
            "ABI {abi}:\n{out}"
        );
        // A broken op has nothing decided: the full launch reports why.
        assert_eq!(
            lines[expected.len() + 1..],
            ["known_broken launched: 0", "known_broken: ok"],
            "ABI {abi}:\n{out}"
        );
    }
}
