//! File tests of the IR passes, in the spirit of LLVM's lit and cranelift's
//! filetests: each `passes/*.tc` starts with a header
//! ```text
//! // pass: unrotate-prefetch
//! // defines: -DTYPE=half -DTM=64
//! // expect: changed            (or `unchanged`)
//! // target: --arch sm_90a --num-warps 8 --num-stages 3 --split-k 4   (optional)
//! // after: assign-layouts      (optional: passes that run first, unprinted)
//! ```
//! and is compiled up to Triton-IR (`#include` also searches `tests/kernels/`,
//! so a seed kernel can be tested as is); then only the named pass runs, with
//! every pass option on, the target when the header gives one (target-aware
//! passes are skipped without it; `--num-warps` defaults to 4 as in
//! `tritonc`), and the verifier after it. The IR it leaves (under the
//! `// IR after ...` line `--print-after` prints) must match
//! `passes/snapshots/<file>.snap`, so a change to a pass shows up as a
//! readable diff: review it with `cargo insta review`, or accept it with
//! `INSTA_UPDATE=always cargo test -p tritonc --test passes`.
//! `expect` is checked too: `unchanged` means the printed IR is the input's.
mod source_support;

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use tritonc::arch::Arch;
use tritonc::driver::{lower, Define, DefineValue, Source};
use tritonc::ir::printer::print_function;
use tritonc::passes::{PassManager, PassOptions, PassOutcome, Target};

/// The header of one file test.
#[derive(Debug)]
struct Header {
    pass: String,
    /// Passes run before `pass` (what it reads from them), not printed.
    after: Vec<String>,
    defines: Vec<(String, String)>,
    expect_changed: bool,
    target: Option<Target>,
}

fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/passes")
}

/// The leading `// key: value` lines; `Err` says what is wrong.
fn parse_header(text: &str) -> Result<Header, String> {
    let (mut pass, mut defines, mut expect, mut target) = (None, Vec::new(), None, None);
    let mut after = Vec::new();
    for line in text.lines() {
        let Some((key, value)) = line
            .strip_prefix("//")
            .and_then(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim(), v.trim()))
        else {
            break;
        };
        match key {
            "pass" => pass = Some(value.to_string()),
            "defines" => defines = parse_defines(value)?,
            "expect" => expect = Some(value.to_string()),
            "target" => target = Some(parse_target(value)?),
            "after" => after = value.split(',').map(|p| p.trim().to_string()).collect(),
            _ => break,
        }
    }
    let expect_changed = match expect.as_deref() {
        Some("changed") => true,
        Some("unchanged") => false,
        other => {
            return Err(format!(
                "`// expect:` must be changed or unchanged, not {other:?}"
            ))
        }
    };
    Ok(Header {
        pass: pass.ok_or("no `// pass:` line")?,
        after,
        defines,
        expect_changed,
        target,
    })
}

/// `--arch A --num-warps N --num-stages S --split-k P --tma --tma-multicast
/// --warp-specialize --misaligned-runs` (tritonc's flags; warps default to 4).
fn parse_target(words: &str) -> Result<Target, String> {
    let mut words = shlex::split(words).ok_or("unbalanced quotes in `// target:`")?;
    let switches = [
        "--tma",
        "--tma-multicast",
        "--warp-specialize",
        "--misaligned-runs",
    ];
    let [tma, tma_multicast, warp_specialize, misaligned_runs] =
        switches.map(|s| words.iter().any(|w| w == s));
    words.retain(|w| !switches.contains(&w.as_str()));
    let mut target = Target {
        arch: Arch::Sm80,
        num_warps: 4,
        num_stages: None,
        split_k: None,
        tma,
        tma_multicast,
        warp_specialize,
        misaligned_runs,
    };
    let mut arch = None;
    for pair in words.chunks(2) {
        let [flag, value] = pair else {
            return Err(format!("`// target:` flag `{}` has no value", pair[0]));
        };
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--arch" => arch = Some(<Arch as clap::ValueEnum>::from_str(value, false)?),
            "--num-warps" => target.num_warps = number()?,
            "--num-stages" => target.num_stages = Some(number()?),
            "--split-k" => target.split_k = Some(number()? as u32),
            _ => {
                return Err(format!(
                    "`// target:` takes --arch, --num-warps, --num-stages, --split-k, --tma, \
                     --tma-multicast, --warp-specialize, not {flag}"
                ))
            }
        }
    }
    target.arch = arch.ok_or("`// target:` needs --arch")?;
    Ok(target)
}

