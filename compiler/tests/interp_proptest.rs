//! Property: element-wise binary ops on random shapes and values give what a
//! direct Rust computation on the same numbers gives, for every number type.

mod interp_util;

use half::f16;
use interp_util::Kernel;
use proptest::prelude::*;
use tritonc::interp::{run, ArgValue, Element, Memory};
use tritonc::ir::*;

/// `z = x op y` on tiles of `shape` (rank 0 is a scalar), loaded from flat buffers.
fn kernel(op: BinOp, d: DType, shape: &[usize]) -> Function {
    let mut k = Kernel::new("binary");
    let x = k.ptr_param("x", d);
    let y = k.ptr_param("y", d);
    let z = k.ptr_param("z", d);
    let n: usize = shape.iter().product();
    let flat = k.range(0, n as i64);
    let offs = if shape.len() == 1 {
        flat
    } else {
        k.reshape(flat, shape)
    };
    let (px, py, pz) = (k.add_ptr(x, offs), k.add_ptr(y, offs), k.add_ptr(z, offs));
    let (xv, yv) = (k.load(px, None, None), k.load(py, None, None));
    let r = k.bin(op, xv, yv);
    k.store(pz, r, None);
    k.finish()
}

fn interpret<T: Element>(op: BinOp, shape: &[usize], xs: &[T], ys: &[T]) -> Vec<T> {
    let mut mem = Memory::new();
    let (x, y) = (mem.alloc_slice(xs), mem.alloc_slice(ys));
    let z = mem.alloc(T::DTYPE, xs.len());
    let args = [ArgValue::Ptr(x), ArgValue::Ptr(y), ArgValue::Ptr(z)];
    run(&kernel(op, T::DTYPE, shape), [1, 1, 1], &args, &mut mem).unwrap();
    mem.read(z, xs.len()).unwrap()
}

fn shapes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..6, 0..4)
}

/// A shape and two value vectors of its size.
fn operands<T: std::fmt::Debug>(
    value: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = (Vec<usize>, Vec<T>, Vec<T>)> {
    shapes().prop_flat_map(move |s| {
        let n: usize = s.iter().product();
        (
            Just(s),
            prop::collection::vec(value.clone(), n),
            prop::collection::vec(value.clone(), n),
        )
    })
}

const INT_OPS: [BinOp; 12] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Min,
    BinOp::Max,
];

const FLOAT_OPS: [BinOp; 7] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Min,
    BinOp::Max,
];

/// C semantics on the type's own width, written with Rust's native ops.
macro_rules! int_reference {
    ($t:ty) => {
        |op: BinOp, a: $t, b: $t| -> $t {
            match op {
                BinOp::Add => a.wrapping_add(b),
                BinOp::Sub => a.wrapping_sub(b),
                BinOp::Mul => a.wrapping_mul(b),
                BinOp::Div => a.wrapping_div(b),
                BinOp::Rem => a.wrapping_rem(b),
                BinOp::And => a & b,
                BinOp::Or => a | b,
                BinOp::Xor => a ^ b,
                BinOp::Shl => a << b,
                BinOp::Shr => a >> b,
                BinOp::Min => a.min(b),
                BinOp::Max => a.max(b),
            }
        }
    };
}

/// Keeps `b` a valid right operand: no zero divisor, shifts inside the width.
macro_rules! int_operand {
    ($t:ty) => {
        |op: BinOp, b: $t| -> $t {
            match op {
                BinOp::Div | BinOp::Rem if b == 0 => 1,
                BinOp::Shl | BinOp::Shr => b.rem_euclid(<$t>::BITS as $t),
                _ => b,
            }
        }
    };
}

macro_rules! int_property {
    ($name:ident, $t:ty) => {
        proptest! {
            #![proptest_config(ProptestConfig::with_cases(48))]
            #[test]
            fn $name(op_index in 0..INT_OPS.len(), (shape, xs, ys) in operands(any::<$t>())) {
                let op = INT_OPS[op_index];
                let ys: Vec<$t> = ys.iter().map(|&b| int_operand!($t)(op, b)).collect();
                let got = interpret(op, &shape, &xs, &ys);
                let want: Vec<$t> = xs.iter().zip(&ys).map(|(&a, &b)| int_reference!($t)(op, a, b)).collect();
                prop_assert_eq!(got, want, "{:?} on {:?}", op, shape);
            }
        }
    };
}

