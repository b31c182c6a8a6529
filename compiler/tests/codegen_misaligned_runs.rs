//! Misaligned runs (`codegen::lower::misaligned_runs`, `tritonc
//! --misaligned-runs`, off by default until checked on a GPU): the unaligned
//! variants of the dot op (`tests/ops/dot.tc` with ALIGN = 1, an odd N, K
//! or leading stride) read their operands' rows as 16-byte runs, two
//! aligned loads and a funnel shift each, where every element of a thread
//! is in bounds, and element by element only where some are masked off.
//! Aligned variants are unchanged. Values: `scripts/gpu/tma_check.py` and
//! `pad_check.py` on the GPU machine.
mod common;

struct Variant {
    runs: bool,
    ty: &'static str,
    align: usize,
    tiles: (usize, usize),
    kx: usize,
    split_k: usize,
    warps: usize,
}

impl Variant {
    fn ptx(&self) -> String {
        let (tk, tk_div) = if self.ty == "float" { (8, 8) } else { (16, 64) };
        let mut args: Vec<String> = vec!["tests/ops/dot.tc".into()];
        for (k, v) in [
            ("TYPE", self.ty.to_string()),
            ("TK", tk.to_string()),
            ("TK_DIV", tk_div.to_string()),
            ("TM", self.tiles.0.to_string()),
            ("TN", self.tiles.1.to_string()),
            ("ALIGN", self.align.to_string()),
            ("KX", self.kx.to_string()),
            ("SPLIT_K", self.split_k.to_string()),
            ("GROUP_M", "8".into()),
            ("USE_A", "a".into()),
            ("USE_B", "b".into()),
            ("STRIDE_AK", "1".into()),
            ("STRIDE_AM", "lda".into()),
            ("STRIDE_BK", "ldb".into()),
            ("STRIDE_BN", "1".into()),
            ("BROADCAST_AK", "newaxis,:".into()),
            ("BROADCAST_AM", ":,newaxis".into()),
            ("BROADCAST_BK", ":,newaxis".into()),
            ("BROADCAST_BN", "newaxis,:".into()),
            ("SHAPE_A", "TM,BK".into()),
            ("SHAPE_B", "BK,TN".into()),
        ] {
            args.push(format!("-D{k}={v}"));
        }
        for a in ["--arch", "sm_90a", "--num-warps"] {
            args.push(a.into());
        }
        args.push(self.warps.to_string());
        if self.split_k > 1 {
            args.push(format!("--split-k={}", self.split_k));
        }
        if self.runs {
            args.push("--misaligned-runs".into());
        }
        args.extend(["--emit".into(), "ptx".into()]);
        common::tritonc_ptx(&args, &self.name())
    }

    fn name(&self) -> String {
        format!(
            "dot_{}_align{}_{}x{}_kx{}_split{}_w{}",
            self.ty, self.align, self.tiles.0, self.tiles.1, self.kx, self.split_k, self.warps
        )
    }
}

fn count(ptx: &str, needle: &str) -> usize {
    ptx.matches(needle).count()
}

fn unaligned(
    ty: &'static str,
    tiles: (usize, usize),
    kx: usize,
    split_k: usize,
    warps: usize,
) -> Variant {
    Variant {
        runs: true,
        ty,
        align: 1,
        tiles,
        kx,
        split_k,
        warps,
    }
}

#[test]
fn unaligned_half_rows_are_read_as_runs() {
    // 64x64 tiles stepping 64 along K on 8 warps: per thread and operand
    // two runs of 8 halves, loaded before the loop and a step ahead in it.
    let ptx = unaligned("half", (64, 64), 4, 1, 8).ptx();
    let chunks = count(&ptx, "ld.global.v4.u32");
    assert_eq!(chunks, 16, "2 operands x 2 runs x 2 chunks, twice");
    // Four words a run, each one funnel shift.
    assert_eq!(count(&ptx, "shf.r.wrap.b32"), 2 * chunks);
    // The edge path loads each of a run's 8 elements alone.
    assert_eq!(count(&ptx, "ld.global.b16"), 4 * chunks);
    assert!(count(&ptx, "mma") > 0, "still a tensor-core loop");
}

