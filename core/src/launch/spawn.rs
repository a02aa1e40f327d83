//! Starting the program: as `execvp` would (a file the kernel cannot
//! execute goes to `/bin/sh`), with the traced environment and the stdio of
//! the capture, tied to the launcher's life. On a terminal session of its
//! own, the program is started by the session leader
//! ([`super::session`]) from an [`ExecPlan`].

use super::capture::ChildStdio;
use super::env::ProgramEnv;
use super::exec::ExecPlan;
use super::inherited::{inherited_mask, sigpipe_inherited_ignored};
use super::session::Leader;
use super::Options;
use crate::model;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::Path;
use std::sync::atomic::{AtomicI32, Ordering};

/// The program, started.
pub enum Started {
    /// A child of the launcher: its pid.
    Child(i32),
    /// In a terminal session of its own, a child of its session leader.
    Session(Leader),
}

impl Started {
    /// The program's pid.
    pub fn pid(&self) -> i32 {
        match self {
            Started::Child(pid) => *pid,
            Started::Session(l) => l.program(),
        }
    }
}

/// Starts the program (`file`, found from `opts.program`) with the traced
/// environment `env`, or with the launcher's own environment when None, and
/// the stdio of `stdio` (the capture's).
/// Err: (exit status, message) when it cannot be started.
pub fn spawn(
    opts: &Options,
    file: &Path,
    env: Option<&ProgramEnv>,
    stdio: &ChildStdio,
) -> Result<Started, (i32, String)> {
    if let Some(session) = &stdio.session {
        let plan = ExecPlan::new(opts, file, env).map_err(|e| exec_error(file, &e))?;
        return Leader::start(&plan, session)
            .map(Started::Session)
            .map_err(|e| exec_error(file, &e));
    }
    spawn_child(opts, file, env, stdio)
        .map(Started::Child)
        .map_err(|e| exec_error(file, &e))
}

/// (exit status, message) for a program that could not be executed.
pub fn exec_error(file: &Path, e: &io::Error) -> (i32, String) {
    match e.raw_os_error() {
        // The file exists (it was checked), so ENOENT means its
        // interpreter (#! line or ELF PT_INTERP) is missing.
        Some(libc::ENOENT) => (
            127,
            format!(
                "{}: cannot execute: its interpreter or loader is missing ({})",
                file.display(),
                model::io_msg(e)
            ),
        ),
        _ => (
            126,
            format!("{}: cannot execute: {}", file.display(), model::io_msg(e)),
        ),
    }
}

/// What the child needs between the clone and the exec, all made before.
struct ChildSetup<'a> {
    plan: &'a ExecPlan,
    /// The capture's ends, put on fd 1 and 2 with dup2 (which clears
    /// close-on-exec on the copy), so that no other copy stays open: the
    /// relay sees the end of the stream once the program's are closed.
    out_fd: Option<RawFd>,
    err_fd: Option<RawFd>,
    close_stderr: bool,
    launcher: libc::pid_t,
    ignore_sigpipe: bool,
    /// The signal mask the program starts with.
    mask: libc::sigset_t,
    /// Why the child could not execute the program (errno), written by the
    /// child in the launcher's memory before it ends.
    errno: AtomicI32,
}

/// The child's stack: it runs only [`child_main`] on it.
const CHILD_STACK: usize = 128 * 1024;

