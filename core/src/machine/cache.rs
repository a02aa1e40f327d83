//! The per-user cache of what library files said in the probe process
//! (`machine::versions`), so that a report asks each file once: asking
//! means loading it, which for a real cuDNN is hundreds of MB and, for a
//! sub-library's check, initialising the driver.
//!
//! * **Where**: `$XDG_CACHE_HOME/cudnn-trace/versions/`, else
//!   `~/.cache/cudnn-trace/versions/` (next to the extracted shim,
//!   `launch::shim`); never a shared directory such as `/tmp`, where
//!   another user could plant answers. No usable location: no cache.
//! * **Key**: what was asked (the kind of question, the function) and the
//!   file's identity as `stat` and its ELF notes give it ([`Stamp`]: device,
//!   inode, size, modification and change times, GNU build-id), plus the
//!   identity of the core library a sub-library was checked against. A
//!   file rewritten in place, replaced, or a check against another core is
//!   another key: nothing is invalidated, a stale entry is never found.
//! * **Trust**: the directory must belong to the effective user and be
//!   writable by nobody else (mode 0700 when we create it); an entry is
//!   used only when it is a regular file of ours (never a symlink), smaller
//!   than [`MAX_ENTRY_BYTES`], and holds the full key it was looked up by
//!   (the file name is only a hash of it).
//! * **Size**: at most [`MAX_ENTRIES`] entries of a few hundred bytes;
//!   writing one more removes the oldest down to [`KEEP_ENTRIES`].
//! * Entries are written to a temporary file (mode 0600) and renamed, so a
//!   reader never sees half an entry. Only answers are kept, never a
//!   failure (a timeout may not happen again).

use super::probe::Answer;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Bump when the meaning of an entry changes.
const CACHE_VERSION: u32 = 1;
/// Most entries kept.
pub const MAX_ENTRIES: usize = 1000;
/// What a full cache is cut down to.
pub const KEEP_ENTRIES: usize = 800;
/// Larger files are not entries.
pub const MAX_ENTRY_BYTES: u64 = 64 << 10;

/// A file's identity: enough to tell that it is still the same file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Modification and change times, nanoseconds since the epoch.
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    /// GNU build-id, lowercase hex, when the file has one.
    pub build_id: Option<String>,
}

/// What an entry answers: a question about one file (and the core library
/// a check ran against).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Key {
    pub v: u32,
    /// `cudnn-core`, `cudnn-check`, `runtime`, `driver`.
    pub ask: String,
    /// The `*VersionCheck` of a check.
    pub function: Option<String>,
    pub file: Stamp,
    /// The core library a check ran against.
    pub core: Option<Stamp>,
}

impl Key {
    pub fn new(ask: &str, function: Option<&str>, file: Stamp, core: Option<Stamp>) -> Key {
        Key {
            v: CACHE_VERSION,
            ask: ask.to_string(),
            function: function.map(str::to_string),
            file,
            core,
        }
    }

    /// The entry's file name: a hash of the key (FNV-1a, 64 bits, over its
    /// JSON; the entry holds the key itself, so a collision is harmless).
    fn file_name(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in json {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        format!("{h:016x}.json")
    }
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: Key,
    /// The path it was asked at (for a person reading the cache).
    path: String,
    answer: Answer,
}

/// The cache directory, checked and ready.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
    euid: u32,
}

impl Cache {
    /// Where the cache is for this user: `$XDG_CACHE_HOME` (absolute), else
    /// `$HOME/.cache`, then `cudnn-trace/versions`.
    pub fn default_dir() -> Option<PathBuf> {
        let abs = |k: &str| {
            std::env::var_os(k)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let base = abs("XDG_CACHE_HOME").or_else(|| abs("HOME").map(|h| h.join(".cache")))?;
        Some(base.join("cudnn-trace").join("versions"))
    }

    /// The cache at `dir`, created (mode 0700) when missing; None when it
    /// cannot be made or someone else could change it.
    pub fn open(dir: &Path) -> Option<Cache> {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        if !dir.is_dir() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .ok()?;
        }
        let md = fs::symlink_metadata(dir).ok()?;
        let private = md.is_dir() && md.uid() == euid && md.mode() & 0o022 == 0;
        private.then(|| Cache {
            dir: dir.to_path_buf(),
            euid,
        })
    }

