//! Pre-tuned tables (`triton-opgen --tuned FILE`): an autotune cache file
//! from a machine that ran the op, embedded in the op and read before any
//! benchmarking. Version 2 keys name the candidate set; version 1 keys do
//! not, so a version 1 entry is kept only when the configs it timed (its
//! `timings_ms`) say which set it was tuned over.

use super::cache::FORMAT_VERSION;
use super::candidates::CandidateSet;
use serde_json::{Map, Value};

/// The format before keys named the candidate set.
pub const LEGACY_FORMAT_VERSION: u64 = 1;

/// The usable choices of a table.
#[derive(Debug, Default, PartialEq)]
pub struct TunedTable {
    pub format_version: u64,
    /// (key in the current format, config).
    pub choices: Vec<(String, String)>,
    /// Keys of entries that cannot be used, with why.
    pub dropped: Vec<String>,
}

/// Reads a table's JSON; an error says why none of it can be used.
pub fn read_tuned_table(json: &str) -> Result<TunedTable, String> {
    let value: Value = serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let Some(entries) = value.get("entries").and_then(Value::as_object) else {
        return Err("no `entries` object (expected an autotune cache file)".to_string());
    };
    let version = value
        .get("format_version")
        .and_then(Value::as_u64)
        .ok_or("no `format_version`")?;
    let mut table = TunedTable {
        format_version: version,
        ..TunedTable::default()
    };
    match version {
        v if v == u64::from(FORMAT_VERSION) => take_current(entries, &mut table),
        LEGACY_FORMAT_VERSION => take_legacy(entries, &mut table),
        other => {
            return Err(format!(
                "format version {other}; this runtime reads {FORMAT_VERSION} \
                 and {LEGACY_FORMAT_VERSION}"
            ))
        }
    }
    Ok(table)
}

fn take_current(entries: &Map<String, Value>, table: &mut TunedTable) {
    for (key, entry) in entries {
        match entry.get("config").and_then(Value::as_str) {
            Some(config) => table.choices.push((key.clone(), config.to_string())),
            None => table.dropped.push(format!("{key}: no config")),
        }
    }
}

/// A version 1 key plus the candidate set its timings name; entries without
/// timings, or whose choice is not among them, are dropped.
fn take_legacy(entries: &Map<String, Value>, table: &mut TunedTable) {
    for (key, entry) in entries {
        let config = entry.get("config").and_then(Value::as_str);
        let timed: Vec<&str> = entry
            .get("timings_ms")
            .and_then(Value::as_object)
            .map(|t| t.keys().map(String::as_str).collect())
            .unwrap_or_default();
        match config {
            Some(config) if timed.contains(&config) => {
                let set = CandidateSet::of(&timed);
                table
                    .choices
                    .push((format!("{key}|{set}"), config.to_string()));
            }
            Some(_) => table.dropped.push(format!(
                "{key}: format version 1 without timings of its choice, \
                 so the configs it was tuned over are unknown"
            )),
            None => table.dropped.push(format!("{key}: no config")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_tables_are_taken_as_they_are() {
        let json = r#"{"format_version": 2, "entries": {
            "t::add|[1024]|T=float32|H100|cands=2:a04ec941": {"config": "ALIGN=16", "time_ms": 0.1},
            "t::add|[2048]|T=float32|H100|cands=2:a04ec941": {"time_ms": 0.1}}}"#;
        let table = read_tuned_table(json).unwrap();
        assert_eq!(table.format_version, 2);
        assert_eq!(
            table.choices,
            vec![(
                "t::add|[1024]|T=float32|H100|cands=2:a04ec941".to_string(),
                "ALIGN=16".to_string()
            )]
        );
        assert_eq!(table.dropped.len(), 1);
        assert!(
            table.dropped[0].starts_with("t::add|[2048]"),
            "{:?}",
            table.dropped
        );
    }

    #[test]
    fn legacy_entries_get_the_candidate_set_they_timed() {
        // Tuned at 1000^3: only ALIGN=1 was a candidate (and timed).
        let json = r#"{"format_version": 1, "entries": {
            "t::dot|[1024]|T=float16|H100": {"config": "ALIGN=1", "time_ms": 0.1,
                "timings_ms": {"ALIGN=1": 0.1}},
            "t::dot|[2048]|T=float16|H100": {"config": "ALIGN=16", "time_ms": 0.1,
                "timings_ms": {"ALIGN=1": 0.3, "ALIGN=16": 0.1}},
            "t::dot|[4096]|T=float16|H100": {"config": "ALIGN=16", "time_ms": 0.1}}}"#;
        let table = read_tuned_table(json).unwrap();
        let masked = CandidateSet::of(&["ALIGN=1"]);
        let both = CandidateSet::of(&["ALIGN=16", "ALIGN=1"]);
        assert_eq!(
            table.choices,
            vec![
                (
                    format!("t::dot|[1024]|T=float16|H100|{masked}"),
                    "ALIGN=1".to_string()
                ),
                (
                    format!("t::dot|[2048]|T=float16|H100|{both}"),
                    "ALIGN=16".to_string()
                ),
            ]
        );
        assert_eq!(table.dropped.len(), 1);
        assert!(table.dropped[0].contains("[4096]"), "{:?}", table.dropped);
    }

    #[test]
    fn unusable_tables_say_why() {
        for (json, why) in [
            ("not json", "not JSON"),
            (r#"{"format_version": 2}"#, "no `entries`"),
            (r#"{"entries": {}}"#, "no `format_version`"),
            (
                r#"{"format_version": 7, "entries": {}}"#,
                "format version 7",
            ),
        ] {
            let err = read_tuned_table(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
        }
    }
}
