//! Parallel, cached compilation of an op's variants (issue 17): the variants
//! do not depend on the threads; a second run takes every point from the
//! cache; an entry that is not whole is compiled again and rewritten, never
//! used.

use std::path::PathBuf;
use triton_opgen::compile_cache::{CompileCache, CompiledKernel};
use triton_opgen::generate::read_spec;
use triton_opgen::variants::{compile_with, CompileSettings, Group};
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::Source;

fn add_tc() -> PathBuf {
    PathBuf::from(format!(
        "{}/../tests/ops/add.tc",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn compile(jobs: usize, cache: Option<CompileCache>) -> Vec<Group> {
    compile_op(&add_tc(), jobs, cache, false)
}

fn compile_op(
    file: &std::path::Path,
    jobs: usize,
    cache: Option<CompileCache>,
    misaligned_runs: bool,
) -> Vec<Group> {
    let (spec, source) = read_spec(file).unwrap_or_else(|e| panic!("{}", e.0));
    let mut warnings = Vec::new();
    compile_with(
        &spec,
        &source,
        Arch::Sm90,
        &[],
        &CompileSettings {
            jobs,
            cache,
            misaligned_runs,
        },
        |_| {},
        &mut warnings,
    )
    .unwrap()
}

#[test]
fn misaligned_runs_reach_the_variants_only_when_asked_for() {
    // The transpose op's source has an unknown leading stride: its columns
    // run along rows, so with runs each thread reads 16-byte runs.
    let transpose = add_tc().with_file_name("transpose.tc");
    let shifts = |on: bool| -> usize {
        ptx_of(&compile_op(&transpose, 2, None, on))
            .iter()
            .map(|(_, ptx)| ptx.matches("shf.r.wrap.b32").count())
            .sum()
    };
    assert_eq!(shifts(false), 0);
    assert!(shifts(true) > 0);
}

fn ptx_of(groups: &[Group]) -> Vec<(String, String)> {
    groups
        .iter()
        .flat_map(|g| g.variants.iter().map(|v| (v.config.clone(), v.ptx.clone())))
        .collect()
}

#[test]
fn variants_do_not_depend_on_the_threads() {
    let one = compile(1, None);
    let four = compile(4, None);
    assert_eq!(ptx_of(&one), ptx_of(&four));
    assert_eq!(ptx_of(&one).len(), 6);
}

#[test]
fn a_cached_point_is_used_and_a_broken_entry_is_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = || Some(CompileCache::at(dir.path()));
    let fresh = compile(2, cache());
    let entries = walk(dir.path());
    assert_eq!(entries.len(), 6, "{entries:?}");
    // The key of the first point (T=float32, SIZE=256, 4 warps).
    let source = Source::read(&add_tc()).unwrap();
    let defines: Vec<(String, String)> = fresh[0].variants[0].macros.clone();
    let options = CodegenOptions {
        arch: Arch::Sm90,
        num_warps: 4,
        num_stages: None,
        split_k: None,
        tma: false,
        tma_multicast: false,
        warp_specialize: false,
        misaligned_runs: false,
    };
    let key = CompileCache::key(&source, &defines, &[], &options).expect("preprocesses");
    let store = CompileCache::at(dir.path());
    let mut kernels: Vec<CompiledKernel> = store.get(&key).expect("stored");
    assert_eq!(kernels[0].ptx, fresh[0].variants[0].ptx);
    // A whole entry is trusted: a marked one comes back as the variant.
    kernels[0].ptx = "// from the cache".into();
    store.put(&key, &kernels);
    let again = compile(2, cache());
    assert_eq!(again[0].variants[0].ptx, "// from the cache");
    assert_eq!(ptx_of(&again)[1..], ptx_of(&fresh)[1..]);
    // A cut or edited entry is not: compiled again, and rewritten whole.
    let file = entries
        .iter()
        .find(|p| p.to_string_lossy().contains(&key))
        .unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    std::fs::write(file, &text[..text.len() / 2]).unwrap();
    assert_eq!(
        compile(2, cache())[0].variants[0].ptx,
        fresh[0].variants[0].ptx
    );
    std::fs::write(file, text.replace("// from the cache", "// edited")).unwrap();
    assert_eq!(
        compile(2, cache())[0].variants[0].ptx,
        fresh[0].variants[0].ptx
    );
    assert_eq!(store.get(&key).unwrap()[0].ptx, fresh[0].variants[0].ptx);
}

fn walk(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else if path.extension().is_some_and(|e| e == "json") {
            out.push(path);
        }
    }
    out
}

/// Every TMA switch is part of a point's key: plain TMA, multicast and a
/// producer warpgroup compile the same source into different kernels, so
/// none may be served another's cached PTX.
#[test]
fn each_tma_switch_keys_its_own_entry() {
    let source = Source::read(&add_tc()).unwrap();
    let defines = vec![
        ("T".to_string(), "float32".to_string()),
        ("SIZE".to_string(), "256".to_string()),
    ];
    let base = CodegenOptions {
        arch: Arch::Sm90a,
        num_warps: 8,
        num_stages: None,
        split_k: None,
        tma: true,
        tma_multicast: false,
        warp_specialize: false,
        misaligned_runs: false,
    };
    let key = |o: &CodegenOptions| CompileCache::key(&source, &defines, &[], o).unwrap();
    let keys = [
        key(&CodegenOptions { tma: false, ..base }),
        key(&base),
        key(&CodegenOptions {
            tma_multicast: true,
            ..base
        }),
        key(&CodegenOptions {
            warp_specialize: true,
            ..base
        }),
        key(&CodegenOptions {
            misaligned_runs: true,
            ..base
        }),
    ];
    for (i, a) in keys.iter().enumerate() {
        for b in &keys[i + 1..] {
            assert_ne!(a, b);
        }
    }
    assert_eq!(key(&base), keys[1], "a key is a function of the point");
}
