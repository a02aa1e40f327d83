//! The trace directory of a run and the launcher's record in it
//! (`launcher.json`, written each time it changes, into one file made
//! before the program starts: [`Records`]).

use super::eprint;
use crate::machine::pin::PinInfo;
use crate::model::{self, trace, LauncherRecord, LAUNCHER_FILE};
use std::fs;
use std::path::{Path, PathBuf};

/// Wall-clock time in milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Local time of `ms` as (`YYYYmmdd-HHMMSS`, RFC 3339 with offset).
pub fn local_time(ms: u64) -> (String, String) {
    let secs = (ms / 1000) as libc::time_t;
    // SAFETY: zeroed tm is a valid out-parameter; localtime_r is thread-safe.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    if !ok {
        return (format!("{secs}"), format!("{secs}"));
    }
    let (y, mo, d, h, mi, s) = (
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
    );
    let off = tm.tm_gmtoff / 60;
    let sign = if off < 0 { '-' } else { '+' };
    (
        format!("{y:04}{mo:02}{d:02}-{h:02}{mi:02}{s:02}"),
        format!(
            "{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{:03}{sign}{:02}:{:02}",
            ms % 1000,
            off.abs() / 60,
            off.abs() % 60
        ),
    )
}

/// Mode of a run directory the launcher makes: as root, `1733` (sticky;
/// every user may add a file, none may list the directory or touch
/// another's file), because the program's children may drop privileges
/// (gosu, su-exec, setpriv, a daemon's worker) and must still create their
/// trace files; as another user, `0700` (no child can become another user
/// while traced: a setuid program is not traced at all). The shim makes
/// every file 0600. docs/security.md says why not per-uid directories.
pub fn run_dir_mode(euid: u32) -> u32 {
    if euid == 0 {
        0o1733
    } else {
        0o700
    }
}

/// Mode of the default parent, `./cudnn-trace-out`, when the launcher makes
/// it: others may pass through it to a run (root's runs) but not list it.
fn parent_mode(euid: u32) -> u32 {
    if euid == 0 {
        0o711
    } else {
        0o700
    }
}

/// Makes `dir` with `mode` exactly (not reduced by the umask); false when
/// it exists already (it is then left as it is: the user's directory).
fn make_dir(dir: &Path, mode: u32) -> std::io::Result<bool> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    match fs::DirBuilder::new().mode(mode & 0o777).create(dir) {
        Ok(()) => {
            fs::set_permissions(dir, fs::Permissions::from_mode(mode))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(false),
        Err(e) => Err(e),
    }
}

/// The output directory: created, absolute. A directory the launcher
/// makes gets [`run_dir_mode`]; one that exists is used as it is.
pub fn make_out_dir(
    requested: Option<&Path>,
    launcher_pid: u32,
    start_ms: u64,
) -> Result<(PathBuf, Records), String> {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    let dir = match requested {
        Some(d) => expand_out(d, launcher_pid, &host_for_path())?,
        None => {
            let (stamp, _) = local_time(start_ms);
            Path::new(trace::DEFAULT_OUT).join(format!("{stamp}-{launcher_pid}"))
        }
    };
    let cannot = |e: std::io::Error| {
        format!(
            "cannot create the trace directory {}: {}",
            dir.display(),
            model::io_msg(&e)
        )
    };
    if requested.is_none() {
        make_dir(Path::new(trace::DEFAULT_OUT), parent_mode(euid)).map_err(cannot)?;
    } else if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(cannot)?;
    }
    make_dir(&dir, run_dir_mode(euid)).map_err(cannot)?;
    let abs =
        fs::canonicalize(&dir).map_err(|e| format!("{}: {}", dir.display(), model::io_msg(&e)))?;
    // An existing directory may still not take files (permissions, a
    // read-only mount): find out now, not once per traced process. The
    // file that finds out is launcher.json's, made with its room.
    let records = Records::new(&abs).map_err(|e| {
        format!(
            "cannot write in the trace directory {}: {}",
            dir.display(),
            model::io_msg(&e)
        )
    })?;
    if requested.is_some() && trace::looks_like_run(&abs) {
        eprint(&format!(
            "cudnn-trace: warning: {} already holds traces; this run's files are added to them\n",
            dir.display()
        ));
    }
    Ok((abs, records))
}

/// The placeholders `--out` expands, as NCCL's `NCCL_DEBUG_FILE` does:
/// `%h` the host name, `%p` the launcher's pid, `%%` a `%`. One launcher
/// per task (`srun … cudnn-trace --out /shared/traces/%h-%p …`) then
/// writes a directory of its own on a shared file system.
pub const OUT_PLACEHOLDERS: &str = "%h (host name), %p (the launcher's pid), %% (a %)";

