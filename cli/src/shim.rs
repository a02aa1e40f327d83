//! The embedded shim: where it lives on disk at run time.
//!
//! `build.rs` embeds `libcdtrace.so`; the first run extracts it (write to a
//! temporary file, then `rename`, mode 0755) to
//! `$XDG_CACHE_HOME/cudnn-trace/<version>-<hash>/libcdtrace.so`, else
//! `~/.cache/cudnn-trace/…`, else `/tmp/cudnn-trace-<uid>/…`. Later runs reuse
//! the file when its content is identical. A location whose path the loader
//! could not take (space or colon: LD_PRELOAD/LD_AUDIT separators; `$`: a
//! dynamic string token), that cannot be written, or that is mounted `noexec`
//! is skipped.

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Overrides the shim path (development: point at `target/release/libcdtrace.so`).
pub const SHIM_PATH_ENV: &str = "CUDNN_TRACE_SHIM_PATH";

/// File name of the shim (also used to recognise our own entries in
/// LD_PRELOAD/LD_AUDIT).
pub const SHIM_FILE: &str = "libcdtrace.so";

static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcdtrace.so"));

/// The embedded shim, or None when the build could not produce it.
pub fn embedded() -> Option<&'static [u8]> {
    (!EMBEDDED.is_empty()).then_some(EMBEDDED)
}

/// 64-bit FNV-1a, as 16 hex digits: names the extraction directory. The
/// content is compared byte for byte before reuse, so this needs no
/// cryptographic strength.
pub fn content_hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Whether the dynamic loader can take this path in LD_PRELOAD and LD_AUDIT
/// as one absolute entry.
pub fn loader_safe(path: &Path) -> bool {
    let b = path.as_os_str().as_bytes();
    path.is_absolute()
        && !b.is_empty()
        && !b
            .iter()
            .any(|c| matches!(c, b' ' | b':' | b'$' | b'\n' | b'\t'))
}

/// Where the shim for this run is, extracting it when needed.
pub fn locate() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os(SHIM_PATH_ENV).filter(|p| !p.is_empty()) {
        return from_override(p);
    }
    let bytes = embedded().ok_or_else(|| {
        format!(
            "this cudnn-trace binary was built without its shim (the nested build of \
             cudnn-trace-shim failed; see the cargo warnings of the build). \
             Build it with `cargo build --release -p cudnn-trace-shim` and set \
             {SHIM_PATH_ENV}=/path/to/{SHIM_FILE}"
        )
    })?;
    let leaf = format!("{}-{}", env!("CARGO_PKG_VERSION"), content_hash(bytes));
    let mut why = Vec::new();
    for base in candidate_bases() {
        let dir = base.dir.join(&leaf);
        let path = dir.join(SHIM_FILE);
        if !loader_safe(&path) {
            why.push(format!(
                "{}: path has a space, colon or '$' (the loader cannot take it)",
                path.display()
            ));
            continue;
        }
        match extract_into(&base, &dir, &path, bytes) {
            Ok(()) => return Ok(path),
            Err(e) => why.push(format!("{}: {e}", path.display())),
        }
    }
    Err(format!(
        "cannot extract the shim to any cache location:\n  {}\nset {SHIM_PATH_ENV} to a copy of {SHIM_FILE}",
        why.join("\n  ")
    ))
}

fn from_override(p: OsString) -> Result<PathBuf, String> {
    let p = PathBuf::from(p);
    let abs = fs::canonicalize(&p).map_err(|e| {
        format!(
            "{SHIM_PATH_ENV}={}: {}",
            p.display(),
            crate::trace::io_msg(&e)
        )
    })?;
    if !abs.is_file() {
        return Err(format!("{SHIM_PATH_ENV}={}: not a file", p.display()));
    }
    if !loader_safe(&abs) {
        return Err(format!(
            "{SHIM_PATH_ENV}={}: the path contains a space, colon or '$', which LD_PRELOAD/LD_AUDIT cannot take",
            abs.display()
        ));
    }
    Ok(abs)
}

struct Base {
    /// `<cache>/cudnn-trace` or `/tmp/cudnn-trace-<uid>`.
    dir: PathBuf,
    /// In a shared directory (/tmp): must be ours and private.
    shared: bool,
}