int_property!(i8_ops_match_rust, i8);
int_property!(i16_ops_match_rust, i16);
int_property!(i32_ops_match_rust, i32);
int_property!(i64_ops_match_rust, i64);

fn float_reference<T>(op: BinOp, a: T, b: T) -> T
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Sub<Output = T> + std::ops::Mul<Output = T>,
    T: std::ops::Div<Output = T> + std::ops::Rem<Output = T> + FloatMinMax,
{
    match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        BinOp::Rem => a % b,
        BinOp::Min => a.fmin(b),
        BinOp::Max => a.fmax(b),
        _ => unreachable!("not a float op"),
    }
}

trait FloatMinMax {
    fn fmin(self, o: Self) -> Self;
    fn fmax(self, o: Self) -> Self;
}
impl FloatMinMax for f32 {
    fn fmin(self, o: f32) -> f32 {
        self.min(o)
    }
    fn fmax(self, o: f32) -> f32 {
        self.max(o)
    }
}
impl FloatMinMax for f64 {
    fn fmin(self, o: f64) -> f64 {
        self.min(o)
    }
    fn fmax(self, o: f64) -> f64 {
        self.max(o)
    }
}

/// Bit-equal, or both NaN (a NaN's payload is not part of the contract).
fn same_bits(a: f64, b: f64, a_bits: u64, b_bits: u64) -> bool {
    a_bits == b_bits || (a.is_nan() && b.is_nan())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn f32_ops_match_rust(op_index in 0..FLOAT_OPS.len(), (shape, xs, ys) in operands(any::<f32>())) {
        let op = FLOAT_OPS[op_index];
        let got = interpret(op, &shape, &xs, &ys);
        for i in 0..xs.len() {
            let want = float_reference(op, xs[i], ys[i]);
            prop_assert!(
                same_bits(got[i] as f64, want as f64, got[i].to_bits() as u64, want.to_bits() as u64),
                "{:?}({}, {}) = {}, want {}", op, xs[i], ys[i], got[i], want
            );
        }
    }

    #[test]
    fn f64_ops_match_rust(op_index in 0..FLOAT_OPS.len(), (shape, xs, ys) in operands(any::<f64>())) {
        let op = FLOAT_OPS[op_index];
        let got = interpret(op, &shape, &xs, &ys);
        for i in 0..xs.len() {
            let want = float_reference(op, xs[i], ys[i]);
            prop_assert!(
                same_bits(got[i], want, got[i].to_bits(), want.to_bits()),
                "{:?}({}, {}) = {}, want {}", op, xs[i], ys[i], got[i], want
            );
        }
    }

    /// f16 ops are f32 ops rounded once to f16.
    #[test]
    fn f16_ops_match_rust(op_index in 0..FLOAT_OPS.len(), (shape, xs, ys) in operands(any::<u16>())) {
        let op = FLOAT_OPS[op_index];
        let xs: Vec<f16> = xs.into_iter().map(f16::from_bits).collect();
        let ys: Vec<f16> = ys.into_iter().map(f16::from_bits).collect();
        let got = interpret(op, &shape, &xs, &ys);
        for i in 0..xs.len() {
            let want = f16::from_f32(float_reference(op, xs[i].to_f32(), ys[i].to_f32()));
            prop_assert!(
                same_bits(got[i].to_f64(), want.to_f64(), got[i].to_bits() as u64, want.to_bits() as u64),
                "{:?}({}, {}) = {}, want {}", op, xs[i], ys[i], got[i], want
            );
        }
    }
}

/// Flat offsets `0..n` shaped like `shape` (rank 0: a scalar 0).
fn flat_offsets(k: &mut Kernel, shape: &[usize]) -> ValueId {
    let n: usize = shape.iter().product();
    let flat = k.range(0, n as i64);
    if shape.len() == 1 {
        flat
    } else {
        k.reshape(flat, shape)
    }
}

