//! Transfer rules: the facts of an op's result from the facts of its operands.
//! Ops with regions (`If`, `While`) are handled by the solver in `mod.rs`.

use super::facts::{div_at_chunks, gcd, mul_div, pow2_divisor, MAX_DIVISIBILITY};
use super::AxisInfo;
use crate::ir::{BinOp, CmpPred, Const, DType, OpKind, ScalarType, Type, UnOp, ValueId};

/// What the rules read: operand facts and types.
pub trait Facts {
    fn info(&self, v: ValueId) -> AxisInfo;
    fn ty(&self, v: ValueId) -> Option<&Type>;
}

/// Facts of the single result of `kind` (of type `result`).
pub fn transfer(kind: &OpKind, result: &Type, f: &impl Facts) -> AxisInfo {
    let shape = &result.shape;
    let unknown = AxisInfo::unknown(shape.len());
    match kind {
        OpKind::Constant { value } => match value {
            Const::Int(v) => AxisInfo::uniform(shape, pow2_divisor(*v), Some(*v)),
            Const::Bool(b) => AxisInfo::uniform(shape, 1, Some(*b as i64)),
            Const::Float(_) => AxisInfo::uniform(shape, 1, None),
        },
        OpKind::MakeRange { start, end } => {
            let len = end.saturating_sub(*start).max(1) as u64;
            AxisInfo {
                contiguity: vec![len],
                divisibility: vec![pow2_divisor(*start)],
                constancy: vec![1],
                value: None,
            }
        }
        OpKind::Splat { src } => {
            let s = f.info(*src);
            AxisInfo::uniform(shape, s.divisibility[0], s.value)
        }
        OpKind::Broadcast { src } => broadcast(&f.info(*src), f.ty(*src), shape),
        OpKind::Reshape { src } => reshape(&f.info(*src), f.ty(*src), shape),
        OpKind::ConvertLayout { src } => f.info(*src),
        OpKind::Trans { src } => {
            let mut s = f.info(*src);
            s.contiguity.reverse();
            s.divisibility.reverse();
            s.constancy.reverse();
            s
        }
        OpKind::Binary { op, lhs, rhs } => {
            let int = result.scalar.dtype().is_int();
            binary(*op, &f.info(*lhs), &f.info(*rhs), int, shape)
        }
        OpKind::Cmp { pred, lhs, rhs } => cmp(*pred, &f.info(*lhs), &f.info(*rhs)),
        OpKind::Unary { op, src } => unary(*op, &f.info(*src), result),
        OpKind::Cast { src } => match f.ty(*src) {
            Some(from) => cast(&f.info(*src), from, result),
            None => unknown,
        },
        OpKind::AddPtr { ptr, offset } => {
            let elem = result.scalar.dtype().size_bytes() as u64;
            add_ptr(&f.info(*ptr), &f.info(*offset), elem)
        }
        OpKind::Select {
            cond,
            on_true,
            on_false,
        } => {
            let (c, t, e) = (f.info(*cond), f.info(*on_true), f.info(*on_false));
            let mut out = AxisInfo::unknown(t.axes());
            let div = gcd(t.element_divisibility(), e.element_divisibility());
            for a in 0..out.axes().min(c.axes()).min(e.axes()) {
                out.constancy[a] = gcd(c.constancy[a], gcd(t.constancy[a], e.constancy[a]));
                out.divisibility[a] = div;
            }
            out
        }
        OpKind::Reduce { src, axis, .. } => {
            let s = f.info(*src);
            let mut out = AxisInfo::unknown(shape.len());
            let div = if result.scalar.dtype().is_int() {
                s.element_divisibility()
            } else {
                1
            };
            // Rows that are equal reduce to equal values; sums, maxima and
            // minima of multiples of `div` are multiples of `div`.
            let kept: Vec<usize> = (0..s.axes()).filter(|a| a != axis).collect();
            for (o, &a) in kept.iter().enumerate().take(out.axes()) {
                out.constancy[o] = s.constancy[a];
            }
            out.divisibility.iter_mut().for_each(|d| *d = div);
            out
        }
        // Program ids, loaded values, dot results, atomics: nothing known.
        _ => unknown,
    }
}

fn broadcast(s: &AxisInfo, from: Option<&Type>, to: &[usize]) -> AxisInfo {
    let Some(from) = from else {
        return AxisInfo::unknown(to.len());
    };
    if from.shape.len() != to.len() || s.axes() != to.len() {
        return AxisInfo::unknown(to.len());
    }
    let mut out = s.clone();
    for (a, (&f, &t)) in from.shape.iter().zip(to).enumerate() {
        if f == 1 && t != 1 {
            // Each element of the size-1 axis repeats: one chunk-start per
            // element (contiguity 1), all equal along the axis.
            out.contiguity[a] = 1;
            out.constancy[a] = t as u64;
            out.divisibility[a] = div_at_chunks(s.divisibility[a], s.contiguity[a], 1);
        }
    }
    out
}

