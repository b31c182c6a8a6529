//! Placeholder for `axis_info::AxisInfoMap::vector_width` (written on another
//! branch): contiguity along the last axis of `MakeRange`/`AddPtr` chains and
//! divisibility of their starts, enough to vectorize the usual `base + range`
//! accesses. Conservative: anything it does not understand gets width 1.
use crate::ir::{BinOp, CmpPred, Const, Function, OpKind, Region, ValueId};
use std::collections::HashMap;

/// Facts along the last axis of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LastAxis {
    /// Runs of consecutive integers (addresses in elements for pointers).
    contiguity: u64,
    /// Power of two dividing each run's first value (bytes for pointers).
    divisibility: u64,
    /// Runs of equal values.
    constancy: u64,
}

const MAX_DIV: u64 = 1 << 30;

fn pow2_dividing(v: i64) -> u64 {
    if v == 0 {
        MAX_DIV
    } else {
        (1u64 << v.unsigned_abs().trailing_zeros()).min(MAX_DIV)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub struct VectorWidths {
    facts: HashMap<ValueId, LastAxis>,
}

impl VectorWidths {
    pub fn analyze(func: &Function) -> VectorWidths {
        let mut w = VectorWidths {
            facts: HashMap::new(),
        };
        for p in &func.params {
            let div = if func.ty(p.value).scalar.is_ptr() {
                let size = func.dtype(p.value).size_bytes() as u64;
                p.attrs
                    .aligned
                    .unwrap_or(16)
                    .max(p.attrs.multiple_of.unwrap_or(1) * size)
            } else {
                p.attrs
                    .multiple_of
                    .map(|m| pow2_dividing(m as i64))
                    .unwrap_or(1)
            };
            w.facts.insert(
                p.value,
                LastAxis {
                    contiguity: 1,
                    divisibility: div,
                    constancy: 1,
                },
            );
        }
        w.region(func, &func.body);
        w
    }

    fn get(&self, v: ValueId) -> LastAxis {
        self.facts.get(&v).copied().unwrap_or(LastAxis {
            contiguity: 1,
            divisibility: 1,
            constancy: 1,
        })
    }

    fn region(&mut self, func: &Function, region: &Region) {
        for op in &region.ops {
            let last = |v: ValueId| func.ty(v).shape.last().copied().unwrap_or(1) as u64;
            let fact = match &op.kind {
                OpKind::Constant { value } => {
                    let div = match value {
                        Const::Int(i) => pow2_dividing(*i),
                        _ => 1,
                    };
                    Some(LastAxis {
                        contiguity: 1,
                        divisibility: div,
                        constancy: last(op.results[0]),
                    })
                }
                OpKind::MakeRange { start, end } => Some(LastAxis {
                    contiguity: (end - start) as u64,
                    divisibility: pow2_dividing(*start),
                    constancy: 1,
                }),
                OpKind::Splat { src } => Some(LastAxis {
                    contiguity: 1,
                    divisibility: self.get(*src).divisibility,
                    constancy: last(op.results[0]),
                }),
                OpKind::Broadcast { src } => {
                    let f = self.get(*src);
                    if last(*src) == 1 && last(op.results[0]) != 1 {
                        Some(LastAxis {
                            contiguity: 1,
                            divisibility: f.divisibility,
                            constancy: last(op.results[0]),
                        })
                    } else {
                        Some(f)
                    }
                }
                OpKind::Reshape { src } => {
                    let f = self.get(*src);
                    if last(*src) == last(op.results[0]) {
                        Some(f)
                    } else {
                        Some(LastAxis {
                            contiguity: 1,
                            divisibility: f.divisibility,
                            constancy: 1,
                        })
                    }
                }
                OpKind::Binary { op: bop, lhs, rhs } => {
                    let (a, b) = (self.get(*lhs), self.get(*rhs));
                    match bop {
                        BinOp::Add | BinOp::Sub => Some(LastAxis {
                            contiguity: gcd(a.contiguity, b.constancy)
                                .max(gcd(b.contiguity, a.constancy)),
                            divisibility: a.divisibility.min(b.divisibility),
                            constancy: gcd(a.constancy, b.constancy),
                        }),
                        BinOp::Mul => Some(LastAxis {
                            contiguity: 1,
                            divisibility: (a.divisibility * b.divisibility).min(MAX_DIV),
                            constancy: gcd(a.constancy, b.constancy),
                        }),
                        _ => Some(LastAxis {
                            contiguity: 1,
                            divisibility: 1,
                            constancy: gcd(a.constancy, b.constancy),
                        }),
                    }
                }
                OpKind::Cmp { pred, lhs, rhs } => {
                    let (a, b) = (self.get(*lhs), self.get(*rhs));
                    let mut constancy = gcd(a.constancy, b.constancy);
                    if matches!(pred, CmpPred::Lt | CmpPred::Ge) {
                        // `range < n`: runs of `contiguity` aligned to a divisor of `n`
                        // are all true or all false.
                        for (x, y) in [(a, b), (b, a)] {
                            if y.constancy > 1 {
                                constancy = constancy
                                    .max(gcd(x.contiguity, gcd(x.divisibility, y.divisibility)));
                            }
                        }
                    }
                    Some(LastAxis {
                        contiguity: 1,
                        divisibility: 1,
                        constancy,
                    })
                }
                OpKind::Cast { .. } => None,
                OpKind::AddPtr { ptr, offset } => {
                    let (p, o) = (self.get(*ptr), self.get(*offset));
                    let size = func.dtype(*ptr).size_bytes() as u64;
                    Some(LastAxis {
                        contiguity: gcd(p.contiguity, o.constancy)
                            .max(gcd(o.contiguity, p.constancy)),
                        divisibility: p
                            .divisibility
                            .min((o.divisibility.saturating_mul(size)).min(MAX_DIV)),
                        constancy: gcd(p.constancy, o.constancy),
                    })
                }
                OpKind::If {
                    then_region,
                    else_region,
                    ..
                } => {
                    self.region(func, then_region);
                    self.region(func, else_region);
                    None
                }
                OpKind::While {
                    cond_region,
                    body_region,
                    ..
                } => {
                    self.region(func, cond_region);
                    self.region(func, body_region);
                    None
                }
                _ => None,
            };
            if let (Some(f), Some(&r)) = (fact, op.results.first()) {
                self.facts.insert(r, f);
            }
        }
    }

    /// Elements of `ptr`'s pointee one thread may access as one vector
    /// (at most 16 bytes), given that `mask` must be constant over it.
    pub fn vector_width(&self, func: &Function, ptr: ValueId, mask: Option<ValueId>) -> usize {
        let ty = func.ty(ptr);
        if ty.is_scalar() {
            return 1;
        }
        let size = func.dtype(ptr).size_bytes() as u64;
        let p = self.get(ptr);
        let mut w = p
            .contiguity
            .min(p.divisibility / size.max(1))
            .min(16 / size.max(1));
        if let Some(m) = mask {
            w = w.min(self.get(m).constancy);
        }
        let w = w.max(1);
        (1u64 << (63 - w.leading_zeros())) as usize
    }
}