#[test]
fn the_loop_carries_its_pointers_in_the_runs_layout() {
    // The pointer tiles a loop steps and loads through are carried in the
    // layout of that load: converting 64-bit pointers through shared
    // memory at every step (two barriers, a store per element) made the
    // runs variants twice as slow as element loads (H100, 2026-12-07).
    for v in [
        unaligned("half", (64, 64), 4, 1, 8),
        unaligned("half", (64, 256), 1, 1, 8),
        unaligned("half", (64, 128), 1, 2, 8),
        unaligned("float", (64, 128), 1, 1, 8),
    ] {
        let ptx = v.ptx();
        assert!(count(&ptx, "shf.r.wrap.b32") > 0, "{}: no runs", v.name());
        assert_eq!(
            count(&ptx, "shared.u64") + count(&ptx, "shared.b64"),
            0,
            "{}: pointers cross shared memory",
            v.name()
        );
    }
}

#[test]
fn unaligned_float_rows_are_read_as_runs() {
    let ptx = unaligned("float", (64, 64), 1, 1, 8).ptx();
    let chunks = count(&ptx, "ld.global.v4.u32");
    assert!(chunks > 0, "no 16-byte chunks");
    assert_eq!(count(&ptx, "shf.r.wrap.b32"), 2 * chunks);
    // A run of 4 floats: 4 element loads on the edge path for 2 chunks.
    assert_eq!(count(&ptx, "ld.global.b32"), 2 * chunks);
}

#[test]
fn aligned_variants_read_no_runs() {
    let aligned = Variant {
        runs: true,
        ty: "half",
        align: 8,
        tiles: (128, 128),
        kx: 1,
        split_k: 1,
        warps: 8,
    };
    let ptx = aligned.ptx();
    assert_eq!(count(&ptx, "shf.r.wrap.b32"), 0);
    assert!(
        count(&ptx, "cp.async") > 0,
        "aligned tiles stay on cp.async"
    );
}

#[test]
fn without_the_option_unaligned_rows_load_element_by_element() {
    let v = Variant {
        runs: false,
        ..unaligned("half", (64, 64), 4, 1, 8)
    };
    let ptx = v.ptx();
    assert_eq!(count(&ptx, "shf.r.wrap.b32"), 0);
    assert_eq!(count(&ptx, "ld.global.v4"), 0);
    assert!(
        count(&ptx, "ld.global.b16") >= 64,
        "2 operands x 16 elements, twice"
    );
}

#[test]
fn unaligned_variants_of_the_op_do_not_spill() {
    // Unaligned tiles of dot.tc's tuning space (fp16; bf16 is alike). With
    // runs, 64x128 and 128x64 on 4 warps stopped spilling too (their
    // pointers are one a run); 128x64 on 8 warps spills 10 bytes (ptxas
    // keeps it to 128 registers), tiles of 256 columns spill either way.
    for v in [
        unaligned("half", (64, 64), 1, 1, 8),
        unaligned("half", (64, 64), 4, 1, 8),
        unaligned("half", (64, 64), 4, 2, 8),
        unaligned("half", (64, 128), 1, 1, 8),
        unaligned("half", (64, 128), 1, 1, 4),
        unaligned("half", (64, 128), 1, 2, 4),
        unaligned("half", (128, 32), 1, 1, 8),
        unaligned("half", (128, 64), 1, 1, 4),
        unaligned("half", (128, 128), 1, 1, 8),
        unaligned("float", (64, 128), 1, 1, 8),
    ] {
        let ptx = v.ptx();
        assert!(count(&ptx, "shf.r.wrap.b32") > 0, "{}: no runs", v.name());
        if let Some(usage) = common::ptxas_usage_on(&ptx, "sm_90a", &v.name()) {
            assert_eq!(usage.spill_bytes, 0, "{} spills", v.name());
        }
    }
}
