//! The embedded shim: where it lives on disk at run time.
//!
//! `build.rs` embeds `libcdtrace.so` (the audit library),
//! `libcdtrace_preload.so` (its `LD_PRELOAD` helper, which must sit next to
//! it: [`preload_path`]) and `cdtrace-probe` (the version probe's process,
//! `machine::probe`: [`probe_helper`]); the first run extracts the shim's
//! pair, and the first probe the helper (write to a temporary file, then
//! `rename`, mode 0755), to
//! `$XDG_CACHE_HOME/cudnn-trace/<version>-<hash>/libcdtrace.so`, else
//! `~/.cache/cudnn-trace/…`, else `/tmp/cudnn-trace-<euid>/<version>-<hash>/…`,
//! else `$TMPDIR/cudnn-trace-<euid>/…`, else a fresh `mkdtemp` directory
//! (`cudnn-trace-<euid>-XXXXXX`), which the launcher removes when the run
//! is over (unless a process still maps it; a later run sweeps it then). As root (euid 0), whose `~/.cache` children
//! that drop privileges (gosu, su-exec, setpriv) cannot read, it first tries
//! locations all can read: `$XDG_CACHE_HOME/cudnn-trace/…` when every
//! directory of it is searchable by others, `/var/cache/cudnn-trace/…`,
//! `/tmp/cudnn-trace-0/…` (directories 0755), and only then its own cache.
//!
//! The shim is loaded into every traced process (and the helper runs with
//! the user's rights, as root too), so a location is used only
//! when nobody else can change it: every directory from the cache base down
//! to the version directory must be owned by the effective uid (or root) and
//! not writable by group or others, and the file must be a regular file (never
//! a symlink) owned by the effective uid with mode 0755. Later runs reuse the
//! file when it passes those checks and is the same build (its length and
//! its first page, which holds its build-id, are those of the embedded copy). A location
//! failing a check, whose path the loader could not take (space or colon:
//! LD_PRELOAD/LD_AUDIT separators; `$`: a dynamic string token), that cannot
//! be written, or that is mounted `noexec` is skipped.

use crate::model::io_err;
use std::ffi::{CString, OsString};
use std::fs;
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Overrides the shim path (development: point at `target/release/libcdtrace.so`).
pub const SHIM_PATH_ENV: &str = "CUDNN_TRACE_SHIM_PATH";

/// File name of the shim (also used to recognise our own entries in
/// LD_PRELOAD/LD_AUDIT).
pub const SHIM_FILE: &str = "libcdtrace.so";

static EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcdtrace.so"));
static EMBEDDED_PRELOAD: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libcdtrace_preload.so"));
static EMBEDDED_PROBE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cdtrace-probe"));
/// [`content_hash`] of the three, shim first, then its preload helper, then
/// the probe helper, computed by `build.rs`.
static EMBEDDED_HASH: &str = include_str!(concat!(env!("OUT_DIR"), "/embedded.hash"));

/// File name of the preload helper (`cdtrace_abi::bridge::PRELOAD_FILE`),
/// installed next to [`SHIM_FILE`]; the audit library recognises it by it.
pub const PRELOAD_FILE: &str = "libcdtrace_preload.so";

/// File name of the version probe helper (`probe/`), installed next to
/// [`SHIM_FILE`].
pub const PROBE_FILE: &str = "cdtrace-probe";

/// The embedded shim, or None when the build could not produce it.
pub fn embedded() -> Option<&'static [u8]> {
    [EMBEDDED, EMBEDDED_PRELOAD, EMBEDDED_PROBE]
        .iter()
        .all(|b| !b.is_empty())
        .then_some(EMBEDDED)
}

/// The embedded preload helper (present whenever [`embedded`] is).
pub fn embedded_preload() -> Option<&'static [u8]> {
    embedded().map(|_| EMBEDDED_PRELOAD)
}

/// The embedded probe helper (present whenever [`embedded`] is).
pub fn embedded_probe() -> Option<&'static [u8]> {
    embedded().map(|_| EMBEDDED_PROBE)
}

/// Where the preload helper of the shim at `shim` is: next to it. This is
/// the `LD_PRELOAD` entry; `shim` itself is the `LD_AUDIT` one.
pub fn preload_path(shim: &Path) -> PathBuf {
    shim.with_file_name(PRELOAD_FILE)
}

/// 64-bit FNV-1a, as 16 hex digits: names the extraction directory. An
/// extracted copy is checked before reuse ([`reusable`]), so this needs no
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

/// Why there is no shim for this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShimError {
    /// This binary was built without its shim.
    NotEmbedded(String),
    /// `CUDNN_TRACE_SHIM_PATH` names something the loader cannot use.
    BadOverride(String),
    /// No cache location passed the safety checks (or could be written): the
    /// program can still run, untraced. One line.
    NoSafeLocation(String),
}

impl ShimError {
    /// Whether the launcher should run the program untraced (with this
    /// message) rather than fail.
    pub fn run_untraced(&self) -> bool {
        matches!(self, ShimError::NoSafeLocation(_))
    }
}

impl std::fmt::Display for ShimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShimError::NotEmbedded(m)
            | ShimError::BadOverride(m)
            | ShimError::NoSafeLocation(m) => f.write_str(m),
        }
    }
}

