//! Pre-tuned tables (`triton-opgen --tuned FILE`): an autotune cache file
//! from a machine that ran the op, embedded in the op and read before any
//! benchmarking. Only the current format is taken: version 1 keys do not
//! name the candidate set, version 2 keys not the code the candidates ran,
//! so their choices may have been timed on other variants or other code.

use super::cache::FORMAT_VERSION;
use serde_json::{Map, Value};

/// The usable choices of a table.
#[derive(Debug, Default, PartialEq)]
pub struct TunedTable {
    /// (key, config).
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
    match version {
        v if v == u64::from(FORMAT_VERSION) => Ok(take_entries(entries)),
        1 | 2 => Err(format!(
            "format version {version}: its keys do not name the code each choice was timed on \
             (version {FORMAT_VERSION} does), so a kernel edited or compiled otherwise since would \
             reuse them; run this build of the op with an empty $TRITON_OPGEN_CACHE to write \
             version {FORMAT_VERSION}"
        )),
        other => Err(format!(
            "format version {other}; this runtime reads {FORMAT_VERSION}"
        )),
    }
}

fn take_entries(entries: &Map<String, Value>) -> TunedTable {
    let mut table = TunedTable::default();
    for (key, entry) in entries {
        match entry.get("config").and_then(Value::as_str) {
            Some(config) => table.choices.push((key.clone(), config.to_string())),
            None => table.dropped.push(format!("{key}: no config")),
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_tables_are_taken_as_they_are() {
        let json = r#"{"format_version": 3, "entries": {
            "t::add|[1024]|T=float32|H100|cands=2:a04ec941|code=0badf00d": {"config": "ALIGN=16", "time_ms": 0.1},
            "t::add|[2048]|T=float32|H100|cands=2:a04ec941|code=0badf00d": {"time_ms": 0.1}}}"#;
        let table = read_tuned_table(json).unwrap();
        assert_eq!(
            table.choices,
            vec![(
                "t::add|[1024]|T=float32|H100|cands=2:a04ec941|code=0badf00d".to_string(),
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
    fn unusable_tables_say_why() {
        for (json, why) in [
            ("not json", "not JSON"),
            (r#"{"format_version": 3}"#, "no `entries`"),
            (r#"{"entries": {}}"#, "no `format_version`"),
            (
                r#"{"format_version": 7, "entries": {}}"#,
                "format version 7",
            ),
            (
                r#"{"format_version": 2, "entries": {}}"#,
                "do not name the code",
            ),
            (
                r#"{"format_version": 1, "entries": {}}"#,
                "empty $TRITON_OPGEN_CACHE",
            ),
        ] {
            let err = read_tuned_table(json).unwrap_err();
            assert!(err.contains(why), "{json}: {err}");
        }
    }
}