/// `-DNAME=VALUE` words (shell quoting), one value each.
fn parse_defines(words: &str) -> Result<Vec<(String, String)>, String> {
    let words = shlex::split(words).ok_or("unbalanced quotes in `// defines:`")?;
    words
        .iter()
        .map(|w| {
            let arg = w
                .strip_prefix("-D")
                .ok_or(format!("`{w}` is not -DNAME=VALUE"))?;
            match Define::parse(arg).map_err(|e| e.to_string())? {
                Define {
                    name,
                    value: DefineValue::Code(value),
                } => Ok((name, value)),
                _ => Err(format!("`{w}`: a file test compiles one point, not a list")),
            }
        })
        .collect()
}

/// Runs the file test at `path`: the snapshot text, or what went wrong.
fn run_file_test(path: &Path) -> Result<String, String> {
    let source = Source::read(path).map_err(|e| e.to_string())?;
    let header = parse_header(&source.text)?;
    let include_dirs = [source_support::kernels_dir()];
    let mut lowered = lower(&source, &header.defines, &include_dirs).map_err(|e| e.to_string())?;
    let options = match header.target {
        Some(target) => PassOptions::all().with_target(target),
        None => PassOptions::all(),
    };
    let manager = PassManager::only(&header.pass, options).map_err(|e| e.to_string())?;
    let mut dumps = Vec::new();
    for func in &mut lowered.module.functions {
        for earlier in &header.after {
            PassManager::only(earlier, options)
                .map_err(|e| e.to_string())?
                .run(func, &mut |_| {})
                .map_err(|e| e.to_string())?;
        }
        let before = print_function(func);
        let mut outcome = None;
        manager
            .run(func, &mut |event| {
                outcome = Some(event.outcome);
                dumps.push(event.dump());
            })
            .map_err(|e| e.to_string())?;
        let changed = outcome == Some(PassOutcome::Changed);
        if changed != header.expect_changed {
            return Err(format!("@{}: the pass reported {outcome:?}", func.name));
        }
        if !changed && print_function(func) != before {
            return Err(format!("@{}: unchanged, yet the IR differs", func.name));
        }
    }
    Ok(dumps.join("\n"))
}

#[test]
fn every_pass_file_test_matches_its_snapshot() {
    let files = source_support::tc_files(&tests_dir());
    assert!(
        files.len() >= 2,
        "no file tests in {}",
        tests_dir().display()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = match run_file_test(path) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path(tests_dir().join("snapshots"));
        settings.set_prepend_module_to_snapshot(false);
        settings.set_input_file(path);
        settings.set_omit_expression(true);
        // Every file is compared (and a `.snap.new` written) before failing.
        let matched = std::panic::catch_unwind(AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(name.as_str(), text));
        }));
        if matched.is_err() {
            failures.push(format!("{name}: the IR differs from snapshots/{name}.snap"));
        }
    }
    assert!(
        failures.is_empty(),
        "file tests failed:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn headers_are_checked() {
    let ok = parse_header("// pass: p\n// defines: -DA=1 '-DB=x, y'\n// expect: unchanged\n");
    let h = ok.unwrap();
    assert_eq!(h.pass, "p");
    assert_eq!(
        h.defines,
        [("A".into(), "1".into()), ("B".into(), "x, y".into())]
    );
    assert!(!h.expect_changed);
    let err = |text: &str| parse_header(text).unwrap_err();
    assert_eq!(err("// expect: changed\n"), "no `// pass:` line");
    assert!(err("// pass: p\n// expect: maybe\n").contains("changed or unchanged"));
    assert!(err("// pass: p\n// defines: A=1\n// expect: changed\n").contains("-DNAME"));
    assert!(err("// pass: p\n// defines: -DA=[1,2]\n// expect: changed\n").contains("one point"));
    let t =
        parse_header("// pass: p\n// expect: changed\n// target: --arch sm_90a --num-warps 8\n");
    assert_eq!(
        t.unwrap().target,
        Some(Target {
            arch: Arch::Sm90a,
            num_warps: 8,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        })
    );
    assert!(err("// pass: p\n// expect: changed\n// target: --num-warps 8\n").contains("--arch"));
    assert!(err("// pass: p\n// expect: changed\n// target: --arch sm_70\n").contains("sm_70"));
    assert!(err("// pass: p\n// expect: changed\n// target: --arch\n").contains("no value"));
}