/// Where the shim for this run is, extracting it when needed.
pub fn locate() -> Result<PathBuf, ShimError> {
    if let Some(p) = std::env::var_os(SHIM_PATH_ENV).filter(|p| !p.is_empty()) {
        return from_override(p).map_err(ShimError::BadOverride);
    }
    let bytes = embedded().ok_or_else(|| {
        ShimError::NotEmbedded(format!(
            "this cudnn-trace binary was built without its shim (the nested build of \
             cudnn-trace-shim failed; see the cargo warnings of the build). \
             Build it with `cargo build --release -p cudnn-trace-shim` and set \
             {SHIM_PATH_ENV}=/path/to/{SHIM_FILE}"
        ))
    })?;
    shim_in(&here(), bytes, euid())
}

/// The shim (`bytes`) and its preload helper in the first of `cands` that
/// takes them; the shim's path.
fn shim_in(cands: &[Candidate], bytes: &[u8], euid: u32) -> Result<PathBuf, ShimError> {
    let mut files = Vec::with_capacity(2);
    if let Some(helper) = embedded_preload() {
        files.push((PRELOAD_FILE, helper));
    }
    files.push((SHIM_FILE, bytes));
    locate_in(cands, &files, euid).map_err(|why| {
        ShimError::NoSafeLocation(format!(
            "cannot place the shim in a private location ({}); set {SHIM_PATH_ENV} to a copy of {SHIM_FILE}",
            why.join("; ")
        ))
    })
}

/// The version probe helper on disk, extracting it when needed: the
/// embedded one, into the shim's location (whichever shim the run uses).
/// Err: one line saying why there is none.
pub fn probe_helper() -> Result<PathBuf, String> {
    if embedded().is_none() {
        return Err(format!(
            "this cudnn-trace binary was built without its {PROBE_FILE} (the nested build \
             failed; see the cargo warnings of the build)"
        ));
    }
    probe_in(&here(), EMBEDDED_PROBE, euid())
}

/// The probe helper (`bytes`) in the first of `cands` that takes it.
fn probe_in(cands: &[Candidate], bytes: &[u8], euid: u32) -> Result<PathBuf, String> {
    locate_in(cands, &[(PROBE_FILE, bytes)], euid).map_err(|why| {
        format!(
            "cannot place {PROBE_FILE} in a private location ({})",
            why.join("; ")
        )
    })
}

/// This user's candidate locations for the embedded files.
fn here() -> Vec<Candidate> {
    let leaf = format!("{}-{}", env!("CARGO_PKG_VERSION"), EMBEDDED_HASH);
    candidates(euid(), &leaf, |k| std::env::var_os(k))
}

fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() }
}

/// Files installed together: (name, bytes), the last one's path returned.
type Files<'a> = [(&'a str, &'a [u8])];

/// The first candidate that passes the checks and takes `files`. Err: why
/// each candidate did not.
fn locate_in(cands: &[Candidate], files: &Files<'_>, euid: u32) -> Result<PathBuf, Vec<String>> {
    let mut why = Vec::new();
    for c in cands {
        let expected = c.expected();
        if !loader_safe(&expected) {
            why.push(format!(
                "{}: path has a space, colon or '$' (the loader cannot take it)",
                expected.display()
            ));
            continue;
        }
        let r = prepare(c, euid).and_then(|dir| {
            install(&dir, files, euid).inspect_err(|_| {
                if matches!(c.top, Top::Fresh { .. }) {
                    let _ = fs::remove_dir_all(&dir);
                }
            })
        });
        match r {
            Ok(p) => return Ok(p),
            Err(e) => why.push(format!("{}: {e}", expected.display())),
        }
    }
    Err(why)
}

fn from_override(p: OsString) -> Result<PathBuf, String> {
    let p = PathBuf::from(p);
    let abs = fs::canonicalize(&p).map_err(|e| {
        format!(
            "{SHIM_PATH_ENV}={}: {}",
            p.display(),
            crate::model::io_msg(&e)
        )
    })?;
    if !abs.is_file() {
        return Err(format!("{SHIM_PATH_ENV}={}: not a file", p.display()));
    }
    if !preload_path(&abs).is_file() {
        return Err(format!(
            "{SHIM_PATH_ENV}={}: no {PRELOAD_FILE} next to it (build it with `cargo build --release --manifest-path shim/preload/Cargo.toml` and copy it there)",
            p.display()
        ));
    }
    if !loader_safe(&abs) {
        return Err(format!(
            "{SHIM_PATH_ENV}={}: the path contains a space, colon or '$', which LD_PRELOAD/LD_AUDIT cannot take",
            abs.display()
        ));
    }
    Ok(abs)
}

