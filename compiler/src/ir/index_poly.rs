//! Integer polynomials over a tile's indices and scalar values: the closed
//! form of index and pointer-offset arithmetic (`pm * TM + 0 ... TM`,
//! `rm[:, newaxis] * lda + rk[newaxis, :]`), so two expressions can be
//! compared term by term ([`crate::analysis::tensor_tile`]).
use crate::ir::ValueId;
use std::collections::BTreeMap;

/// A variable of a [`Poly`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Atom {
    /// The element's index along this axis of the tile.
    Axis(usize),
    /// A scalar value the analysis does not look into (a parameter, a
    /// quotient, a loop-carried scalar).
    Value(ValueId),
}

/// A product of atoms (sorted, repeats allowed).
pub type Monomial = Vec<Atom>;

/// `sum(coefficient * monomial)`; no zero coefficients are stored, so equal
/// polynomials compare equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Poly {
    terms: BTreeMap<Monomial, i64>,
}

impl Poly {
    pub fn constant(c: i64) -> Poly {
        Poly::default().plus_term(Vec::new(), c)
    }

    pub fn atom(a: Atom) -> Poly {
        Poly::default().plus_term(vec![a], 1)
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn terms(&self) -> impl Iterator<Item = (&Monomial, i64)> {
        self.terms.iter().map(|(m, &c)| (m, c))
    }

    /// `self / d` when every coefficient is a multiple of `d` (then the
    /// value is one, whatever the atoms are).
    pub fn exact_div(&self, d: i64) -> Option<Poly> {
        if d == 0 || self.terms.values().any(|c| c % d != 0) {
            return None;
        }
        Some(Poly {
            terms: self.terms.iter().map(|(m, c)| (m.clone(), c / d)).collect(),
        })
    }

    /// Every atom the polynomial mentions.
    pub fn atoms(&self) -> impl Iterator<Item = Atom> + '_ {
        self.terms.keys().flatten().copied()
    }

    fn plus_term(mut self, m: Monomial, c: i64) -> Poly {
        let sum = self.terms.get(&m).copied().unwrap_or(0).wrapping_add(c);
        if sum == 0 {
            self.terms.remove(&m);
        } else {
            self.terms.insert(m, sum);
        }
        self
    }

    pub fn add(&self, other: &Poly) -> Poly {
        other
            .terms
            .iter()
            .fold(self.clone(), |p, (m, &c)| p.plus_term(m.clone(), c))
    }

    pub fn sub(&self, other: &Poly) -> Poly {
        self.add(&other.scale(-1))
    }

    pub fn scale(&self, k: i64) -> Poly {
        self.terms.iter().fold(Poly::default(), |p, (m, &c)| {
            p.plus_term(m.clone(), c.wrapping_mul(k))
        })
    }

    pub fn mul(&self, other: &Poly) -> Poly {
        let mut out = Poly::default();
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &other.terms {
                let mut m: Monomial = ma.iter().chain(mb).copied().collect();
                m.sort_unstable();
                out = out.plus_term(m, ca.wrapping_mul(cb));
            }
        }
        out
    }

    /// Every atom `a` with an entry in `by` replaced by `by[a]`.
    pub fn substitute(&self, by: &BTreeMap<Atom, Poly>) -> Poly {
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            let term = m.iter().fold(Poly::constant(c), |p, a| match by.get(a) {
                Some(q) => p.mul(q),
                None => p.mul(&Poly::atom(*a)),
            });
            out = out.add(&term);
        }
        out
    }

    /// The terms with axis `axis`, divided by it once (the coefficient of a
    /// polynomial linear in that axis).
    pub fn axis_coefficient(&self, axis: usize) -> Poly {
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            if let Some(at) = m.iter().position(|&a| a == Atom::Axis(axis)) {
                let mut rest = m.clone();
                rest.remove(at);
                out = out.plus_term(rest, c);
            }
        }
        out
    }

    /// The polynomial at index 0 along every axis in `axes` (a tile axis of
    /// size 1 has only index 0).
    pub fn at_axis_zero(&self, axes: impl Fn(usize) -> bool) -> Poly {
        let mut out = Poly::default();
        for (m, &c) in &self.terms {
            if !m.iter().any(|a| matches!(*a, Atom::Axis(i) if axes(i))) {
                out = out.plus_term(m.clone(), c);
            }
        }
        out
    }

    /// The polynomial at index 0 along every axis.
    pub fn at_origin(&self) -> Poly {
        self.at_axis_zero(|_| true)
    }

    /// Whether any term mentions an axis.
    pub fn has_axes(&self) -> bool {
        self.atoms().any(|a| matches!(a, Atom::Axis(_)))
    }

    /// The axes renamed by `map` (`None`: the axis is gone; its terms drop).
    pub fn remap_axes(&self, map: impl Fn(usize) -> Option<usize>) -> Poly {
        let mut out = Poly::default();
        'terms: for (m, &c) in &self.terms {
            let mut renamed = Vec::with_capacity(m.len());
            for &a in m {
                match a {
                    Atom::Axis(i) => match map(i) {
                        Some(j) => renamed.push(Atom::Axis(j)),
                        None => continue 'terms,
                    },
                    other => renamed.push(other),
                }
            }
            renamed.sort_unstable();
            out = out.plus_term(renamed, c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u32) -> Poly {
        Poly::atom(Atom::Value(ValueId(n)))
    }

    fn axis(i: usize) -> Poly {
        Poly::atom(Atom::Axis(i))
    }

    #[test]
    fn arithmetic_is_canonical() {
        // (pm * 128 + i0) * lda + i1 + k  ==  i1 + k + lda * i0 + 128 * lda * pm
        let lhs = v(1)
            .scale(128)
            .add(&axis(0))
            .mul(&v(2))
            .add(&axis(1))
            .add(&v(3));
        let rhs = axis(1)
            .add(&v(3))
            .add(&v(2).mul(&axis(0)))
            .add(&v(2).mul(&v(1)).scale(128));
        assert_eq!(lhs, rhs);
        assert!(lhs.sub(&rhs).is_zero());
        assert_eq!(lhs.axis_coefficient(0), v(2));
        assert_eq!(lhs.axis_coefficient(1), Poly::constant(1));
        assert_eq!(lhs.at_origin(), v(1).mul(&v(2)).scale(128).add(&v(3)));
        // 1024 a + 128 b is a multiple of 32; + 1 is not.
        let rows = v(1).scale(1024).add(&v(2).scale(128));
        assert_eq!(rows.exact_div(32), Some(v(1).scale(32).add(&v(2).scale(4))));
        assert_eq!(rows.add(&Poly::constant(1)).exact_div(32), None);
        assert!(!lhs.at_origin().has_axes());
    }

    #[test]
    fn substitution_and_axis_renaming() {
        // p = x + 64 with x := k + 1 gives k + 65.
        let p = v(7).add(&Poly::constant(64));
        let by = BTreeMap::from([(Atom::Value(ValueId(7)), v(8).add(&Poly::constant(1)))]);
        assert_eq!(p.substitute(&by), v(8).add(&Poly::constant(65)));
        // [n] -> [1, n]: axis 0 becomes axis 1.
        let r = axis(0).add(&v(1));
        assert_eq!(r.remap_axes(|i| Some(i + 1)), axis(1).add(&v(1)));
        assert_eq!(r.remap_axes(|_| None), v(1));
    }
}
