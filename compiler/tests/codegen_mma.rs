//! Tensor-core dots: the test kernels' `@` with f16/bf16 tiles compiles to
//! `ldmatrix` + `mma.sync` for sm_80 and sm_90, ptxas accepts it without
//! spills, and the dots the mma path does not take stay on FMA units. The
//! plain reduction loop (`dot.tc`) is software-pipelined with `cp.async`.
mod common;

use common::{compile_kernel, kernels_dir, ptxas_report};
use std::path::PathBuf;
use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::{compile, CompileOptions, Source};

fn defines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn ptx_of(file: &str, defs: &[(String, String)], arch: Arch, num_warps: u32) -> String {
    let mut out = compile_kernel(file, defs, arch, num_warps, None)
        .unwrap_or_else(|e| panic!("{file} {defs:?}: {e}"));
    out.remove(0).compiled.ptx
}

fn dot_defines(ty: &str, tm: usize, tn: usize, tk: usize) -> Vec<(String, String)> {
    defines(&[
        ("TYPE", ty),
        ("TM", &tm.to_string()),
        ("TN", &tn.to_string()),
        ("TK", &tk.to_string()),
    ])
}

/// Runs `ptxas -v`; returns its report, panics when it fails or spills.
/// (Some small tiles spill a few bytes on sm_90: ptxas then aims at fewer
/// registers from `.maxntid`, e.g. 40 for 32x32x16 with 4 warps.)
fn ptxas_no_spills(ptx: &str, arch: &str, name: &str) -> Option<String> {
    let report = ptxas_report(ptx, arch, name)?;
    assert!(
        report.contains(" 0 bytes spill stores, 0 bytes spill loads"),
        "{name} {arch} spills: {report}"
    );
    Some(report)
}

#[test]
fn half_and_bf16_dots_use_mma_sync_for_every_tile_config() {
    for ty in ["half", "bf16"] {
        for tm in [32, 64, 128] {
            for tn in [32, 64, 128] {
                for tk in [16, 32, 64] {
                    for warps in [4, 8] {
                        let ptx = ptx_of("dot.tc", &dot_defines(ty, tm, tn, tk), Arch::Sm80, warps);
                        let what = format!("{ty} {tm}x{tn}x{tk} w{warps}");
                        let kind = if ty == "half" { "f16" } else { "bf16" };
                        let mma =
                            format!("mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32");
                        // One instruction per 16x8x16 block of the tile, spread over
                        // the warps, in the pipelined loop and in each drain step.
                        let per_dot = tm * tn * tk / (16 * 8 * 16) / warps as usize;
                        let count = ptx.matches(&mma).count();
                        assert!(count >= per_dot && count % per_dot == 0, "{what}: {count}");
                        assert!(ptx.contains("cp.async.cg.shared.global"), "{what}");
                        assert!(
                            ptx.contains("ldmatrix.sync.aligned.m8n8.x4.shared.b16"),
                            "{what}"
                        );
                        assert!(ptx.contains("ldmatrix.sync.aligned.m8n8.x"), "{what}");
                        assert!(ptx.contains(".trans.shared.b16"), "{what}");
                        assert!(!ptx.contains("fma.rn.f32"), "{what}: FMA dot");
                    }
                }
            }
        }
    }
}

#[test]
fn mma_dots_pass_ptxas_without_spills() {
    let configs = [
        ("dot.tc", "half", 128, 128, 32, 8),
        ("dot.tc", "bf16", 128, 128, 32, 8),
        ("dot.tc", "half", 64, 64, 16, 4),
        ("dot.tc", "half", 64, 128, 64, 8),
        ("dot.tc", "half", 128, 64, 64, 4),
        ("dot_prefetch.tc", "half", 128, 128, 32, 8),
        ("dot_prefetch.tc", "bf16", 64, 64, 16, 4),
    ];
    for (file, ty, tm, tn, tk, warps) in configs {
        for (arch, name) in [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")] {
            let ptx = ptx_of(file, &dot_defines(ty, tm, tn, tk), arch, warps);
            assert!(ptx.contains("mma.sync"), "{file} {ty}");
            let tag = format!(
                "{}_{ty}_{tm}_{tn}_{tk}_{warps}",
                file.trim_end_matches(".tc")
            );
            if ptxas_no_spills(&ptx, name, &tag).is_none() {
                eprintln!("notice: ptxas not found; PTX only");
            }
        }
    }
}

