//! The autotune cache file under concurrency (issue 15): 8 processes saving
//! different shapes into one file at once lose no entry and never leave it
//! unreadable; a write cut short (a stray temp file, the process gone before
//! its rename) leaves the last complete cache.

use opgen_runtime::{TuneCache, TunedChoice};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

const WRITERS: usize = 8;
const KEYS_EACH: usize = 25;

fn choice(config: &str) -> TunedChoice {
    TunedChoice {
        config: config.to_string(),
        time_ms: 1.0,
        timings_ms: BTreeMap::new(),
    }
}

/// Run as a child process by the test below (ignored otherwise): opens the
/// cache named in the environment and saves after each of its keys.
#[test]
#[ignore = "a child of eight_processes_saving_at_once_lose_no_entry"]
fn cache_writer_child() {
    let (Ok(path), Ok(who)) = (
        std::env::var("OPGEN_TEST_CACHE"),
        std::env::var("OPGEN_TEST_WRITER"),
    ) else {
        return;
    };
    for k in 0..KEYS_EACH {
        // A fresh open each time, as separate op calls of a process would see it.
        let mut cache = TuneCache::open(&path);
        cache.insert(
            format!("op|[{who}x{k}]|f16|GPU|cands=1:0"),
            choice(&format!("W{who}K{k}")),
        );
        cache.save().expect("save");
    }
}

#[test]
fn eight_processes_saving_at_once_lose_no_entry() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().join("autotune.json");
    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..WRITERS)
        .map(|who| {
            Command::new(&exe)
                .args([
                    "cache_writer_child",
                    "--exact",
                    "--ignored",
                    "--test-threads",
                    "1",
                ])
                .env("OPGEN_TEST_CACHE", &path)
                .env("OPGEN_TEST_WRITER", who.to_string())
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("child starts")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let cache = TuneCache::open(&path);
    assert_eq!(
        cache.load_status(),
        &opgen_runtime::autotune::CacheLoad::Loaded {
            entries: WRITERS * KEYS_EACH
        }
    );
    for who in 0..WRITERS {
        for k in 0..KEYS_EACH {
            let key = format!("op|[{who}x{k}]|f16|GPU|cands=1:0");
            assert_eq!(
                cache.get(&key).map(|c| c.config.as_str()),
                Some(format!("W{who}K{k}").as_str())
            );
        }
    }
    // No temp file is left behind by a completed save.
    let strays: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(strays.is_empty(), "{strays:?}");
}

#[test]
fn a_write_cut_short_leaves_the_last_complete_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("autotune.json");
    let mut cache = TuneCache::open(&path);
    cache.insert("op|[1]|f16|GPU|cands=1:0".into(), choice("A"));
    cache.save().unwrap();
    // A process killed mid-write: its temp file is half written, never renamed.
    std::fs::write(
        dir.path().join(".autotune.json.4242.0.tmp"),
        b"{\"format_version\": 3, \"entr",
    )
    .unwrap();
    let mut again = TuneCache::open(&path);
    assert_eq!(
        again
            .get("op|[1]|f16|GPU|cands=1:0")
            .map(|c| c.config.as_str()),
        Some("A")
    );
    again.insert("op|[2]|f16|GPU|cands=1:0".into(), choice("B"));
    again.save().unwrap();
    assert_eq!(TuneCache::open(&path).len(), 2);
}
