//! List-valued macros (`-DTM=[32, 64, 128]`) make a tuning space: the cross
//! product of every list. Each point is a plain set of `-D` values.

use std::fmt;

/// One `-D` value as given on the command line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Define {
    pub name: String,
    pub value: DefineValue,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefineValue {
    /// Source text, used as written (`float`, `^a`, `TM, TK`).
    Code(String),
    /// `[a, b, c]`: one compile per item.
    List(Vec<String>),
}

/// One point of the tuning space: every macro with exactly one value, in
/// command-line order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ConfigPoint {
    pub defines: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DefineError {
    #[error("`-D{0}`: a macro name must start with a letter or `_` and hold only letters, digits and `_`")]
    BadName(String),
    #[error("`-D{name}={value}`: a list value needs at least one item, e.g. `-D{name}=[32, 64]`")]
    EmptyList { name: String, value: String },
    #[error(
        "`-D{name}={value}`: an empty item in the list (two commas in a row, or one at an end)"
    )]
    EmptyItem { name: String, value: String },
    #[error("`-D{name}={value}`: unbalanced brackets in the value")]
    Unbalanced { name: String, value: String },
}

impl Define {
    /// Parses `NAME`, `NAME=VALUE` or `NAME=[v1, v2]` (what follows `-D`).
    /// `NAME` alone means `NAME=1`, as in C compilers.
    pub fn parse(arg: &str) -> Result<Define, DefineError> {
        let (name, value) = match arg.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim()),
            None => (arg.trim(), "1"),
        };
        let valid_name = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid_name {
            return Err(DefineError::BadName(arg.to_string()));
        }
        let value = match value.strip_prefix('[').and_then(|v| v.strip_suffix(']')) {
            // `[...]` holding a list at the top level. Values such as `a[:, newaxis]`
            // do not start with `[`, so they stay code.
            Some(inner) => {
                let items = split_top_level(inner).ok_or_else(|| DefineError::Unbalanced {
                    name: name.to_string(),
                    value: value.to_string(),
                })?;
                if items.iter().all(|s| s.is_empty()) {
                    return Err(DefineError::EmptyList {
                        name: name.to_string(),
                        value: value.to_string(),
                    });
                }
                if items.iter().any(|s| s.is_empty()) {
                    return Err(DefineError::EmptyItem {
                        name: name.to_string(),
                        value: value.to_string(),
                    });
                }
                DefineValue::List(items)
            }
            None => DefineValue::Code(value.to_string()),
        };
        Ok(Define {
            name: name.to_string(),
            value,
        })
    }

    pub fn is_list(&self) -> bool {
        matches!(self.value, DefineValue::List(_))
    }
}

/// Splits on commas that are not nested in brackets or parentheses; `None`
/// when the brackets do not balance.
fn split_top_level(text: &str) -> Option<Vec<String>> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                items.push(current.trim().to_string());
                current.clear();
                continue;
            }
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        current.push(c);
    }
    if depth != 0 {
        return None;
    }
    items.push(current.trim().to_string());
    Some(items)
}

/// Points a space may have unless raised (`--max-configs`): each costs a
/// compile, and a space past this is most often a mistake (a list pasted
/// twice, a macro that was meant to be fixed).
pub const DEFAULT_MAX_POINTS: u64 = 4096;

/// A space over the limit: its size and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the tuning space has {points} points ({factors}), more than the {max} compiled at most: \
     shorten the lists, or raise the limit with --max-configs {points}"
)]
pub struct SpaceTooLarge {
    /// The product, saturating at `u64::MAX`.
    pub points: u64,
    /// `A: 256 x B: 256 x C: 256`.
    pub factors: String,
    pub max: u64,
}

/// Checks the size of the space that `factors` (name, count) span, before
/// anything is expanded (16 M points would not fit in memory).
pub fn check_space(factors: &[(String, u64)], max: u64) -> Result<u64, SpaceTooLarge> {
    let points = factors.iter().fold(1u64, |n, (_, k)| n.saturating_mul(*k));
    if points <= max {
        return Ok(points);
    }
    let factors = factors
        .iter()
        .filter(|(_, k)| *k > 1)
        .map(|(name, k)| format!("{name}: {k}"))
        .collect::<Vec<_>>()
        .join(" x ");
    Err(SpaceTooLarge {
        points,
        factors,
        max,
    })
}

/// The factors of the space the `-D` lists make: (macro, values).
pub fn list_factors(defines: &[Define]) -> Vec<(String, u64)> {
    defines
        .iter()
        .filter_map(|d| match &d.value {
            DefineValue::List(items) => Some((d.name.clone(), items.len() as u64)),
            DefineValue::Code(_) => None,
        })
        .collect()
}

