//! Shared helpers of the end-to-end tests: a kernel of `tests/kernels/` goes
//! through the real driver (`driver::lower`: preprocessor, parser, sema,
//! verifier), then runs on the CPU interpreter on host buffers; the results
//! are checked against plain Rust references.
#![allow(dead_code)]

#[path = "../source_support/mod.rs"]
mod source_support;
pub use source_support::*;

use half::f16;
use std::fmt::Debug;
use tritonc::driver::{lower, Source};
use tritonc::interp::{self, ArgValue, Element, InterpError, Memory};
use tritonc::ir::Function;
use tritonc::span::SourceMap;

/// A lowered kernel and the sources its spans point into (to render errors).
pub struct Kernel {
    pub func: Function,
    pub sources: SourceMap,
    pub what: String,
}

impl Kernel {
    /// Lowers the one kernel of `tests/kernels/<file>` with these macro values;
    /// panics with the rendered diagnostic when the source does not compile.
    pub fn load(file: &str, defines: &[(&str, &str)]) -> Kernel {
        let dir = kernels_dir();
        let source = Source::read(&dir.join(file)).expect("kernel file");
        let defines: Vec<(String, String)> = defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        let what = format!("{file} {defines:?}");
        let lowered = lower(&source, &defines, &[dir])
            .unwrap_or_else(|e| panic!("{what} does not compile:\n{e}"));
        let mut functions = lowered.module.functions;
        assert_eq!(functions.len(), 1, "{what}: one kernel per file");
        Kernel {
            func: functions.remove(0),
            sources: lowered.sources,
            what,
        }
    }

    pub fn try_run(
        &self,
        grid: [u32; 3],
        args: &[ArgValue],
        mem: &mut Memory,
    ) -> Result<(), InterpError> {
        interp::run(&self.func, grid, args, mem)
    }

    /// Runs on `grid`; an interpreter error fails the test with the source line.
    pub fn run(&self, grid: [u32; 3], args: &[ArgValue], mem: &mut Memory) {
        if let Err(e) = self.try_run(grid, args, mem) {
            panic!(
                "{} on grid {grid:?} failed:\n{}",
                self.what,
                self.render(&e)
            );
        }
    }

    /// An interpreter error as a diagnostic with file:line:col and caret.
    pub fn render(&self, e: &InterpError) -> String {
        e.to_diagnostic().render(&self.sources)
    }
}

pub fn ptr(p: u64) -> ArgValue {
    ArgValue::Ptr(p)
}

pub fn int(i: usize) -> ArgValue {
    ArgValue::Int(i as i64)
}

pub fn cdiv(a: usize, b: usize) -> u32 {
    a.div_ceil(b) as u32
}

/// A number type a kernel's `TYPE` macro can name.
pub trait Num: Element + Copy + PartialEq + Debug {
    /// The Triton-C spelling, the value of `-DTYPE=`.
    const C_TYPE: &'static str;
    /// Rounds to nearest (even) for floats; ints truncate toward zero.
    fn from_f64(x: f64) -> Self;
    fn to_f64(self) -> f64;
    /// The gap between `x` and its next neighbour away from zero in this type
    /// (0 for ints): the rounding a stored result may carry.
    fn ulp(x: f64) -> f64;
}

impl Num for f32 {
    const C_TYPE: &'static str = "float";
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn ulp(x: f64) -> f64 {
        let x = (x as f32).abs();
        (f32::from_bits(x.to_bits() + 1) - x) as f64
    }
}

impl Num for f16 {
    const C_TYPE: &'static str = "half";
    fn from_f64(x: f64) -> Self {
        f16::from_f64(x)
    }
    fn to_f64(self) -> f64 {
        f16::to_f64(self)
    }
    fn ulp(x: f64) -> f64 {
        let x = f16::from_f64(x.abs());
        f16::from_bits(x.to_bits() + 1).to_f64() - x.to_f64()
    }
}

impl Num for i32 {
    const C_TYPE: &'static str = "int";
    fn from_f64(x: f64) -> Self {
        x as i32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn ulp(_: f64) -> f64 {
        0.0
    }
}

/// Deterministic values in [-1, 1) (xorshift; no RNG dependency).
pub fn unit_random(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

/// Values in [-scale, scale), rounded to `T`.
pub fn random<T: Num>(n: usize, seed: u64, scale: f64) -> Vec<T> {
    unit_random(n, seed)
        .into_iter()
        .map(|x| T::from_f64(x * scale))
        .collect()
}

/// Multiples of 1/4 in [-8, 8) (integers in [-1000, 1000) for ints): sums and
/// products of a few hundred of them are exact in f32, in any order, so a
/// result that depends on summation order can still be checked exactly.
pub fn quarters<T: Num>(n: usize, seed: u64) -> Vec<T> {
    let step = if T::C_TYPE == "int" { 1.0 } else { 0.25 };
    let half_range = if T::C_TYPE == "int" { 1000.0 } else { 32.0 };
    unit_random(n, seed)
        .into_iter()
        .map(|x| T::from_f64((x * half_range).floor() * step))
        .collect()
}

/// A value no kernel computes here: marks elements that must stay unwritten.
pub fn sentinel<T: Num>() -> T {
    T::from_f64(-77.0)
}

pub fn read<T: Num>(mem: &Memory, addr: u64, len: usize) -> Vec<T> {
    mem.read(addr, len).expect("host read of a buffer")
}

/// `got[i] == want[i]` for every `i` (bitwise equal values; -0 == +0).
pub fn assert_exact<T: Num>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} of {} elements differ; first at {i}: got {:?}, want {:?}",
            bad.len(),
            got.len(),
            got[i],
            want[i]
        );
    }
}

/// `C = A @ B` (M x N, row-major) in f64, with `a(i, l)` and `b(l, j)` the
/// operands' elements (any layout: dense, strided, transposed).
pub fn matmul_f64(
    m: usize,
    n: usize,
    k: usize,
    a: impl Fn(usize, usize) -> f64,
    b: impl Fn(usize, usize) -> f64,
) -> Vec<f64> {
    (0..m * n)
        .map(|ij| (0..k).map(|l| a(ij / n, l) * b(l, ij % n)).sum())
        .collect()
}

/// `|got[i] - want[i]| <= tol(want[i])` for every `i`; `want` is exact (f64).
pub fn assert_close<T: Num>(got: &[T], want: &[f64], tol: impl Fn(usize, f64) -> f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let bad: Vec<usize> = (0..got.len())
        .filter(|&i| {
            let g = got[i].to_f64();
            // NaN counts as off.
            let err = (g - want[i]).abs();
            err.is_nan() || err > tol(i, want[i])
        })
        .collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{what}: {} of {} elements off; first at {i}: got {:?}, want {} (tolerance {})",
            bad.len(),
            got.len(),
            got[i],
            want[i],
            tol(i, want[i])
        );
    }
}

impl Num for half::bf16 {
    const C_TYPE: &'static str = "bf16";
    fn from_f64(x: f64) -> Self {
        half::bf16::from_f64(x)
    }
    fn to_f64(self) -> f64 {
        half::bf16::to_f64(self)
    }
    fn ulp(x: f64) -> f64 {
        let x = half::bf16::from_f64(x.abs());
        half::bf16::from_bits(x.to_bits() + 1).to_f64() - x.to_f64()
    }
}
