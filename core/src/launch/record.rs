//! The trace directory of a run and the launcher's record in it
//! (`launcher.json`, written atomically each time it changes: [`Records`]).

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
    // file that finds out is the first room set aside for launcher.json.
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
/// changes. Each version is a new file renamed over the last (a reader sees
/// one version or the next, never half of one). One file is set aside
/// beforehand (a *spare*: created, with [`SPARE`] bytes allocated), so that
/// the record that says how the program ended is written even when the
/// program's traces have filled the disk. Without it the summary could
/// only guess that the launcher was killed.
///
/// A version that a later one replaces ([`Version::Interim`]) goes into a
/// new file, not a spare, when the disk takes it: freeing allocated blocks
/// is what makes replacing or removing a file slow (on ext4 mounted with
/// `discard`, 0.3 to 0.5 ms a file, against about 0.1 ms for a file written
/// moments ago, whose blocks are not allocated yet), and each file made is
/// an inode allocated, the launcher's largest cost on ext4 without a
/// journal (docs/benchmarks.md). So only the last version takes the spare,
/// unless the disk was full when an earlier one was written; then the
/// earlier one takes it, and a version that finds neither room for a new
/// file nor a spare is written over the one in place, in the room that
/// the spare brought with it.
pub struct Records {
    dir: PathBuf,
    spares: Vec<Spare>,
    /// A failed write is said once per run, however many follow.
    warned: bool,
    /// The file this writer last put in place as `launcher.json`: the next
    /// version is swapped with it, or written over it when the disk is full.
    placed: Option<fs::File>,
}

/// A file set aside for a later version of `launcher.json`.
struct Spare {
    path: PathBuf,
    file: fs::File,
    /// Its room was written (no `fallocate` there): the record must be cut
    /// to its length.
    padded: bool,
}

/// Bytes allocated to each spare: a record is under 4 KiB, more with many
/// warnings or processes that outlived the program.
const SPARE: i64 = 16 << 10;

/// Which version of `launcher.json` a write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// A later version will replace it (the record of the start; that of
    /// the end when the summary's follows).
    Interim,
    /// The run's last version: it takes a spare.
    Last,
}

impl Records {
    /// The writer of `dir`'s record, with the spare for its last version;
    /// Err when `dir` takes no new file (a full disk is not an error: the
    /// spare then has no room allocated, but the file exists).
    pub fn new(dir: &Path) -> std::io::Result<Records> {
        let mut r = Records {
            dir: dir.to_path_buf(),
            spares: Vec::new(),
            warned: false,
            placed: None,
        };
        r.spares.push(r.make_spare()?);
        Ok(r)
    }

    /// Sets aside spares until there are `n`.
    fn keep(&mut self, n: usize) {
        while self.spares.len() < n {
            match self.make_spare() {
                Ok(s) => self.spares.push(s),
                Err(_) => return,
            }
        }
    }

    /// A new spare, under a name of its own: the pid and 64 random bits.
    /// Launchers with the same pid (pid 1 of every container, or one
    /// killed earlier) may share a directory, and a name made from the pid
    /// and a count would then be taken, or worse, be another launcher's
    /// live spare.
    fn make_spare(&self) -> std::io::Result<Spare> {
        let (path, file) = self.new_file()?;
        let padded = reserve(&file);
        Ok(Spare { path, file, padded })
    }

