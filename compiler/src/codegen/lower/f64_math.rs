//! float64 `exp`, `exp2` and `log` in software: PTX has no f64
//! transcendentals (`ex2.approx` and `lg2.approx` are f32), and a float64
//! kernel (a `gradcheck` in double) needs them to double precision. The
//! classic reductions (fdlibm's): `exp` splits `x = k ln 2 + r` with
//! `|r| <= ln 2 / 2` (ln 2 in two parts, so `k ln 2` is exact), sums the
//! Taylor series of `e^r` to `r^13` (the next term is below 2^-57 of the
//! result) and scales by `2^k` in two steps (subnormal results too); `log`
//! splits `x = m 2^e` with `m` in `[sqrt(1/2), sqrt(2))` and sums
//! `log m = 2 atanh(s)`, `s = f / (2 + f)`, `f = m - 1`, to `s^21`, adding
//! the exact `f` last. All three are within 1 unit in the last place of
//! torch's float64 on an H100 (`scripts/gpu/f64_math_check.py`); infinities, zeros, NaN and
//! out-of-range inputs give what C's `exp` and `log` give.
use super::{Lowering, Result};
use inkwell::values::{FloatValue, IntValue};
use inkwell::FloatPredicate;

/// ln 2 in two parts: `HI` has its low 32 bits zero, so `k * HI` is exact
/// for any exponent `k`.
const LN2_HI: f64 = 6.931_471_803_691_238_164_9e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;

/// `e^x`.
pub fn exp<'ctx>(lw: &Lowering<'_, 'ctx>, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
    let b = &lw.builder;
    // NaN and the inputs past the range are settled at the end; the
    // reduction runs on a finite stand-in.
    let finite = in_range(lw, x, -746.0, 710.0)?;
    let xs = b
        .build_select(finite, x, c(lw, 0.0), "")?
        .into_float_value();
    let k = rint(
        lw,
        b.build_float_mul(xs, c(lw, std::f64::consts::LOG2_E), "")?,
    )?;
    let neg_k = b.build_float_neg(k, "")?;
    let r = fma(lw, neg_k, c(lw, LN2_HI), xs)?;
    let r = fma(lw, neg_k, c(lw, LN2_LO), r)?;
    let y = scale(lw, exp_reduced(lw, r)?, to_int(lw, k)?)?;
    settle(lw, x, y, (-745.2, 709.79))
}

/// `2^x`.
pub fn exp2<'ctx>(lw: &Lowering<'_, 'ctx>, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
    let b = &lw.builder;
    let finite = in_range(lw, x, -1076.0, 1025.0)?;
    let xs = b
        .build_select(finite, x, c(lw, 0.0), "")?
        .into_float_value();
    let k = rint(lw, xs)?;
    // `xs - k` is exact; times ln 2 in two parts.
    let f = b.build_float_sub(xs, k, "")?;
    let r = fma(
        lw,
        f,
        c(lw, LN2_HI),
        b.build_float_mul(f, c(lw, LN2_LO), "")?,
    )?;
    let y = scale(lw, exp_reduced(lw, r)?, to_int(lw, k)?)?;
    settle(lw, x, y, (-1075.0, 1024.0))
}

