//! Calls already decided: the variant a call launches, remembered so that a
//! repeat builds no autotune key and, where the op passes its call key, does
//! not even compute its candidates (`Op::launch_known`): with a few hundred
//! variants, evaluating every `require` line was most of a call's host time.
//!
//! A call key holds what decides a call's candidates, grids and tuning key
//! (the dtype group, the dims, each stride and attribute the grid and the
//! requirements read), so one decision serves every call with that key;
//! keyed decisions are remembered per pin too (generation 0: nothing pinned,
//! the autotuner's pick), so a pinned call takes the fast path as well.
//! Without one (the ONNX Runtime launcher), a decision is remembered by the
//! exact candidates, dims and dtype group.

use crate::launch::{Call, LaunchGrid};
use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

/// Entries before the memory starts over (many shapes: the autotuner still
/// remembers their choices, only the fast path is rebuilt).
const MAX_DECIDED: usize = 4096;

/// What a decided call launches: the variant (an index into the op's
/// entries), its grid, and the unsplit sibling that runs the full waves of
/// a split-K variant's tiles, where the call admitted it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub index: usize,
    pub grid: LaunchGrid,
    pub sibling: Option<usize>,
}

#[derive(Default)]
pub struct Decisions {
    map: Mutex<HashMap<u64, Decided>>,
}

struct Decided {
    /// The call key, or (none given) the candidates, dims and dtype group.
    key: Vec<i64>,
    candidates: Vec<u32>,
    dims: Vec<i64>,
    dtype_key: String,
    device: usize,
    /// The pin's generation it was decided under (0: none).
    pin: u64,
    /// The position among the call's candidates.
    pick: usize,
    resolved: Resolved,
}

impl Decisions {
    /// The candidate position the autotuner decided for a call like `call`
    /// (nothing pinned), if any.
    pub fn pick(&self, call: &Call, device: usize) -> Option<usize> {
        self.lock()
            .get(&fingerprint(call, device, 0))
            .filter(|d| d.matches(call, device, 0))
            .map(|d| d.pick)
    }

    /// What a call with `call_key` on `device` launches under pin
    /// generation `pin` (0: nothing pinned), if decided.
    pub fn resolved(&self, call_key: &[i64], device: usize, pin: u64) -> Option<Resolved> {
        if call_key.is_empty() {
            return None;
        }
        self.lock()
            .get(&key_fingerprint(call_key, device, pin))
            .filter(|d| d.key == call_key && d.device == device && d.pin == pin)
            .map(|d| d.resolved)
    }

    /// Remembers the launch of `call` on `device` decided under pin
    /// generation `pin`; a call without a key is remembered only unpinned
    /// (its fast path is [`Decisions::pick`]).
    pub fn insert(&self, call: &Call, device: usize, pin: u64, pick: usize, resolved: Resolved) {
        let keyed = !call.call_key.is_empty();
        if !keyed && pin != 0 {
            return;
        }
        let decided = Decided {
            key: call.call_key.to_vec(),
            candidates: if keyed {
                Vec::new()
            } else {
                call.candidates.to_vec()
            },
            dims: if keyed {
                Vec::new()
            } else {
                call.dims.to_vec()
            },
            dtype_key: if keyed {
                String::new()
            } else {
                call.dtype_key.to_string()
            },
            device,
            pin,
            pick,
            resolved,
        };
        let mut map = self.lock();
        if map.len() >= MAX_DECIDED {
            map.clear();
        }
        map.insert(fingerprint(call, device, pin), decided);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Decided>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Decided {
    fn matches(&self, call: &Call, device: usize, pin: u64) -> bool {
        if !call.call_key.is_empty() {
            return self.key == call.call_key && self.device == device && self.pin == pin;
        }
        self.key.is_empty()
            && self.candidates == call.candidates
            && self.dims == call.dims
            && self.dtype_key == call.dtype_key
            && self.device == device
    }
}

fn fingerprint(call: &Call, device: usize, pin: u64) -> u64 {
    if !call.call_key.is_empty() {
        return key_fingerprint(call.call_key, device, pin);
    }
    let mut h = DefaultHasher::new();
    (call.candidates, call.dims, call.dtype_key, device).hash(&mut h);
    h.finish()
}

fn key_fingerprint(call_key: &[i64], device: usize, pin: u64) -> u64 {
    let mut h = DefaultHasher::new();
    ("call key", call_key, device, pin).hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: LaunchGrid = LaunchGrid {
        x: 8,
        y: 1,
        z: 1,
        persistent: false,
    };
    const RESOLVED: Resolved = Resolved {
        index: 4,
        grid: GRID,
        sibling: None,
    };

    fn call<'a>(
        candidates: &'a [u32],
        dims: &'a [i64],
        dtype: &'a str,
        call_key: &'a [i64],
    ) -> Call<'a> {
        Call::bare(candidates, dims, dtype, call_key)
    }

