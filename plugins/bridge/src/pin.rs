//! A config pinned by the user (`pin_config` in the generated modules): every
//! launch runs that variant instead of asking the autotuner, and a call it
//! does not qualify for is an error rather than a silent fallback. For
//! reproducing a timing, A/B-ing two configs, or checking every variant
//! (scripts/gpu/sanitize_variants.py runs each under compute-sanitizer).

use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
pub struct Pin {
    state: Mutex<Pinned>,
}

#[derive(Default)]
struct Pinned {
    config: Option<String>,
    /// Counts every pin: names this one for the launches decided under it.
    generation: u64,
}

/// The pinned config's position among a call's candidates, and the pin's
/// generation (launches decided under it are remembered by it, so that a
/// pinned call is as cheap as an autotuned one and a new pin starts afresh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinnedAt {
    pub position: usize,
    pub generation: u64,
}

impl Pin {
    /// Pins `config` (one of `known`, the op's configs), or unpins for "".
    pub fn set(&self, config: &str, known: &[&str]) -> Result<(), String> {
        let config = config.trim();
        if config.is_empty() {
            self.lock().config = None;
            return Ok(());
        }
        if !known.contains(&config) {
            return Err(format!(
                "no variant has the config `{config}`; the op's configs are: {}",
                known.join(", ")
            ));
        }
        let mut state = self.lock();
        state.config = Some(config.to_string());
        state.generation += 1;
        Ok(())
    }

    /// The generation of the pinned config, 0 when none is pinned.
    pub fn generation(&self) -> u64 {
        let state = self.lock();
        if state.config.is_some() {
            state.generation
        } else {
            0
        }
    }

    /// The position in `candidates` (this call's configs) of the pinned
    /// config: `None` when nothing is pinned (the candidates are then not
    /// read: this runs on every launch), an error when the pinned config
    /// does not qualify for the call.
    pub fn position<'a>(
        &self,
        candidates: impl Iterator<Item = &'a str> + Clone,
    ) -> Result<Option<PinnedAt>, String> {
        let state = self.lock();
        let Some(config) = state.config.as_deref() else {
            return Ok(None);
        };
        match candidates.clone().position(|c| c == config) {
            Some(position) => Ok(Some(PinnedAt {
                position,
                generation: state.generation,
            })),
            None => Err(format!(
                "the pinned config `{config}` does not accept these inputs (its dtype or a `require` \
                 line rules it out); the configs that do: {}; pin one of them or unpin with \
                 pin_config(None)",
                candidates.collect::<Vec<_>>().join(", ")
            )),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Pinned> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 3] = ["TM=64 ALIGN=1", "TM=64 ALIGN=8", "TM=128 ALIGN=8"];

    #[test]
    fn nothing_pinned_leaves_the_choice_to_the_tuner() {
        assert_eq!(Pin::default().position(KNOWN.iter().copied()), Ok(None));
    }

    #[test]
    fn a_pinned_config_is_found_among_the_calls_candidates() {
        let pin = Pin::default();
        pin.set(" TM=128 ALIGN=8 ", &KNOWN).unwrap();
        let at = |position| {
            Ok(Some(PinnedAt {
                position,
                generation: 1,
            }))
        };
        assert_eq!(pin.position(KNOWN.iter().copied()), at(2));
        assert_eq!(pin.position(["TM=128 ALIGN=8"].into_iter()), at(0));
        assert_eq!(pin.generation(), 1);
    }

    #[test]
    fn a_pinned_config_the_call_rules_out_is_an_error_listing_the_ones_it_allows() {
        let pin = Pin::default();
        pin.set("TM=64 ALIGN=8", &KNOWN).unwrap();
        let err = pin.position(["TM=64 ALIGN=1"].into_iter()).unwrap_err();
        assert!(
            err.contains("`TM=64 ALIGN=8` does not accept these inputs")
                && err.contains("the configs that do: TM=64 ALIGN=1"),
            "{err}"
        );
    }

    #[test]
    fn an_unknown_config_is_refused_and_an_empty_one_unpins() {
        let pin = Pin::default();
        let err = pin.set("TM=32", &KNOWN).unwrap_err();
        assert!(
            err.contains("no variant has the config `TM=32`") && err.contains("TM=128 ALIGN=8"),
            "{err}"
        );
        pin.set("TM=64 ALIGN=1", &KNOWN).unwrap();
        pin.set("", &KNOWN).unwrap();
        assert_eq!(pin.position(KNOWN[1..].iter().copied()), Ok(None));
        assert_eq!(pin.generation(), 0);
        // Each pin is a new generation, the same config pinned again too.
        pin.set("TM=64 ALIGN=1", &KNOWN).unwrap();
        assert_eq!(pin.generation(), 2);
    }
}