/// `log(x)`.
pub fn log<'ctx>(lw: &Lowering<'_, 'ctx>, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
    let b = &lw.builder;
    let (i64t, f64t) = (lw.ctx.i64_type(), lw.ctx.f64_type());
    // Subnormals scaled into the normal range first (2^54, then e - 54).
    let tiny = b.build_float_compare(FloatPredicate::OLT, x, c(lw, f64::MIN_POSITIVE), "")?;
    let scaled = b.build_float_mul(x, c(lw, 2f64.powi(54)), "")?;
    let xs = b.build_select(tiny, scaled, x, "")?.into_float_value();
    let bits = b.build_bit_cast(xs, i64t, "")?.into_int_value();
    let biased = b.build_right_shift(bits, i64t.const_int(52, false), false, "")?;
    let biased = b.build_and(biased, i64t.const_int(0x7ff, false), "")?;
    let bias = b
        .build_select(
            tiny,
            i64t.const_int(1023 + 54, false),
            i64t.const_int(1023, false),
            "",
        )?
        .into_int_value();
    let e = b.build_int_sub(biased, bias, "")?;
    // m in [1, 2): the mantissa under a zero exponent.
    let frac = b.build_and(bits, i64t.const_int((1u64 << 52) - 1, false), "")?;
    let one_bits = i64t.const_int(1.0f64.to_bits(), false);
    let m = b.build_or(frac, one_bits, "")?;
    let m = b.build_bit_cast(m, f64t, "")?.into_float_value();
    // m in [sqrt(1/2), sqrt(2)).
    let big = b.build_float_compare(FloatPredicate::OGT, m, c(lw, std::f64::consts::SQRT_2), "")?;
    let half_m = b.build_float_mul(m, c(lw, 0.5), "")?;
    let m = b.build_select(big, half_m, m, "")?.into_float_value();
    let e1 = b.build_int_add(e, i64t.const_int(1, false), "")?;
    let e = b.build_select(big, e1, e, "")?.into_int_value();
    // log m = log(1 + f) = 2 atanh(s), s = f / (2 + f): written as
    // f - (f^2/2 - s (f^2/2 + R)) with R = 2 s^4/3 + 2 s^6/5 + ... (the
    // exact f = m - 1 added last, so rounding stays in the small terms).
    let f = b.build_float_sub(m, c(lw, 1.0), "")?;
    let s = b.build_float_div(f, b.build_float_add(f, c(lw, 2.0), "")?, "")?;
    let z = b.build_float_mul(s, s, "")?;
    let mut p = c(lw, 2.0 / 21.0);
    for n in (1..10).rev() {
        p = fma(lw, p, z, c(lw, 2.0 / (2 * n + 1) as f64))?;
    }
    let r = b.build_float_mul(z, p, "")?;
    let hfsq = b.build_float_mul(b.build_float_mul(f, f, "")?, c(lw, 0.5), "")?;
    let ef = b.build_signed_int_to_float(e, f64t, "")?;
    let small = fma(
        lw,
        s,
        b.build_float_add(hfsq, r, "")?,
        b.build_float_mul(ef, c(lw, LN2_LO), "")?,
    )?;
    let tail = b.build_float_sub(b.build_float_sub(hfsq, small, "")?, f, "")?;
    let y = b.build_float_sub(b.build_float_mul(ef, c(lw, LN2_HI), "")?, tail, "")?;
    // log(0) = -inf, log(x < 0) = NaN, log(inf) = inf, NaN stays.
    let zero = b.build_float_compare(FloatPredicate::OEQ, x, c(lw, 0.0), "")?;
    let neg = b.build_float_compare(FloatPredicate::OLT, x, c(lw, 0.0), "")?;
    let inf = b.build_float_compare(FloatPredicate::OEQ, x, c(lw, f64::INFINITY), "")?;
    let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
    let y = b.build_select(inf, x, y, "")?.into_float_value();
    let y = b
        .build_select(zero, c(lw, f64::NEG_INFINITY), y, "")?
        .into_float_value();
    let y = b
        .build_select(neg, c(lw, f64::NAN), y, "")?
        .into_float_value();
    Ok(b.build_select(nan, x, y, "")?.into_float_value())
}

/// `e^r` for `|r| <= ln 2 / 2`: the Taylor series to `r^13`, Horner's rule.
fn exp_reduced<'ctx>(lw: &Lowering<'_, 'ctx>, r: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
    let factorial = |n: u32| (1..=n).map(f64::from).product::<f64>();
    let mut p = c(lw, 1.0 / factorial(13));
    for n in (0..13).rev() {
        p = fma(lw, p, r, c(lw, 1.0 / factorial(n)))?;
    }
    Ok(p)
}

