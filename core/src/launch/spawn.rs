//! Starting the program: as `execvp` would (a file the kernel cannot
//! execute goes to `/bin/sh`), with the traced environment and the stdio of
//! the capture, tied to the launcher's life. On a terminal session of its
//! own, the program is started by the session leader
//! ([`super::session`]) from an [`ExecPlan`].

use super::capture::ChildStdio;
use super::env::ProgramEnv;
use super::exec::{is_elf, ExecPlan};
use super::session::Leader;
use super::signals::{inherited_mask, sigpipe_inherited_ignored};
use super::Options;
use crate::model;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The program, started.
pub enum Started {
    /// A child of the launcher.
    Child(std::process::Child),
    /// In a terminal session of its own, a child of its session leader.
    Session(Leader),
}

impl Started {
    /// The program's pid.
    pub fn pid(&self) -> i32 {
        match self {
            Started::Child(c) => c.id() as i32,
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

/// The program as a child of the launcher, through `Command`.
fn spawn_child(
    opts: &Options,
    file: &Path,
    env: Option<&ProgramEnv>,
    stdio: &ChildStdio,
) -> io::Result<std::process::Child> {
    // Put in place after fork with dup2, so that no copy stays in a
    // Command: the relay sees the end of the stream only once the
    // launcher has closed its own.
    let err_fd = stdio.stderr.as_ref().map(|f| f.as_raw_fd());
    let out_fd = stdio.stdout.as_ref().map(|f| f.as_raw_fd());
    let close_stderr = stdio.close_stderr;
    let build = |file: &Path, shell: bool| {
        let mut cmd = if shell {
            // execvp runs a file the kernel cannot execute with /bin/sh.
            let mut c = Command::new("/bin/sh");
            c.arg0(&opts.program).arg(file);
            c
        } else {
            let mut c = Command::new(file);
            c.arg0(&opts.program);
            c
        };
        cmd.args(&opts.args);
        let launcher = std::process::id() as libc::pid_t;
        let ignore_sigpipe = sigpipe_inherited_ignored();
        let mask = inherited_mask();
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                // `Command` has just set SIGPIPE to the default: the
                // program gets the signal state the launcher inherited.
                if ignore_sigpipe {
                    libc::signal(libc::SIGPIPE, libc::SIG_IGN);
                }
                if let Some(mask) = &mask {
                    libc::sigprocmask(libc::SIG_SETMASK, mask, std::ptr::null_mut());
                }
                // If the launcher is killed outright (SIGKILL from a timeout
                // or a supervisor), the program must not live on orphaned,
                // holding GPUs: it goes with it, as if it had been the one
                // killed.
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != launcher {
                    libc::_exit(128 + libc::SIGKILL);
                }
                // dup2 clears close-on-exec on the copy.
                for (fd, target) in [(out_fd, 1), (err_fd, 2)] {
                    if let Some(fd) = fd {
                        if libc::dup2(fd, target) < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                    }
                }
                if close_stderr {
                    libc::close(2);
                }
                Ok(())
            });
        }
        if let Some(env) = env {
            for (k, v) in &env.set {
                cmd.env(k, v);
            }
            for k in &env.remove {
                cmd.env_remove(k);
            }
        }
        cmd
    };
    match build(file, false).spawn() {
        // Like execvp, hand a file the kernel cannot execute to /bin/sh,
        // but not an ELF file (another architecture): that is "cannot
        // execute" (126), as in bash, not a shell script.
        Err(e) if e.raw_os_error() == Some(libc::ENOEXEC) && !is_elf(file) => {
            build(file, true).spawn()
        }
        other => other,
    }
}