    #[test]
    fn without_a_key_a_decision_matches_only_the_same_candidates_dims_dtype_and_device() {
        let decided = Decisions::default();
        let dims = [1024, 1024, 1024];
        let same = || call(&[0, 2, 4], &dims, "T=float16", &[]);
        decided.insert(&same(), 0, 0, 2, RESOLVED);
        assert_eq!(decided.pick(&same(), 0), Some(2));
        for other in [
            call(&[0, 2], &dims, "T=float16", &[]),
            call(&[0, 2, 4], &[1000, 1024, 1024], "T=float16", &[]),
            call(&[0, 2, 4], &dims, "T=bfloat16", &[]),
        ] {
            assert_eq!(decided.pick(&other, 0), None);
        }
        assert_eq!(decided.pick(&same(), 1), None);
        // No key: nothing for the fast path, and nothing kept under a pin.
        assert_eq!(decided.resolved(&[], 0, 0), None);
        let fresh = Decisions::default();
        fresh.insert(&same(), 0, 3, 1, RESOLVED);
        assert_eq!(fresh.pick(&same(), 0), None);
    }

    #[test]
    fn a_keyed_decision_serves_the_fast_path_for_that_key_and_device_only() {
        let decided = Decisions::default();
        let key = [1, 1024, 1024, 1024, 1024, 1024];
        let keyed = call(&[0, 2, 4], &[1024; 3], "T=float16", &key);
        decided.insert(&keyed, 0, 0, 2, RESOLVED);
        assert_eq!(decided.resolved(&key, 0, 0), Some(RESOLVED));
        assert_eq!(decided.resolved(&key, 1, 0), None);
        assert_eq!(
            decided.resolved(&[1, 1024, 1024, 1024, 1024, 1000], 0, 0),
            None
        );
        assert_eq!(decided.resolved(&key[..5], 0, 0), None);
        // The candidate path with that key finds it too, and a call without
        // a key never takes a keyed decision.
        assert_eq!(decided.pick(&keyed, 0), Some(2));
        assert_eq!(
            decided.pick(&call(&[0, 2, 4], &[1024; 3], "T=float16", &[]), 0),
            None
        );
    }

    #[test]
    fn a_pinned_launch_is_remembered_under_its_pin_only() {
        let decided = Decisions::default();
        let key = [1, 64];
        let pinned = Resolved {
            index: 7,
            ..RESOLVED
        };
        decided.insert(&call(&[0, 7], &[64], "T=float16", &key), 0, 0, 0, RESOLVED);
        decided.insert(&call(&[0, 7], &[64], "T=float16", &key), 0, 5, 1, pinned);
        assert_eq!(decided.resolved(&key, 0, 0), Some(RESOLVED));
        assert_eq!(decided.resolved(&key, 0, 5), Some(pinned));
        // Another pin (or the same config pinned again) starts afresh, and
        // the autotuner's decision is not the pinned one.
        assert_eq!(decided.resolved(&key, 0, 6), None);
        assert_eq!(
            decided.pick(&call(&[0, 7], &[64], "T=float16", &key), 0),
            Some(0)
        );
    }

    #[test]
    fn the_memory_starts_over_when_full() {
        let decided = Decisions::default();
        for m in 0..MAX_DECIDED as i64 + 1 {
            let key = [0, m];
            decided.insert(&call(&[0], &[m], "T=float32", &key), 0, 0, 0, RESOLVED);
        }
        assert_eq!(decided.lock().len(), 1);
        assert_eq!(
            decided.resolved(&[0, MAX_DECIDED as i64], 0, 0),
            Some(RESOLVED)
        );
        assert_eq!(decided.resolved(&[0, 0], 0, 0), None);
    }
}
