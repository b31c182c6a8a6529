//! The `triton-opgen` command line: `--version`, and `-j` accepted.

use std::process::Command;

fn triton_opgen(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_triton-opgen"))
        .args(args)
        .output()
        .expect("triton-opgen runs")
}

#[test]
fn version_names_the_tool_and_its_version() {
    let out = triton_opgen(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("triton-opgen {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn jobs_flag_is_documented_and_a_bad_value_is_an_error() {
    let help = String::from_utf8_lossy(&triton_opgen(&["--help"]).stdout).into_owned();
    assert!(help.contains("-j, --jobs <JOBS>"), "{help}");
    let out = triton_opgen(&["-j", "many", "x.tc"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("invalid value 'many'"));
}
