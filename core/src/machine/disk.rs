//! The file system behind [`Machine`](super::Machine): the few questions the
//! analysis asks of a disk, behind a trait so that the rules' tests answer
//! them from a fake disk (`FakeDisk`) and the real one is read in one
//! place ([`RealDisk`]). Nothing here is cached: the `Machine` keeps the
//! answers.

use super::Stamp;
use crate::model::elf::{self, DynInfo};
use crate::model::path::{from_os, fs_path};
#[cfg(test)]
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The machine's files, as far as the analysis needs them.
pub trait Disk {
    /// File and directory names in a directory (empty when unreadable).
    fn list_dir(&self, dir: &str) -> Vec<String>;
    /// Whether a path names an existing file (following symlinks).
    fn exists(&self, path: &str) -> bool;
    /// `(dev, ino)` of the file a path names (following symlinks).
    fn identity(&self, path: &str) -> Option<(u64, u64)>;
    /// The path with symlinks resolved.
    fn canonical(&self, path: &str) -> Option<String>;
    /// The ld.so cache: `(name, path)` pairs, as `ldconfig -p` lists them.
    fn ld_cache(&self) -> Vec<(String, String)>;
    /// DT_RPATH / DT_RUNPATH / DT_NEEDED / DT_SONAME of an ELF file.
    fn dynamic(&self, path: &str) -> Option<DynInfo>;
    /// The loaded NVIDIA kernel module's version (`/proc/driver/nvidia/version`).
    fn kernel_driver(&self) -> Option<String>;
    /// This machine's host name (to tell whether the trace came from here).
    fn hostname(&self) -> Option<String>;
    /// The identity of the file a path names (following symlinks), to
    /// compare with the one a trace recorded.
    fn stamp(&self, path: &str) -> Option<Stamp>;
    /// A regular file's text (invalid UTF-8 replaced), when it is at most
    /// `max` bytes.
    fn read_text(&self, path: &str, max: usize) -> Option<String>;
    /// Whether the report may load the library at `path` in a probe
    /// process: Err says why not (someone other than this user or root
    /// could have put code there).
    fn loadable(&self, path: &str) -> Result<(), String>;
}

/// The disk of the machine this runs on.
pub struct RealDisk;

/// Most directory entries read from one directory.
const MAX_ENTRIES: usize = 20_000;

