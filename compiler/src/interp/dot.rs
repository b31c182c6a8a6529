//! `Dot`: `acc + a @ b`. f16/bf16/f32 inputs multiply and accumulate in f32
//! (products of halves are exact in f32), f64 in f64, ints in i64 wrapped to
//! the accumulator's width at the end (the same as wrapping at every step).

use super::value::{round_f32s, wrap_ints, Data, Tile};

pub(crate) fn dot(a: &Tile, b: &Tile, acc: &Tile) -> Result<Data, String> {
    let (&[m, k], &[k2, n], &[m2, n2]) =
        (a.shape.as_slice(), b.shape.as_slice(), acc.shape.as_slice())
    else {
        return Err(format!(
            "dot needs 2-D tiles, not {}, {} and {}",
            a.ty(),
            b.ty(),
            acc.ty()
        ));
    };
    if k != k2 || m != m2 || n != n2 {
        return Err(format!(
            "dot of {} @ {} into {}: the shapes do not fit",
            a.ty(),
            b.ty(),
            acc.ty()
        ));
    }
    let dims = Dims { m, k, n };
    Ok(match (&a.data, &b.data, &acc.data) {
        (Data::F32(x), Data::F32(y), Data::F32(c)) => {
            let mut out = dims.matmul(x, y, c.clone(), |a, b| a * b);
            round_f32s(&mut out, acc.dtype());
            Data::F32(out)
        }
        (Data::F64(x), Data::F64(y), Data::F64(c)) => {
            Data::F64(dims.matmul(x, y, c.clone(), |a, b| a * b))
        }
        (Data::Int(x), Data::Int(y), Data::Int(c)) => {
            let mut out = dims.matmul(x, y, c.clone(), i64::wrapping_mul);
            wrap_ints(&mut out, acc.dtype());
            Data::Int(out)
        }
        _ => {
            return Err(format!(
                "dot of {} @ {} into {}: element types do not fit",
                a.ty(),
                b.ty(),
                acc.ty()
            ))
        }
    })
}

struct Dims {
    m: usize,
    k: usize,
    n: usize,
}

trait Accumulate: Copy {
    fn accumulate(self, x: Self) -> Self;
}
impl Accumulate for f32 {
    fn accumulate(self, x: f32) -> f32 {
        self + x
    }
}
impl Accumulate for f64 {
    fn accumulate(self, x: f64) -> f64 {
        self + x
    }
}
impl Accumulate for i64 {
    fn accumulate(self, x: i64) -> i64 {
        self.wrapping_add(x)
    }
}

impl Dims {
    /// `c += a @ b`, looping i-k-j so the inner loop walks rows of `b` and `c`.
    fn matmul<T: Accumulate>(
        &self,
        a: &[T],
        b: &[T],
        mut c: Vec<T>,
        mul: impl Fn(T, T) -> T,
    ) -> Vec<T> {
        for i in 0..self.m {
            let c_row = &mut c[i * self.n..(i + 1) * self.n];
            for kk in 0..self.k {
                let aik = a[i * self.k + kk];
                let b_row = &b[kk * self.n..(kk + 1) * self.n];
                for (cij, &bkj) in c_row.iter_mut().zip(b_row) {
                    *cij = cij.accumulate(mul(aik, bkj));
                }
            }
        }
        c
    }
}
