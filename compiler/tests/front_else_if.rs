//! `else if` chains are read in a loop (issue 20): a chain of 300 links is a
//! kernel (it was "nesting is too deep"), runs right on the interpreter and
//! compiles to PTX; one longer than the parser's cap is a located error, not
//! a stack overflow in a later stage.

use tritonc::codegen::{Arch, CodegenOptions};
use tritonc::driver::{compile, lower, CompileOptions, Source};
use tritonc::interp::{run, ArgValue, Memory};

/// `r` = 3 v for v < links, else -1, through a chain of `links` `else if`s.
fn chain(links: usize) -> Source {
    let mut text = String::from("__global__ void k(int* p, int v) {\n  int r = 0;\n");
    for i in 0..links {
        let kw = if i == 0 { "if" } else { "else if" };
        text.push_str(&format!("  {kw} (v == {i}) r = {};\n", 3 * i));
    }
    text.push_str("  else r = -1;\n  *p = r;\n}\n");
    Source {
        path: "chain.tc".into(),
        text,
    }
}

fn run_chain(source: &Source, v: i64) -> i32 {
    let lowered = lower(source, &[], &[]).unwrap_or_else(|e| panic!("{e}"));
    let f = &lowered.module.functions[0];
    let mut mem = Memory::new();
    let out = mem.alloc_i32(&[7]);
    run(
        f,
        [1, 1, 1],
        &[ArgValue::Ptr(out), ArgValue::Int(v)],
        &mut mem,
    )
    .unwrap();
    mem.read_i32(out, 1).unwrap()[0]
}

/// The PTX of `source` for sm_90 with one warp.
fn ptx_of(source: &Source) -> String {
    let options = CompileOptions {
        include_dirs: Vec::new(),
        codegen: CodegenOptions {
            arch: Arch::Sm90,
            num_warps: 1,
            num_stages: None,
            split_k: None,
            tma: false,
            tma_multicast: false,
            warp_specialize: false,
            misaligned_runs: false,
        },
    };
    let mut kernels = compile(source, &[], &options).unwrap_or_else(|e| panic!("{e}"));
    kernels.remove(0).compiled.ptx
}

#[test]
fn a_chain_of_300_links_runs_and_compiles() {
    let source = chain(300);
    for (v, want) in [(0, 0), (1, 3), (150, 450), (299, 897), (300, -1), (-5, -1)] {
        assert_eq!(run_chain(&source, v), want, "v = {v}");
    }
    assert!(ptx_of(&source).contains(".entry k"));
}

#[test]
fn a_chain_past_the_cap_is_a_located_error() {
    let links = tritonc::front::parser::MAX_ELSE_IF_LINKS;
    let err = match lower(&chain(links + 1), &[], &[]) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a chain of {} links was accepted", links + 1),
    };
    assert!(
        err.contains(&format!("an `else if` chain of more than {links} links")),
        "{err}"
    );
    assert!(err.contains(&format!("chain.tc:{}:8", links + 3)), "{err}");
}

#[test]
fn a_chain_at_the_cap_lowers_runs_and_compiles_on_a_2_mib_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let source = chain(tritonc::front::parser::MAX_ELSE_IF_LINKS);
            assert_eq!(run_chain(&source, 7), 21);
            assert!(ptx_of(&source).contains(".entry k"));
        })
        .unwrap();
    worker.join().unwrap();
}