impl Disk for RealDisk {
    fn list_dir(&self, dir: &str) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(fs_path(dir)) else {
            return Vec::new();
        };
        rd.flatten()
            .take(MAX_ENTRIES)
            .map(|e| from_os(&e.file_name()))
            .collect()
    }
    fn exists(&self, path: &str) -> bool {
        std::fs::metadata(fs_path(path)).is_ok_and(|m| m.is_file())
    }
    fn identity(&self, path: &str) -> Option<(u64, u64)> {
        std::fs::metadata(fs_path(path))
            .ok()
            .map(|m| (m.dev(), m.ino()))
    }
    fn canonical(&self, path: &str) -> Option<String> {
        std::fs::canonicalize(fs_path(path))
            .ok()
            .map(|p| from_os(p.as_os_str()))
    }
    fn ld_cache(&self) -> Vec<(String, String)> {
        super::ldcache::read()
    }
    fn dynamic(&self, path: &str) -> Option<DynInfo> {
        elf::read_dynamic(&fs_path(path))
    }
    fn kernel_driver(&self) -> Option<String> {
        let ok = std::fs::metadata("/proc/driver/nvidia/version").is_ok_and(|m| m.is_file());
        if !ok {
            return None;
        }
        let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
        parse_nvrm_version(&text)
    }
    fn hostname(&self) -> Option<String> {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its length; gethostname writes at most that.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if r != 0 {
            return None;
        }
        let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
        std::str::from_utf8(&buf[..end]).ok().map(str::to_string)
    }
    fn stamp(&self, path: &str) -> Option<Stamp> {
        let md = std::fs::metadata(fs_path(path)).ok()?;
        if !md.is_file() {
            return None;
        }
        let build_id = std::fs::File::open(fs_path(path))
            .ok()
            .and_then(|mut f| elf::build_id(&mut f));
        Some(Stamp {
            dev: md.dev(),
            ino: md.ino(),
            size: md.size(),
            mtime_ns: md.mtime() * 1_000_000_000 + md.mtime_nsec(),
            ctime_ns: md.ctime() * 1_000_000_000 + md.ctime_nsec(),
            build_id,
        })
    }
    fn loadable(&self, path: &str) -> Result<(), String> {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        let real = std::fs::canonicalize(fs_path(path))
            .map_err(|e| crate::model::io_err(&fs_path(path), &e))?;
        let ours = |uid: u32| uid == euid || uid == 0;
        let md = std::fs::metadata(&real).map_err(|e| crate::model::io_err(&real, &e))?;
        if !ours(md.uid()) {
            return Err(format!(
                "{} belongs to uid {}, neither you nor root: the report does not load it",
                real.display(),
                md.uid()
            ));
        }
        if md.mode() & 0o022 != 0 {
            return Err(format!(
                "{} is writable by group or others (mode {:o}): the report does not load it",
                real.display(),
                md.mode() & 0o777
            ));
        }
        let dir = real.parent().unwrap_or(Path::new("/"));
        let dm = std::fs::metadata(dir).map_err(|e| crate::model::io_err(dir, &e))?;
        let sticky = dm.mode() & 0o1000 != 0;
        if !ours(dm.uid()) || (dm.mode() & 0o022 != 0 && !sticky) {
            return Err(format!(
                "its directory {} can be changed by others: the report does not load files from it",
                dir.display()
            ));
        }
        Ok(())
    }
    fn read_text(&self, path: &str, max: usize) -> Option<String> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        // Non-blocking, checked once open: a FIFO must not hang the report.
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(fs_path(path))
            .ok()?;
        let md = f.metadata().ok()?;
        if !md.is_file() || md.len() > max as u64 {
            return None;
        }
        let mut bytes = Vec::new();
        f.take(max as u64).read_to_end(&mut bytes).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  …` → `580.159.04`
/// (the driver's `/proc/driver/nvidia/version` \[E10\]).
pub fn parse_nvrm_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|w| {
            w.contains('.')
                && w.split('.').count() >= 2
                && w.split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        })
        .map(str::to_string)
}

/// A fake disk for tests: files with identities, ELF dynamic info,
/// symlinks, a cache and a kernel driver.
#[cfg(test)]
#[derive(Default, Clone)]
pub struct FakeDisk {
    /// path → (dev, ino); a symlink maps to its target's identity.
    pub files: BTreeMap<String, (u64, u64)>,
    /// symlink path → target path.
    pub links: BTreeMap<String, String>,
    pub dynamic: BTreeMap<String, DynInfo>,
    pub cache: Vec<(String, String)>,
    pub kernel: Option<String>,
    pub host: Option<String>,
    pub extra_dirs: BTreeSet<String>,
    /// Identities of files (see [`FakeDisk::with_stamp`]).
    pub stamps: BTreeMap<String, Stamp>,
    /// Contents of text files (`RECORD`s).
    pub texts: BTreeMap<String, String>,
    /// Files the report must not load, and why.
    pub not_loadable: BTreeMap<String, String>,
}

#[cfg(test)]
impl FakeDisk {
    pub fn file(&mut self, path: &str) -> &mut Self {
        let n = self.files.len() as u64 + 100;
        self.files.insert(path.to_string(), (1, n));
        self
    }
    pub fn link(&mut self, path: &str, target: &str) -> &mut Self {
        let id = self.files.get(target).copied().unwrap_or((9, 9));
        self.files.insert(path.to_string(), id);
        self.links.insert(path.to_string(), target.to_string());
        self
    }
    pub fn dir(&mut self, path: &str) -> &mut Self {
        self.extra_dirs
            .insert(path.trim_end_matches('/').to_string());
        self
    }
    /// A file with this identity (also a file for the other questions).
    pub fn with_stamp(&mut self, path: &str, s: Stamp) -> &mut Self {
        self.files.insert(path.to_string(), (s.dev, s.ino));
        self.stamps.insert(path.to_string(), s);
        self
    }
    pub fn elf(&mut self, path: &str, d: DynInfo) -> &mut Self {
        if !self.files.contains_key(path) {
            self.file(path);
        }
        self.dynamic.insert(path.to_string(), d);
        self
    }
}

#[cfg(test)]
impl Disk for FakeDisk {
    fn list_dir(&self, dir: &str) -> Vec<String> {
        let d = format!("{}/", dir.trim_end_matches('/'));
        let mut out = BTreeSet::new();
        for p in self.files.keys().chain(self.extra_dirs.iter()) {
            if let Some(rest) = p.strip_prefix(&d) {
                if let Some(first) = rest.split('/').next().filter(|s| !s.is_empty()) {
                    out.insert(first.to_string());
                }
            }
        }
        out.into_iter().collect()
    }
    fn exists(&self, path: &str) -> bool {
        self.files.contains_key(path)
    }
    fn identity(&self, path: &str) -> Option<(u64, u64)> {
        self.files.get(path).copied()
    }
    fn canonical(&self, path: &str) -> Option<String> {
        if !self.files.contains_key(path) {
            return None;
        }
        let mut p = path.to_string();
        for _ in 0..8 {
            match self.links.get(&p) {
                Some(t) => p = t.clone(),
                None => break,
            }
        }
        Some(p)
    }
    fn ld_cache(&self) -> Vec<(String, String)> {
        self.cache.clone()
    }
    fn dynamic(&self, path: &str) -> Option<DynInfo> {
        self.dynamic.get(path).cloned()
    }
    fn kernel_driver(&self) -> Option<String> {
        self.kernel.clone()
    }
    fn hostname(&self) -> Option<String> {
        self.host.clone()
    }
    /// The identity given with [`FakeDisk::with_stamp`]; other files have none
    /// (as if they could not be read).
    fn stamp(&self, path: &str) -> Option<Stamp> {
        let p = self.canonical(path)?;
        self.stamps
            .get(&p)
            .or_else(|| self.stamps.get(path))
            .cloned()
    }
    fn read_text(&self, path: &str, max: usize) -> Option<String> {
        self.texts.get(path).filter(|t| t.len() <= max).cloned()
    }
    fn loadable(&self, path: &str) -> Result<(), String> {
        match self.not_loadable.get(path) {
            Some(why) => Err(why.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_of_this_user_or_root_are_loadable() {
        use std::os::unix::fs::PermissionsExt;
        let d = crate::testutil::tempdir("loadable");
        let f = d.join("libx.so");
        std::fs::write(&f, b"x").unwrap();
        let p = f.to_str().unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(RealDisk.loadable(p), Ok(()));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(RealDisk
            .loadable(p)
            .unwrap_err()
            .contains("writable by group or others (mode 666)"));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(RealDisk
            .loadable(p)
            .unwrap_err()
            .contains("can be changed by others"));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o1777)).unwrap();
        assert_eq!(RealDisk.loadable(p), Ok(()), "sticky, like /tmp");
        // Root's files are fine (a system library).
        if Path::new("/bin/sh").exists() {
            assert_eq!(RealDisk.loadable("/bin/sh"), Ok(()));
        }
    }

    #[test]
    fn nvrm_version() {
        let t = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  2 2025\nGCC version:  gcc version 12\n";
        assert_eq!(parse_nvrm_version(t).as_deref(), Some("580.159.04"));
        assert_eq!(parse_nvrm_version("nothing"), None);
    }
}
