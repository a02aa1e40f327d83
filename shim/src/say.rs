//! What the shim says on the program's stderr, and to whom it listens.
//!
//! The shim speaks rarely: a trace directory it cannot write, a pin
//! directory it cannot read, a disk that filled up. It says each thing once
//! per *process tree* (issue 11), not once per process: a job that starts
//! 500 workers with a bad `CUDNN_TRACE_DIR` gets one line, not 500. The
//! tree of a process is it and its ancestors that run the shim with the
//! same settings (the same `LD_AUDIT`, `CUDNN_TRACE_DIR`, `CUDNN_TRACE_PIN`
//! and `CUDNN_TRACE`, read from `/proc/PID/environ`, and the shim mapped,
//! read from `/proc/PID/maps`):
//!
//! - a condition every process of the tree meets at its start (a trace
//!   directory it cannot create files in, a pin directory it cannot read:
//!   both are looked at in `la_version`) is said by the top of the tree
//!   alone ([`top_of_tree`]): its children inherit the same settings and
//!   would say the same. No state is kept anywhere, and no variable is
//!   added to the program's environment (the shim never changes what the
//!   program and its children see);
//! - a condition met later, by any process (a full disk), is said by the
//!   first process of the tree that meets it, which creates a marker file
//!   named after the top of the tree (its pid and start time) in the trace
//!   directory with `O_EXCL` ([`once_per_tree`]); an empty file fits on a
//!   full disk.
//!
//! The line goes to descriptor 2 only if it is still the file it was when
//! the process started: a daemon that closed its stderr and got descriptor
//! 2 back for a file of its own must not find the shim's words in it.
//! Paths are escaped ([`cudnn_trace_format::escape`]): one line of
//! printable UTF-8, whatever bytes the directory name holds.
//!
//! Error texts come from a table here, not from `strerror`: on glibc before
//! 2.35 the audit namespace's libc has no locale in threads the program
//! created (BZ #28096), and `strerror` reads it.
//!
//! In a secure-execution process (setuid, setgid, file capabilities:
//! `AT_SECURE`) the shim does nothing at all ([`secure_execution`]).