    /// The answer stored for `key`, if a trustworthy entry holds it.
    pub fn get(&self, key: &Key) -> Option<Answer> {
        let path = self.dir.join(key.file_name());
        let f = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .ok()?;
        let md = f.metadata().ok()?;
        if !md.is_file() || md.uid() != self.euid || md.len() > MAX_ENTRY_BYTES {
            return None;
        }
        let mut text = Vec::new();
        f.take(MAX_ENTRY_BYTES).read_to_end(&mut text).ok()?;
        let e: Entry = serde_json::from_slice(&text).ok()?;
        (e.key == *key).then_some(e.answer)
    }

    /// Stores an answer (best effort: a cache that cannot be written is no
    /// error), then keeps the cache within its bounds.
    pub fn put(&self, key: &Key, path: &str, answer: &Answer) {
        let entry = Entry {
            key: key.clone(),
            path: path.to_string(),
            answer: answer.clone(),
        };
        let Ok(text) = serde_json::to_vec(&entry) else {
            return;
        };
        let name = key.file_name();
        let tmp = self.dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&text));
        if written.is_err() || fs::rename(&tmp, self.dir.join(name)).is_err() {
            let _ = fs::remove_file(&tmp);
            return;
        }
        self.trim();
    }

    /// Removes the oldest entries when there are more than [`MAX_ENTRIES`].
    fn trim(&self) {
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let mut entries: Vec<((i64, i64), PathBuf)> = rd
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .filter_map(|e| {
                let md = e.metadata().ok()?;
                Some(((md.mtime(), md.mtime_nsec()), e.path()))
            })
            .collect();
        if entries.len() <= MAX_ENTRIES {
            return;
        }
        entries.sort();
        let extra = entries.len() - KEEP_ENTRIES;
        for (_, p) in entries.into_iter().take(extra) {
            let _ = fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn stamp(ino: u64) -> Stamp {
        Stamp {
            dev: 1,
            ino,
            size: 10,
            mtime_ns: 5,
            ctime_ns: 6,
            build_id: Some("ab".into()),
        }
    }

    fn answer(v: i64) -> Answer {
        Answer {
            version: Some(v),
            ..Default::default()
        }
    }

    #[test]
    fn answers_come_back_by_their_key_only() {
        let d = crate::testutil::tempdir("cache").join("versions");
        let c = Cache::open(&d).unwrap();
        assert_eq!(
            fs::metadata(&d).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let k = Key::new("cudnn-core", None, stamp(1), None);
        assert_eq!(c.get(&k), None);
        c.put(&k, "/x/libcudnn_graph.so.9", &answer(91900));
        assert_eq!(c.get(&k), Some(answer(91900)));
        let entry = d.join(k.file_name());
        assert_eq!(
            fs::metadata(&entry).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // Another file, another time stamp, another core: other keys.
        let mut s = stamp(1);
        s.mtime_ns = 7;
        for other in [
            Key::new("cudnn-core", None, stamp(2), None),
            Key::new("cudnn-core", None, s, None),
            Key::new("cudnn-check", Some("f"), stamp(1), Some(stamp(3))),
        ] {
            assert_eq!(c.get(&other), None);
        }
        // An entry that holds another key (a collision, or planted) is not
        // an answer.
        let other = Key::new("driver", None, stamp(9), None);
        fs::copy(&entry, d.join(other.file_name())).unwrap();
        assert_eq!(c.get(&other), None);
        // Nor is a symlink to an entry, or garbage.
        let k3 = Key::new("runtime", None, stamp(3), None);
        std::os::unix::fs::symlink(&entry, d.join(k3.file_name())).unwrap();
        assert_eq!(c.get(&k3), None);
        let k4 = Key::new("runtime", None, stamp(4), None);
        fs::write(d.join(k4.file_name()), "{not json").unwrap();
        assert_eq!(c.get(&k4), None);
    }

    #[test]
    fn a_directory_others_can_write_is_not_used() {
        let d = crate::testutil::tempdir("cache-open");
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(Cache::open(&d).is_none());
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(Cache::open(&d).is_some());
        let link = d.with_extension("link");
        std::os::unix::fs::symlink(&d, &link).unwrap();
        assert!(Cache::open(&link).is_none(), "a symlinked directory");
    }

    #[test]
    fn the_cache_stays_bounded() {
        let d = crate::testutil::tempdir("cache-bound");
        let c = Cache::open(&d).unwrap();
        for i in 0..(MAX_ENTRIES as u64 + 1) {
            c.put(&Key::new("driver", None, stamp(i), None), "/d", &answer(1));
        }
        let n = fs::read_dir(&d).unwrap().count();
        assert_eq!(n, KEEP_ENTRIES);
    }
}
