//! Which configs a tuning ran over. A choice is only valid for calls that
//! offer the same configs: a spec's `require` lines admit some variants (for
//! instance `ALIGN=16`) only for some inputs, and a choice tuned where they
//! were excluded must not be reused where they qualify.

use std::fmt;

/// The candidate configs of a call, as their count and a fingerprint of
/// their names (order-insensitive). Shown as `cands=<count>:<8 hex digits>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CandidateSet {
    pub count: usize,
    pub fingerprint: u32,
}

impl CandidateSet {
    /// The set of `configs` (names sorted, so the order they come in does not
    /// matter; duplicates count once).
    pub fn of<S: AsRef<str>>(configs: &[S]) -> CandidateSet {
        let mut names: Vec<&str> = configs.iter().map(AsRef::as_ref).collect();
        names.sort_unstable();
        names.dedup();
        // FNV-1a: stable across builds and platforms (std's hasher is not).
        let mut hash: u32 = 0x811c_9dc5;
        for name in &names {
            for &byte in name.as_bytes().iter().chain(b"\n") {
                hash ^= u32::from(byte);
                hash = hash.wrapping_mul(0x0100_0193);
            }
        }
        CandidateSet {
            count: names.len(),
            fingerprint: hash,
        }
    }
}

impl fmt::Display for CandidateSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cands={}:{:08x}", self.count, self.fingerprint)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_stable_across_builds() {
        // Pinned: persisted caches and pre-tuned tables hold this text.
        let set = CandidateSet::of(&["TM=64 ALIGN=1 num_warps=8", "TM=128 ALIGN=1 num_warps=8"]);
        assert_eq!(set.to_string(), "cands=2:5c373f56");
        assert_eq!(
            CandidateSet::of::<&str>(&[]).to_string(),
            "cands=0:811c9dc5"
        );
    }

    #[test]
    fn order_does_not_matter_but_membership_does() {
        let a = CandidateSet::of(&["A", "B", "C"]);
        assert_eq!(a, CandidateSet::of(&["C", "A", "B"]));
        assert_eq!(a, CandidateSet::of(&["C", "A", "B", "A"]));
        assert_ne!(a, CandidateSet::of(&["A", "B"]));
        assert_ne!(a, CandidateSet::of(&["A", "B", "D"]));
        // Names are separated: "AB" + "C" is not "A" + "BC".
        assert_ne!(
            CandidateSet::of(&["AB", "C"]),
            CandidateSet::of(&["A", "BC"])
        );
    }
}
