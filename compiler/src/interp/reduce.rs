//! `Reduce`: sum, max or min along one axis, which disappears (a 1-D tile gives
//! a scalar). Float sums accumulate in f64 and round once to the element type,
//! a stand-in for the GPU's tree reduction that is at least as accurate. Max
//! and min follow `fmaxf`/`fminf` (NaN loses); int sums wrap to the width.

use super::value::{round_f32s, wrap_ints, Data, Tile};
use crate::ir::ReduceKind;

pub(crate) fn reduce(src: &Tile, axis: usize, kind: ReduceKind) -> Result<Data, String> {
    if axis >= src.shape.len() {
        return Err(format!("reduction along axis {axis} of {}", src.ty()));
    }
    let outer: usize = src.shape[..axis].iter().product();
    let len = src.shape[axis];
    let inner: usize = src.shape[axis + 1..].iter().product();
    let lanes = Lanes { outer, len, inner };
    let d = src.dtype();
    Ok(match &src.data {
        Data::F32(v) => {
            let mut out: Vec<f32> = match kind {
                ReduceKind::Sum => lanes
                    .fold(v, 0.0f64, |a, x| a + x as f64)
                    .into_iter()
                    .map(|s| s as f32)
                    .collect(),
                ReduceKind::Max => lanes.fold(v, f32::NEG_INFINITY, f32::max),
                ReduceKind::Min => lanes.fold(v, f32::INFINITY, f32::min),
            };
            round_f32s(&mut out, d);
            Data::F32(out)
        }
        Data::F64(v) => Data::F64(match kind {
            ReduceKind::Sum => lanes.fold(v, 0.0, |a, x| a + x),
            ReduceKind::Max => lanes.fold(v, f64::NEG_INFINITY, f64::max),
            ReduceKind::Min => lanes.fold(v, f64::INFINITY, f64::min),
        }),
        Data::Int(v) => {
            let mut out = match kind {
                ReduceKind::Sum => lanes.fold(v, 0i64, i64::wrapping_add),
                ReduceKind::Max => lanes.fold(v, i64::MIN, i64::max),
                ReduceKind::Min => lanes.fold(v, i64::MAX, i64::min),
            };
            // An empty axis leaves the i64 identities: clamp them to the width.
            wrap_ints(&mut out, d);
            Data::Int(out)
        }
        Data::Bool(v) if kind != ReduceKind::Sum => Data::Bool(match kind {
            ReduceKind::Max => lanes.fold(v, false, |a, x| a | x),
            _ => lanes.fold(v, true, |a, x| a & x),
        }),
        _ => return Err(format!("{kind:?} reduction of {}", src.ty())),
    })
}

/// A tile seen as `[outer, len, inner]`, reduced along `len`.
struct Lanes {
    outer: usize,
    len: usize,
    inner: usize,
}

impl Lanes {
    fn fold<T: Copy, A: Copy>(&self, v: &[T], init: A, f: impl Fn(A, T) -> A) -> Vec<A> {
        if self.inner == 1 {
            // Reducing the last axis: each output folds one contiguous run.
            return (0..self.outer)
                .map(|o| {
                    let mut a = init;
                    for &x in &v[o * self.len..(o + 1) * self.len] {
                        a = f(a, x);
                    }
                    a
                })
                .collect();
        }
        let mut out = vec![init; self.outer * self.inner];
        for o in 0..self.outer {
            let acc = &mut out[o * self.inner..(o + 1) * self.inner];
            for k in 0..self.len {
                let row = &v[(o * self.len + k) * self.inner..][..self.inner];
                for (a, &x) in acc.iter_mut().zip(row) {
                    *a = f(*a, x);
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DType, ScalarType};

    #[test]
    fn reduces_each_axis() {
        let t = Tile {
            scalar: ScalarType::Num(DType::I32),
            shape: vec![2, 3],
            data: Data::Int(vec![1, 5, 3, -4, 2, 6]),
        };
        assert_eq!(reduce(&t, 1, ReduceKind::Sum), Ok(Data::Int(vec![9, 4])));
        assert_eq!(reduce(&t, 0, ReduceKind::Max), Ok(Data::Int(vec![1, 5, 6])));
        assert_eq!(
            reduce(&t, 0, ReduceKind::Min),
            Ok(Data::Int(vec![-4, 2, 3]))
        );
        assert!(reduce(&t, 2, ReduceKind::Min).is_err());
    }

    #[test]
    fn float_max_ignores_nan() {
        let t = Tile {
            scalar: ScalarType::Num(DType::F32),
            shape: vec![3],
            data: Data::F32(vec![1.0, f32::NAN, -2.0]),
        };
        assert_eq!(reduce(&t, 0, ReduceKind::Max), Ok(Data::F32(vec![1.0])));
    }
}
