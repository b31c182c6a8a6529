//! Element-wise ops: `Binary`, `Cmp`, `Unary`, `Select`. Integers follow C on
//! their width (wrapping add/mul, truncating div/rem, arithmetic shr); f16/bf16
//! are computed in f32 and rounded after each op; float min/max are `fminf`/`fmaxf`.

use super::value::{round_f32s, wrap_ints, Data, Tile};
use crate::ir::{BinOp, CmpPred, DType, UnOp};

/// `f` over pairs. A plain index loop: iterator adapters cost several calls
/// per element in the debug builds tests run in.
fn zip<T: Copy, U>(x: &[T], y: &[T], f: impl Fn(T, T) -> U) -> Vec<U> {
    let n = x.len().min(y.len());
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        out.push(f(x[i], y[i]));
    }
    out
}

fn same_len(a: &Tile, b: &Tile, what: &str) -> Result<(), String> {
    if a.len() != b.len() {
        return Err(format!(
            "{what} of tiles with {} and {} elements ({} and {})",
            a.len(),
            b.len(),
            a.ty(),
            b.ty()
        ));
    }
    Ok(())
}

pub(crate) fn binary(op: BinOp, a: &Tile, b: &Tile) -> Result<Data, String> {
    same_len(a, b, &format!("{op:?}"))?;
    let d = a.dtype();
    match (&a.data, &b.data) {
        (Data::Int(x), Data::Int(y)) => int_binary(op, x, y, d).map(Data::Int),
        (Data::F32(x), Data::F32(y)) => {
            let mut v = float_binary(op, x, y)?;
            round_f32s(&mut v, d);
            Ok(Data::F32(v))
        }
        (Data::F64(x), Data::F64(y)) => float_binary(op, x, y).map(Data::F64),
        (Data::Bool(x), Data::Bool(y)) => bool_binary(op, x, y).map(Data::Bool),
        (x, y) => Err(format!(
            "{op:?} of {} and {} values ({} and {})",
            x.kind_name(),
            y.kind_name(),
            a.ty(),
            b.ty()
        )),
    }
}

fn int_binary(op: BinOp, x: &[i64], y: &[i64], d: DType) -> Result<Vec<i64>, String> {
    let bits = d.bits() as i64;
    let mut v = match op {
        BinOp::Add => zip(x, y, i64::wrapping_add),
        BinOp::Sub => zip(x, y, i64::wrapping_sub),
        BinOp::Mul => zip(x, y, i64::wrapping_mul),
        BinOp::Div | BinOp::Rem => {
            if y.contains(&0) {
                return Err(format!("integer division by zero ({})", d.name()));
            }
            if op == BinOp::Div {
                zip(x, y, i64::wrapping_div)
            } else {
                zip(x, y, i64::wrapping_rem)
            }
        }
        BinOp::And => zip(x, y, |a, b| a & b),
        BinOp::Or => zip(x, y, |a, b| a | b),
        BinOp::Xor => zip(x, y, |a, b| a ^ b),
        // Shift amounts outside 0..width clamp to the width, as PTX's shl/shr do.
        BinOp::Shl => zip(x, y, |a, s| if (0..bits).contains(&s) { a << s } else { 0 }),
        BinOp::Shr => zip(x, y, |a, s| a >> if (0..64).contains(&s) { s } else { 63 }),
        BinOp::Min => zip(x, y, i64::min),
        BinOp::Max => zip(x, y, i64::max),
    };
    wrap_ints(&mut v, d);
    Ok(v)
}

