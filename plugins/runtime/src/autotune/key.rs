//! The autotune cache key: op, shapes bucketed to powers of two, dtypes and
//! device name. Inputs in one bucket share a choice.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    pub op: String,
    /// One bucketed shape per input.
    pub shapes: Vec<Vec<u64>>,
    pub dtypes: Vec<String>,
    pub device: String,
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
    pub fn new(op: &str, shapes: &[&[u64]], dtypes: &[&str], device: &str) -> TuneKey {
        TuneKey {
            op: op.to_string(),
            shapes: shapes
                .iter()
                .map(|s| s.iter().map(|&d| bucket_dim(d)).collect())
                .collect(),
            dtypes: dtypes.iter().map(|d| d.to_string()).collect(),
            device: device.to_string(),
        }
    }
}

/// `add|[65536],[65536]|f32,f32|NVIDIA H100 80GB HBM3`: the cache file's key.
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
            "{}|{}|{}|{}",
            self.op,
            shapes.join(","),
            self.dtypes.join(","),
            self.device
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let a = TuneKey::new("softmax", &[&[4096, 781]], &["f32"], "H100");
        let b = TuneKey::new("softmax", &[&[4000, 1000]], &["f32"], "H100");
        let c = TuneKey::new("softmax", &[&[4096, 1025]], &["f32"], "H100");
        assert_eq!(a, b);
        assert_eq!(a.to_string(), b.to_string());
        assert_ne!(a.to_string(), c.to_string());
        assert_eq!(a.to_string(), "softmax|[4096x1024]|f32|H100");
    }

    #[test]
    fn dtype_device_and_op_are_part_of_the_key() {
        let base = TuneKey::new("add", &[&[1 << 20]], &["f32"], "H100");
        for other in [
            TuneKey::new("add", &[&[1 << 20]], &["f16"], "H100"),
            TuneKey::new("add", &[&[1 << 20]], &["f32"], "A100"),
            TuneKey::new("sub", &[&[1 << 20]], &["f32"], "H100"),
        ] {
            assert_ne!(base.to_string(), other.to_string());
        }
    }
}