use cudnn_trace_format::envvar;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Whether the kernel started this process in secure-execution mode: it
/// changed its user or group id (setuid, setgid) or gave it capabilities
/// (setcap), so its environment comes from a less privileged caller.
/// glibc then ignores `LD_LIBRARY_PATH` and loads preloads and audit modules
/// only from system directories, setuid ones; the shim, if an administrator
/// installed it so, must ignore `CUDNN_TRACE_DIR` and `CUDNN_TRACE_PIN`
/// too: honouring them would let any user choose where a root process
/// writes files, and which cuDNN code it runs.
pub fn secure_execution() -> bool {
    // SAFETY: getauxval has no preconditions (GLIBC_2.16).
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Identity of descriptor 2 at start-up; `u64::MAX` when it was closed.
static STDERR_DEV: AtomicU64 = AtomicU64::new(u64::MAX);
static STDERR_INO: AtomicU64 = AtomicU64::new(u64::MAX);
static STDERR_SEEN: AtomicBool = AtomicBool::new(false);

fn fd_identity(fd: i32) -> Option<(u64, u64)> {
    let mut st: libc::stat = unsafe { core::mem::zeroed() };
    // SAFETY: fstat into a local buffer.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// Remembers what descriptor 2 is (from `la_version`, before any code of
/// the program runs).
pub fn init() {
    if let Some((dev, ino)) = fd_identity(2) {
        STDERR_DEV.store(dev, Ordering::Relaxed);
        STDERR_INO.store(ino, Ordering::Relaxed);
    }
    STDERR_SEEN.store(true, Ordering::Release);
}

/// Writes `cudnn-trace: <text>` and a newline on stderr, if descriptor 2
/// is still the file it was at start-up. `text` must be one line of
/// printable text (escape what comes from outside).
pub fn line(text: &str) {
    if !STDERR_SEEN.load(Ordering::Acquire) {
        init();
    }
    let start = (
        STDERR_DEV.load(Ordering::Relaxed),
        STDERR_INO.load(Ordering::Relaxed),
    );
    if start.0 == u64::MAX || fd_identity(2) != Some(start) {
        return;
    }
    let msg = format!("cudnn-trace: {text}\n");
    // SAFETY: writing a buffer we own.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

/// `bytes` escaped for a terminal (see [`cudnn_trace_format::escape`]).
pub fn esc(bytes: &[u8]) -> String {
    cudnn_trace_format::escape::escape(bytes)
}

/// The variables that decide what the shim does in a process, as this
/// process got them.
const SETTINGS: &[&str] = &[
    "LD_AUDIT",
    envvar::OUT_DIR,
    envvar::PIN,
    envvar::PIN_MODE,
    envvar::ENABLE,
];

/// `NAME=value` of each of [`SETTINGS`] in an environment block, in order
/// (`None` for one not set).
fn settings_in(block: &[u8]) -> Vec<Option<&[u8]>> {
    SETTINGS
        .iter()
        .map(|name| {
            block.split(|&c| c == 0).find_map(|kv| {
                kv.strip_prefix(name.as_bytes())
                    .and_then(|rest| rest.strip_prefix(b"="))
            })
        })
        .collect()
}

fn own_settings() -> Vec<Option<Vec<u8>>> {
    SETTINGS
        .iter()
        .map(|name| std::env::var_os(name).map(|v| v.as_bytes().to_vec()))
        .collect()
}

/// Field 4 (ppid) and field 22 (start time, clock ticks since boot) of
/// `/proc/PID/stat`.
fn stat_of(pid: u32) -> Option<(u32, u64)> {
    let s = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything:
    // the fields after its last ')' are plain numbers.
    let rest = &s[s.iter().rposition(|&c| c == b')')? + 1..];
    let fields: Vec<&[u8]> = rest
        .split(|&c| c == b' ')
        .filter(|f| !f.is_empty())
        .collect();
    let num = |i: usize| -> Option<u64> { std::str::from_utf8(fields.get(i)?).ok()?.parse().ok() };
    // After the name: state is field 3, so field N is fields[N - 3].
    Some((num(1)? as u32, num(19)?))
}

/// Whether process `pid` runs the shim with the same settings as this one.
fn same_tree(pid: u32, own: &[Option<Vec<u8>>]) -> bool {
    if pid <= 1 {
        return false;
    }
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let theirs = settings_in(&env);
    if theirs.len() != own.len() || theirs.iter().zip(own).any(|(a, b)| *a != b.as_deref()) {
        return false;
    }
    // The same variables, and the shim really loaded there (a static or
    // setuid parent has the variables but no shim, and said nothing).
    let Ok(maps) = std::fs::read(format!("/proc/{pid}/maps")) else {
        return false;
    };
    let shim = own_file();
    !shim.is_empty() && maps.windows(shim.len()).any(|w| w == shim)
}

/// The path of this library's file as `/proc/self/maps` shows it (found by
/// an address inside it; no loader function is called), or empty.
fn own_file() -> &'static [u8] {
    static OWN: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    OWN.get_or_init(|| {
        let here = own_file as *const () as usize;
        let maps = std::fs::read("/proc/self/maps").unwrap_or_default();
        maps.split(|&c| c == b'\n')
            .find_map(|l| {
                let range = l.split(|&c| c == b' ').next()?;
                let dash = range.iter().position(|&c| c == b'-')?;
                let num = |b: &[u8]| usize::from_str_radix(std::str::from_utf8(b).ok()?, 16).ok();
                let (lo, hi) = (num(&range[..dash])?, num(&range[dash + 1..])?);
                let path = &l[l.iter().position(|&c| c == b'/')?..];
                (lo <= here && here < hi).then(|| path.to_vec())
            })
            .unwrap_or_default()
    })
}

/// Whether this process is the top of its tree: its parent does not run
/// the shim with the same settings. Only called when there is something to
/// say (it reads two files of the parent).
pub fn top_of_tree() -> bool {
    // SAFETY: getppid has no preconditions.
    let ppid = unsafe { libc::getppid() } as u32;
    !same_tree(ppid, &own_settings())
}

/// Pid and start time of the top of this process's tree.
fn tree_top() -> (u32, u64) {
    let own = own_settings();
    let me = crate::trace::pid();
    let mut top = me;
    let mut start = stat_of(me).map_or(0, |s| s.1);
    // Bounded: a tree deeper than this is cut there.
    for _ in 0..64 {
        let Some((ppid, _)) = stat_of(top) else { break };
        if !same_tree(ppid, &own) {
            break;
        }
        top = ppid;
        start = stat_of(ppid).map_or(0, |s| s.1);
    }
    (top, start)
}

/// Whether this process is the first of its tree to say `what` about the
/// trace directory `dir`: it creates `<dir>/.cudnn-trace-<what>.<pid>.<start>`
/// (pid and start time of the top of the tree) exclusively. A file that
/// cannot be created for another reason than its existence counts as
/// first: better twice than never.
pub fn once_per_tree(dir: &[u8], what: &str) -> bool {
    let (pid, start) = tree_top();
    let mut path = dir.to_vec();
    path.extend_from_slice(format!("/.cudnn-trace-{what}.{pid}.{start}").as_bytes());
    let Ok(c) = std::ffi::CString::new(path) else {
        return true;
    };
    // SAFETY: valid C string.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            0o600,
        )
    };
    if fd >= 0 {
        // SAFETY: our own descriptor.
        unsafe { libc::close(fd) };
        return true;
    }
    std::io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST)
}

