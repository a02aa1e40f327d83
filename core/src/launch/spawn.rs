//! Starting the program: as `execvp` would (a file the kernel cannot
//! execute goes to `/bin/sh`), with the traced environment and the stdio of
//! the capture, tied to the launcher's life. On a terminal session of its
//! own, the program is started by the session leader
//! ([`super::session`]) from an [`ExecPlan`].

use super::capture::ChildStdio;
use super::env::ProgramEnv;
use super::exec::{
    clone_shares_memory_safely, clone_vfork, pipe_cloexec, reap, set_disposition, ExecPlan,
};
use super::inherited::{self, inherited_mask};
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

/// What the child needs between the clone (or fork) and the exec, all made
/// before.
struct ChildSetup<'a> {
    plan: &'a ExecPlan,
    /// The capture's ends, put on fd 1 and 2 with dup2 (which clears
    /// close-on-exec on the copy), so that no other copy stays open: the
    /// relay sees the end of the stream once the program's are closed.
    out_fd: Option<RawFd>,
    err_fd: Option<RawFd>,
    close_stderr: bool,
    launcher: libc::pid_t,
    /// The signal mask the program starts with.
    mask: libc::sigset_t,
    /// Why the child could not execute the program (errno): written by a
    /// clone in the launcher's memory, or by a fork to `err_pipe`.
    errno: AtomicI32,
    err_pipe: RawFd,
}

/// The program as a child of the launcher; its pid. Started as
/// `posix_spawn` starts one where glibc allows: a child that shares the
/// launcher's memory (CLONE_VM), on a stack of its own, while the launcher
/// waits until it has executed the program or failed to (CLONE_VFORK). A
/// fork copies the launcher's page tables and makes each page the launcher
/// writes next fault once more, copy on write (docs/benchmarks.md, session
/// 8). Where glibc's `clone` cannot share memory safely
/// ([`clone_shares_memory_safely`]) the child is forked.
fn spawn_child(
    opts: &Options,
    file: &Path,
    env: Option<&ProgramEnv>,
    stdio: &ChildStdio,
) -> io::Result<i32> {
    let plan = ExecPlan::new(opts, file, env)?;
    let how = if clone_shares_memory_safely() {
        How::Clone
    } else {
        How::Fork
    };
    start(&plan, stdio, how)
}

/// How the child is made.
#[derive(Debug, Clone, Copy)]
enum How {
    Clone,
    Fork,
}