/// The four `dot_trans.tc` variants (operands transposed in registers).
/// The `-D` options of the `// tritonc:` lines of `dot_trans.tc` (its four
/// variants), with 128x128x32 tiles.
fn trans_variants() -> Vec<(String, Vec<(String, String)>)> {
    let source = std::fs::read_to_string(kernels_dir().join("dot_trans.tc")).unwrap();
    let lines: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("// tritonc:"))
        .collect();
    assert_eq!(lines.len(), 4);
    lines
        .into_iter()
        .map(|line| {
            let mut defs: Vec<(String, String)> = shlex::split(line)
                .unwrap()
                .iter()
                .filter_map(|w| w.strip_prefix("-D"))
                .map(|d| {
                    let (k, v) = d.split_once('=').unwrap();
                    (k.to_string(), v.to_string())
                })
                .collect();
            for (k, v) in defs.iter_mut() {
                match k.as_str() {
                    "TK" => *v = "32".into(),
                    "TM" | "TN" => *v = "128".into(),
                    _ => {}
                }
            }
            (line.to_string(), defs)
        })
        .collect()
}

/// The variants with `a` transposed are not pipelined (`mma.sync` reads
/// `a` K-major: the pipeliner takes a transposed `a` on wgmma only): the
/// dot stages `a` itself and its loaded `b` is copied an iteration ahead
/// (`prefetch-dot-operands`: one group, `wait_group 0`, `wait_all` after
/// the loop; a `^b` is no load, so `^a @ ^b` copies nothing ahead); the
/// others, unrotated by `passes::unrotate_prefetch`, are pipelined (a
/// transposed `b` staged K-major).
#[test]
fn transposed_operand_variants_use_mma_sync() {
    for (line, defs) in trans_variants() {
        let ptx = ptx_of("dot_trans.tc", &defs, Arch::Sm90, 8);
        if line.contains("USE_A=^a") {
            assert_eq!(
                ptx.matches("mma.sync.aligned").count(),
                128 * 128 * 32 / 2048 / 8,
                "{line}"
            );
            let prefetched = !line.contains("USE_B=^b");
            assert_eq!(ptx.contains("cp.async.wait_all;"), prefetched, "{line}");
            assert_eq!(ptx.contains("cp.async.wait_group 0;"), prefetched, "{line}");
        } else {
            assert!(ptx.contains("cp.async"), "{line}");
            assert!(!ptx.contains("cp.async.wait_all;"), "{line}");
        }
        ptxas_no_spills(&ptx, "sm_90", "dot_trans");
    }
}

#[test]
fn float_and_odd_tiles_stay_on_fma() {
    for (ty, tk) in [("float", 16), ("half", 8)] {
        let ptx = ptx_of("dot.tc", &dot_defines(ty, 32, 32, tk), Arch::Sm80, 4);
        assert!(!ptx.contains("mma.sync"), "{ty} TK={tk}");
        assert!(ptx.contains("fma.rn.f32"), "{ty} TK={tk}");
    }
}

/// The plain loop copies its operands with `cp.async` into rotating buffers
/// (commit, wait for all but `stages - 1` groups) and passes ptxas without
/// spills for 128x128x32 with 4 and 8 warps on sm_80 and sm_90.
#[test]
fn plain_loop_is_pipelined_with_cp_async() {
    for ty in ["half", "bf16"] {
        for warps in [4u32, 8] {
            for (arch, name) in [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")] {
                let ptx = ptx_of("dot.tc", &dot_defines(ty, 128, 128, 32), arch, warps);
                let what = format!("{ty} w{warps} {name}");
                // 128x32 and 32x128 halves in 16-byte chunks over the threads.
                let chunks = 2 * 128 * 32 / 8 / (32 * warps as usize);
                let copies = ptx.matches("cp.async.cg.shared.global").count();
                assert!(copies >= chunks && copies % chunks == 0, "{what}: {copies}");
                assert!(ptx.contains("cp.async.commit_group;"), "{what}");
                let stages = if warps <= 4 { 3 } else { 2 };
                for pending in 0..stages {
                    let wait = format!("cp.async.wait_group {pending};");
                    assert!(ptx.contains(&wait), "{what}: no {wait}");
                }
                let per_dot = 128 * 128 * 32 / 2048 / warps as usize;
                let mma = ptx.matches("mma.sync.aligned").count();
                assert_eq!(
                    mma,
                    per_dot * stages,
                    "{what}: loop + {} drains",
                    stages - 1
                );
                let tag = format!("pipelined_{ty}_{warps}");
                ptxas_no_spills(&ptx, name, &tag);
            }
        }
    }
}

/// Loops the pipeline does not fit (`a` transposed before an `mma.sync`
/// dot) keep the plain loop, `b` copied an iteration ahead; the
/// pre-fetching kernel is unrotated (`passes::unrotate_prefetch`) and
/// pipelined.
#[test]
fn other_loops_keep_the_plain_loop() {
    let (line, defs) = &trans_variants()[1];
    assert!(line.contains("USE_A=^a"));
    let ptx = ptx_of("dot_trans.tc", defs, Arch::Sm90, 8);
    assert!(ptx.contains("mma.sync"));
    assert!(ptx.contains("cp.async.wait_all;"));
    let ptx = ptx_of(
        "dot_prefetch.tc",
        &dot_defines("half", 128, 128, 32),
        Arch::Sm90,
        8,
    );
    assert!(ptx.contains("mma.sync"));
    assert!(ptx.contains("cp.async"));
}

