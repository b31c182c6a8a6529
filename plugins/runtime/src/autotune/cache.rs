//! The autotune cache file: `{"format_version": 3, "entries": {key: choice}}`.
//! Read once, tolerant of anything (missing, corrupt, another version: it
//! starts empty and is rebuilt), written atomically (temp file + rename),
//! merged with what other processes wrote meanwhile.

use crate::error::{Result, RuntimeError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bump when the file's meaning changes; other versions are ignored.
/// 2: keys end with the candidate set (`|cands=N:fingerprint`); a version 1
/// choice may have been tuned without the variants a call now admits.
/// 3: keys of ops that know their compiled images end with `|code=fingerprint`;
/// a version 2 choice may have been timed on other code under the same config
/// names (an edited kernel, another compiler or other flags).
pub const FORMAT_VERSION: u32 = 3;

/// Names the cache: a `.json` file, or a folder that gets `autotune.json`.
pub const CACHE_ENV: &str = "TRITON_OPGEN_CACHE";

const FILE_NAME: &str = "autotune.json";

/// The config chosen for one key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TunedChoice {
    /// The config id, e.g. `SIZE=512,num_warps=4`.
    pub config: String,
    /// Its median time, milliseconds.
    pub time_ms: f64,
    /// Median time of every config benchmarked, for the record.
    #[serde(default)]
    pub timings_ms: BTreeMap<String, f64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct CacheFile {
    format_version: u32,
    entries: BTreeMap<String, TunedChoice>,
}

/// What opening the cache found.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheLoad {
    /// No file (or no path): start empty.
    Missing,
    Loaded {
        entries: usize,
    },
    /// Not JSON of our shape: ignored, rebuilt on the next save.
    Corrupt(String),
    /// Written by another format version: ignored, rebuilt.
    OtherVersion(u64),
    /// Exists but cannot be read (permissions...): ignored.
    Unreadable(String),
}

#[derive(Debug)]
pub struct TuneCache {
    path: Option<PathBuf>,
    entries: BTreeMap<String, TunedChoice>,
    load: CacheLoad,
}

/// `$TRITON_OPGEN_CACHE` (a `.json` file, or a folder holding
/// `autotune.json`), else `<user cache dir>/triton-opgen/autotune.json`.
pub fn default_cache_path() -> Option<PathBuf> {
    match std::env::var_os(CACHE_ENV) {
        Some(value) if !value.is_empty() => {
            let path = PathBuf::from(value);
            if path.extension().is_some_and(|e| e == "json") {
                Some(path)
            } else {
                Some(path.join(FILE_NAME))
            }
        }
        _ => dirs::cache_dir().map(|d| d.join("triton-opgen").join(FILE_NAME)),
    }
}

impl TuneCache {
    /// Reads the cache at `path`; never fails (see [`CacheLoad`]).
    pub fn open(path: impl Into<PathBuf>) -> TuneCache {
        let path = path.into();
        let (entries, load) = read_entries(&path);
        TuneCache {
            path: Some(path),
            entries,
            load,
        }
    }

    /// The cache at [`default_cache_path`], or a memory-only one when there is
    /// no cache folder at all.
    pub fn open_default() -> TuneCache {
        match default_cache_path() {
            Some(path) => TuneCache::open(path),
            None => TuneCache::in_memory(),
        }
    }

    /// A cache that is never written.
    pub fn in_memory() -> TuneCache {
        TuneCache {
            path: None,
            entries: BTreeMap::new(),
            load: CacheLoad::Missing,
        }
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    pub fn load_status(&self) -> &CacheLoad {
        &self.load
    }

    pub fn get(&self, key: &str) -> Option<&TunedChoice> {
        self.entries.get(key)
    }

    pub fn insert(&mut self, key: String, choice: TunedChoice) {
        self.entries.insert(key, choice);
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Writes the cache, keeping entries another process saved since we
    /// read it (ours win on the same key). No-op for a memory-only cache.
    /// The read, merge and write hold an exclusive lock on `PATH.lock`, so
    /// processes saving at once (one per GPU under torchrun) lose no entry;
    /// where the file system has no locks it goes on without one.
    pub fn save(&mut self) -> Result<()> {
        let Some(path) = self.path.clone() else {
            return Ok(());
        };
        let _lock = lock_for(&path);
        let (on_disk, _) = read_entries(&path);
        for (key, choice) in on_disk {
            self.entries.entry(key).or_insert(choice);
        }
        let file = CacheFile {
            format_version: FORMAT_VERSION,
            entries: self.entries.clone(),
        };
        let json = serde_json::to_string_pretty(&file).map_err(|e| RuntimeError::Io {
            path: path.clone(),
            source: std::io::Error::other(e),
        })?;
        write_atomically(&path, format!("{json}\n").as_bytes())
    }
}

/// An exclusive lock on `path` + `.lock` (released when dropped), or None
/// where it cannot be had (no folder yet is created first).
fn lock_for(path: &Path) -> Option<std::fs::File> {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let lock_path = PathBuf::from(name);
    if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        let _ = std::fs::create_dir_all(dir);
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .ok()?;
    file.lock().ok()?;
    Some(file)
}

fn read_entries(path: &Path) -> (BTreeMap<String, TunedChoice>, CacheLoad) {
    let empty = BTreeMap::new();
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (empty, CacheLoad::Missing),
        Err(e) => return (empty, CacheLoad::Unreadable(e.to_string())),
    };
    let value: serde_json::Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return (empty, CacheLoad::Corrupt(e.to_string())),
    };
    match value.get("format_version").and_then(|v| v.as_u64()) {
        Some(v) if v == FORMAT_VERSION as u64 => {}
        Some(v) => return (empty, CacheLoad::OtherVersion(v)),
        None => return (empty, CacheLoad::Corrupt("no format_version".to_string())),
    }
    match serde_json::from_value::<CacheFile>(value) {
        Ok(file) => {
            let entries = file.entries.len();
            (file.entries, CacheLoad::Loaded { entries })
        }
        Err(e) => (empty, CacheLoad::Corrupt(e.to_string())),
    }
}