/// The float ops shared by f32 (and f16/bf16 before rounding) and f64.
trait Float: Copy + PartialOrd + std::ops::Neg<Output = Self> {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn div(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn min(self, o: Self) -> Self;
    fn max(self, o: Self) -> Self;
    fn unary(self, op: UnOp) -> Self;
}

macro_rules! impl_float {
    ($t:ty) => {
        impl Float for $t {
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            fn rem(self, o: Self) -> Self {
                self % o
            }
            // Rust's min/max drop a NaN operand, like fminf/fmaxf.
            fn min(self, o: Self) -> Self {
                <$t>::min(self, o)
            }
            fn max(self, o: Self) -> Self {
                <$t>::max(self, o)
            }
            fn unary(self, op: UnOp) -> Self {
                match op {
                    UnOp::Neg => -self,
                    UnOp::Abs => self.abs(),
                    UnOp::Exp => self.exp(),
                    UnOp::Exp2 => self.exp2(),
                    UnOp::Log => self.ln(),
                    UnOp::Sqrt => self.sqrt(),
                    UnOp::Sin => self.sin(),
                    UnOp::Cos => self.cos(),
                    UnOp::Not => unreachable!("rejected before"),
                }
            }
        }
    };
}

impl_float!(f32);
impl_float!(f64);

fn float_binary<T: Float>(op: BinOp, x: &[T], y: &[T]) -> Result<Vec<T>, String> {
    Ok(match op {
        BinOp::Add => zip(x, y, T::add),
        BinOp::Sub => zip(x, y, T::sub),
        BinOp::Mul => zip(x, y, T::mul),
        BinOp::Div => zip(x, y, T::div),
        BinOp::Rem => zip(x, y, T::rem),
        BinOp::Min => zip(x, y, T::min),
        BinOp::Max => zip(x, y, T::max),
        BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => {
            return Err(format!("{op:?} is not defined on floats"))
        }
    })
}

fn bool_binary(op: BinOp, x: &[bool], y: &[bool]) -> Result<Vec<bool>, String> {
    Ok(match op {
        BinOp::And | BinOp::Min => zip(x, y, |a, b| a & b),
        BinOp::Or | BinOp::Max => zip(x, y, |a, b| a | b),
        BinOp::Xor => zip(x, y, |a, b| a ^ b),
        _ => {
            return Err(format!(
                "{op:?} is not defined on i1 (cast to an int first)"
            ))
        }
    })
}

pub(crate) fn cmp(pred: CmpPred, a: &Tile, b: &Tile) -> Result<Data, String> {
    same_len(a, b, "comparison")?;
    let v = match (&a.data, &b.data) {
        (Data::Int(x), Data::Int(y)) => compare(pred, x, y),
        (Data::F32(x), Data::F32(y)) => compare(pred, x, y),
        (Data::F64(x), Data::F64(y)) => compare(pred, x, y),
        (Data::Bool(x), Data::Bool(y)) => compare(pred, x, y),
        (Data::Ptr(x), Data::Ptr(y)) => compare(pred, x, y),
        (x, y) => {
            return Err(format!(
                "comparison of {} and {} values",
                x.kind_name(),
                y.kind_name()
            ))
        }
    };
    Ok(Data::Bool(v))
}

/// Ordered comparisons: with a NaN operand every predicate but `Ne` is false (C).
fn compare<T: PartialOrd + Copy>(pred: CmpPred, x: &[T], y: &[T]) -> Vec<bool> {
    match pred {
        CmpPred::Lt => zip(x, y, |a, b| a < b),
        CmpPred::Le => zip(x, y, |a, b| a <= b),
        CmpPred::Gt => zip(x, y, |a, b| a > b),
        CmpPred::Ge => zip(x, y, |a, b| a >= b),
        CmpPred::Eq => zip(x, y, |a, b| a == b),
        CmpPred::Ne => zip(x, y, |a, b| a != b),
    }
}

pub(crate) fn unary(op: UnOp, a: &Tile) -> Result<Data, String> {
    let d = a.dtype();
    let float_only = !matches!(op, UnOp::Neg | UnOp::Not | UnOp::Abs);
    match &a.data {
        Data::Bool(x) if op == UnOp::Not => Ok(Data::Bool(x.iter().map(|b| !b).collect())),
        Data::Int(x) if !float_only => {
            let mut v: Vec<i64> = match op {
                UnOp::Neg => x.iter().map(|i| i.wrapping_neg()).collect(),
                UnOp::Abs => x.iter().map(|i| i.wrapping_abs()).collect(),
                _ => x.iter().map(|i| !i).collect(),
            };
            wrap_ints(&mut v, d);
            Ok(Data::Int(v))
        }
        Data::F32(x) if op != UnOp::Not => {
            let mut v: Vec<f32> = x.iter().map(|f| f.unary(op)).collect();
            round_f32s(&mut v, d);
            Ok(Data::F32(v))
        }
        Data::F64(x) if op != UnOp::Not => Ok(Data::F64(x.iter().map(|f| f.unary(op)).collect())),
        _ => Err(format!("{op:?} is not defined on {}", a.ty())),
    }
}

pub(crate) fn select(cond: &Tile, on_true: &Tile, on_false: &Tile) -> Result<Data, String> {
    same_len(on_true, on_false, "select")?;
    same_len(cond, on_true, "select")?;
    let Data::Bool(c) = &cond.data else {
        return Err(format!("select condition must be i1, not {}", cond.ty()));
    };
    fn pick<T: Copy>(c: &[bool], t: &[T], f: &[T]) -> Vec<T> {
        c.iter()
            .zip(t.iter().zip(f))
            .map(|(&c, (&t, &f))| if c { t } else { f })
            .collect()
    }
    Ok(match (&on_true.data, &on_false.data) {
        (Data::Bool(t), Data::Bool(f)) => Data::Bool(pick(c, t, f)),
        (Data::Int(t), Data::Int(f)) => Data::Int(pick(c, t, f)),
        (Data::F32(t), Data::F32(f)) => Data::F32(pick(c, t, f)),
        (Data::F64(t), Data::F64(f)) => Data::F64(pick(c, t, f)),
        (Data::Ptr(t), Data::Ptr(f)) => Data::Ptr(pick(c, t, f)),
        (t, f) => {
            return Err(format!(
                "select between {} and {} values",
                t.kind_name(),
                f.kind_name()
            ))
        }
    })
}