/// The program as a child of the launcher, started as `posix_spawn` starts
/// one: a child that shares the launcher's memory (CLONE_VM), on a stack
/// of its own, while the launcher waits until it has executed the program
/// or failed to (CLONE_VFORK). A fork would copy the launcher's page
/// tables and make each page the launcher writes next fault once, copy on
/// write (about a third of a millisecond for `/bin/true` here,
/// docs/benchmarks.md); `Command` forks because of the pre-exec step
/// (PR_SET_PDEATHSIG), which this child does itself. Returns its pid.
fn spawn_child(
    opts: &Options,
    file: &Path,
    env: Option<&ProgramEnv>,
    stdio: &ChildStdio,
) -> io::Result<i32> {
    let plan = ExecPlan::new(opts, file, env)?;
    // SAFETY: filling zeroed sigsets; the mask is restored below on every
    // path, and the stack is unmapped once the child has left it (it has
    // executed or ended when clone returns, CLONE_VFORK).
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut old: libc::sigset_t = std::mem::zeroed();
        // No handler of the launcher may run in the child, in the
        // launcher's memory: signals wait, blocked, until the child has
        // reset the dispositions (and, in the launcher, until it resumes).
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let setup = ChildSetup {
            plan: &plan,
            out_fd: stdio.stdout.as_ref().map(|f| f.as_raw_fd()),
            err_fd: stdio.stderr.as_ref().map(|f| f.as_raw_fd()),
            close_stderr: stdio.close_stderr,
            launcher: libc::getpid(),
            ignore_sigpipe: sigpipe_inherited_ignored(),
            mask: inherited_mask().unwrap_or(old),
            errno: AtomicI32::new(0),
        };
        let res = clone_child(&setup);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        let pid = res?;
        match setup.errno.load(Ordering::Acquire) {
            0 => Ok(pid),
            e => {
                reap(pid);
                Err(io::Error::from_raw_os_error(e))
            }
        }
    }
}

/// Clones the child on a stack of its own; its pid.
///
/// # Safety
/// All signals blocked; `setup` lives until this returns.
unsafe fn clone_child(setup: &ChildSetup<'_>) -> io::Result<i32> {
    let stack = libc::mmap(
        std::ptr::null_mut(),
        CHILD_STACK,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
        -1,
        0,
    );
    if stack == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    let pid = libc::clone(
        child_main,
        stack.cast::<u8>().add(CHILD_STACK).cast(),
        libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
        (setup as *const ChildSetup<'_>).cast_mut().cast(),
    );
    let err = io::Error::last_os_error();
    libc::munmap(stack, CHILD_STACK);
    if pid < 0 {
        return Err(err);
    }
    Ok(pid)
}

/// Waits for `pid` (a child that failed to execute), retrying on EINTR.
fn reap(pid: i32) {
    let mut st = 0;
    // SAFETY: valid out pointer.
    while unsafe { libc::waitpid(pid, &mut st, 0) } < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// The child: async-signal-safe calls only, on the launcher's memory,
/// which it only reads (but `errno`).
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the ChildSetup the suspended launcher holds.
    unsafe {
        let s = &*(arg as *const ChildSetup<'_>);
        let e = match prepare_child(s) {
            0 => s.plan.exec(),
            e => e,
        };
        s.errno.store(e, Ordering::Release);
        libc::_exit(127)
    }
}

/// The child's state before the exec; 0, or errno when it could not be
/// made.
///
/// # Safety
/// In the child of [`clone_child`].
unsafe fn prepare_child(s: &ChildSetup<'_>) -> i32 {
    // The launcher's handlers would run here, on its memory, and a handler
    // is reset by the exec anyway: each caught signal to the default now.
    // The standard signals only: nothing in the launcher catches a
    // real-time one (glibc keeps two for itself, and refuses them here).
    for sig in 1..libc::SIGRTMIN() {
        let mut sa: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut sa) == 0
            && sa.sa_sigaction != libc::SIG_DFL
            && sa.sa_sigaction != libc::SIG_IGN
        {
            set_default(sig);
        }
    }
    // Rust's runtime ignores SIGPIPE in the launcher: the program gets it
    // as the launcher inherited it.
    if !s.ignore_sigpipe {
        set_default(libc::SIGPIPE);
    }
    // If the launcher is killed outright (SIGKILL from a timeout or a
    // supervisor), the program must not live on orphaned, holding GPUs: it
    // goes with it, as if it had been the one killed.
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != s.launcher {
        libc::_exit(128 + libc::SIGKILL);
    }
    for (fd, target) in [(s.out_fd, 1), (s.err_fd, 2)] {
        if let Some(fd) = fd {
            if libc::dup2(fd, target) < 0 {
                return *libc::__errno_location();
            }
        }
    }
    if s.close_stderr {
        libc::close(2);
    }
    libc::sigprocmask(libc::SIG_SETMASK, &s.mask, std::ptr::null_mut());
    0
}

/// # Safety
/// Async-signal-safe.
unsafe fn set_default(sig: i32) {
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = libc::SIG_DFL;
    libc::sigemptyset(&mut sa.sa_mask);
    libc::sigaction(sig, &sa, std::ptr::null_mut());
}
