//! The lattice of axis facts: constructors, the meet used at control-flow
//! joins, and the arithmetic on divisibilities the transfer rules share.
//!
//! Meaning of the facts along axis `a` of a tile `X` (scalars have one axis of
//! size 1): split the indices along `a` into aligned chunks `[kC, (k+1)C)`.
//! - contiguity `C`: inside each chunk, `X[i + j e_a] = X[i] + j`;
//! - divisibility `D`: every chunk's first element (`i_a % C == 0`) is a
//!   multiple of `D` (bytes for pointers), at every index of the other axes;
//! - constancy `K`: inside each aligned chunk of `K`, elements are equal.

use super::AxisInfo;

/// Divisibilities are powers of two capped here (0 is divisible by anything).
pub const MAX_DIVISIBILITY: u64 = 1 << 31;

pub fn gcd(a: u64, b: u64) -> u64 {
    let (mut a, mut b) = (a, b);
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// The largest power of two dividing `v`, capped.
pub fn pow2_divisor(v: i64) -> u64 {
    if v == 0 {
        MAX_DIVISIBILITY
    } else {
        (1u64 << v.trailing_zeros().min(63)).min(MAX_DIVISIBILITY)
    }
}

/// `a * b` for divisibilities, capped.
pub fn mul_div(a: u64, b: u64) -> u64 {
    a.saturating_mul(b).min(MAX_DIVISIBILITY)
}

/// Divisibility at the starts of chunks of `c` for a value with chunks of
/// `contig` whose starts divide by `div`: a start `x0 + m*c mod contig` stays
/// a multiple of `gcd(div, gcd(c, contig))`, and of `div` itself when chunks
/// of `c` start where chunks of `contig` do.
pub fn div_at_chunks(div: u64, contig: u64, c: u64) -> u64 {
    if c % contig == 0 {
        div
    } else {
        gcd(div, gcd(c, contig))
    }
}

impl AxisInfo {
    /// Nothing known: every chunk has length 1 and every value divides by 1.
    pub fn unknown(axes: usize) -> Self {
        let axes = axes.max(1);
        AxisInfo {
            contiguity: vec![1; axes],
            divisibility: vec![1; axes],
            constancy: vec![1; axes],
            value: None,
        }
    }

    /// All elements equal (a scalar, a splat, a constant), each a multiple of `div`.
    pub fn uniform(shape: &[usize], div: u64, value: Option<i64>) -> Self {
        let dims: Vec<u64> = if shape.is_empty() {
            vec![1]
        } else {
            shape.iter().map(|&d| d as u64).collect()
        };
        AxisInfo {
            contiguity: vec![1; dims.len()],
            divisibility: vec![div.min(MAX_DIVISIBILITY); dims.len()],
            constancy: dims,
            value,
        }
    }

    pub fn axes(&self) -> usize {
        self.contiguity.len()
    }

    /// A divisibility that holds for every element (not only chunk starts):
    /// along an axis with contiguity 1 every element starts a chunk.
    pub fn element_divisibility(&self) -> u64 {
        (0..self.axes())
            .map(|a| div_at_chunks(self.divisibility[a], self.contiguity[a], 1))
            .max()
            .unwrap_or(1)
    }

    /// Facts true of both `self` and `other` (values at a control-flow join).
    pub fn meet(&self, other: &AxisInfo) -> AxisInfo {
        if self.axes() != other.axes() {
            return AxisInfo::unknown(self.axes());
        }
        let n = self.axes();
        let mut out = AxisInfo::unknown(n);
        for a in 0..n {
            let c = gcd(self.contiguity[a], other.contiguity[a]);
            out.contiguity[a] = c;
            out.divisibility[a] = gcd(
                div_at_chunks(self.divisibility[a], self.contiguity[a], c),
                div_at_chunks(other.divisibility[a], other.contiguity[a], c),
            );
            out.constancy[a] = gcd(self.constancy[a], other.constancy[a]);
        }
        out.value = if self.value == other.value {
            self.value
        } else {
            None
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divisors() {
        assert_eq!(pow2_divisor(0), MAX_DIVISIBILITY);
        assert_eq!(pow2_divisor(24), 8);
        assert_eq!(pow2_divisor(-16), 16);
        assert_eq!(pow2_divisor(7), 1);
        assert_eq!(mul_div(1 << 20, 1 << 20), MAX_DIVISIBILITY);
        assert_eq!(div_at_chunks(1024, 1024, 16), 16);
        assert_eq!(div_at_chunks(1024, 1024, 2048), 1024);
        assert_eq!(div_at_chunks(8, 1, 4), 8);
        assert_eq!(div_at_chunks(1024, 128, 1), 1);
    }

    #[test]
    fn meet_keeps_common_facts() {
        let range = AxisInfo {
            contiguity: vec![128],
            divisibility: vec![128],
            constancy: vec![1],
            value: None,
        };
        let shifted = AxisInfo {
            contiguity: vec![64],
            divisibility: vec![64],
            constancy: vec![1],
            value: None,
        };
        let m = range.meet(&shifted);
        assert_eq!(m.contiguity, vec![64]);
        assert_eq!(m.divisibility, vec![64]);
        let c = AxisInfo::uniform(&[128], 16, Some(16));
        let m = c.meet(&AxisInfo::uniform(&[128], 4, Some(4)));
        assert_eq!((m.divisibility[0], m.constancy[0], m.value), (4, 128, None));
    }
}
