//! A `require` line on `num_warps` (and macros) decides which variants are
//! compiled: the add op with 1024-element blocks on 8 warps only compiles
//! three variants a dtype, not four, and its launcher checks no such line.

use triton_opgen::spec::parse_spec;
use triton_opgen::variants::{compile_with, count_points, CompileSettings};
use tritonc::codegen::Arch;
use tritonc::driver::Source;
use tritonc::span::SourceMap;

const SPEC: &str = "#pragma opgen op t::add
#pragma opgen dtype T in {float32: TYPE=float, float16: TYPE=half}
#pragma opgen input x: T[N] contiguous
#pragma opgen input y: T[N] contiguous
#pragma opgen output z: T[N]
#pragma opgen args N, x, y, z
#pragma opgen grid cdiv(N, SIZE)
#pragma opgen tune SIZE = [256, 1024]
#pragma opgen num_warps [4, 8]
#pragma opgen require (SIZE - 256) * (8 - num_warps) == 0
__global__ void add(int N, TYPE* a, TYPE* b, TYPE* c) {
  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);
  bool in[SIZE] = off < N;
  *?(in)(c + off) = *?(in)(a + off) + *?(in)(b + off);
}
";

#[test]
fn variants_failing_a_require_on_num_warps_are_not_compiled() {
    let mut sources = SourceMap::new();
    let file = sources.add("add_warps.tc", SPEC);
    let spec = parse_spec(file, SPEC)
        .unwrap_or_else(|d| panic!("{}", d.render(&sources)))
        .expect("a spec");
    assert!(spec.requires.is_empty());
    let source = Source {
        path: "add_warps.tc".into(),
        text: SPEC.to_string(),
    };
    let groups = compile_with(
        &spec,
        &source,
        Arch::Sm90,
        &[],
        &CompileSettings {
            jobs: 2,
            cache: None,
            misaligned_runs: false,
        },
        |_| {},
        &mut Vec::new(),
    )
    .unwrap_or_else(|e| panic!("{}", e.0));
    assert_eq!(groups.len(), 2);
    for g in &groups {
        let mut configs: Vec<&str> = g.variants.iter().map(|v| v.config.as_str()).collect();
        configs.sort();
        assert_eq!(
            configs,
            [
                "SIZE=1024 num_warps=8",
                "SIZE=256 num_warps=4",
                "SIZE=256 num_warps=8"
            ],
            "{:?}",
            g.dtypes
        );
    }
    assert_eq!(count_points(&spec), 6);
}