/// The first kernel of file test `name` after its header's `after` passes
/// and its pass, with the header's defines and target.
fn after_its_passes(name: &str) -> tritonc::ir::Function {
    let source = Source::read(&tests_dir().join(name)).unwrap();
    let header = parse_header(&source.text).unwrap();
    let include_dirs = [source_support::kernels_dir()];
    let mut lowered = lower(&source, &header.defines, &include_dirs).unwrap();
    let options = PassOptions::all().with_target(header.target.unwrap());
    let mut func = lowered.module.functions.remove(0);
    for pass in header.after.iter().chain([&header.pass]) {
        let manager = PassManager::only(pass, options).unwrap();
        manager.run(&mut func, &mut |_| {}).unwrap();
    }
    func
}

/// The verifier holds a loop's pipeline to the loop it is on: a pass that
/// names the wrong values is caught after it runs, not in codegen.
#[test]
fn pipeline_annotations_are_verified() {
    use tritonc::ir::verifier::verify_function;
    use tritonc::ir::OpKind;
    let func = &mut after_its_passes("pipeline_wgmma.tc");
    let find_pipeline = |func: &mut tritonc::ir::Function| {
        func.body.ops.iter_mut().find_map(|op| match &mut op.kind {
            OpKind::While { pipeline, .. } => pipeline.take(),
            _ => None,
        })
    };
    let good = find_pipeline(&mut func.clone()).expect("the loop is pipelined");
    let breakages: [(&str, fn(&mut tritonc::ir::LoopPipeline)); 5] = [
        ("multiplies", |p| p.loads.swap(0, 1)),
        // `b` named as a transpose when it is the load itself.
        ("is not the transpose of the pipelined load", |p| {
            p.transposes[1] = Some(p.loads[1]);
            p.loads[1] = p.loads[0];
        }),
        ("is not a dot", |p| p.dot = p.loads[0]),
        ("is not the dot's accumulator", |p| p.acc = 0),
        ("need 2+ buffers", |p| p.stages = 1),
    ];
    for (expected, breakage) in breakages {
        let mut broken = func.clone();
        let mut p = good.clone();
        breakage(&mut p);
        for op in &mut broken.body.ops {
            if let OpKind::While { pipeline, .. } = &mut op.kind {
                *pipeline = Some(p.clone());
            }
        }
        let err = verify_function(&broken).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
    verify_function(func).unwrap();
}

/// The verifier holds a loop's prefetch to the loop it is on: operands that
/// are not a dot's loaded `b`, dots out of order or buffers that overlap
/// are caught after the pass, not in codegen.
#[test]
fn prefetch_annotations_are_verified() {
    use tritonc::ir::verifier::verify_function;
    use tritonc::ir::OpKind;
    let func = &mut after_its_passes("prefetch_attention.tc");
    let find_prefetch = |func: &mut tritonc::ir::Function| {
        func.body.ops.iter_mut().find_map(|op| match &mut op.kind {
            OpKind::While { prefetch, .. } => prefetch.take(),
            _ => None,
        })
    };
    let good = find_prefetch(&mut func.clone()).expect("the loop is prefetched");
    assert_eq!(good.operands.len(), 2, "{good:?}");
    let breakages: [(&str, fn(&mut tritonc::ir::LoopPrefetch)); 5] = [
        ("is not a load", |p| p.operands[0].load = p.operands[0].dot),
        // `k^T` named for the dot that multiplies `v`.
        ("is not a dot multiplying", |p| {
            p.operands[0].dot = p.operands[1].dot
        }),
        ("does not come after", |p| p.operands.swap(0, 1)),
        ("overlap", |p| p.operands[1].offset = 0),
        ("past the loop's", |p| p.shared_bytes -= 1),
    ];
    for (expected, breakage) in breakages {
        let mut broken = func.clone();
        let mut p = good.clone();
        breakage(&mut p);
        for op in &mut broken.body.ops {
            if let OpKind::While { prefetch, .. } = &mut op.kind {
                if prefetch.is_some() {
                    *prefetch = Some(p.clone());
                    break;
                }
            }
        }
        let err = verify_function(&broken).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
    verify_function(func).unwrap();
}