/// Starts `plan`'s program with `stdio`; its pid.
fn start(plan: &ExecPlan, stdio: &ChildStdio, how: How) -> io::Result<i32> {
    // SAFETY: filling zeroed sigsets; the mask is restored below on every
    // path.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        let mut old: libc::sigset_t = std::mem::zeroed();
        // No handler of the launcher may run in the child (in a clone, on
        // the launcher's memory; in a fork, writing to the launcher's
        // signal pipe): signals wait, blocked, until the child has reset
        // the dispositions.
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let mut setup = ChildSetup {
            plan,
            out_fd: stdio.stdout.as_ref().map(|f| f.as_raw_fd()),
            err_fd: stdio.stderr.as_ref().map(|f| f.as_raw_fd()),
            close_stderr: stdio.close_stderr,
            launcher: libc::getpid(),
            mask: inherited_mask().unwrap_or(old),
            errno: AtomicI32::new(0),
            err_pipe: -1,
        };
        let res = match how {
            How::Clone => clone_child(&setup),
            How::Fork => fork_child(&mut setup),
        };
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

/// Clones the child on a stack of its own; its pid, once it has executed
/// the program or failed to (`setup.errno`).
///
/// # Safety
/// All signals blocked; `setup` lives until this returns.
unsafe fn clone_child(setup: &ChildSetup<'_>) -> io::Result<i32> {
    match clone_vfork(
        child_main,
        (setup as *const ChildSetup<'_>).cast_mut().cast(),
    ) {
        -1 => Err(io::Error::last_os_error()),
        pid => Ok(pid),
    }
}

/// Forks the child; its pid, once it has executed the program or failed to
/// (read from a close-on-exec pipe into `setup.errno`).
///
/// # Safety
/// All signals blocked.
unsafe fn fork_child(setup: &mut ChildSetup<'_>) -> io::Result<i32> {
    let (r, w) = pipe_cloexec()?;
    setup.err_pipe = w.as_raw_fd();
    let pid = libc::fork();
    if pid == 0 {
        libc::close(r.as_raw_fd());
        child_main((setup as *const ChildSetup<'_>).cast_mut().cast());
    }
    let err = io::Error::last_os_error();
    drop(w);
    if pid < 0 {
        return Err(err);
    }
    let mut e = 0i32;
    // EOF: the exec closed the pipe. Four bytes: its errno.
    while libc::read(r.as_raw_fd(), (&mut e as *mut i32).cast(), 4) < 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
    setup.errno.store(e, Ordering::Release);
    Ok(pid)
}

/// The child: async-signal-safe calls only. A clone runs on the launcher's
/// memory and writes nothing of it but `errno` (and glibc's errno of the
/// launcher's thread, which it shares and the launcher does not read
/// before it resumes).
extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the ChildSetup the waiting launcher holds.
    unsafe {
        let s = &*(arg as *const ChildSetup<'_>);
        let e = match prepare_child(s) {
            0 => s.plan.exec(),
            e => e,
        };
        if s.err_pipe >= 0 {
            libc::write(s.err_pipe, (&e as *const i32).cast(), 4);
        } else {
            s.errno.store(e, Ordering::Release);
        }
        libc::_exit(127)
    }
}

/// The child's state before the exec; 0, or errno when it could not be
/// made.
///
/// # Safety
/// In the child of [`clone_child`] or [`fork_child`].
unsafe fn prepare_child(s: &ChildSetup<'_>) -> i32 {
    // The launcher's handlers would run here, and a handler is reset by
    // the exec anyway: each caught signal to the default now. The standard
    // signals only: nothing in the launcher catches a real-time one (glibc
    // keeps two for itself, and refuses them here).
    for sig in 1..libc::SIGRTMIN() {
        let mut sa: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut sa) == 0
            && sa.sa_sigaction != libc::SIG_DFL
            && sa.sa_sigaction != libc::SIG_IGN
        {
            set_disposition(sig, libc::SIG_DFL);
        }
    }
    // The two the launcher changes for itself (it ignores SIGPIPE, see
    // `entry`, and catches SIGCHLD): as the launcher inherited them.
    for sig in inherited::changed() {
        set_disposition(sig, inherited::disposition(sig));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::fd::OwnedFd;

    fn plan(program: &str, args: &[&str]) -> ExecPlan {
        let opts = Options {
            program: program.into(),
            args: args.iter().map(Into::into).collect(),
            ..Default::default()
        };
        ExecPlan::new(&opts, Path::new(program), None).unwrap()
    }

    fn wait(pid: i32) -> i32 {
        let mut st = 0;
        // SAFETY: valid out pointer.
        assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
        assert!(libc::WIFEXITED(st), "status {st:#x}");
        libc::WEXITSTATUS(st)
    }

    /// Both ways of starting a child run the program with its stdio and
    /// exit status, and give back why an exec failed.
    #[test]
    fn a_clone_and_a_fork_start_the_program_alike() {
        let dir = crate::testutil::tempdir("spawn-how");
        let script = dir.join("not-executable");
        fs::write(&script, "exit 0\n").unwrap();
        for how in [How::Clone, How::Fork] {
            let out = dir.join(format!("{how:?}.out"));
            let file = fs::File::create(&out).unwrap();
            let stdio = ChildStdio {
                stdout: Some(OwnedFd::from(file)),
                ..Default::default()
            };
            let p = plan("/bin/sh", &["-c", "echo \"$0\" here; exit 3"]);
            let pid = start(&p, &stdio, how).unwrap();
            assert_eq!(wait(pid), 3, "{how:?}");
            assert_eq!(
                fs::read_to_string(&out).unwrap(),
                "/bin/sh here\n",
                "{how:?}"
            );

            let missing = plan("/nonexistent/program", &[]);
            let e = start(&missing, &ChildStdio::default(), how).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::ENOENT), "{how:?}");
            let p = plan(script.to_str().unwrap(), &[]);
            let e = start(&p, &ChildStdio::default(), how).unwrap_err();
            assert_eq!(e.raw_os_error(), Some(libc::EACCES), "{how:?}");
        }
    }
}