/// Where a candidate location starts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Top {
    /// The user's cache base (`$XDG_CACHE_HOME`, `~/.cache`): created 0700
    /// when missing; may be a symlink to a private directory.
    Own(PathBuf),
    /// A system directory that must exist (`/var/cache`).
    System(PathBuf),
    /// A directory of ours in a shared directory (`/tmp/cudnn-trace-<euid>`):
    /// created when missing, never a symlink.
    Shared(PathBuf),
    /// A fresh directory with a random name (mkdtemp) in a shared directory:
    /// nobody can take its name in advance.
    Fresh { parent: PathBuf, prefix: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Candidate {
    top: Top,
    /// Directories below `top` down to the version directory.
    sub: Vec<String>,
    /// Readable by all (euid 0: children may drop privileges): directories
    /// we name are made 0755, and every directory of the path must be
    /// searchable by others.
    world: bool,
}

impl Candidate {
    /// The shim's path (`XXXXXX` for the random part of a fresh directory).
    fn expected(&self) -> PathBuf {
        let mut p = match &self.top {
            Top::Own(p) | Top::System(p) | Top::Shared(p) => p.clone(),
            Top::Fresh { parent, prefix } => parent.join(format!("{prefix}XXXXXX")),
        };
        p.extend(&self.sub);
        p.join(SHIM_FILE)
    }
}

/// The candidate locations, best first.
fn candidates(euid: u32, leaf: &str, env: impl Fn(&str) -> Option<OsString>) -> Vec<Candidate> {
    // The XDG spec says relative values are invalid and must be ignored.
    let abs = |k: &str| env(k).map(PathBuf::from).filter(|p| p.is_absolute());
    let tree = |top: Top, world: bool| Candidate {
        top,
        sub: vec!["cudnn-trace".to_string(), leaf.to_string()],
        world,
    };
    let mut own = Vec::new();
    if let Some(x) = abs("XDG_CACHE_HOME") {
        own.push(tree(Top::Own(x), false));
    }
    if let Some(h) = abs("HOME") {
        own.push(tree(Top::Own(h.join(".cache")), false));
    }
    let world = euid == 0;
    let name = format!("cudnn-trace-{euid}");
    let shared = |dir: PathBuf| Candidate {
        top: Top::Shared(dir.join(&name)),
        sub: vec![leaf.to_string()],
        world,
    };
    let tmp = PathBuf::from("/tmp");
    let tmpdir = abs("TMPDIR").filter(|t| *t != tmp);
    let mut v = Vec::new();
    if world {
        // An explicit XDG_CACHE_HOME that all can read is fine for root too.
        if let Some(x) = abs("XDG_CACHE_HOME") {
            v.push(tree(Top::Own(x), true));
        }
        v.push(tree(Top::System(PathBuf::from("/var/cache")), true));
    } else {
        v.append(&mut own);
    }
    v.push(shared(tmp.clone()));
    if let Some(t) = &tmpdir {
        v.push(shared(t.clone()));
    }
    // Root's fresh directory must be readable by all: /tmp rather than a
    // TMPDIR that may be private.
    let fresh_parent = match tmpdir {
        Some(t) if !world => t,
        _ => tmp,
    };
    v.push(Candidate {
        top: Top::Fresh {
            parent: fresh_parent,
            prefix: format!("{name}-"),
        },
        sub: Vec::new(),
        world,
    });
    // Root: its own cache last (programs that stay root can still read it).
    v.append(&mut own);
    v
}

/// Creates a directory (mode before umask); an existing one is fine.
fn mkdir(p: &Path, mode: u32) -> Result<(), String> {
    match fs::DirBuilder::new().mode(mode).create(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io_err(p, &e)),
    }
}

/// A directory nobody but us (or root) can change. `ours`: a directory this
/// tool names, made 0755 when `world` wants it readable by all.
fn check_dir(
    p: &Path,
    md: &fs::Metadata,
    euid: u32,
    world: bool,
    ours: bool,
) -> Result<(), String> {
    if md.file_type().is_symlink() {
        return Err(format!("{} is a symbolic link; not using it", p.display()));
    }
    if !md.is_dir() {
        return Err(format!("{} is not a directory", p.display()));
    }
    if md.uid() != euid && md.uid() != 0 {
        return Err(format!(
            "{} is owned by uid {}, not by uid {euid} or root; not using it",
            p.display(),
            md.uid()
        ));
    }
    if md.mode() & 0o022 != 0 {
        return Err(format!(
            "{} is writable by group or others (mode {:o}); not using it",
            p.display(),
            md.mode() & 0o7777
        ));
    }
    if world && ours && md.uid() == euid && md.mode() & 0o7777 != 0o755 {
        fs::set_permissions(p, fs::Permissions::from_mode(0o755)).map_err(|e| io_err(p, &e))?;
    }
    Ok(())
}

/// A shared directory (/tmp) in which we may create ours: not writable by
/// others, or sticky (others cannot rename or remove what we create).
fn check_shared_parent(p: &Path) -> Result<(), String> {
    let md = fs::metadata(p).map_err(|e| io_err(p, &e))?;
    if !md.is_dir() {
        return Err(format!("{} is not a directory", p.display()));
    }
    if md.mode() & 0o022 != 0 && md.mode() & 0o1000 == 0 {
        return Err(format!(
            "{} is writable by others and not sticky; not using it",
            p.display()
        ));
    }
    Ok(())
}

/// Whether `dir` is a fresh directory of ours (`<prefix>XXXXXX`, owned by
/// `euid`, a real directory).
fn is_fresh(dir: &Path, prefix: &str, euid: u32) -> bool {
    let name = dir.file_name().map(|n| n.as_bytes()).unwrap_or_default();
    name.len() == prefix.len() + 6
        && name.starts_with(prefix.as_bytes())
        && fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir() && m.uid() == euid)
}

/// Whether a process maps a file under `dir` (reads every
/// `/proc/PID/maps` it may: only when a fresh directory is in question).
fn in_use(dir: &Path) -> bool {
    let mut needle = dir.as_os_str().as_bytes().to_vec();
    needle.push(b'/');
    let Ok(procs) = fs::read_dir("/proc") else {
        return true;
    };
    procs.flatten().any(|e| {
        e.file_name().as_bytes().iter().all(u8::is_ascii_digit)
            && fs::read(e.path().join("maps"))
                .is_ok_and(|m| m.windows(needle.len()).any(|w| w == needle))
    })
}

