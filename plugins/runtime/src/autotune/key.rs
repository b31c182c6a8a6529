//! The autotune cache key: op, shapes bucketed, dtypes, device name and the
//! candidate configs tuned over. Inputs in one bucket that offer the same
//! candidates share a choice.
//!
//! Text (the cache file's and pre-tuned tables' key, format version 3):
//! `op|[d0xd1..],[..]|dtype,..|device|cands=<count>:<fingerprint>[|code=<fingerprint>]`, e.g.
//! `triton::dot|[1024x1024x1024]|T=float16|NVIDIA H100 80GB HBM3|cands=120:4e483e67|code=5d0c4a1e`.
//! A dim rounds up to a quarter of its octave ([`bucket_dim`]: 3000 and 3008
//! to 3072, 4096 stays) and is marked `~` when it is not a multiple of 64
//! (3000 is `3072~`): tiles of 64 to 256 make neighbours a fraction of a
//! wave apart run different tile sizes best (3008³ 128x192, 4096³ 128x256),
//! and rows that do not start on 128 bytes load slower. What else makes
//! neighbours differ, which variants qualify, is named by `cands`; the code
//! they run (the digests of their compiled images), by `code`: an op rebuilt
//! from an edited kernel, or by another compiler or with other flags, keeps
//! its config names, and a choice timed on the old code must not be reused.

use super::candidates::CandidateSet;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    pub op: String,
    /// One bucketed shape per input.
    pub shapes: Vec<Vec<DimBucket>>,
    pub dtypes: Vec<String>,
    pub device: String,
    pub candidates: CandidateSet,
    /// Fingerprint of the candidates' compiled images, where known.
    pub code: Option<u32>,
}

/// A dim rounded up to a multiple of a quarter of the next power of two
/// (up to 8, the next power of two; 0 and 1 stay): 781 -> 1024, 1000 -> 1024, 1025 ->
/// 1536, 3000 -> 3072; past 2^63 saturates.
pub fn bucket_dim(dim: u64) -> u64 {
    if dim <= 8 {
        return if dim <= 1 {
            dim
        } else {
            dim.next_power_of_two()
        };
    }
    let Some(octave) = dim.checked_next_power_of_two() else {
        return u64::MAX;
    };
    let quarter = octave / 4;
    dim.div_ceil(quarter) * quarter
}

/// Dims that are multiples of this many elements share a bucket apart from
/// the others (128-byte rows of 16-bit elements).
pub const ALIGNED_DIM: u64 = 64;

/// One bucketed dim: its [`bucket_dim`] and whether it is a multiple of
/// [`ALIGNED_DIM`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DimBucket {
    pub bucket: u64,
    pub aligned: bool,
}

impl DimBucket {
    pub fn of(dim: u64) -> DimBucket {
        DimBucket {
            bucket: bucket_dim(dim),
            aligned: dim % ALIGNED_DIM == 0,
        }
    }
}

/// `3072`, or `3072~` when not aligned; dims up to 8 print bare (they are
/// never multiples of 64, and every one is its own bucket).
impl fmt::Display for DimBucket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.aligned || self.bucket <= 8 {
            ""
        } else {
            "~"
        };
        write!(f, "{}{mark}", self.bucket)
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
                .map(|s| s.iter().map(|&d| DimBucket::of(d)).collect())
                .collect(),
            dtypes: dtypes.iter().map(|d| d.to_string()).collect(),
            device: device.to_string(),
            candidates: CandidateSet::of(configs),
            code: None,
        }
    }

    /// The key naming the code the candidates run: `images` holds one id
    /// per candidate naming its compiled image (the bridge's: its config and
    /// the image's digest; order does not matter).
    pub fn with_code<S: AsRef<str>>(mut self, images: &[S]) -> TuneKey {
        self.code = Some(CandidateSet::of(images).fingerprint);
        self
    }
}