/// A dot loop with masked operand loads (`m ? *p : 0`, edges along `M`, `N`
/// and `K`).
const MASKED_DOT: &str = r#"__global__ void dot(TYPE * A, TYPE * B, TYPE * C, int M, int N __multipleof(8), int K __multipleof(8),
                    int lda __multipleof(8), int ldb __multipleof(8), int ldc __multipleof(8)) {
  int pm = get_program_id(0);
  int pn = get_program_id(1);
  int rm[TM] = pm * TM + 0 ... TM;
  int rn[TN] = pn * TN + 0 ... TN;
  int rk[TK] = 0 ... TK;
  float c[TM, TN] = 0;
  TYPE* pa[TM, TK] = A + rk[newaxis, :] * 1 + rm[:, newaxis] * lda;
  TYPE* pb[TK, TN] = B + rk[:, newaxis] * ldb + rn[newaxis, :] * 1;
  for(int k = K; k > 0; k-= TK){
    bool ca[TM, TK] = (rm[:, newaxis] < M) && (rk[newaxis, :] < k);
    bool cb[TK, TN] = (rk[:, newaxis] < k) && (rn[newaxis, :] < N);
    TYPE a[TM, TK] = ca ? *pa : 0;
    TYPE b[TK, TN] = cb ? *pb : 0;
    c += a @ b;
    pa = pa + TK;
    pb = pb + TK * ldb;
  }
  TYPE* pc[TM, TN] = C + rn[newaxis, :] + rm[:, newaxis] * ldc;
  *pc = c;
}
"#;

/// Masked loads become `cp.async` with a source size (0 zero-fills the
/// masked-off chunk); ptxas accepts them without spills.
#[test]
fn masked_operand_loads_zero_fill_through_the_source_size() {
    for warps in [4u32, 8] {
        for (arch, name) in [(Arch::Sm80, "sm_80"), (Arch::Sm90, "sm_90")] {
            let source = Source {
                path: PathBuf::from("dot_masked.tc"),
                text: MASKED_DOT.to_string(),
            };
            let options = CompileOptions {
                include_dirs: vec![],
                codegen: CodegenOptions {
                    arch,
                    num_warps: warps,
                    num_stages: None,
                    split_k: None,
                    tma: false,
                    tma_multicast: false,
                    warp_specialize: false,
                    misaligned_runs: false,
                },
            };
            let defs = dot_defines("half", 128, 128, 32);
            let ptx = compile(&source, &defs, &options)
                .unwrap()
                .remove(0)
                .compiled
                .ptx;
            let what = format!("w{warps} {name}");
            // `[dst], [src], 16, %rN`: the fourth operand is the source size,
            // chosen between 16 and 0 by the mask (an unmasked loop has no `selp`).
            let copies = ptx.matches("cp.async.cg.shared.global").count();
            assert!(copies >= 2 * 128 * 32 / 8 / (32 * warps as usize), "{what}");
            assert!(
                ptx.contains("selp.b32") && ptx.contains(", 16, 0,"),
                "{what}"
            );
            assert!(ptx.contains("mma.sync.aligned"), "{what}");
            ptxas_no_spills(&ptx, name, &format!("masked_{warps}"));
        }
    }
}

/// FlashAttention's chain of dots (`s = q @ k^T`, then `p @ v` with `p` from
/// `s`, tests/ops/attention.tc): when the rows allow it, both dots split
/// their warps along M only, `q` and `p` arrive in the accumulator layout and
/// are packed into A fragments straight from registers, so every `ldmatrix`
/// reads a B operand. With too few rows for that (64 rows, 8
/// warps) `a` is staged through shared memory as for any dot.
#[test]
fn chained_dots_take_their_a_operand_from_registers() {
    for (tm, warps, from_registers) in [
        (128, 4, true),
        (128, 8, true),
        (64, 4, true),
        (64, 8, false),
    ] {
        for ty in ["half", "bf16"] {
            let defs = defines(&[
                ("TYPE", ty),
                ("TM", &tm.to_string()),
                ("TN", "64"),
                ("HEAD", "64"),
            ]);
            let ptx = ptx_of("../ops/attention.tc", &defs, Arch::Sm80, warps);
            let what = format!("attention {ty} TM={tm} {warps} warps");
            let loads: Vec<&str> = ptx.lines().filter(|l| l.contains("ldmatrix")).collect();
            // `k^T` is read untransposed from its K-major stage and `v`
            // with `.trans`, as many of each (64x64 both): any more
            // untransposed reads are `a`'s.
            let trans = loads.iter().filter(|l| l.contains(".trans")).count();
            let a_loads = loads.len() - 2 * trans;
            assert!(trans > 0, "{what}: no ldmatrix.trans");
            assert_eq!(
                a_loads == 0,
                from_registers,
                "{what}: {a_loads} A-operand ldmatrix"
            );
            let kind = if ty == "half" { "f16" } else { "bf16" };
            assert!(
                ptx.contains(&format!(
                    "mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32"
                )),
                "{what}"
            );
        }
    }
}

