//! An exec prepared before the child is made, for a child that may not
//! allocate (a fork of a process with threads, or a clone that shares the
//! launcher's memory): [`super::spawn`] and the terminal session leader
//! ([`super::session`]) start the program from one, with `argv[0]` as
//! typed, the launcher's environment with the traced variables, and a file
//! the kernel cannot execute handed to `/bin/sh` (`sh FILE ARGS`, `argv[0]`
//! the program as typed) unless it is an ELF file, which is another
//! machine's (126, as bash says).

use super::env::ProgramEnv;
use super::Options;
use std::ffi::{CString, OsStr, OsString};
use std::fs;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Whether `file` is an ELF file (one the kernel refuses is then another
/// machine's, not a script for /bin/sh).
pub fn is_elf(file: &Path) -> bool {
    fs::File::open(file)
        .and_then(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).map(|_| magic == *b"\x7fELF")
        })
        .unwrap_or(false)
}

/// Everything `execve` needs, made before the child: between its start and
/// the exec, nothing may allocate.
pub struct ExecPlan {
    file: CString,
    argv: CArray,
    /// For a file the kernel cannot execute: `/bin/sh FILE ARGS…`, as
    /// execvp does (not for an ELF file).
    shell: Option<CArray>,
    envp: CArray,
}

/// The launcher's `environ`, entry by entry. Nothing in the launcher sets
/// or removes a variable, so it does not change under the reading.
fn environ_entries() -> Vec<OsString> {
    extern "C" {
        static environ: *const *const libc::c_char;
    }
    let mut out = Vec::new();
    // SAFETY: environ is a NULL-terminated array of NUL-terminated strings
    // (or NULL, after clearenv).
    unsafe {
        let mut p = environ;
        while !p.is_null() && !(*p).is_null() {
            let bytes = std::ffi::CStr::from_ptr(*p).to_bytes();
            out.push(OsStr::from_bytes(bytes).to_os_string());
            p = p.add(1);
        }
    }
    out
}

/// The name in an environment entry: up to its first `=` (the whole entry
/// when it has none).
fn entry_name(entry: &[u8]) -> &[u8] {
    let end = entry.iter().position(|&c| c == b'=').unwrap_or(entry.len());
    &entry[..end]
}

/// NUL-terminated strings and the NULL-terminated array of pointers to
/// them.
struct CArray {
    _strings: Vec<CString>,
    ptrs: Vec<*const libc::c_char>,
}

impl CArray {
    fn new<'a>(items: impl IntoIterator<Item = &'a OsStr>) -> io::Result<CArray> {
        let strings = items
            .into_iter()
            .map(|s| CString::new(s.as_bytes()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "an argument holds a NUL byte")
            })?;
        let mut ptrs: Vec<*const libc::c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        Ok(CArray {
            _strings: strings,
            ptrs,
        })
    }
}

impl ExecPlan {
    /// The exec of `file` with `opts`' argv (`argv[0]` as typed) and the
    /// launcher's environment as it is, entry by entry and in its order
    /// (one without `=` too, which `std::env::vars_os` would skip), but for
    /// the variables `env` sets or removes.
    pub fn new(opts: &Options, file: &Path, env: Option<&ProgramEnv>) -> io::Result<ExecPlan> {
        let mut entries = environ_entries();
        if let Some(env) = env {
            entries.retain(|e| {
                let name = entry_name(e.as_bytes());
                !env.remove.iter().any(|k| k.as_bytes() == name)
                    && !env.set.iter().any(|(k, _)| k.as_bytes() == name)
            });
            for (k, v) in &env.set {
                let mut e = k.clone();
                e.push("=");
                e.push(v);
                entries.push(e);
            }
        }
        let args = || {
            std::iter::once(opts.program.as_os_str())
                .chain(opts.args.iter().map(OsString::as_os_str))
        };
        let shell = if is_elf(file) {
            None
        } else {
            let mut items = vec![opts.program.as_os_str(), file.as_os_str()];
            items.extend(opts.args.iter().map(OsString::as_os_str));
            Some(CArray::new(items)?)
        };
        Ok(ExecPlan {
            file: CString::new(file.as_os_str().as_bytes()).map_err(|_| {
                io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte")
            })?,
            argv: CArray::new(args())?,
            shell,
            envp: CArray::new(entries.iter().map(OsString::as_os_str))?,
        })
    }

    /// Executes the program; returns only when that failed, with errno.
    ///
    /// # Safety
    /// Async-signal-safe: for the child of a fork or a clone.
    pub unsafe fn exec(&self) -> i32 {
        libc::execve(
            self.file.as_ptr(),
            self.argv.ptrs.as_ptr(),
            self.envp.ptrs.as_ptr(),
        );
        let mut err = *libc::__errno_location();
        if err == libc::ENOEXEC {
            if let Some(sh) = &self.shell {
                libc::execve(
                    c"/bin/sh".as_ptr(),
                    sh.ptrs.as_ptr(),
                    self.envp.ptrs.as_ptr(),
                );
                err = *libc::__errno_location();
            }
        }
        err
    }
}

/// The stack of a child that shares its parent's memory until it executes
/// the program: it runs only the steps before the exec on it.
const CHILD_STACK: usize = 128 * 1024;

/// Starts `entry(arg)` as a child that shares the caller's memory
/// (CLONE_VM), on a stack of its own, the caller waiting until the child
/// has executed a program or ended (CLONE_VFORK), as `posix_spawn` does;
/// the child's pid, or -1 with errno set.
///
/// # Safety
/// `entry` runs only async-signal-safe code, writes none of the caller's
/// memory but what `arg` allows, and no handler of the caller's may run in
/// it (signals blocked); `arg` lives until this returns.
pub unsafe fn clone_vfork(
    entry: extern "C" fn(*mut libc::c_void) -> libc::c_int,
    arg: *mut libc::c_void,
) -> i32 {
    let stack = libc::mmap(
        std::ptr::null_mut(),
        CHILD_STACK,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
        -1,
        0,
    );
    if stack == libc::MAP_FAILED {
        return -1;
    }
    let pid = libc::clone(
        entry,
        stack.cast::<u8>().add(CHILD_STACK).cast(),
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        arg,
    );
    let e = *libc::__errno_location();
    // The child has executed the program or ended: it left the stack.
    libc::munmap(stack, CHILD_STACK);
    *libc::__errno_location() = e;
    pid
}

/// Whether this glibc's `clone` leaves the caller's thread alone with
/// CLONE_VM: 2.24 and later. Before, it writes -1 into the calling thread's
/// cached pid and tid (glibc bug 19957), which would break `raise` in the
/// parent: there children are forked.
pub fn clone_shares_memory_safely() -> bool {
    // SAFETY: glibc's version string, static and NUL-terminated.
    let v = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    cudnn_trace_format::glibc_at_least(v.to_bytes(), (2, 24))
}

/// A pipe, both ends close-on-exec: (read end, write end).
pub fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two new descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Waits for `pid` (a child), retrying on EINTR.
pub fn reap(pid: i32) {
    let mut st = 0;
    // SAFETY: valid out pointer.
    while unsafe { libc::waitpid(pid, &mut st, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// Sets `sig`'s disposition to `handler` (SIG_DFL, SIG_IGN), no flags.
///
/// # Safety
/// Async-signal-safe: for a child before its exec, too.
pub unsafe fn set_disposition(sig: i32, handler: libc::sighandler_t) {
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = handler;
    libc::sigemptyset(&mut sa.sa_mask);
    libc::sigaction(sig, &sa, std::ptr::null_mut());
}