    /// A new file for a version, named as a spare is.
    fn new_file(&self) -> std::io::Result<(PathBuf, fs::File)> {
        let mut tries = 0;
        loop {
            let name = format!(".{LAUNCHER_FILE}.{}.{:016x}", std::process::id(), random());
            let path = self.dir.join(name);
            match private_file(&path) {
                Ok(f) => return Ok((path, f)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 8 => tries += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Writes `rec` as the new `launcher.json` (see [`Version`]).
    pub fn write(&mut self, rec: &LauncherRecord, version: Version) {
        let res = match version {
            Version::Interim => self.write_interim(rec),
            Version::Last => self.write_spare(rec),
        };
        if let Err(e) = res {
            if !std::mem::replace(&mut self.warned, true) {
                eprint(&format!(
                    "cudnn-trace: warning: cannot write {}: {}\n",
                    self.path().display(),
                    model::io_msg(&e)
                ));
            }
        }
    }

    /// A version a later one replaces: into a new file when the disk takes
    /// it (then the spares beyond the one kept for the last version go),
    /// else into a spare, with another set aside when none is left and the
    /// disk allows (replacing the previous version may just have freed its
    /// room).
    fn write_interim(&mut self, rec: &LauncherRecord) -> std::io::Result<()> {
        let fresh = self.new_file().and_then(|(path, file)| {
            let spare = Spare {
                path,
                file,
                padded: false,
            };
            self.put(spare, rec)
        });
        if fresh.is_ok() {
            self.release(1);
            return Ok(());
        }
        let res = self.write_spare(rec);
        self.keep(1);
        res
    }

    /// Removes the spares beyond the first `keep`.
    fn release(&mut self, keep: usize) {
        for s in self.spares.drain(keep.min(self.spares.len())..) {
            let _ = fs::remove_file(&s.path);
        }
    }

    /// Into a spare; when none is left or it has no room, over the version
    /// in place (in the room of the spare it came from); last, into a
    /// spare made now. Err: the first failure.
    fn write_spare(&mut self, rec: &LauncherRecord) -> std::io::Result<()> {
        let first = match self.spares.pop() {
            Some(s) => match self.put(s, rec) {
                Ok(()) => return Ok(()),
                Err(e) => Some(e),
            },
            None => None,
        };
        self.write_in_place(rec)
            .or_else(|_| self.make_spare().and_then(|s| self.put(s, rec)))
            .map_err(|e| first.unwrap_or(e))
    }

    /// `rec` written over the version this writer put in place, when it is
    /// still `launcher.json`: only when the disk has no room for a file
    /// (a reader could then see half of a version). Never made shorter:
    /// spaces, which JSON ignores, make up the difference, so that no moment
    /// leaves the end of the old version after the new one, and no block is
    /// freed.
    fn write_in_place(&mut self, rec: &LauncherRecord) -> std::io::Result<()> {
        use std::os::unix::fs::{FileExt, MetadataExt};
        let gone = || std::io::Error::from(std::io::ErrorKind::NotFound);
        let file = self.placed.as_ref().ok_or_else(gone)?;
        let (ours, now) = (file.metadata()?, fs::symlink_metadata(self.path())?);
        if (ours.dev(), ours.ino()) != (now.dev(), now.ino()) {
            return Err(gone());
        }
        let mut v = record_bytes(rec)?;
        // Only into blocks the file already has: a write that ran out of
        // room halfway would leave neither version whole.
        if v.len() as u64 > ours.blocks() * 512 {
            return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
        }
        if (v.len() as u64) < ours.len() {
            v.resize(ours.len() as usize, b' ');
        }
        file.write_all_at(&v, 0)
    }

    /// `rec` into `s`, put in place as `launcher.json`; `s` is removed when
    /// that fails.
    fn put(&mut self, s: Spare, rec: &LauncherRecord) -> std::io::Result<()> {
        let res = write_into(&s, rec).and_then(|()| self.replace(&s.path));
        match res {
            Ok(()) => self.placed = Some(s.file),
            Err(_) => {
                let _ = fs::remove_file(&s.path);
            }
        }
        res
    }

    /// Makes the file at `path` `launcher.json`, atomically. Over a version
    /// of ours, the two are swapped (`renameat2` with RENAME_EXCHANGE) and
    /// the old one, now at `path`, is removed: a plain `rename` over a file
    /// makes ext4 allocate the new file's blocks at once (`auto_da_alloc`),
    /// so that replacing that version in turn frees allocated blocks (0.2 to
    /// 0.4 ms on this VM's ext4, mounted `discard`, against 0.03 ms for the
    /// swap and the removal of a file whose blocks were never allocated).
    /// `rename` where the swap is not supported (kernels before 3.15, NFS,
    /// some FUSE file systems) or finds no `launcher.json`.
    fn replace(&mut self, path: &Path) -> std::io::Result<()> {
        if self.placed.is_some() && exchange(path, &self.path()).is_ok() {
            let _ = fs::remove_file(path);
            return Ok(());
        }
        fs::rename(path, self.path())
    }

    fn path(&self) -> PathBuf {
        self.dir.join(LAUNCHER_FILE)
    }
}

impl Drop for Records {
    fn drop(&mut self) {
        self.release(0);
    }
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("dir", &self.dir)
            .field("spares", &self.spares.len())
            .finish()
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

/// Swaps the files at `a` and `b` (both must exist).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(a), Ok(b)) = (
        std::ffi::CString::new(a.as_os_str().as_bytes()),
        std::ffi::CString::new(b.as_os_str().as_bytes()),
    ) else {
        return Err(std::io::ErrorKind::InvalidInput.into());
    };
    // SAFETY: two NUL-terminated paths. A raw system call: glibc has no
    // wrapper before 2.28, and the launcher runs on 2.17.
    let r = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `rec` as the whole content of the spare (empty until now, or padding),
/// written into its room.
fn write_into(s: &Spare, rec: &LauncherRecord) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let v = record_bytes(rec)?;
    s.file.write_all_at(&v, 0)?;
    if s.padded {
        s.file.set_len(v.len() as u64)?;
    }
    Ok(())
}

/// The bytes of a version: pretty JSON and a newline.
fn record_bytes(rec: &LauncherRecord) -> std::io::Result<Vec<u8>> {
    let mut v = model::json::to_pretty(rec).map_err(std::io::Error::other)?;
    v.push(b'\n');
    Ok(v)
}

/// Sets [`SPARE`] bytes aside for the record in `file`, just created:
/// allocated past its end (`fallocate` with KEEP_SIZE), so that writing the
/// record needs no new block and nothing is cut off afterwards (freeing
/// blocks can cost a discard per file on file systems mounted with
/// `discard`). Where the file system has no `fallocate` (NFS before 4.2,
/// some FUSE file systems) zeros are written instead, to be cut to the
/// record's length: true then. On a full disk the spare keeps no room,
/// but it is still a file made in advance.
fn reserve(file: &fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: fallocate on a file we own.
    if unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, 0, SPARE) } == 0 {
        return false;
    }
    let e = std::io::Error::last_os_error().raw_os_error();
    if e != Some(libc::EOPNOTSUPP) && e != Some(libc::ENOSYS) {
        return false;
    }
    pad(file);
    true
}

/// The room of a spare on a file system without `fallocate`: zeros, cut
/// to the record's length once it is written (even a partial write leaves
/// bytes to cut).
fn pad(file: &fs::File) {
    use std::os::unix::fs::FileExt;
    let _ = file.write_all_at(&[0u8; SPARE as usize], 0);
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

    #[test]
    fn each_version_replaces_the_last_and_no_spare_is_left() {
        let dir = crate::testutil::tempdir("records");
        let mut r = Records::new(&dir).unwrap();
        assert_eq!(names(&dir).len(), 1, "{:?}", names(&dir));
        r.write(&record(1), Version::Interim);
        assert_eq!(read_record(&dir).pid, Some(1));
        // The disk took the record without a spare: one spare is left,
        // for the last version, next to the record.
        assert_eq!(names(&dir).len(), 2, "{:?}", names(&dir));
        r.write(&record(2), Version::Interim);
        assert_eq!(read_record(&dir).pid, Some(2));
        assert_eq!(names(&dir).len(), 2, "{:?}", names(&dir));
        r.write(&record(3), Version::Last);
        assert_eq!(read_record(&dir).pid, Some(3));
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
        // The last version is the spare: room allocated past its end.
        let blocks =
            std::os::unix::fs::MetadataExt::blocks(&fs::metadata(dir.join(LAUNCHER_FILE)).unwrap());
        assert!(blocks * 512 >= SPARE as u64, "{blocks} blocks");
        drop(r);
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
    }

    /// A version replaces the last by swapping names with it, then removing
    /// it; when there is nothing to swap with (the record was removed under
    /// the run), by `rename`, and nothing is left behind either way.
    #[test]
    fn a_version_takes_the_place_of_the_last_or_of_none() {
        use std::os::unix::fs::MetadataExt;
        let dir = crate::testutil::tempdir("records-swap");
        let mut r = Records::new(&dir).unwrap();
        r.write(&record(1), Version::Interim);
        let first = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().ino();
        r.write(&record(2), Version::Interim);
        assert_eq!(read_record(&dir).pid, Some(2));
        assert_ne!(fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().ino(), first);
        assert_eq!(
            names(&dir).len(),
            2,
            "the record and the last spare: {:?}",
            names(&dir)
        );
        fs::remove_file(dir.join(LAUNCHER_FILE)).unwrap();
        r.write(&record(3), Version::Last);
        assert_eq!(read_record(&dir).pid, Some(3));
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
    }

    /// Two writers in one directory with the same pid (containers that
    /// share a volume, each launcher pid 1), and what killed launchers of
    /// that pid left there (names numbered in turn, as spares once were:
    /// more than a launcher would try before giving up): every spare has a
    /// name of its own, and each writer's record is its own.
    #[test]
    fn writers_with_the_same_pid_never_share_a_spare() {
        let dir = crate::testutil::tempdir("records-same-pid");
        let pid = std::process::id();
        let left = 1100;
        for n in 0..left {
            fs::write(dir.join(format!(".{LAUNCHER_FILE}.{pid}.{n}")), b"").unwrap();
        }
        let mut a = Records::new(&dir).expect("names left behind are no error");
        let mut b = Records::new(&dir).unwrap();
        a.keep(2);
        b.keep(2);
        let mut spares: Vec<&PathBuf> = a.spares.iter().chain(&b.spares).map(|s| &s.path).collect();
        spares.sort();
        spares.dedup();
        assert_eq!(spares.len(), 4);
        a.write(&record(7), Version::Last);
        assert_eq!(read_record(&dir).pid, Some(7));
        b.write(&record(8), Version::Last);
        assert_eq!(read_record(&dir).pid, Some(8));
        drop((a, b));
        assert_eq!(names(&dir).len(), left + 1);
    }

    /// With no spare left (the disk was full when an earlier version was
    /// written, so that one took it), a version goes over the one in
    /// place, in the room the spare brought: the same file, whole, and
    /// still JSON where it is shorter than what it replaces. Not over a
    /// file that is no longer the one this writer put there.
    #[test]
    fn without_a_spare_a_version_goes_over_the_one_in_place() {
        use std::os::unix::fs::MetadataExt;
        let dir = crate::testutil::tempdir("records-in-place");
        let mut r = Records::new(&dir).unwrap();
        let long = LauncherRecord {
            warnings: vec!["w".repeat(300)],
            ..record(1)
        };
        r.write(&long, Version::Last);
        assert!(r.spares.is_empty());
        let before = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap();
        r.write(&record(2), Version::Last);
        let after = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap();
        assert_eq!(after.ino(), before.ino(), "written over in place");
        assert_eq!(after.len(), before.len(), "padded, never cut");
        assert_eq!(read_record(&dir).pid, Some(2));
        assert!(read_record(&dir).warnings.is_empty());
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
        assert!(!r.warned);

        // A version larger than the blocks the file has is not started
        // there (a full disk could cut it halfway): a new file takes it.
        let huge = LauncherRecord {
            warnings: vec!["w".repeat(SPARE as usize + 4096)],
            ..record(4)
        };
        r.write(&huge, Version::Last);
        assert_ne!(
            fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().ino(),
            before.ino()
        );
        assert_eq!(read_record(&dir).pid, Some(4));
        assert_eq!(names(&dir), [LAUNCHER_FILE]);

        // Someone else's file took the name: a new file replaces it.
        fs::remove_file(dir.join(LAUNCHER_FILE)).unwrap();
        fs::write(dir.join(LAUNCHER_FILE), b"{}").unwrap();
        let theirs = fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().ino();
        r.write(&record(3), Version::Last);
        assert_eq!(read_record(&dir).pid, Some(3));
        assert_ne!(fs::metadata(dir.join(LAUNCHER_FILE)).unwrap().ino(), theirs);
        assert_eq!(names(&dir), [LAUNCHER_FILE]);
    }

    #[test]
    fn a_padded_spare_is_cut_to_the_record() {
        let dir = crate::testutil::tempdir("records-padded");
        let mut r = Records::new(&dir).unwrap();
        // What a file system without fallocate gets: zeros as the room.
        let s = &mut r.spares[0];
        pad(&s.file);
        assert_eq!(s.file.metadata().unwrap().len(), SPARE as u64);
        s.padded = true;
        r.write(&record(3), Version::Last);
        let bytes = fs::read(dir.join(LAUNCHER_FILE)).unwrap();
        assert!(bytes.len() < SPARE as usize && bytes.ends_with(b"}\n"));
        let rec: LauncherRecord = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(rec.pid, Some(3));
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