/// Loads `x` as a tile of `shape`, applies `build`, stores the result to `z`
/// (row-major, whatever its shape and type).
fn map_kernel(
    d_in: DType,
    shape: &[usize],
    d_out: DType,
    build: impl FnOnce(&mut Kernel, ValueId) -> ValueId,
) -> Function {
    let mut k = Kernel::new("map");
    let x = k.ptr_param("x", d_in);
    let z = k.ptr_param("z", d_out);
    let offs = flat_offsets(&mut k, shape);
    let px = k.add_ptr(x, offs);
    let xv = k.load(px, None, None);
    let r = build(&mut k, xv);
    let out_shape = k.shape(r);
    let offs = flat_offsets(&mut k, &out_shape);
    let pz = k.add_ptr(z, offs);
    k.store(pz, r, None);
    k.finish()
}

fn run_map<T: Element, U: Element>(f: &Function, xs: &[T], n_out: usize) -> Vec<U> {
    let mut mem = Memory::new();
    let x = mem.alloc_slice(xs);
    let z = mem.alloc(U::DTYPE, n_out);
    run(
        f,
        [1, 1, 1],
        &[ArgValue::Ptr(x), ArgValue::Ptr(z)],
        &mut mem,
    )
    .unwrap();
    mem.read(z, n_out).unwrap()
}

/// Row-major index of `pos` in `shape`.
fn linear(pos: &[usize], shape: &[usize]) -> usize {
    pos.iter().zip(shape).fold(0, |acc, (&p, &s)| acc * s + p)
}

/// Every position of `shape`, row-major.
fn positions(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut i| {
            let mut pos = vec![0; shape.len()];
            for ax in (0..shape.len()).rev() {
                pos[ax] = i % shape[ax];
                i /= shape[ax];
            }
            pos
        })
        .collect()
}