/// `k^T` in attention is read from `k`'s rows (contiguous along its first
/// axis) and `v` along its rows: both are copied an iteration ahead in
/// 16-byte `cp.async`s (`prefetch-dot-operands`, in the unmasked and the
/// masked loop: no element stores, two groups in flight, `wait_all` after
/// each loop), `k^T` staged K-major and read with untransposed `ldmatrix`,
/// as many as `v`'s `.trans`; the softmax's `exp2` is one `ex2.approx.ftz`.
#[test]
fn attention_copies_k_and_v_an_iteration_ahead() {
    for head in ["64", "128"] {
        for ty in ["half", "bf16"] {
            let defs = defines(&[("TYPE", ty), ("TM", "64"), ("TN", "64"), ("HEAD", head)]);
            let ptx = ptx_of("../ops/attention.tc", &defs, Arch::Sm80, 4);
            let what = format!("attention {ty} head {head}");
            let count = |what: &str| ptx.lines().filter(|l| l.contains(what)).count();
            assert_eq!(count("st.shared.u16") + count("st.shared.b16"), 0, "{what}");
            // k^T and v, 64 x HEAD halves each in 16-byte chunks over 128
            // threads, before each loop and in it.
            let chunks = 2 * 64 * head.parse::<usize>().unwrap() / 8 / 128;
            assert_eq!(count("cp.async.cg.shared.global"), 2 * 2 * chunks, "{what}");
            assert_eq!(count("cp.async.wait_group 1;"), 2 * 2, "{what}");
            assert_eq!(count("cp.async.wait_all;"), 2, "{what}");
            let trans = count("ldmatrix.sync.aligned.m8n8.x4.trans");
            let plain = count("ldmatrix") - trans;
            assert!(
                trans > 0 && plain == trans,
                "{what}: {plain} plain, {trans} .trans"
            );
            assert!(count("ex2.approx.ftz.f32") > 0, "{what}");
            assert_eq!(count("ex2.approx.f32"), 0, "{what}");
            ptxas_no_spills(&ptx, "sm_80", &format!("attention_{ty}_{head}"));
        }
    }
}

/// `dot_nt` (`a @ ^b`, `b` stored `[N][K]`): with ALIGN = 8 the loop is
/// pipelined, both operands copied in 16-byte `cp.async`s (no loads to
/// registers, no element stores), `b` staged as loaded (K-major) and read
/// with untransposed `ldmatrix`.
#[test]
fn a_transposed_b_tile_moves_no_data_and_is_staged_k_major() {
    for warps in [4, 8] {
        let defs = defines(&[
            ("TYPE", "half"),
            ("TK", "16"),
            ("TK_DIV", "64"),
            ("GROUP_M", "8"),
            ("TM", "128"),
            ("TN", "128"),
            ("ALIGN", "8"),
            ("ALIGN_M", "1"),
            ("ALIGN_N", "1"),
            ("ALIGN_K", "8"),
            ("USE_A", "a"),
            ("STRIDE_AK", "1"),
            ("STRIDE_AM", "lda"),
            ("BROADCAST_AK", "newaxis, :"),
            ("BROADCAST_AM", ":, newaxis"),
            ("SHAPE_A", "TM, BK"),
            ("USE_B", "^b"),
            ("STRIDE_BK", "1"),
            ("STRIDE_BN", "ldb"),
            ("BROADCAST_BK", "newaxis, :"),
            ("BROADCAST_BN", ":, newaxis"),
            ("SHAPE_B", "TN, BK"),
        ]);
        let ptx = ptx_of("../ops/dot_nt.tc", &defs, Arch::Sm80, warps);
        let count = |what: &str| ptx.lines().filter(|l| l.contains(what)).count();
        let what = format!("dot_nt 128x128, {warps} warps");
        assert_eq!(count("ld.global"), 0, "{what}: loads to registers");
        assert!(count("cp.async.cg.shared.global") > 0, "{what}");
        assert_eq!(count("st.shared.u16") + count("st.shared.b16"), 0, "{what}");
        assert_eq!(count("ldmatrix.sync.aligned.m8n8.x4.trans"), 0, "{what}");
        assert!(count("ldmatrix") > 0, "{what}");
    }
}