/// `p * 2^k` for `k` in `[-1100, 1100]`, in two steps so that neither
/// power of two leaves the normal range (a subnormal result rounds once).
fn scale<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    p: FloatValue<'ctx>,
    k: IntValue<'ctx>,
) -> Result<FloatValue<'ctx>> {
    let b = &lw.builder;
    let i64t = lw.ctx.i64_type();
    let half = b.build_right_shift(k, i64t.const_int(1, false), true, "")?;
    let rest = b.build_int_sub(k, half, "")?;
    let pow2 = |e: IntValue<'ctx>| -> Result<FloatValue<'ctx>> {
        let biased = b.build_int_add(e, i64t.const_int(1023, false), "")?;
        let bits = b.build_left_shift(biased, i64t.const_int(52, false), "")?;
        Ok(b.build_bit_cast(bits, lw.ctx.f64_type(), "")?
            .into_float_value())
    };
    let y = b.build_float_mul(p, pow2(half)?, "")?;
    Ok(b.build_float_mul(y, pow2(rest)?, "")?)
}

/// Whether `lo < x < hi` (false for NaN).
fn in_range<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    x: FloatValue<'ctx>,
    lo: f64,
    hi: f64,
) -> Result<IntValue<'ctx>> {
    let b = &lw.builder;
    let above = b.build_float_compare(FloatPredicate::OGT, x, c(lw, lo), "")?;
    let below = b.build_float_compare(FloatPredicate::OLT, x, c(lw, hi), "")?;
    Ok(b.build_and(above, below, "")?)
}

/// `y`, or what the function gives where `x` is NaN (NaN), below `under`
/// (0) or above `over` (infinity).
fn settle<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    x: FloatValue<'ctx>,
    y: FloatValue<'ctx>,
    (under, over): (f64, f64),
) -> Result<FloatValue<'ctx>> {
    let b = &lw.builder;
    let low = b.build_float_compare(FloatPredicate::OLT, x, c(lw, under), "")?;
    let high = b.build_float_compare(FloatPredicate::OGT, x, c(lw, over), "")?;
    let nan = b.build_float_compare(FloatPredicate::UNO, x, x, "")?;
    let y = b.build_select(low, c(lw, 0.0), y, "")?.into_float_value();
    let y = b
        .build_select(high, c(lw, f64::INFINITY), y, "")?
        .into_float_value();
    Ok(b.build_select(nan, x, y, "")?.into_float_value())
}

fn c<'ctx>(lw: &Lowering<'_, 'ctx>, v: f64) -> FloatValue<'ctx> {
    lw.ctx.f64_type().const_float(v)
}

fn fma<'ctx>(
    lw: &Lowering<'_, 'ctx>,
    a: FloatValue<'ctx>,
    b: FloatValue<'ctx>,
    addend: FloatValue<'ctx>,
) -> Result<FloatValue<'ctx>> {
    let t = lw.ctx.f64_type();
    Ok(lw
        .call_value(
            "llvm.fma.f64",
            t.into(),
            &[a.into(), b.into(), addend.into()],
        )?
        .into_float_value())
}

/// Round to the nearest integer, ties to even (`cvt.rni.f64.f64`).
fn rint<'ctx>(lw: &Lowering<'_, 'ctx>, x: FloatValue<'ctx>) -> Result<FloatValue<'ctx>> {
    let t = lw.ctx.f64_type();
    Ok(lw
        .call_value("llvm.rint.f64", t.into(), &[x.into()])?
        .into_float_value())
}

/// An integral f64 in `[-1100, 1100]` as i64.
fn to_int<'ctx>(lw: &Lowering<'_, 'ctx>, k: FloatValue<'ctx>) -> Result<IntValue<'ctx>> {
    let i64t = lw.ctx.i64_type();
    Ok(lw.builder.build_float_to_signed_int(k, i64t, "")?)
}
