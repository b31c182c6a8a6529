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
