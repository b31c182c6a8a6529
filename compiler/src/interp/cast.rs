//! `Cast`: element-wise conversion to another element type, same shape.
//! int→int sign-extends or truncates; float→int truncates toward zero (out of
//! range saturates and NaN gives 0, as PTX's `cvt.rzi` does); `i1`→number is
//! 0/1; number→`i1` is `!= 0`; float→float rounds to nearest even once;
//! pointer→pointer keeps the address (pointer↔int also keeps it).

use super::value::{round_f32s, round_f64, wrap_int, Data, Tile};
use crate::ir::{DType, ScalarType};

pub(crate) fn cast(src: &Tile, dst: ScalarType) -> Result<Data, String> {
    let d = dst.dtype();
    let fail = || Err(format!("cannot cast {} to {dst}", src.ty()));
    if let ScalarType::Ptr(_) = dst {
        return match &src.data {
            Data::Ptr(p) => Ok(Data::Ptr(p.clone())),
            Data::Int(v) => Ok(Data::Ptr(v.iter().map(|&i| i as u64).collect())),
            _ => fail(),
        };
    }
    Ok(match &src.data {
        Data::Ptr(p) if d.is_int() && d != DType::I1 => {
            Data::Int(p.iter().map(|&a| wrap_int(a as i64, d)).collect())
        }
        Data::Ptr(_) => return fail(),
        Data::Bool(b) => from_ints(b.iter().map(|&x| x as i64), d),
        Data::Int(v) => from_ints(v.iter().copied(), d),
        Data::F32(v) => match d {
            DType::I1 => Data::Bool(v.iter().map(|&x| x != 0.0).collect()),
            DType::F64 => Data::F64(v.iter().map(|&x| x as f64).collect()),
            DType::F16 | DType::BF16 | DType::F32 => {
                let mut out = v.clone();
                round_f32s(&mut out, d);
                Data::F32(out)
            }
            _ => Data::Int(v.iter().map(|&x| float_to_int(x as f64, d)).collect()),
        },
        Data::F64(v) => match d {
            DType::I1 => Data::Bool(v.iter().map(|&x| x != 0.0).collect()),
            DType::F64 => Data::F64(v.clone()),
            DType::F16 | DType::BF16 | DType::F32 => {
                Data::F32(v.iter().map(|&x| round_f64(x, d) as f32).collect())
            }
            _ => Data::Int(v.iter().map(|&x| float_to_int(x, d)).collect()),
        },
    })
}

fn from_ints(v: impl Iterator<Item = i64>, d: DType) -> Data {
    match d {
        DType::I1 => Data::Bool(v.map(|x| x != 0).collect()),
        DType::F32 => Data::F32(v.map(|x| x as f32).collect()),
        DType::F16 | DType::BF16 => Data::F32(v.map(|x| round_f64(x as f64, d) as f32).collect()),
        DType::F64 => Data::F64(v.map(|x| x as f64).collect()),
        _ => Data::Int(v.map(|x| wrap_int(x, d)).collect()),
    }
}

/// Truncates toward zero, saturating to the range of `d`; NaN gives 0.
fn float_to_int(x: f64, d: DType) -> i64 {
    let bits = d.bits();
    let (lo, hi) = if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    // `as` truncates, saturates at the i64 range and maps NaN to 0.
    (x as i64).clamp(lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(scalar: DType, data: Data) -> Tile {
        Tile {
            scalar: ScalarType::Num(scalar),
            shape: vec![data.len()],
            data,
        }
    }

    #[test]
    fn float_to_int_truncates_and_saturates() {
        let t = tile(
            DType::F32,
            Data::F32(vec![-2.7, 2.7, 1e10, f32::NAN, -1e10]),
        );
        let got = cast(&t, ScalarType::Num(DType::I32)).unwrap();
        assert_eq!(
            got,
            Data::Int(vec![-2, 2, i32::MAX as i64, 0, i32::MIN as i64])
        );
        let got = cast(&t, ScalarType::Num(DType::I8)).unwrap();
        assert_eq!(got, Data::Int(vec![-2, 2, 127, 0, -128]));
    }

    #[test]
    fn int_casts_wrap_and_bools_are_01() {
        let t = tile(DType::I32, Data::Int(vec![300, -1, 0]));
        assert_eq!(
            cast(&t, ScalarType::Num(DType::I8)).unwrap(),
            Data::Int(vec![44, -1, 0])
        );
        assert_eq!(
            cast(&t, ScalarType::Num(DType::I1)).unwrap(),
            Data::Bool(vec![true, true, false])
        );
        let b = tile(DType::I1, Data::Bool(vec![true, false]));
        assert_eq!(
            cast(&b, ScalarType::Num(DType::F32)).unwrap(),
            Data::F32(vec![1.0, 0.0])
        );
    }

    #[test]
    fn float_casts_round_once() {
        // 1 + 2^-11 + 2^-30 is just above the f16 halfway point: rounds up.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-30);
        let t = tile(DType::F64, Data::F64(vec![x]));
        let Data::F32(v) = cast(&t, ScalarType::Num(DType::F16)).unwrap() else {
            panic!("f16 is stored as f32")
        };
        assert_eq!(v[0], 1.0 + 2f32.powi(-10));
    }
}