fn candidate_bases() -> Vec<Base> {
    let mut v = Vec::new();
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
        // The XDG spec says relative values are invalid and must be ignored.
        if x.is_absolute() {
            v.push(Base {
                dir: x.join("cudnn-trace"),
                shared: false,
            });
        }
    }
    if let Some(h) = std::env::var_os("HOME").map(PathBuf::from) {
        if h.is_absolute() {
            v.push(Base {
                dir: h.join(".cache").join("cudnn-trace"),
                shared: false,
            });
        }
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    v.push(Base {
        dir: PathBuf::from(format!("/tmp/cudnn-trace-{uid}")),
        shared: true,
    });
    v
}

fn extract_into(base: &Base, dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), String> {
    if base.shared {
        private_dir(&base.dir)?;
    } else {
        fs::create_dir_all(&base.dir).map_err(|e| crate::trace::io_msg(&e))?;
    }
    match fs::DirBuilder::new().mode(0o755).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(crate::trace::io_msg(&e)),
    }
    if noexec(dir) {
        return Err("mounted noexec (the loader could not map the shim)".into());
    }
    if let Ok(existing) = fs::read(path) {
        if existing == bytes {
            return Ok(());
        }
    }
    // Write a private temporary file, then rename it over the final name:
    // concurrent launchers each see either no file or a complete one.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{SHIM_FILE}.{}.{nanos}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(0o755))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        crate::trace::io_msg(&e)
    })
}

/// Creates (or checks) a directory in a world-writable place: it must be a
/// real directory owned by us and writable by nobody else, or another user
/// could plant a library that we would inject.
fn private_dir(dir: &Path) -> Result<(), String> {
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(crate::trace::io_msg(&e)),
    }
    let md = fs::symlink_metadata(dir).map_err(|e| crate::trace::io_msg(&e))?;
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    if !md.file_type().is_dir() || md.uid() != uid || md.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is not a private directory owned by uid {uid}; not using it",
            dir.display()
        ));
    }
    Ok(())
}

fn noexec(dir: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: zeroed statvfs is a valid out-parameter; c is a valid C string.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    rc == 0 && st.f_flag & libc::ST_NOEXEC != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_safe_paths() {
        assert!(loader_safe(Path::new(
            "/home/a/.cache/cudnn-trace/0.1.0-00ff/libcdtrace.so"
        )));
        assert!(!loader_safe(Path::new("/home/a b/.cache/libcdtrace.so")));
        assert!(!loader_safe(Path::new("/home/a:b/libcdtrace.so")));
        assert!(!loader_safe(Path::new("/home/$LIB/libcdtrace.so")));
        assert!(!loader_safe(Path::new("relative/libcdtrace.so")));
    }

    #[test]
    fn hash_is_stable() {
        assert_eq!(content_hash(b""), "cbf29ce484222325");
        assert_eq!(content_hash(b"a"), "af63dc4c8601ec8c");
        assert_ne!(content_hash(b"ab"), content_hash(b"ba"));
    }

    #[test]
    fn extracts_once_and_reuses() {
        let tmp = crate::testutil::tempdir("shim");
        let base = Base {
            dir: tmp.join("cache/cudnn-trace"),
            shared: false,
        };
        let dir = base.dir.join("v-h");
        let path = dir.join(SHIM_FILE);
        extract_into(&base, &dir, &path, b"\x7fELF fake").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"\x7fELF fake");
        let md = fs::metadata(&path).unwrap();
        assert_eq!(md.mode() & 0o777, 0o755);
        let ino = md.ino();
        // Identical: reused as is.
        extract_into(&base, &dir, &path, b"\x7fELF fake").unwrap();
        assert_eq!(fs::metadata(&path).unwrap().ino(), ino);
        // Different content (corrupted copy): replaced.
        fs::write(&path, b"junk").unwrap();
        extract_into(&base, &dir, &path, b"\x7fELF fake").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"\x7fELF fake");
        // No temporary files left behind.
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
    }

    #[test]
    fn shared_dir_must_be_private() {
        let tmp = crate::testutil::tempdir("shimpriv");
        let d = tmp.join("open");
        fs::create_dir(&d).unwrap();
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        assert!(private_dir(&d).is_err());
        let p = tmp.join("mine");
        private_dir(&p).unwrap();
        assert_eq!(fs::metadata(&p).unwrap().mode() & 0o777, 0o700);
    }
}