fn reshape(s: &AxisInfo, from: Option<&Type>, to: &[usize]) -> AxisInfo {
    let Some(from) = from else {
        return AxisInfo::unknown(to.len());
    };
    let non_unit =
        |shape: &[usize]| -> Vec<usize> { (0..shape.len()).filter(|&a| shape[a] != 1).collect() };
    let (src_axes, dst_axes) = (non_unit(&from.shape), non_unit(to));
    let same_dims = src_axes.len() == dst_axes.len()
        && src_axes
            .iter()
            .zip(&dst_axes)
            .all(|(&a, &b)| from.shape[a] == to[b]);
    let elem_div = s.element_divisibility();
    if same_dims {
        // Only axes of size 1 come or go: the others keep their facts.
        let mut out = AxisInfo::unknown(to.len());
        out.value = s.value;
        for a in 0..out.axes() {
            out.divisibility[a] = elem_div;
        }
        for (&sa, &da) in src_axes.iter().zip(&dst_axes) {
            if sa < s.axes() {
                out.contiguity[da] = s.contiguity[sa];
                out.divisibility[da] = s.divisibility[sa];
                out.constancy[da] = s.constancy[sa];
            }
        }
        return out;
    }
    let all_equal = from
        .shape
        .iter()
        .enumerate()
        .all(|(a, &d)| s.constancy.get(a).copied().unwrap_or(1) >= d as u64);
    if all_equal {
        return AxisInfo::uniform(to, elem_div, s.value);
    }
    let mut out = AxisInfo::unknown(to.len());
    out.divisibility.iter_mut().for_each(|d| *d = elem_div);
    out
}

/// Known value of both operands folded, when the op is simple integer math.
fn fold(op: BinOp, l: i64, r: i64) -> Option<i64> {
    Some(match op {
        BinOp::Add => l.wrapping_add(r),
        BinOp::Sub => l.wrapping_sub(r),
        BinOp::Mul => l.wrapping_mul(r),
        BinOp::Div if r != 0 => l.wrapping_div(r),
        BinOp::Rem if r != 0 => l.wrapping_rem(r),
        BinOp::Shl if (0..64).contains(&r) => l.wrapping_shl(r as u32),
        BinOp::Shr if (0..64).contains(&r) => l.wrapping_shr(r as u32),
        BinOp::Min => l.min(r),
        BinOp::Max => l.max(r),
        BinOp::And => l & r,
        BinOp::Or => l | r,
        BinOp::Xor => l ^ r,
        _ => return None,
    })
}

fn binary(op: BinOp, l: &AxisInfo, r: &AxisInfo, int: bool, shape: &[usize]) -> AxisInfo {
    let n = l.axes();
    if r.axes() != n {
        return AxisInfo::unknown(n);
    }
    if !int {
        // Floats: only equal runs survive.
        let mut out = AxisInfo::unknown(n);
        for a in 0..n {
            out.constancy[a] = gcd(l.constancy[a], r.constancy[a]);
        }
        return out;
    }
    if let (Some(a), Some(b)) = (l.value, r.value) {
        if let Some(v) = fold(op, a, b) {
            return AxisInfo::uniform(shape, pow2_divisor(v), Some(v));
        }
    }
    // x * 1, x / 1, x + 0, x - 0 are x.
    match (op, r.value) {
        (BinOp::Mul | BinOp::Div, Some(1)) | (BinOp::Add | BinOp::Sub, Some(0)) => {
            return l.clone()
        }
        _ => {}
    }
    match (op, l.value) {
        (BinOp::Mul, Some(1)) | (BinOp::Add, Some(0)) => return r.clone(),
        _ => {}
    }
    let mut out = AxisInfo::unknown(n);
    for a in 0..n {
        out.constancy[a] = gcd(l.constancy[a], r.constancy[a]);
    }
    let (el, er) = (l.element_divisibility(), r.element_divisibility());
    match op {
        BinOp::Add | BinOp::Sub => {
            for a in 0..n {
                // A run of consecutive values plus (or minus) a run of equal
                // ones stays consecutive; equal minus consecutive does not.
                let mut c = gcd(l.contiguity[a], r.constancy[a]);
                if op == BinOp::Add {
                    c = c.max(gcd(l.constancy[a], r.contiguity[a]));
                }
                out.contiguity[a] = c;
                out.divisibility[a] = gcd(
                    div_at_chunks(l.divisibility[a], l.contiguity[a], c),
                    div_at_chunks(r.divisibility[a], r.contiguity[a], c),
                );
            }
        }
        BinOp::Mul => set_div(&mut out, mul_div(el, er)),
        BinOp::Div => {
            // Exact division of a multiple of `el` by a power of two dividing it.
            let d = match r.value {
                Some(c) if c > 0 && el % (c as u64) == 0 => el / c as u64,
                _ => 1,
            };
            set_div(&mut out, d);
        }
        // x % y = x - q*y, x - y, min and max all keep common divisors.
        BinOp::Rem | BinOp::Min | BinOp::Max => set_div(&mut out, gcd(el, er)),
        BinOp::Shl => {
            let d = match r.value {
                Some(s) if (0..32).contains(&s) => mul_div(el, 1 << s),
                _ => el,
            };
            set_div(&mut out, d);
        }
        BinOp::Shr => {
            let d = match r.value {
                Some(s) if (0..64).contains(&s) => (el >> s).max(1),
                _ => 1,
            };
            set_div(&mut out, d);
        }
        BinOp::And | BinOp::Or | BinOp::Xor => {}
    }
    out
}