/// `add|[65536],[65536]|f32,f32|NVIDIA H100 80GB HBM3|cands=4:0badf00d`, with
/// `|code=<8 hex digits>` after it where the code is known.
impl fmt::Display for TuneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shapes: Vec<String> = self
            .shapes
            .iter()
            .map(|s| {
                let dims: Vec<String> = s.iter().map(DimBucket::to_string).collect();
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
        )?;
        match self.code {
            Some(code) => write!(f, "|code={code:08x}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [&str; 2] = ["ALIGN=1", "ALIGN=16"];

    #[test]
    fn dims_round_up_to_quarters_of_their_octave() {
        assert_eq!(bucket_dim(0), 0);
        assert_eq!(bucket_dim(1), 1);
        assert_eq!(bucket_dim(2), 2);
        assert_eq!(bucket_dim(3), 4);
        assert_eq!(bucket_dim(8), 8);
        assert_eq!(bucket_dim(9), 12);
        assert_eq!(bucket_dim(781), 1024);
        assert_eq!(bucket_dim(1000), 1024);
        assert_eq!(bucket_dim(1024), 1024);
        assert_eq!(bucket_dim(1025), 1536);
        assert_eq!(bucket_dim(3000), 3072);
        assert_eq!(bucket_dim(3008), 3072);
        assert_eq!(bucket_dim(2049), 3072);
        assert_eq!(bucket_dim(3073), 4096);
        assert_eq!(bucket_dim(4096), 4096);
        assert_eq!(bucket_dim((1 << 63) + 1), u64::MAX);
    }

    #[test]
    fn same_bucket_same_key() {
        let a = TuneKey::new("softmax", &[&[4000, 781]], &["f32"], "H100", &ALL);
        let b = TuneKey::new("softmax", &[&[3100, 1000]], &["f32"], "H100", &ALL);
        let c = TuneKey::new("softmax", &[&[4000, 1025]], &["f32"], "H100", &ALL);
        assert_eq!(a, b);
        assert_eq!(a.to_string(), b.to_string());
        assert_ne!(a.to_string(), c.to_string());
    }

    #[test]
    fn dims_a_fraction_of_a_wave_apart_or_unaligned_tune_apart() {
        let key = |d: u64| TuneKey::new("dot", &[&[d, d, d]], &["f16"], "H100", &ALL).to_string();
        // 3000 and 3008: one bucket, told apart by 3008's 128-byte rows.
        assert!(key(3000).contains("[3072~x3072~x3072~]"), "{}", key(3000));
        assert!(key(3008).contains("[3072x3072x3072]"), "{}", key(3008));
        // 3008 and 4096: a quarter octave apart.
        assert_ne!(key(3008), key(4096));
        assert_eq!(key(2560 + 64), key(3008));
    }

    #[test]
    fn key_text_is_stable_and_documented() {
        // Pinned: the persisted cache and pre-tuned tables hold this text,
        // and the module documentation and README show its form.
        let key = TuneKey::new("softmax", &[&[4000, 1000]], &["f32"], "H100", &ALL);
        assert_eq!(
            key.to_string(),
            "softmax|[4096~x1024~]|f32|H100|cands=2:a04ec941"
        );
        let two = TuneKey::new("add", &[&[8], &[3]], &["f16", "f32"], "A B", &["X"]);
        assert_eq!(two.to_string(), "add|[8],[4]|f16,f32|A B|cands=1:271380d7");
        let coded = two.with_code(&["fnv1a64:cbf29ce484222325"]);
        assert_eq!(
            coded.to_string(),
            "add|[8],[4]|f16,f32|A B|cands=1:271380d7|code=3c5eee33"
        );
    }

    #[test]
    fn the_same_configs_compiled_to_other_code_are_another_key() {
        // An op rebuilt with other compiler flags: same config names,
        // other images.
        let key = || TuneKey::new("dot", &[&[1000, 777, 1531]], &["f16"], "H100", &ALL);
        let old = key().with_code(&["fnv1a64:1", "fnv1a64:2"]);
        let new = key().with_code(&["fnv1a64:1", "fnv1a64:3"]);
        assert_eq!(old.candidates, new.candidates);
        assert_ne!(old.to_string(), new.to_string());
        assert_eq!(
            old.to_string(),
            key().with_code(&["fnv1a64:2", "fnv1a64:1"]).to_string()
        );
        assert_ne!(old.to_string(), key().to_string());
    }

    #[test]
    fn same_bucket_with_other_candidates_is_another_key() {
        // 1000 and 1024 share a bucket (apart from alignment); only 1024
        // admits ALIGN=16.
        let masked = TuneKey::new("dot", &[&[1000, 1000]], &["f16"], "H100", &ALL[..1]);
        let aligned = TuneKey::new("dot", &[&[1024, 1024]], &["f16"], "H100", &ALL);
        assert_eq!(masked.shapes[0][0].bucket, aligned.shapes[0][0].bucket);
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