/// The text of an `errno` value, without `strerror` (see the module docs).
pub fn errno_text(e: i32) -> String {
    let s = match e {
        libc::EPERM => "Operation not permitted",
        libc::ENOENT => "No such file or directory",
        libc::EIO => "Input/output error",
        libc::EBADF => "Bad file descriptor",
        libc::ENOMEM => "Cannot allocate memory",
        libc::EACCES => "Permission denied",
        libc::EEXIST => "File exists",
        libc::ENOTDIR => "Not a directory",
        libc::EISDIR => "Is a directory",
        libc::EINVAL => "Invalid argument",
        libc::ENFILE => "Too many open files in system",
        libc::EMFILE => "Too many open files",
        libc::EFBIG => "File too large",
        libc::ENOSPC => "No space left on device",
        libc::EROFS => "Read-only file system",
        libc::ENAMETOOLONG => "File name too long",
        libc::ENOSYS => "Function not implemented",
        libc::ELOOP => "Too many levels of symbolic links",
        libc::EOPNOTSUPP => "Operation not supported",
        libc::EDQUOT => "Disk quota exceeded",
        libc::ESTALE => "Stale file handle",
        0 => "a short write",
        _ => return format!("error {e}"),
    };
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_from_an_environment_block() {
        let block = b"A=1\0CUDNN_TRACE_DIR=/t\0LD_AUDIT=/s/libcdtrace.so\0CUDNN_TRACE_DIRX=no\0";
        let s = settings_in(block);
        assert_eq!(s[0], Some(&b"/s/libcdtrace.so"[..]));
        assert_eq!(s[1], Some(&b"/t"[..]));
        assert_eq!(s[2], None);
    }

    #[test]
    fn own_stat_is_read() {
        let (ppid, start) = stat_of(std::process::id()).expect("stat");
        // SAFETY: getppid has no preconditions.
        assert_eq!(ppid, unsafe { libc::getppid() } as u32);
        assert!(start > 0);
    }

    #[test]
    fn errno_texts() {
        assert_eq!(errno_text(libc::ENOSPC), "No space left on device");
        assert_eq!(errno_text(9999), "error 9999");
    }
}
