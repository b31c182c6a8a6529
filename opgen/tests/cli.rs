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

/// `tests/ops/add.tc` with `edit` applied, written into a fresh folder;
/// returns (folder, spec path).
fn add_spec_with(edit: impl Fn(&str) -> String) -> (tempfile::TempDir, std::path::PathBuf) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/ops/add.tc"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("add.tc");
    std::fs::write(&path, edit(&text)).unwrap();
    (dir, path)
}

fn generate_no_build(path: &std::path::Path, extra: &[&str]) -> (bool, String) {
    let out_dir = path.with_extension("out");
    let mut args = vec![
        path.to_str().unwrap(),
        "--no-build",
        "-o",
        out_dir.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = triton_opgen(&args);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_space_over_the_limit_is_an_error_at_its_tune_line_before_compiling() {
    let list = format!(
        "[{}]",
        (1..=256)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen tune SIZE = [256, 1024, 4096]",
            &format!("#pragma opgen tune SIZE = [256, 1024, 4096]\n#pragma opgen tune A = {list}\n#pragma opgen tune B = {list}"),
        )
    });
    let started = std::time::Instant::now();
    let (ok, err) = generate_no_build(&path, &[]);
    assert!(!ok);
    assert!(
        err.contains("the op has too many variants: the tuning space has 393216 points (dtypes: 2 x SIZE: 3 x A: 256 x B: 256)")
            && err.contains("add.tc:11:")
            && err.contains("--max-configs 393216"),
        "{err}"
    );
    assert!(started.elapsed().as_secs() < 5, "refused before compiling");
    // The limit is the flag's: the bundled add (6 variants) over --max-configs 4.
    let (_dir, path) = add_spec_with(str::to_string);
    let (ok, err) = generate_no_build(&path, &["--max-configs", "4"]);
    assert!(!ok && err.contains("has 6 points"), "{err}");
}

/// Only the points the macro-only `require` lines admit count against the
/// limit (the others are never compiled): 2 dtypes x SIZE 256 and 1024.
#[test]
fn the_limit_counts_the_points_the_requires_admit() {
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen tune SIZE = [256, 1024, 4096]",
            "#pragma opgen tune SIZE = [256, 1024, 4096]\n#pragma opgen require SIZE <= 1024",
        )
    });
    let (ok, err) = generate_no_build(&path, &["--max-configs", "4"]);
    assert!(ok, "{err}");
    let (ok, err) = generate_no_build(&path, &["--max-configs", "3"]);
    assert!(
        !ok && err.contains(
            "has 4 points (dtypes: 2 x SIZE: 3 = 6, of which the `require` lines admit 4)"
        ) && err.contains("--max-configs 4"),
        "{err}"
    );
}

#[test]
fn an_empty_tune_item_an_unsigned_grid_value_and_an_empty_spec_are_located() {
    let cases: [(&str, &str, &str); 3] = [
        (
            "[256, 1024, 4096]",
            "[256, , 4096]",
            "an empty item in the list",
        ),
        (
            "[256, 1024, 4096]",
            "[256u, 1024]",
            "`SIZE` = `256u` is read by the grid or a `require`, which need a plain integer",
        ),
        ("", "", "no `#pragma opgen` lines"),
    ];
    for (from, to, want) in cases {
        let (_dir, path) = add_spec_with(|t| {
            if from.is_empty() {
                String::new()
            } else {
                t.replace(from, to)
            }
        });
        let (ok, err) = generate_no_build(&path, &[]);
        assert!(
            !ok && err.contains(want) && err.contains("add.tc:"),
            "{want}: {err}"
        );
    }
}

#[test]
fn a_tma_line_no_kernel_takes_is_an_error_that_says_so() {
    // add.tc has no dot loop: with only `tma 1` no point gives a variant.
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen tune SIZE = [256, 1024, 4096]",
            "#pragma opgen tune SIZE = [256, 1024, 4096]\n#pragma opgen tma 1",
        )
    });
    let (ok, err) = generate_no_build(&path, &["--arch", "sm_90a"]);
    assert!(!ok);
    assert!(
        err.contains("no loop of the kernel copies its tiles by TMA")
            && err.contains("list `tma [0, 1]`, or drop the line"),
        "{err}"
    );
    // Offered beside the plain points, the TMA points that take nothing
    // add no variant: the op has its 6.
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen tune SIZE = [256, 1024, 4096]",
            "#pragma opgen tune SIZE = [256, 1024, 4096]\n#pragma opgen tma [0, 1]",
        )
    });
    let (ok, err) = generate_no_build(&path, &["--arch", "sm_90a", "--max-configs", "12"]);
    assert!(ok, "{err}");
}

/// The number of variants `triton-opgen` says it compiled.
fn variants_compiled(path: &std::path::Path) -> usize {
    let out = triton_opgen(&[
        path.to_str().unwrap(),
        "--no-build",
        "-o",
        path.with_extension("out").to_str().unwrap(),
    ]);
    let said =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    said.split(" variants compiled")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no variant count in: {said}"))
}

#[test]
fn a_require_reading_only_macros_prunes_points_before_compiling() {
    // 3 sizes x 2 dtypes; SIZE = 4096 fails `SIZE <= 1024` for any input.
    let (_dir, path) = add_spec_with(|t| t.to_string());
    assert_eq!(variants_compiled(&path), 6);
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen num_warps 4",
            "#pragma opgen num_warps 4\n#pragma opgen require SIZE <= 1024",
        )
    });
    assert_eq!(variants_compiled(&path), 4);
    // A line reading an argument too is decided per call: nothing pruned.
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen num_warps 4",
            "#pragma opgen num_warps 4\n#pragma opgen require SIZE <= N + 1024",
        )
    });
    assert_eq!(variants_compiled(&path), 6);
    // Every point pruned: an error that says why.
    let (_dir, path) = add_spec_with(|t| {
        t.replace(
            "#pragma opgen num_warps 4",
            "#pragma opgen num_warps 4\n#pragma opgen require SIZE < 256",
        )
    });
    let (ok, err) = generate_no_build(&path, &[]);
    assert!(!ok);
    assert!(
        err.contains(
            "every point of the tuning space fails a `require` line that reads only macros"
        ),
        "{err}"
    );
}