/// The cross product of all list values, the first list varying slowest.
/// Without lists, one point.
pub fn expand(defines: &[Define]) -> Vec<ConfigPoint> {
    let mut points = vec![ConfigPoint {
        defines: Vec::new(),
    }];
    for define in defines {
        let values: Vec<String> = match &define.value {
            DefineValue::Code(v) => vec![v.clone()],
            DefineValue::List(items) => items.clone(),
        };
        points = points
            .into_iter()
            .flat_map(|p| {
                values.iter().map(move |v| {
                    let mut next = p.clone();
                    next.defines.push((define.name.clone(), v.clone()));
                    next
                })
            })
            .collect();
    }
    points
}

impl ConfigPoint {
    /// The values of the macros that were lists, for file names and manifests.
    pub fn tuned<'a>(&'a self, lists: &'a [Define]) -> impl Iterator<Item = &'a (String, String)> {
        self.defines
            .iter()
            .filter(move |(n, _)| lists.iter().any(|d| d.is_list() && &d.name == n))
    }
}

impl fmt::Display for ConfigPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .defines
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect();
        write!(f, "{}", parts.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_code_values_and_lists() {
        let d = Define::parse("TYPE=float").unwrap();
        assert_eq!(d.value, DefineValue::Code("float".into()));
        let d = Define::parse("SHAPE_A=TM,TK").unwrap();
        assert_eq!(d.value, DefineValue::Code("TM,TK".into()));
        let d = Define::parse("TM=[32, 64,128]").unwrap();
        assert_eq!(
            d.value,
            DefineValue::List(vec!["32".into(), "64".into(), "128".into()])
        );
        let d = Define::parse("USE_A=^a").unwrap();
        assert_eq!(d.value, DefineValue::Code("^a".into()));
        let d = Define::parse("DEBUG").unwrap();
        assert_eq!(d.value, DefineValue::Code("1".into()));
        let d = Define::parse("B=a[:, newaxis]").unwrap();
        assert_eq!(d.value, DefineValue::Code("a[:, newaxis]".into()));
    }

    #[test]
    fn rejects_bad_names_and_lists() {
        assert!(matches!(
            Define::parse("1X=3"),
            Err(DefineError::BadName(_))
        ));
        assert!(matches!(Define::parse("=3"), Err(DefineError::BadName(_))));
        assert!(matches!(
            Define::parse("TM=[]"),
            Err(DefineError::EmptyList { .. })
        ));
        assert!(matches!(
            Define::parse("TM=[(1, 2]"),
            Err(DefineError::Unbalanced { .. })
        ));
    }

    #[test]
    fn cross_product_first_list_slowest() {
        let defs: Vec<Define> = ["TYPE=float", "TM=[32, 64]", "TN=[16,8,4]"]
            .iter()
            .map(|a| Define::parse(a).unwrap())
            .collect();
        let points = expand(&defs);
        assert_eq!(points.len(), 6);
        assert_eq!(points[0].to_string(), "TYPE=float TM=32 TN=16");
        assert_eq!(points[1].to_string(), "TYPE=float TM=32 TN=8");
        assert_eq!(points[5].to_string(), "TYPE=float TM=64 TN=4");
        let tuned: Vec<_> = points[5].tuned(&defs).collect();
        assert_eq!(
            tuned,
            vec![
                &("TM".to_string(), "64".to_string()),
                &("TN".to_string(), "4".to_string())
            ]
        );
    }

    #[test]
    fn no_lists_is_one_point() {
        assert_eq!(expand(&[]).len(), 1);
        let defs = vec![Define::parse("A=1").unwrap()];
        assert_eq!(expand(&defs)[0].defines, vec![("A".into(), "1".into())]);
    }

    #[test]
    fn a_list_with_an_empty_item_is_refused() {
        let err = Define::parse("SIZE=[128,,256]").unwrap_err();
        assert!(
            err.to_string().contains("an empty item in the list"),
            "{err}"
        );
        assert!(Define::parse("SIZE=[128, 256,]").is_err());
    }

    #[test]
    fn a_space_over_the_limit_names_its_size_and_factors_without_expanding() {
        let big: Vec<String> = (1..=256).map(|i| i.to_string()).collect();
        let list = format!("[{}]", big.join(","));
        let defs: Vec<Define> = ["A", "B", "C"]
            .iter()
            .map(|n| Define::parse(&format!("{n}={list}")).unwrap())
            .chain([Define::parse("TYPE=float").unwrap()])
            .collect();
        let err = check_space(&list_factors(&defs), DEFAULT_MAX_POINTS).unwrap_err();
        assert_eq!(err.points, 16_777_216);
        assert_eq!(
            err.to_string(),
            "the tuning space has 16777216 points (A: 256 x B: 256 x C: 256), more than the 4096 \
             compiled at most: shorten the lists, or raise the limit with --max-configs 16777216"
        );
        assert_eq!(
            check_space(&list_factors(&defs[..1]), DEFAULT_MAX_POINTS),
            Ok(256)
        );
        let huge = vec![("A".to_string(), u64::MAX), ("B".to_string(), 2)];
        assert_eq!(check_space(&huge, 10).unwrap_err().points, u64::MAX);
    }
}
