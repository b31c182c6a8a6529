//! The autotune cache key: op, shapes bucketed to powers of two, dtypes,
//! device name and the candidate configs tuned over. Inputs in one bucket
//! that offer the same candidates share a choice.
//!
//! Text (the cache file's and pre-tuned tables' key, format version 2):
//! `op|[d0xd1..],[..]|dtype,..|device|cands=<count>:<fingerprint>`, e.g.
//! `triton::dot|[1024x1024x1024]|T=float16|NVIDIA H100 80GB HBM3|cands=71:c5f559c0`.
//! The bucket stays coarse (1000 and 1024 share `[1024]`) because what
//! makes neighbours differ, which variants qualify, is named by `cands`.

use super::candidates::CandidateSet;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    pub op: String,
    /// One bucketed shape per input.
    pub shapes: Vec<Vec<u64>>,
    pub dtypes: Vec<String>,
    pub device: String,
    pub candidates: CandidateSet,
}

/// Next power of two (0 and 1 stay themselves; past 2^63 saturates).
pub fn bucket_dim(dim: u64) -> u64 {
    if dim <= 1 {
        dim
    } else {
        dim.checked_next_power_of_two().unwrap_or(u64::MAX)
    }
}

impl TuneKey {
    /// The key of a call with these shapes, dtypes and device, tuned over
    /// `configs` (the config ids the call may run).
    pub fn new<S: AsRef<str>>(
        op: &str,
        shapes: &[&[u64]],
        dtypes: &[&str],
        device: &str,
        configs: &[S],
    ) -> TuneKey {
        TuneKey {
            op: op.to_string(),
            shapes: shapes
                .iter()
                .map(|s| s.iter().map(|&d| bucket_dim(d)).collect())
                .collect(),
            dtypes: dtypes.iter().map(|d| d.to_string()).collect(),
            device: device.to_string(),
            candidates: CandidateSet::of(configs),
        }
    }
}

/// `add|[65536],[65536]|f32,f32|NVIDIA H100 80GB HBM3|cands=4:0badf00d`.
impl fmt::Display for TuneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shapes: Vec<String> = self
            .shapes
            .iter()
            .map(|s| {
                let dims: Vec<String> = s.iter().map(u64::to_string).collect();
                format!("[{}]", dims.join("x"))
            })
            .collect();
        write!(
            f,
            "{}|{}|{}|{}|{}",
            self.op,
            shapes.join(","),
            self.dtypes.join(","),
            self.device,
            self.candidates
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [&str; 2] = ["ALIGN=1", "ALIGN=16"];

    #[test]
    fn dims_round_up_to_powers_of_two() {
        assert_eq!(bucket_dim(0), 0);
        assert_eq!(bucket_dim(1), 1);
        assert_eq!(bucket_dim(2), 2);
        assert_eq!(bucket_dim(3), 4);
        assert_eq!(bucket_dim(781), 1024);
        assert_eq!(bucket_dim(1024), 1024);
        assert_eq!(bucket_dim(1025), 2048);
        assert_eq!(bucket_dim((1 << 63) + 1), u64::MAX);
    }

    #[test]
    fn same_bucket_same_key() {
        let a = TuneKey::new("softmax", &[&[4096, 781]], &["f32"], "H100", &ALL);
        let b = TuneKey::new("softmax", &[&[4000, 1000]], &["f32"], "H100", &ALL);
        let c = TuneKey::new("softmax", &[&[4096, 1025]], &["f32"], "H100", &ALL);
        assert_eq!(a, b);
        assert_eq!(a.to_string(), b.to_string());
        assert_ne!(a.to_string(), c.to_string());
    }

    #[test]
    fn key_text_is_stable_and_documented() {
        // Pinned: the persisted cache and pre-tuned tables hold this text,
        // and the module documentation and README show its form.
        let key = TuneKey::new("softmax", &[&[4000, 1000]], &["f32"], "H100", &ALL);
        assert_eq!(
            key.to_string(),
            "softmax|[4096x1024]|f32|H100|cands=2:a04ec941"
        );
        let two = TuneKey::new("add", &[&[8], &[3]], &["f16", "f32"], "A B", &["X"]);
        assert_eq!(two.to_string(), "add|[8],[4]|f16,f32|A B|cands=1:271380d7");
    }

    #[test]
    fn same_bucket_with_other_candidates_is_another_key() {
        // 1000 and 1024 share a bucket; only 1024 admits ALIGN=16.
        let masked = TuneKey::new("dot", &[&[1000, 1000]], &["f16"], "H100", &ALL[..1]);
        let aligned = TuneKey::new("dot", &[&[1024, 1024]], &["f16"], "H100", &ALL);
        assert_eq!(masked.shapes, aligned.shapes);
        assert_ne!(masked.to_string(), aligned.to_string());
    }

    #[test]
    fn dtype_device_and_op_are_part_of_the_key() {
        let base = TuneKey::new("add", &[&[1 << 20]], &["f32"], "H100", &ALL);
        for other in [
            TuneKey::new("add", &[&[1 << 20]], &["f16"], "H100", &ALL),
            TuneKey::new("add", &[&[1 << 20]], &["f32"], "A100", &ALL),
            TuneKey::new("sub", &[&[1 << 20]], &["f32"], "H100", &ALL),
        ] {
            assert_ne!(base.to_string(), other.to_string());
        }
    }
}