/// `--out`'s value with its placeholders expanded. Err: a `%` followed by
/// anything else (a typo must not silently name a directory).
pub fn expand_out(requested: &Path, pid: u32, host: &[u8]) -> Result<PathBuf, String> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let raw = requested.as_os_str().as_bytes();
    if !raw.contains(&b'%') {
        return Ok(requested.to_path_buf());
    }
    let mut out = Vec::with_capacity(raw.len() + 32);
    let mut i = 0;
    while i < raw.len() {
        if raw[i] != b'%' {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        match raw.get(i + 1) {
            Some(b'h') => out.extend_from_slice(host),
            Some(b'p') => out.extend_from_slice(pid.to_string().as_bytes()),
            Some(b'%') => out.push(b'%'),
            other => {
                let what = other
                    .map(|&c| format!("%{}", c as char))
                    .unwrap_or_else(|| "a % at the end".into());
                return Err(format!(
                    "--out {}: unknown placeholder {what} (known: {OUT_PLACEHOLDERS})",
                    requested.display()
                ));
            }
        }
        i += 2;
    }
    Ok(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

/// This machine's host name (`gethostname`), as bytes; `localhost` when
/// it cannot be read. A `/` in it (not a valid host name, but settable)
/// would make a subdirectory: it becomes `_`.
fn host_for_path() -> Vec<u8> {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return b"localhost".to_vec();
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    buf[..end]
        .iter()
        .map(|&c| if c == b'/' { b'_' } else { c })
        .collect()
}

/// `launcher.json`, the launcher's record of the run, written each time it
/// changes, into one file. The file is made before the program starts, with
/// [`ROOM`] bytes allocated to it, under a hidden name; the first version
/// (the record of the start) is written into it and the file is renamed to
/// `launcher.json`, so that a reader sees no record or a whole one. Later
/// versions (the end, the summary's counts) are written over it in place:
///
/// * into its allocated room, so that the record that says how the program
///   ended is written even when the program's traces have filled the disk
///   (without it the summary could only guess that the launcher was
///   killed);
/// * never shorter than the version before (spaces, which JSON ignores,
///   make up the difference), so that no moment leaves the end of an old
///   version after a new one, and no block is freed;
/// * with no file made and none removed. Each file made is an inode
///   allocated, and on ext4 without a journal each file removed makes the
///   next allocations of anyone dearer for a minute or more: one file per
///   version cost 0.3 ms a run in a loop of runs here (docs/benchmarks.md).
///
/// A reader that reads while a later version is being written can see the
/// start of one version and the end of the other, for the microseconds the
/// write takes; `model::trace` reads a record that does not parse again.
/// When `launcher.json` is no longer this writer's file (someone removed or
/// replaced it), or a version outgrows the room and no more can be
/// allocated, the version goes into a new file renamed over the name.
pub struct Records {
    dir: PathBuf,
    /// The record's file, and whether it is in place as `launcher.json`
    /// (until the first version it has its hidden name).
    file: fs::File,
    path: PathBuf,
    placed: bool,
    /// A failed write is said once per run, however many follow.
    warned: bool,
}

/// Bytes allocated to the record's file: a record is under 4 KiB, more
/// with many warnings or processes that outlived the program.
const ROOM: i64 = 16 << 10;

impl Records {
    /// The writer of `dir`'s record, with its file made and its room set
    /// aside; Err when `dir` takes no new file (a full disk is not an
    /// error: the file then has no room allocated, but it exists).
    pub fn new(dir: &Path) -> std::io::Result<Records> {
        let (path, file) = new_file(dir)?;
        reserve(&file);
        Ok(Records {
            dir: dir.to_path_buf(),
            file,
            path,
            placed: false,
            warned: false,
        })
    }

    /// Writes `rec` as the new `launcher.json`; a failure is said once.
    pub fn write(&mut self, rec: &LauncherRecord) {
        if let Err(e) = self.try_write(rec) {
            if !std::mem::replace(&mut self.warned, true) {
                eprint(&format!(
                    "cudnn-trace: warning: cannot write {}: {}\n",
                    self.record_path().display(),
                    model::io_msg(&e)
                ));
            }
        }
    }

    fn try_write(&mut self, rec: &LauncherRecord) -> std::io::Result<()> {
        let bytes = record_bytes(rec)?;
        let ours = self.file.metadata()?;
        if !self.placed {
            write_over(&self.file, &bytes, &ours)?;
            fs::rename(&self.path, self.record_path())?;
            self.placed = true;
            return Ok(());
        }
        if self.in_place(&ours) && make_room(&self.file, &ours, bytes.len()) {
            return write_over(&self.file, &bytes, &ours);
        }
        self.replace(&bytes)
    }

    /// Whether `launcher.json` is still this writer's file (`ours`, its
    /// metadata).
    fn in_place(&self, ours: &fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        fs::symlink_metadata(self.record_path())
            .is_ok_and(|now| (ours.dev(), ours.ino()) == (now.dev(), now.ino()))
    }

    /// `bytes` into a new file renamed over `launcher.json`, which becomes
    /// this writer's file.
    fn replace(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        let (path, file) = new_file(&self.dir)?;
        reserve(&file);
        let put = file
            .metadata()
            .and_then(|md| write_over(&file, bytes, &md))
            .and_then(|()| fs::rename(&path, self.record_path()));
        if let Err(e) = put {
            let _ = fs::remove_file(&path);
            return Err(e);
        }
        (self.file, self.path) = (file, path);
        Ok(())
    }

    fn record_path(&self) -> PathBuf {
        self.dir.join(LAUNCHER_FILE)
    }
}

impl Drop for Records {
    /// A file that never became `launcher.json` (the launcher ended before
    /// the program started) goes.
    fn drop(&mut self) {
        if !self.placed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("dir", &self.dir)
            .field("placed", &self.placed)
            .finish()
    }
}

/// A new file for the record in `dir`, under a name of its own: the pid
/// and 64 random bits. Launchers with the same pid (pid 1 of every
/// container, or one killed earlier) may share a directory, and a name made
/// from the pid and a count would then be taken, or worse, be another
/// launcher's live file.
fn new_file(dir: &Path) -> std::io::Result<(PathBuf, fs::File)> {
    let mut tries = 0;
    loop {
        let name = format!(".{LAUNCHER_FILE}.{}.{:016x}", std::process::id(), random());
        let path = dir.join(name);
        match private_file(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// 64 random bits: std's hash keys, seeded from the kernel's random
/// source once per thread and different for each call.
fn random() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

/// Whether `len` bytes fit in the blocks `file` (of metadata `md`) has,
/// allocating more first when they do not: a write that ran out of room halfway would
/// leave neither version whole.
fn make_room(file: &fs::File, md: &fs::Metadata, len: usize) -> bool {
    use std::os::unix::fs::MetadataExt;
    if len as u64 <= md.blocks() * 512 {
        return true;
    }
    allocate(file, (len as i64 + ROOM - 1) / ROOM * ROOM).is_ok()
}

/// `len` bytes of blocks for `file` from its start, past its end if need
/// be (`fallocate` with KEEP_SIZE: its length stays what was written).
fn allocate(file: &fs::File, len: i64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on a file we own.
    match unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, len) } {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// `bytes` as the whole content of `file` (of metadata `md`), from its
/// start: padded with spaces before the final newline to the file's length
/// when that is longer, so that the file never gets shorter (and a room
/// written with zeros, [`reserve`], is filled whole).
fn write_over(file: &fs::File, bytes: &[u8], md: &fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(&pad(bytes, md.len() as usize), 0)
}

/// `bytes` (ending in a newline) made `len` long with spaces before the
/// newline; as they are when already that long.
fn pad(bytes: &[u8], len: usize) -> std::borrow::Cow<'_, [u8]> {
    if bytes.len() >= len {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut v = bytes[..bytes.len() - 1].to_vec();
    v.resize(len - 1, b' ');
    v.push(b'\n');
    std::borrow::Cow::Owned(v)
}

/// The bytes of a version: pretty JSON and a newline.
fn record_bytes(rec: &LauncherRecord) -> std::io::Result<Vec<u8>> {
    let mut v = model::json::to_pretty(rec).map_err(std::io::Error::other)?;
    v.push(b'\n');
    Ok(v)
}

/// Sets [`ROOM`] bytes aside for the record in `file`, just created:
/// allocated past its end (`fallocate` with KEEP_SIZE), so that writing a
/// version needs no new block and nothing is cut off afterwards (freeing
/// blocks can cost a discard per file on file systems mounted with
/// `discard`). Where the file system has no `fallocate` (NFS before 4.2,
/// some FUSE file systems) zeros are written instead, which each version
/// then fills whole. On a full disk the file keeps no room, but it is still
/// a file made in advance.
fn reserve(file: &fs::File) {
    if let Err(e) = allocate(file, ROOM) {
        if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENOSYS)) {
            zero_room(file);
        }
    }
}

/// The room of the record's file on a file system without `fallocate`:
/// zeros.
fn zero_room(file: &fs::File) {
    use std::os::unix::fs::FileExt;
    let _ = file.write_all_at(&[0u8; ROOM as usize], 0);
}

/// What launcher.json says about the pin (docs/pin.md).
pub fn pin_record(p: &PinInfo) -> model::PinRecord {
    model::PinRecord {
        dir: p.dir.to_string_lossy().into_owned(),
        mode: p.mode.as_str().to_string(),
        major: Some(p.major),
        version: p.version.clone(),
        cuda_build: p.cuda_build.and_then(|c| u32::try_from(c).ok()),
        max_device: p.max_device.and_then(|c| u32::try_from(c).ok()),
        files: p.files.clone(),
        warnings: p.warnings.clone(),
    }
}

/// A new file, created exclusively (`O_EXCL`, which never follows a
/// symlink) with mode 0600.
pub fn private_file(path: &Path) -> std::io::Result<fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// This machine's host name, for the record.
pub fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: buffer and its length.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return None;
    }
    let end = buf.iter().position(|&c| c == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_placeholders_expand_like_nccls() {
        let e = |s: &str| expand_out(Path::new(s), 4242, b"node07");
        assert_eq!(e("/t/%h").unwrap(), Path::new("/t/node07"));
        assert_eq!(e("/t/%h-%p/x").unwrap(), Path::new("/t/node07-4242/x"));
        assert_eq!(e("/t/100%%").unwrap(), Path::new("/t/100%"));
        assert_eq!(e("/t/plain").unwrap(), Path::new("/t/plain"));
        assert!(e("/t/%H").unwrap_err().contains("unknown placeholder %H"));
        assert!(e("/t/%").unwrap_err().contains("a % at the end"));
        let h = host_for_path();
        assert!(!h.is_empty() && !h.contains(&b'/'));
    }

    fn record(pid: u32) -> LauncherRecord {
        LauncherRecord {
            launcher_version: "test".into(),
            program: "prog".into(),
            pid: Some(pid),
            ..Default::default()
        }
    }

    /// `launcher.json` of `dir`, as written last.
    fn read_record(dir: &Path) -> LauncherRecord {
        serde_json::from_slice(&fs::read(dir.join(LAUNCHER_FILE)).unwrap()).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    fn ino(p: &Path) -> u64 {
        std::os::unix::fs::MetadataExt::ino(&fs::symlink_metadata(p).unwrap())
    }

    /// One file, made with its room before the program starts: the first
    /// version puts it in place, the later ones go over it, never making it
    /// shorter; no other file is made or left.
    #[test]
    fn every_version_goes_into_the_one_file_made_beforehand() {
        use std::os::unix::fs::MetadataExt;
        let dir = crate::testutil::tempdir("records");
        let mut r = Records::new(&dir).unwrap();
        let made = names(&dir);
        assert_eq!(made.len(), 1, "{made:?}");
        assert!(made[0].starts_with(".launcher.json."), "{made:?}");
        let md = fs::metadata(dir.join(&made[0])).unwrap();
        assert!(md.blocks() * 512 >= ROOM as u64, "{} blocks", md.blocks());
        let first = md.ino();
        let long = LauncherRecord {
            warnings: vec!["w".repeat(300)],
            ..record(1)
        };
        r.write(&long);
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
        assert_eq!(ino(&dir.join(LAUNCHER_FILE)), first);
        assert_eq!(read_record(&dir).pid, Some(1));
        let len = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().len();
        r.write(&record(2));
        assert_eq!(
            ino(&dir.join(LAUNCHER_FILE)),
            first,
            "written over in place"
        );
        let bytes = fs::read(dir.join(LAUNCHER_FILE)).unwrap();
        assert_eq!(bytes.len() as u64, len, "padded, never cut");
        assert!(bytes.ends_with(b" \n"), "spaces before the newline");
        assert_eq!(read_record(&dir).pid, Some(2));
        assert!(read_record(&dir).warnings.is_empty());
        drop(r);
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
        assert!(!dir.join(LAUNCHER_FILE).symlink_metadata().unwrap().is_dir());
    }

    /// A version larger than the room gets more room first, in the same
    /// file.
    #[test]
    fn a_version_larger_than_the_room_gets_more_room_first() {
        use std::os::unix::fs::MetadataExt;
        let dir = crate::testutil::tempdir("records-large");
        let mut r = Records::new(&dir).unwrap();
        r.write(&record(1));
        let first = ino(&dir.join(LAUNCHER_FILE));
        let huge = LauncherRecord {
            warnings: vec!["w".repeat(ROOM as usize + 4096)],
            ..record(4)
        };
        r.write(&huge);
        assert_eq!(ino(&dir.join(LAUNCHER_FILE)), first);
        assert_eq!(read_record(&dir).pid, Some(4));
        let md = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap();
        assert!(md.blocks() * 512 >= md.len());
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
    }

    /// When `launcher.json` is no longer the writer's file (removed under
    /// the run, or someone else's file put there), the version goes into a
    /// new file put in its place, never over the other file.
    #[test]
    fn a_record_removed_or_replaced_is_written_anew() {
        let dir = crate::testutil::tempdir("records-replaced");
        let mut r = Records::new(&dir).unwrap();
        r.write(&record(1));
        fs::remove_file(dir.join(LAUNCHER_FILE)).unwrap();
        r.write(&record(2));
        assert_eq!(read_record(&dir).pid, Some(2));
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
        let ours = ino(&dir.join(LAUNCHER_FILE));
        fs::remove_file(dir.join(LAUNCHER_FILE)).unwrap();
        let theirs = dir.join("theirs");
        fs::write(&theirs, b"{}").unwrap();
        fs::hard_link(&theirs, dir.join(LAUNCHER_FILE)).unwrap();
        r.write(&record(3));
        assert_eq!(read_record(&dir).pid, Some(3));
        assert_ne!(ino(&dir.join(LAUNCHER_FILE)), ino(&theirs));
        assert_ne!(ino(&dir.join(LAUNCHER_FILE)), ours);
        assert_eq!(fs::read(&theirs).unwrap(), b"{}", "their file untouched");
        // The writer's file is the new one now: the next version goes
        // over it.
        let now = ino(&dir.join(LAUNCHER_FILE));
        r.write(&record(4));
        assert_eq!(ino(&dir.join(LAUNCHER_FILE)), now);
        assert_eq!(read_record(&dir).pid, Some(4));
        assert!(!r.warned);
    }

    /// Two writers in one directory with the same pid (containers that
    /// share a volume, each launcher pid 1), and what killed launchers of
    /// that pid left there (names numbered in turn, as files once were:
    /// more than a launcher would try before giving up): each writer has a
    /// file of its own, and the last version written is the record.
    #[test]
    fn writers_with_the_same_pid_never_share_a_file() {
        let dir = crate::testutil::tempdir("records-same-pid");
        let pid = std::process::id();
        let left = 1100;
        for n in 0..left {
            fs::write(dir.join(format!(".{LAUNCHER_FILE}.{pid}.{n}")), b"").unwrap();
        }
        let mut a = Records::new(&dir).expect("names left behind are no error");
        let mut b = Records::new(&dir).unwrap();
        assert_ne!(a.path, b.path);
        a.write(&record(7));
        assert_eq!(read_record(&dir).pid, Some(7));
        b.write(&record(8));
        assert_eq!(read_record(&dir).pid, Some(8));
        drop((a, b));
        assert_eq!(names(&dir).len(), left + 1);
    }

    /// What a file system without `fallocate` gets: zeros as the room,
    /// which every version fills whole (JSON, then spaces).
    #[test]
    fn a_room_of_zeros_is_filled_by_each_version() {
        let dir = crate::testutil::tempdir("records-zeros");
        let mut r = Records::new(&dir).unwrap();
        zero_room(&r.file);
        r.write(&record(3));
        let bytes = fs::read(dir.join(LAUNCHER_FILE)).unwrap();
        assert_eq!(bytes.len(), ROOM as usize);
        assert!(!bytes.contains(&0) && bytes.ends_with(b"\n"));
        assert_eq!(read_record(&dir).pid, Some(3));
        r.write(&record(4));
        assert_eq!(
            fs::read(dir.join(LAUNCHER_FILE)).unwrap().len(),
            ROOM as usize
        );
        assert_eq!(read_record(&dir).pid, Some(4));
    }

    /// A launcher that ends before the program started leaves no file.
    #[test]
    fn a_file_never_put_in_place_goes_with_the_writer() {
        let dir = crate::testutil::tempdir("records-unused");
        drop(Records::new(&dir).unwrap());
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
    }

    #[test]
    fn time_formats() {
        let (stamp, rfc) = local_time(1_763_700_000_123);
        assert_eq!(stamp.len(), 15);
        assert_eq!(&stamp[8..9], "-");
        assert!(rfc.contains(".123"), "{rfc}");
        assert_eq!(rfc.len(), "2025-11-21T04:40:00.123+00:00".len());
    }
}