/// Removes the fresh directories of earlier runs that no process uses any
/// more (a run removes its own when it ends, [`release`]; one whose
/// programs outlived it is left until then).
fn sweep_fresh(parent: &Path, prefix: &str, euid: u32) {
    let Ok(rd) = fs::read_dir(parent) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if is_fresh(&p, prefix, euid) && !in_use(&p) {
            let _ = fs::remove_dir_all(&p);
        }
    }
}

/// The run is over: a shim placed in a fresh directory (no cache could be
/// used: [`candidates`]) is removed with it, unless a process the run
/// started still maps it (a daemon that outlived the launcher: a later run
/// removes it, [`sweep_fresh`]). A cache is kept for the next run.
pub fn release(shim: &Path) {
    let Some(dir) = shim.parent() else { return };
    let prefix = format!("cudnn-trace-{}-", euid());
    if is_fresh(dir, &prefix, euid()) && !in_use(dir) {
        let _ = fs::remove_dir_all(dir);
    }
}

/// A fresh directory `<template>` (ending in XXXXXX), mode 0700.
fn mkdtemp(template: &Path) -> Result<PathBuf, String> {
    let c = CString::new(template.as_os_str().as_bytes())
        .map_err(|_| format!("{}: NUL in path", template.display()))?;
    let mut buf = c.into_bytes_with_nul();
    // SAFETY: buf is a writable NUL-terminated template that outlives the call.
    let r = unsafe { libc::mkdtemp(buf.as_mut_ptr().cast()) };
    if r.is_null() {
        return Err(io_err(template, &std::io::Error::last_os_error()));
    }
    buf.pop();
    Ok(PathBuf::from(OsString::from_vec(buf)))
}

/// Creates and checks the candidate's directories; returns the version
/// directory. A fresh directory is removed again when a check fails.
fn prepare(c: &Candidate, euid: u32) -> Result<PathBuf, String> {
    let lstat = |p: &Path| fs::symlink_metadata(p).map_err(|e| io_err(p, &e));
    let top = match &c.top {
        Top::Own(p) => {
            if !p.is_dir() {
                fs::DirBuilder::new()
                    .recursive(true)
                    .mode(0o700)
                    .create(p)
                    .map_err(|e| io_err(p, &e))?;
            }
            // The user may point the cache elsewhere with a symlink: check
            // what it leads to.
            let md = fs::metadata(p).map_err(|e| io_err(p, &e))?;
            check_dir(p, &md, euid, c.world, false)?;
            p.clone()
        }
        Top::System(p) => {
            let md = fs::metadata(p).map_err(|e| io_err(p, &e))?;
            check_dir(p, &md, euid, c.world, false)?;
            p.clone()
        }
        Top::Shared(p) => {
            let parent = p.parent().unwrap_or(Path::new("/"));
            check_shared_parent(parent)?;
            mkdir(p, if c.world { 0o755 } else { 0o700 })?;
            check_dir(p, &lstat(p)?, euid, c.world, true)?;
            p.clone()
        }
        Top::Fresh { parent, prefix } => {
            check_shared_parent(parent)?;
            sweep_fresh(parent, prefix, euid);
            let p = mkdtemp(&parent.join(format!("{prefix}XXXXXX")))?;
            let r = check_dir(&p, &lstat(&p)?, euid, c.world, true)
                .and_then(|()| below(c, p.clone(), euid));
            if r.is_err() {
                let _ = fs::remove_dir_all(&p);
            }
            return r;
        }
    };
    below(c, top, euid)
}

/// The candidate's directories below its (checked) top.
fn below(c: &Candidate, mut dir: PathBuf, euid: u32) -> Result<PathBuf, String> {
    if c.world {
        // Before creating anything in a place others could not reach.
        searchable_by_all(&dir)?;
    }
    for s in &c.sub {
        dir.push(s);
        mkdir(&dir, 0o755)?;
        let md = fs::symlink_metadata(&dir).map_err(|e| io_err(&dir, &e))?;
        check_dir(&dir, &md, euid, c.world, true)?;
    }
    if c.world {
        searchable_by_all(&dir)?;
    }
    Ok(dir)
}

/// Children that dropped root privileges must reach the file: every
/// directory of the path must be searchable by others.
fn searchable_by_all(dir: &Path) -> Result<(), String> {
    for a in dir.ancestors() {
        let md = fs::metadata(a).map_err(|e| io_err(a, &e))?;
        if md.mode() & 0o001 == 0 {
            return Err(format!(
                "{} is not searchable by other users (who may run the traced program)",
                a.display()
            ));
        }
    }
    Ok(())
}

/// The shim as we leave it: a regular file of ours, mode 0755.
fn file_ok(md: &fs::Metadata, euid: u32) -> bool {
    md.file_type().is_file() && md.uid() == euid && md.mode() & 0o7777 == 0o755
}