fn set_div(out: &mut AxisInfo, d: u64) {
    out.divisibility
        .iter_mut()
        .for_each(|x| *x = d.min(MAX_DIVISIBILITY));
}

fn cmp(pred: CmpPred, l: &AxisInfo, r: &AxisInfo) -> AxisInfo {
    let n = l.axes();
    let mut out = AxisInfo::unknown(n);
    if r.axes() != n {
        return out;
    }
    for a in 0..n {
        let mut k = gcd(l.constancy[a], r.constancy[a]);
        // `x < N` with x consecutive from a multiple of g and N a multiple of
        // g, constant over the chunk: all g lanes agree. `<=`/`>` need the
        // consecutive run on the right (`N <= x`, `N > x`).
        let run_and_bound = match pred {
            CmpPred::Lt | CmpPred::Ge => Some((l, r)),
            CmpPred::Le | CmpPred::Gt => Some((r, l)),
            CmpPred::Eq | CmpPred::Ne => None,
        };
        if let Some((run, bound)) = run_and_bound {
            let g = gcd(run.contiguity[a], bound.constancy[a]);
            let g = gcd(
                g,
                gcd(
                    div_at_chunks(run.divisibility[a], run.contiguity[a], g),
                    bound.element_divisibility(),
                ),
            );
            k = k.max(g);
        }
        out.constancy[a] = k;
    }
    if let (Some(x), Some(y)) = (l.value, r.value) {
        let v = match pred {
            CmpPred::Lt => x < y,
            CmpPred::Le => x <= y,
            CmpPred::Gt => x > y,
            CmpPred::Ge => x >= y,
            CmpPred::Eq => x == y,
            CmpPred::Ne => x != y,
        };
        out.value = Some(v as i64);
    }
    out
}

fn unary(op: UnOp, s: &AxisInfo, result: &Type) -> AxisInfo {
    let mut out = AxisInfo::unknown(s.axes());
    out.constancy = s.constancy.clone();
    if result.scalar.dtype().is_int() && matches!(op, UnOp::Neg | UnOp::Abs) {
        set_div(&mut out, s.element_divisibility());
        out.value = s.value.map(|v| match op {
            UnOp::Neg => v.wrapping_neg(),
            _ => v.wrapping_abs(),
        });
    }
    out
}

fn cast(s: &AxisInfo, from: &Type, to: &Type) -> AxisInfo {
    let mut out = AxisInfo::unknown(s.axes());
    out.constancy = s.constancy.clone();
    match (from.scalar, to.scalar) {
        (ScalarType::Ptr(a), ScalarType::Ptr(b)) => {
            out.divisibility = s.divisibility.clone();
            if a.size_bytes() == b.size_bytes() {
                out.contiguity = s.contiguity.clone();
            } else {
                set_div(&mut out, s.element_divisibility());
            }
        }
        (ScalarType::Num(a), ScalarType::Num(b))
            if a.is_int() && b.is_int() && a != DType::I1 && b != DType::I1 =>
        {
            if b.bits() >= a.bits() {
                // Sign extension keeps every value.
                return s.clone();
            }
            let cap = 1u64 << (b.bits() - 1);
            set_div(&mut out, s.element_divisibility().min(cap));
        }
        _ => {}
    }
    out
}

fn add_ptr(p: &AxisInfo, o: &AxisInfo, elem_bytes: u64) -> AxisInfo {
    let n = p.axes();
    if o.axes() != n {
        return AxisInfo::unknown(n);
    }
    let mut out = AxisInfo::unknown(n);
    for a in 0..n {
        let c = gcd(p.contiguity[a], o.constancy[a]).max(gcd(p.constancy[a], o.contiguity[a]));
        out.contiguity[a] = c;
        out.constancy[a] = gcd(p.constancy[a], o.constancy[a]);
        out.divisibility[a] = gcd(
            div_at_chunks(p.divisibility[a], p.contiguity[a], c),
            mul_div(
                div_at_chunks(o.divisibility[a], o.contiguity[a], c),
                elem_bytes,
            ),
        );
    }
    out
}
