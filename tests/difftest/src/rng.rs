//! splitmix64: the generator's choices and the kernels' input values. The GPU
//! check (scripts/gpu/difftest_check.py) recomputes the inputs with the same
//! function, so they never travel.

#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn range(&mut self, lo: i64, hi_inclusive: i64) -> i64 {
        lo + self.below((hi_inclusive - lo + 1) as u64) as i64
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Element `i`'s value in an input buffer seeded with `seed`: floats are
/// multiples of 1/16 in [-8, 8] (exact in half), ints in [-100, 100].
pub fn input_values(seed: u64, len: usize, is_float: bool) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..len)
        .map(|_| {
            let r = rng.next_u64();
            if is_float {
                ((r % 257) as i64 - 128) as f64 / 16.0
            } else {
                ((r % 201) as i64 - 100) as f64
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // The first outputs of splitmix64 seeded with 0 (the published sequence).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn inputs_match_the_gpu_checks_reimplementation() {
        // scripts/gpu/difftest_check.py computes these too (its inputs()).
        assert_eq!(input_values(7, 5, true), [-7.1875, 6.125, 4.125, 2.25, 7.5]);
        assert_eq!(input_values(7, 5, false), [-40.0, -82.0, 47.0, 86.0, -51.0]);
    }

    #[test]
    fn inputs_are_in_range_and_exact_in_half() {
        for v in input_values(7, 1000, true) {
            assert!((-8.0..=8.0).contains(&v));
            assert_eq!(half::f16::from_f64(v).to_f64(), v);
        }
        for v in input_values(7, 1000, false) {
            assert!((-100.0..=100.0).contains(&v) && v.fract() == 0.0);
        }
    }
}