/// Whether `path` already is our file with this content (never following
/// a symlink): a regular file of ours, mode 0755, of the same length and
/// with the same [`identity`] bytes.
fn reusable(path: &Path, bytes: &[u8], euid: u32) -> bool {
    let Ok(mut f) = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    else {
        return false;
    };
    let Ok(md) = f.metadata() else {
        return false;
    };
    if !file_ok(&md, euid) || md.len() != bytes.len() as u64 {
        return false;
    }
    let head = identity(bytes);
    let mut existing = vec![0u8; head.len()];
    f.read_exact(&mut existing).is_ok() && existing == head
}

/// Bytes compared when reusing an extracted copy of `bytes`: its first
/// [`IDENTITY_HEAD`] bytes when they hold its GNU build-id (the note found
/// there is the file's: the first PT_NOTE one, read from the head alone),
/// else all of it. The build-id is a hash of the whole file that the linker
/// writes, so another build of the shim differs there; and only the
/// effective uid can change the file (see the module's rules), which it
/// does by writing a whole new one and renaming it. Comparing every byte of
/// the 0.6 MB shim cost every run about a millisecond of the launcher's CPU
/// time (docs/benchmarks.md, section 4).
fn identity(bytes: &[u8]) -> &[u8] {
    use crate::model::elf::build_id;
    use std::io::Cursor;
    let head = &bytes[..bytes.len().min(IDENTITY_HEAD)];
    match build_id(&mut Cursor::new(head)) {
        Some(_) => head,
        None => bytes,
    }
}

/// See [`identity`]: the ELF header, program headers and build-id note of
/// the shim and its helper lie in their first page.
const IDENTITY_HEAD: usize = 4096;

/// Puts `files` into `dir` (already checked), in order; returns the last
/// one's path.
fn install(dir: &Path, files: &Files<'_>, euid: u32) -> Result<PathBuf, String> {
    if !loader_safe(&dir.join(SHIM_FILE)) {
        return Err("path has a space, colon or '$' (the loader cannot take it)".into());
    }
    if noexec(dir) {
        return Err("mounted noexec (the loader could not map the shim)".into());
    }
    let mut last = Err("nothing to install".to_string());
    for (name, bytes) in files {
        last = Ok(install_file(dir, name, bytes, euid)?);
    }
    last
}

/// Puts `bytes` into `dir/name` (reused when already there); returns its path.
fn install_file(dir: &Path, name: &str, bytes: &[u8], euid: u32) -> Result<PathBuf, String> {
    let path = dir.join(name);
    if reusable(&path, bytes, euid) {
        return Ok(path);
    }
    // Write a private temporary file, then rename it over the final name
    // (which replaces a symlink or a foreign file, never writes through it):
    // concurrent launchers each see either no file or a complete one.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tmp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(0o755))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        crate::model::io_msg(&e)
    })?;
    let md = fs::symlink_metadata(&path).map_err(|e| io_err(&path, &e))?;
    if !file_ok(&md, euid) {
        return Err(format!(
            "{} is not a regular file of uid {euid} with mode 755 after writing it",
            path.display()
        ));
    }
    Ok(path)
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

/// Installs the embedded shim at `dest` (absolute), and its preload helper
/// next to it ([`preload_path`]), each with [`write_atomically`].
pub fn install_shim(dest: &Path) -> Result<(), String> {
    match fs::symlink_metadata(dest) {
        Ok(md) if md.file_type().is_symlink() => {
            return Err(format!(
                "{} is a symbolic link; not writing through it (remove it, or give the path it leads to)",
                dest.display()
            ))
        }
        Ok(md) if md.is_dir() => {
            return Err(format!(
                "{} is a directory; give the file's path, such as {}",
                dest.display(),
                dest.join(SHIM_FILE).display()
            ))
        }
        _ => {}
    }
    let bytes: Vec<u8> = match embedded() {
        Some(b) => b.to_vec(),
        // A development binary without its shim: the override names one.
        None => match std::env::var_os(SHIM_PATH_ENV).filter(|p| !p.is_empty()) {
            Some(p) => fs::read(&p).map_err(|e| io_err(Path::new(&p), &e))?,
            None => {
                return Err(format!(
                    "this binary was built without its shim; set {}=/path/to/{}",
                    SHIM_PATH_ENV, SHIM_FILE
                ))
            }
        },
    };
    let helper: Vec<u8> = match embedded_preload() {
        Some(b) => b.to_vec(),
        None => {
            let next = std::env::var_os(SHIM_PATH_ENV)
                .map(|p| preload_path(Path::new(&p)))
                .unwrap_or_default();
            fs::read(&next).map_err(|e| io_err(&next, &e))?
        }
    };
    write_atomically(&preload_path(dest), &helper)?;
    write_atomically(dest, &bytes)
}