fn nonempty_shapes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..6, 1..4)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Sum/max/min along any axis of an int tile equals a loop over that axis.
    #[test]
    fn int_reductions_match_rust(
        (shape, axis, xs) in nonempty_shapes().prop_flat_map(|s| {
            let n: usize = s.iter().product();
            let rank = s.len();
            (Just(s), 0..rank, prop::collection::vec(-1000i32..1000, n))
        }),
        kind_index in 0usize..3,
    ) {
        let kind = [ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min][kind_index];
        let f = map_kernel(DType::I32, &shape, DType::I32, |k, x| k.reduce(x, axis, kind));
        let mut out_shape = shape.clone();
        out_shape.remove(axis);
        let n_out: usize = out_shape.iter().product();
        let got: Vec<i32> = run_map(&f, &xs, n_out);
        for pos in positions(&out_shape) {
            let along = (0..shape[axis]).map(|i| {
                let mut p = pos.clone();
                p.insert(axis, i);
                xs[linear(&p, &shape)]
            });
            let want = match kind {
                ReduceKind::Sum => along.sum(),
                ReduceKind::Max => along.max().unwrap(),
                ReduceKind::Min => along.min().unwrap(),
            };
            prop_assert_eq!(got[linear(&pos, &out_shape)], want, "{:?} of {:?} along {}", kind, shape, axis);
        }
    }

    /// Broadcasting a tile whose chosen axes are 1 repeats along those axes.
    #[test]
    fn broadcast_repeats_unit_axes(
        (shape, unit) in nonempty_shapes().prop_flat_map(|s| {
            let rank = s.len();
            (Just(s), prop::collection::vec(any::<bool>(), rank))
        }),
    ) {
        let src: Vec<usize> = shape.iter().zip(&unit).map(|(&d, &u)| if u { 1 } else { d }).collect();
        let n_src: usize = src.iter().product();
        let xs: Vec<i32> = (0..n_src as i32).collect();
        let f = map_kernel(DType::I32, &src, DType::I32, |k, x| k.broadcast(x, &shape));
        let got: Vec<i32> = run_map(&f, &xs, shape.iter().product());
        for pos in positions(&shape) {
            let from: Vec<usize> = pos.iter().zip(&src).map(|(&p, &d)| if d == 1 { 0 } else { p }).collect();
            prop_assert_eq!(got[linear(&pos, &shape)], xs[linear(&from, &src)]);
        }
    }

    /// `Trans` of any 2-D tile.
    #[test]
    fn transpose_swaps_axes(m in 1usize..9, n in 1usize..9) {
        let xs: Vec<f32> = (0..m * n).map(|i| i as f32 * 0.5).collect();
        let f = map_kernel(DType::F32, &[m, n], DType::F32, |k, x| k.trans(x));
        let got: Vec<f32> = run_map(&f, &xs, m * n);
        for i in 0..m {
            for j in 0..n {
                prop_assert_eq!(got[j * m + i], xs[i * n + j]);
            }
        }
    }

    /// f32 to int casts truncate and saturate like Rust's `as`; to f16 they round once.
    #[test]
    fn float_casts_match_rust((shape, xs, _ys) in operands(any::<f32>())) {
        let n = xs.len();
        let f = map_kernel(DType::F32, &shape, DType::I32, |k, x| k.cast(x, ScalarType::Num(DType::I32)));
        let got: Vec<i32> = run_map(&f, &xs, n);
        prop_assert_eq!(got, xs.iter().map(|&v| v as i32).collect::<Vec<_>>());
        let f = map_kernel(DType::F32, &shape, DType::I8, |k, x| k.cast(x, ScalarType::Num(DType::I8)));
        let got: Vec<i8> = run_map(&f, &xs, n);
        prop_assert_eq!(got, xs.iter().map(|&v| v as i8).collect::<Vec<_>>());
        let f = map_kernel(DType::F32, &shape, DType::F16, |k, x| k.cast(x, ScalarType::Num(DType::F16)));
        let got: Vec<f16> = run_map(&f, &xs, n);
        let want: Vec<f16> = xs.iter().map(|&v| f16::from_f32(v)).collect();
        for (g, w) in got.iter().zip(&want) {
            prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{} vs {}", g, w);
        }
    }

    /// Comparisons of f32 (NaN included) follow IEEE, like Rust's operators.
    #[test]
    fn float_comparisons_match_rust(
        (shape, xs, ys) in operands(prop_oneof![any::<f32>(), Just(f32::NAN), Just(1.0f32)]),
        pred_index in 0usize..6,
    ) {
        let preds = [CmpPred::Lt, CmpPred::Le, CmpPred::Gt, CmpPred::Ge, CmpPred::Eq, CmpPred::Ne];
        let pred = preds[pred_index];
        let mut k = Kernel::new("cmp");
        let x = k.ptr_param("x", DType::F32);
        let y = k.ptr_param("y", DType::F32);
        let z = k.ptr_param("z", DType::I1);
        let offs = flat_offsets(&mut k, &shape);
        let (px, py, pz) = (k.add_ptr(x, offs), k.add_ptr(y, offs), k.add_ptr(z, offs));
        let (xv, yv) = (k.load(px, None, None), k.load(py, None, None));
        let c = k.cmp(pred, xv, yv);
        k.store(pz, c, None);
        let f = k.finish();
        let mut mem = Memory::new();
        let (xa, ya) = (mem.alloc_f32(&xs), mem.alloc_f32(&ys));
        let za = mem.alloc(DType::I1, xs.len());
        run(&f, [1, 1, 1], &[ArgValue::Ptr(xa), ArgValue::Ptr(ya), ArgValue::Ptr(za)], &mut mem).unwrap();
        let got = mem.read_bool(za, xs.len()).unwrap();
        let want: Vec<bool> = xs.iter().zip(&ys).map(|(&a, &b)| match pred {
            CmpPred::Lt => a < b,
            CmpPred::Le => a <= b,
            CmpPred::Gt => a > b,
            CmpPred::Ge => a >= b,
            CmpPred::Eq => a == b,
            CmpPred::Ne => a != b,
        }).collect();
        prop_assert_eq!(got, want);
    }
}