/// Writes `bytes` to a temp file in `path`'s folder, syncs it, then renames
/// it over `path`: readers see the old file or the new one, never half.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let io = |source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(io)?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(FILE_NAME);
    let temp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choice(config: &str, ms: f64) -> TunedChoice {
        TunedChoice {
            config: config.to_string(),
            time_ms: ms,
            timings_ms: BTreeMap::from([(config.to_string(), ms)]),
        }
    }

    #[test]
    fn save_then_open_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/autotune.json");
        let mut cache = TuneCache::open(&path);
        assert_eq!(cache.load_status(), &CacheLoad::Missing);
        cache.insert(
            "add|[1024]|f32|H100".into(),
            choice("SIZE=512,num_warps=4", 0.5),
        );
        cache.save().unwrap();

        let again = TuneCache::open(&path);
        assert_eq!(again.load_status(), &CacheLoad::Loaded { entries: 1 });
        assert_eq!(
            again.get("add|[1024]|f32|H100"),
            Some(&choice("SIZE=512,num_warps=4", 0.5))
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"format_version\": 3"), "{text}");
    }

    #[test]
    fn atomic_write_leaves_no_temp_files_and_replaces_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        std::fs::write(&path, "old content that is longer than the new one").unwrap();
        write_atomically(&path, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("autotune.json")]);
    }

    #[test]
    fn failed_write_reports_the_path_and_keeps_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        // The target is a folder: rename over it fails.
        let path = dir.path().join("autotune.json");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), "x").unwrap();
        let err = write_atomically(&path, b"new").unwrap_err();
        assert!(err.to_string().contains("autotune.json"), "{err}");
        assert!(path.join("keep").exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn corrupt_file_is_ignored_then_rebuilt() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        for garbage in [
            &b"\x00\xffnot json{{"[..],
            b"{\"format_version\": 3, \"entries\": 3}",
            b"[]",
        ] {
            std::fs::write(&path, garbage).unwrap();
            let mut cache = TuneCache::open(&path);
            assert!(
                matches!(cache.load_status(), CacheLoad::Corrupt(_)),
                "{:?}",
                cache.load_status()
            );
            assert!(cache.is_empty());
            cache.insert("k".into(), choice("A", 1.0));
            cache.save().unwrap();
            assert_eq!(
                TuneCache::open(&path).load_status(),
                &CacheLoad::Loaded { entries: 1 }
            );
        }
    }

    #[test]
    fn other_version_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        std::fs::write(
            &path,
            r#"{"format_version": 999, "entries": {"k": {"config": "A", "time_ms": 1.0}}}"#,
        )
        .unwrap();
        let mut cache = TuneCache::open(&path);
        assert_eq!(cache.load_status(), &CacheLoad::OtherVersion(999));
        assert!(cache.get("k").is_none());
        cache.insert("k2".into(), choice("B", 2.0));
        cache.save().unwrap();
        let again = TuneCache::open(&path);
        assert_eq!(again.load_status(), &CacheLoad::Loaded { entries: 1 });
        assert!(again.get("k").is_none());
    }

    #[test]
    fn version_1_and_2_choices_are_not_reused() {
        // Version 1 keys do not name the candidates they were tuned over,
        // version 2 keys not the code those candidates ran.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        for (version, key) in [
            (1, "dot|[1024]|f16|H100"),
            (2, "dot|[1024]|f16|H100|cands=1:0badf00d"),
        ] {
            let old = format!(
                r#"{{"format_version": {version}, "entries": {{"{key}": {{"config": "ALIGN=1", "time_ms": 1.0}}}}}}"#
            );
            std::fs::write(&path, old).unwrap();
            let cache = TuneCache::open(&path);
            assert_eq!(cache.load_status(), &CacheLoad::OtherVersion(version));
            assert!(cache.is_empty());
        }
    }

    #[test]
    fn save_merges_entries_other_processes_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("autotune.json");
        let mut first = TuneCache::open(&path);
        let mut second = TuneCache::open(&path);
        first.insert("a".into(), choice("A", 1.0));
        first.save().unwrap();
        second.insert("b".into(), choice("B", 2.0));
        second.save().unwrap();
        let merged = TuneCache::open(&path);
        assert_eq!(merged.len(), 2);
    }

    #[test]
    fn env_variable_names_file_or_folder() {
        // One test touches the variable, so no other test races on it.
        std::env::set_var(CACHE_ENV, "/tmp/x/my-cache.json");
        assert_eq!(
            default_cache_path(),
            Some(PathBuf::from("/tmp/x/my-cache.json"))
        );
        std::env::set_var(CACHE_ENV, "/tmp/x/cachedir");
        assert_eq!(
            default_cache_path(),
            Some(PathBuf::from("/tmp/x/cachedir/autotune.json"))
        );
        std::env::remove_var(CACHE_ENV);
        if let Some(p) = default_cache_path() {
            assert!(p.ends_with("triton-opgen/autotune.json"), "{}", p.display());
        }
    }

    #[test]
    fn memory_only_cache_never_writes() {
        let mut cache = TuneCache::in_memory();
        cache.insert("k".into(), choice("A", 1.0));
        cache.save().unwrap();
        assert_eq!(cache.path(), None);
        assert_eq!(cache.len(), 1);
    }
}