/// Writes `bytes` to `dest` through a synced temporary file and a rename, so
/// that a process starting meanwhile loads the old file or the new one, never
/// half of one. Mode 0644: the loader only reads it.
fn write_atomically(dest: &Path, bytes: &[u8]) -> Result<(), String> {
    let (Some(parent), Some(name)) = (dest.parent(), dest.file_name()) else {
        return Err(format!("{} is not a file path", dest.display()));
    };
    fs::create_dir_all(parent).map_err(|e| io_err(parent, &e))?;
    let tmp = parent.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(fs::Permissions::from_mode(0o644))?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, dest)?;
        // The rename itself survives a crash once the directory is synced.
        fs::File::open(parent)?.sync_all()
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err(dest, &e)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAKE: &[u8] = b"\x7fELF fake";

    fn mode(p: &Path) -> u32 {
        fs::symlink_metadata(p).unwrap().mode() & 0o7777
    }

    fn chmod(p: &Path, m: u32) {
        fs::set_permissions(p, fs::Permissions::from_mode(m)).unwrap();
    }

    fn own(top: PathBuf) -> Candidate {
        Candidate {
            top: Top::Own(top),
            sub: vec!["cudnn-trace".into(), "v-h".into()],
            world: false,
        }
    }

    fn shared(top: PathBuf, world: bool) -> Candidate {
        Candidate {
            top: Top::Shared(top),
            sub: vec!["v-h".into()],
            world,
        }
    }

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
    fn embedded_hash_is_the_content_hash_of_the_three() {
        let all = [EMBEDDED, EMBEDDED_PRELOAD, EMBEDDED_PROBE].concat();
        assert_eq!(EMBEDDED_HASH, content_hash(&all));
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
        let c = own(tmp.join("cache"));
        let path = shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap();
        assert_eq!(path, tmp.join("cache/cudnn-trace/v-h").join(SHIM_FILE));
        assert_eq!(fs::read(&path).unwrap(), FAKE);
        assert_eq!(mode(&path), 0o755);
        assert_eq!(mode(&tmp.join("cache")), 0o700);
        let ino = fs::metadata(&path).unwrap().ino();
        // Identical: reused as is.
        shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap();
        assert_eq!(fs::metadata(&path).unwrap().ino(), ino);
        // Different content (corrupted copy): replaced.
        fs::write(&path, b"junk").unwrap();
        shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap();
        assert_eq!(fs::read(&path).unwrap(), FAKE);
        // The preload helper next to it, when this binary embeds one.
        let helper = preload_path(&path);
        assert_eq!(helper, path.with_file_name(PRELOAD_FILE));
        let files = match embedded_preload() {
            Some(bytes) => {
                assert_eq!(fs::read(&helper).unwrap(), bytes);
                assert_eq!(mode(&helper), 0o755);
                2
            }
            None => 1,
        };
        // No temporary files left behind.
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), files);
    }

    #[test]
    fn the_probe_helper_goes_beside_the_shim_alone_and_is_reused() {
        let tmp = crate::testutil::tempdir("probe-helper");
        let c = own(tmp.join("cache"));
        let shim = shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap();
        let helper = probe_in(std::slice::from_ref(&c), b"\x7fELF helper", euid()).unwrap();
        assert_eq!(helper, shim.with_file_name(PROBE_FILE));
        assert_eq!(fs::read(&helper).unwrap(), b"\x7fELF helper");
        assert_eq!(mode(&helper), 0o755);
        let ino = fs::metadata(&helper).unwrap().ino();
        probe_in(std::slice::from_ref(&c), b"\x7fELF helper", euid()).unwrap();
        assert_eq!(fs::metadata(&helper).unwrap().ino(), ino);
        // The shim is left as it was.
        assert_eq!(fs::read(&shim).unwrap(), FAKE);
        // No location: one line naming the helper.
        let file = tmp.join("file");
        fs::write(&file, "x").unwrap();
        let e = probe_in(&[shared(file, false)], b"x", euid()).unwrap_err();
        assert!(e.starts_with("cannot place cdtrace-probe"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_build_is_known_by_its_length_and_first_page() {
        // The real shim and helper: their build-id is in their first page,
        // so reuse reads 4 KiB, not the whole file.
        for bytes in [embedded(), embedded_preload(), embedded_probe()]
            .into_iter()
            .flatten()
        {
            assert_eq!(identity(bytes).len(), IDENTITY_HEAD);
        }
        let Some(real) = embedded() else { return };
        let tmp = crate::testutil::tempdir("shimid");
        let path = tmp.join(SHIM_FILE);
        let put = |bytes: &[u8]| {
            let _ = fs::remove_file(&path);
            fs::write(&path, bytes).unwrap();
            chmod(&path, 0o755);
        };
        put(real);
        assert!(reusable(&path, real, euid()));
        // Another build of the same length: its build-id differs.
        let mut other = real.to_vec();
        let id = crate::model::elf::build_id(&mut std::io::Cursor::new(real)).unwrap();
        let raw: Vec<u8> = (0..id.len() / 2)
            .map(|i| u8::from_str_radix(&id[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let at = other.windows(raw.len()).position(|w| w == raw).unwrap();
        assert!(at + raw.len() <= IDENTITY_HEAD);
        other[at] ^= 0xff;
        put(&other);
        assert!(!reusable(&path, real, euid()));
        // Cut short or grown: another length.
        put(&real[..real.len() - 1]);
        assert!(!reusable(&path, real, euid()));
    }

    #[test]
    fn a_file_without_build_id_is_compared_whole() {
        let mut bytes = vec![0u8; 3 * IDENTITY_HEAD];
        bytes[..4].copy_from_slice(b"\x7fELF");
        assert_eq!(identity(&bytes).len(), bytes.len());
        let tmp = crate::testutil::tempdir("shimnoid");
        let path = tmp.join(SHIM_FILE);
        let mut late = bytes.clone();
        *late.last_mut().unwrap() = 1;
        fs::write(&path, &late).unwrap();
        chmod(&path, 0o755);
        assert!(!reusable(&path, &bytes, euid()));
        fs::write(&path, &bytes).unwrap();
        assert!(reusable(&path, &bytes, euid()));
    }

    #[test]
    fn every_directory_of_every_candidate_must_be_private() {
        // The cache base itself writable by others.
        let tmp = crate::testutil::tempdir("shimopen");
        let base = tmp.join("cache");
        fs::create_dir(&base).unwrap();
        chmod(&base, 0o777);
        let e = prepare(&own(base.clone()), euid()).unwrap_err();
        assert!(e.contains("writable by group or others"), "{e}");
        assert!(!base.join("cudnn-trace").exists());
        // A directory below it, left open by someone.
        chmod(&base, 0o700);
        fs::create_dir(base.join("cudnn-trace")).unwrap();
        chmod(&base.join("cudnn-trace"), 0o775);
        assert!(prepare(&own(base.clone()), euid()).is_err());
        chmod(&base.join("cudnn-trace"), 0o755);
        // The version directory as a symlink to a directory elsewhere.
        let elsewhere = tmp.join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, base.join("cudnn-trace/v-h")).unwrap();
        let e = prepare(&own(base.clone()), euid()).unwrap_err();
        assert!(e.contains("symbolic link"), "{e}");
        fs::remove_file(base.join("cudnn-trace/v-h")).unwrap();
        prepare(&own(base), euid()).unwrap();
    }

    #[test]
    fn a_symlinked_or_loose_file_is_replaced_not_reused() {
        let tmp = crate::testutil::tempdir("shimfile");
        let c = own(tmp.join("cache"));
        let dir = prepare(&c, euid()).unwrap();
        let path = dir.join(SHIM_FILE);
        // A symlink to a file with the same content (someone else's).
        let planted = tmp.join("planted.so");
        fs::write(&planted, FAKE).unwrap();
        chmod(&planted, 0o755);
        std::os::unix::fs::symlink(&planted, &path).unwrap();
        assert_eq!(
            shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap(),
            path
        );
        assert!(fs::symlink_metadata(&path).unwrap().file_type().is_file());
        assert_eq!(fs::read(&planted).unwrap(), FAKE);
        // Identical content, but writable by others: replaced by a 0755 copy.
        chmod(&path, 0o777);
        let ino = fs::metadata(&path).unwrap().ino();
        shim_in(std::slice::from_ref(&c), FAKE, euid()).unwrap();
        assert_eq!(mode(&path), 0o755);
        assert_ne!(fs::metadata(&path).unwrap().ino(), ino);
    }

    #[test]
    fn a_taken_tmp_dir_falls_back_to_tmpdir_then_a_fresh_one() {
        let tmp = crate::testutil::tempdir("shimdos");
        // /tmp/cudnn-trace-<uid> made by someone else, open to all.
        let taken = tmp.join("cudnn-trace-7");
        fs::create_dir(&taken).unwrap();
        chmod(&taken, 0o777);
        // $TMPDIR/cudnn-trace-<uid>: a symlink to a private directory.
        let tmpdir = tmp.join("tmpdir");
        fs::create_dir(&tmpdir).unwrap();
        let priv_ = tmp.join("private");
        fs::create_dir(&priv_).unwrap();
        chmod(&priv_, 0o700);
        std::os::unix::fs::symlink(&priv_, tmpdir.join("cudnn-trace-7")).unwrap();
        let cands = vec![
            shared(taken.clone(), false),
            shared(tmpdir.join("cudnn-trace-7"), false),
            Candidate {
                top: Top::Fresh {
                    parent: tmp.clone(),
                    prefix: "cudnn-trace-7-".into(),
                },
                sub: Vec::new(),
                world: false,
            },
        ];
        let p = shim_in(&cands, FAKE, euid()).unwrap();
        let dir = p.parent().unwrap();
        assert_eq!(dir.parent().unwrap(), tmp);
        let name = dir.file_name().unwrap().to_str().unwrap();
        assert!(
            name.starts_with("cudnn-trace-7-") && name.len() == 20,
            "{name}"
        );
        assert_eq!(mode(dir), 0o700);
        assert_eq!(fs::read(&p).unwrap(), FAKE);
        assert!(fs::read_dir(&priv_).unwrap().next().is_none());
        // The shared directory: ours and private, it is used.
        let ok = tmp.join("cudnn-trace-8");
        let p = shim_in(&[shared(ok.clone(), false)], FAKE, euid()).unwrap();
        assert_eq!(p, ok.join("v-h").join(SHIM_FILE));
        assert_eq!(mode(&ok), 0o700);
    }

    #[test]
    fn no_location_is_an_error_to_run_untraced() {
        let tmp = crate::testutil::tempdir("shimnone");
        let open = tmp.join("open");
        fs::create_dir(&open).unwrap();
        chmod(&open, 0o777);
        let file = tmp.join("file");
        fs::write(&file, "x").unwrap();
        let cands = vec![
            own(open.clone()),
            shared(file.clone(), false),
            own(tmp.join("a b")),
        ];
        let e = shim_in(&cands, FAKE, euid()).unwrap_err();
        assert!(matches!(e, ShimError::NoSafeLocation(_)));
        assert!(e.run_untraced());
        let text = e.to_string();
        assert!(!text.contains('\n'), "{text}");
        assert!(text.contains(SHIM_PATH_ENV), "{text}");
        assert!(!tmp.join("a b").exists());
        assert!(!ShimError::BadOverride("x".into()).run_untraced());
        assert!(!ShimError::NotEmbedded("x".into()).run_untraced());
    }

    #[test]
    fn root_prefers_a_location_readable_by_all() {
        let env = |k: &str| match k {
            "HOME" => Some(OsString::from("/root")),
            "TMPDIR" => Some(OsString::from("/scratch")),
            _ => None,
        };
        let c = candidates(0, "v-h", env);
        assert_eq!(c[0].top, Top::System("/var/cache".into()));
        assert_eq!(c.len(), 5);
        assert_eq!(
            c[0].expected(),
            Path::new("/var/cache/cudnn-trace/v-h/libcdtrace.so")
        );
        assert_eq!(
            c[1].expected(),
            Path::new("/tmp/cudnn-trace-0/v-h/libcdtrace.so")
        );
        assert_eq!(
            c[2].expected(),
            Path::new("/scratch/cudnn-trace-0/v-h/libcdtrace.so")
        );
        assert_eq!(
            c[3].expected(),
            Path::new("/tmp/cudnn-trace-0-XXXXXX/libcdtrace.so")
        );
        assert!(c[..4].iter().all(|c| c.world));
        assert_eq!(
            c[4].expected(),
            Path::new("/root/.cache/cudnn-trace/v-h/libcdtrace.so")
        );
        // A user: its own cache first; $TMPDIR for the fresh directory.
        let c = candidates(1000, "v-h", env);
        assert_eq!(c[0].top, Top::Own("/root/.cache".into()));
        assert_eq!(c[1].top, Top::Shared("/tmp/cudnn-trace-1000".into()));
        assert_eq!(c[2].top, Top::Shared("/scratch/cudnn-trace-1000".into()));
        assert_eq!(
            c[3].top,
            Top::Fresh {
                parent: "/scratch".into(),
                prefix: "cudnn-trace-1000-".into()
            }
        );
        assert_eq!(c.len(), 4);
        assert!(c.iter().all(|c| !c.world));

        // Readable by all: a directory an older version made 0700 is opened
        // up to 0755 (it is ours), the file is 0755.
        let tmp = crate::testutil::tempdir("shimroot");
        chmod(&tmp, 0o755);
        let top = tmp.join("cudnn-trace-0");
        fs::create_dir(&top).unwrap();
        chmod(&top, 0o700);
        let p = shim_in(&[shared(top.clone(), true)], FAKE, euid()).unwrap();
        assert_eq!(mode(&top), 0o755);
        assert_eq!(mode(p.parent().unwrap()), 0o755);
        assert_eq!(mode(&p), 0o755);
        // An ancestor closed to others: not a location for root.
        chmod(&tmp, 0o700);
        let e = shim_in(&[shared(top, true)], FAKE, euid()).unwrap_err();
        assert!(e.to_string().contains("not searchable"), "{e}");
        chmod(&tmp, 0o755);

        // Root with an explicit XDG_CACHE_HOME: used when all can read it,
        // before /var/cache; else tried after the shared locations.
        let xdg = |k: &str| (k == "XDG_CACHE_HOME").then(|| OsString::from("/x"));
        let c = candidates(0, "v-h", xdg);
        assert_eq!((&c[0].top, c[0].world), (&Top::Own("/x".into()), true));
        assert_eq!(c[1].top, Top::System("/var/cache".into()));
        assert_eq!((&c[4].top, c[4].world), (&Top::Own("/x".into()), false));
        let cache = tmp.join("cache");
        fs::create_dir(&cache).unwrap();
        chmod(&cache, 0o700);
        let world = Candidate {
            world: true,
            ..own(cache.clone())
        };
        let e = prepare(&world, euid()).unwrap_err();
        assert!(e.contains("not searchable"), "{e}");
        assert!(!cache.join("cudnn-trace").exists());
        chmod(&cache, 0o755);
        let p = shim_in(&[world], FAKE, euid()).unwrap();
        assert_eq!(mode(p.parent().unwrap()), 0o755);
        assert_eq!(mode(&cache.join("cudnn-trace")), 0o755);
    }

    #[test]
    fn installs_atomically_and_never_through_a_symlink() {
        let d = crate::testutil::tempdir("env-shim");
        let dest = d.join("new/dirs/libcdtrace.so");
        // A binary built without its shim cannot install one.
        match install_shim(&dest) {
            Ok(()) => {
                let md = fs::symlink_metadata(&dest).unwrap();
                assert!(md.is_file());
                assert_eq!(md.mode() & 0o7777, 0o644);
                assert_eq!(fs::read(&dest).unwrap(), embedded().unwrap());
                // The preload helper next to it (issue 14).
                let helper = preload_path(&dest);
                assert_eq!(fs::read(&helper).unwrap(), embedded_preload().unwrap());
                assert_eq!(
                    fs::symlink_metadata(&helper).unwrap().mode() & 0o7777,
                    0o644
                );
                // No temporary file left.
                assert_eq!(fs::read_dir(dest.parent().unwrap()).unwrap().count(), 2);
            }
            Err(e) => assert!(embedded().is_none(), "{e}"),
        }
        let link = d.join("link.so");
        std::os::unix::fs::symlink(d.join("victim"), &link).unwrap();
        let e = install_shim(&link).unwrap_err();
        assert!(
            e.contains("is a symbolic link; not writing through it"),
            "{e}"
        );
        assert!(!d.join("victim").exists());
        let e = install_shim(&d).unwrap_err();
        assert!(e.contains("is a directory"), "{e}");
    }
}
