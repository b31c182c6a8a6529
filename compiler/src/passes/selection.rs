//! Passes named on the command line (`--print-after`), checked against the
//! pass list so a typo is an error that lists the valid names.
use super::manager::STANDARD;
use super::Pass;

/// The passes whose output `--print-after` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum PassSelection {
    #[default]
    None,
    All,
    Named(Vec<&'static str>),
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown pass `{name}`; the passes are: {}, or `all`", valid_names())]
pub struct UnknownPass {
    pub name: String,
}

impl PassSelection {
    /// `all`, or pass names; an empty list selects nothing.
    pub fn parse(names: &[String]) -> Result<Self, UnknownPass> {
        if names.iter().any(|n| n == "all") {
            return Ok(PassSelection::All);
        }
        if names.is_empty() {
            return Ok(PassSelection::None);
        }
        let passes = names
            .iter()
            .map(|n| pass_named(n).map(|p| p.name()))
            .collect::<Result<_, _>>()?;
        Ok(PassSelection::Named(passes))
    }

    pub fn contains(&self, pass: &str) -> bool {
        match self {
            PassSelection::None => false,
            PassSelection::All => true,
            PassSelection::Named(names) => names.contains(&pass),
        }
    }
}

/// The pass of the compiler's pipeline called `name`.
pub fn pass_named(name: &str) -> Result<&'static dyn Pass, UnknownPass> {
    STANDARD
        .iter()
        .copied()
        .find(|p| p.name() == name)
        .ok_or_else(|| UnknownPass {
            name: name.to_string(),
        })
}

fn valid_names() -> String {
    let names: Vec<&str> = STANDARD.iter().map(|p| p.name()).collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn all_none_and_names() {
        assert_eq!(PassSelection::parse(&[]), Ok(PassSelection::None));
        let all = PassSelection::parse(&names(&["unrotate-prefetch", "all"])).unwrap();
        assert_eq!(all, PassSelection::All);
        assert!(all.contains("any-pass"));
        let one = PassSelection::parse(&names(&["unrotate-prefetch"])).unwrap();
        assert!(one.contains("unrotate-prefetch"));
        assert!(!one.contains("other"));
        assert!(!PassSelection::None.contains("unrotate-prefetch"));
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let err = PassSelection::parse(&names(&["unrotate-prefetch", "unrotate"])).unwrap_err();
        assert_eq!(err.name, "unrotate");
        assert_eq!(
            err.to_string(),
            "unknown pass `unrotate`; the passes are: fold-dot-accumulator, eliminate-dead-code, unrotate-prefetch, widen-dot-k, swap-ab, split-k, assign-layouts, pipeline-dot-loops, tma-loads, narrow-before-convert, insert-layout-conversions, prefetch-dot-operands, allocate-shared-memory, place-barriers, or `all`"
        );
    }
}
