//! Waiting for the program while passing signals on to it, and ending the
//! launcher the way the program ended.

use super::inherited;
use super::session::Session;
use super::{eprint, EXIT_INTERNAL};
use std::fs;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicI32, Ordering};

// ---------------------------------------------------------------------------
// Signals
//
// The program stays in our process group and keeps the terminal: it is the
// user's program, and the terminal must behave as without cudnn-trace.
// Signals therefore reach it in two ways, and the launcher must not double
// them:
//
// * Keys typed at the terminal (Ctrl-C: SIGINT, Ctrl-\: SIGQUIT) and a
//   terminal hang-up (SIGHUP) are sent by the kernel to the whole foreground
//   process group, so the program already received them. Forwarding them
//   would deliver each twice (a Python program would see a second
//   KeyboardInterrupt in the middle of its clean-up). Such signals come with
//   si_code == SI_KERNEL, and are not forwarded.
// * Signals sent with kill() to the launcher's pid only (`kill PID`,
//   `timeout`, a job scheduler, `docker stop` when the launcher is PID 1)
//   would otherwise never reach the program, so they are forwarded to it.
//   Exception: a signal sent by the program or one of its descendants (for
//   instance `kill 0` in a shell script, which signals the whole group) is
//   not forwarded: the sender's group, the program included, got it already.
//
// In every case the launcher itself does not die of these signals: it keeps
// waiting, so that it can still write launcher.json and the summary (as
// `system()` ignores SIGINT/SIGQUIT while waiting). Then it ends as the
// program did: the same exit status, or death by the same signal, with core
// dumps disabled first (the program made its own). A shell shows 128+N
// either way, but only a death by signal stops a shell loop on Ctrl-C and
// gives Python's subprocess the same `returncode` (-N) as without the
// launcher.
// A signal sent with kill() to the whole process group from outside the tree
// still reaches the program twice; that cannot be told apart from one sent to
// the launcher alone. Signals the launcher inherited as ignored (nohup, a
// background job of a non-interactive shell) stay ignored, for the program
// too; so do SIGPIPE, which the launcher ignores for itself (`entry`), and
// SIGCHLD, which the launcher catches, and the program gets the signal mask
// the launcher inherited (all noted first thing: `launch::inherited`).
//
// In a terminal session of its own (launch::session) the program is in
// another session and process group: the terminal's keys reach it through its
// pty, so the launcher (whose terminal is raw) gets none of them; a hang-up
// of the user's terminal (SI_KERNEL, another group) is forwarded. There the
// launcher also catches SIGTSTP sent to it (`kill -TSTP`, a shell's `kill
// %1`) and passes it on; the program's stop then stops the launcher (see
// launch::session). SIGCONT is always caught, to take the terminal back.
// ---------------------------------------------------------------------------

/// Every signal whose default action ends a process and that someone else
/// sends (not the synchronous faults): left alone, any of these would end the
/// launcher and orphan the program (Slurm's `--signal=USR1@90`, for one,
/// signals every process of a job step).
const FORWARDED: [i32; 10] = [
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
];

static PIPE_W: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Async-signal-safe: one write(2) of a fixed record; errno preserved.
    // SAFETY: the kernel passes a valid siginfo_t (SA_SIGINFO); errno
    // location is valid for this thread.
    unsafe {
        let errno = *libc::__errno_location();
        let (code, pid) = if info.is_null() {
            (0, 0)
        } else {
            ((*info).si_code, (*info).si_pid())
        };
        let rec: [i32; 3] = [sig, code, pid];
        let fd = PIPE_W.load(Ordering::Relaxed);
        if fd >= 0 {
            libc::write(fd, rec.as_ptr().cast(), std::mem::size_of_val(&rec));
        }
        *libc::__errno_location() = errno;
    }
}

pub struct Signals {
    read_fd: i32,
}

impl Signals {
    /// Installs the handlers (not for signals inherited as ignored) and a
    /// SIGCHLD handler that wakes the wait loop.
    fn install() -> std::io::Result<Signals> {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        PIPE_W.store(fds[1], Ordering::Relaxed);
        for sig in FORWARDED
            .iter()
            .copied()
            .chain([libc::SIGCHLD, libc::SIGCONT])
        {
            catch(sig);
        }
        Ok(Signals { read_fd: fds[0] })
    }

    /// Also catches SIGTSTP (a terminal session: see above).
    pub fn catch_stop_requests(&self) {
        catch(libc::SIGTSTP);
    }

    /// Waits at most `timeout_ms` for a signal record (or a SIGCHLD
    /// wake-up), or for `extra` to be readable.
    pub fn wait(&self, extra: Option<RawFd>, timeout_ms: i32) -> Vec<[i32; 3]> {
        let mut pfd = [
            libc::pollfd {
                fd: self.read_fd,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: extra.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds. EINTR just returns early.
        unsafe { libc::poll(pfd.as_mut_ptr(), 2, timeout_ms) };
        let mut out = Vec::new();
        let mut buf = [0i32; 3 * 16];
        loop {
            // SAFETY: reading into a buffer we own from our non-blocking pipe.
            let n = unsafe {
                libc::read(
                    self.read_fd,
                    buf.as_mut_ptr().cast(),
                    std::mem::size_of_val(&buf),
                )
            };
            if n <= 0 {
                break;
            }
            let recs = n as usize / std::mem::size_of::<[i32; 3]>();
            out.extend(buf.chunks_exact(3).take(recs).map(|c| [c[0], c[1], c[2]]));
        }
        out
    }
}

/// Catches `sig` with the self-pipe handler, unless it was inherited as
/// ignored (SIGCHLD always: ignoring it would make the kernel reap the
/// program before we could read its status).
fn catch(sig: i32) {
    if sig != libc::SIGCHLD && inherited::ignored_now(sig) {
        return;
    }
    // SAFETY: setting a disposition with a valid sigaction struct.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_signal as *const () as usize;
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        if sig == libc::SIGCHLD {
            sa.sa_flags |= libc::SA_NOCLDSTOP;
        }
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Whether `pid` is `child` or one of its descendants (walks /proc parents).
fn in_tree(pid: i32, child: i32) -> bool {
    let me = std::process::id() as i32;
    let mut cur = pid;
    for _ in 0..256 {
        if cur == child {
            return true;
        }
        if cur <= 1 || cur == me {
            return false;
        }
        let Ok(stat) = fs::read_to_string(format!("/proc/{cur}/stat")) else {
            return false;
        };
        // "pid (comm) state ppid …": comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            return false;
        };
        match after.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            Some(ppid) => cur = ppid,
            None => return false,
        }
    }
    false
}

/// Whether a signal the launcher received must be passed on to the program
/// (see the comment above).
fn should_forward(code: i32, sender: i32, child: i32) -> bool {
    if code == libc::SI_KERNEL {
        // From the terminal to its foreground group: the program got it too,
        // unless it moved to a process group of its own (setpgid/setsid),
        // which without the launcher would have changed nothing for it.
        // SAFETY: plain queries.
        let group = unsafe { libc::getpgid(child) };
        return group >= 0 && group != unsafe { libc::getpgrp() };
    }
    // SI_USER (kill), SI_QUEUE (sigqueue), SI_TKILL (tgkill): a process sent it.
    if code <= 0 && sender > 0 && in_tree(sender, child) {
        return false;
    }
    true
}

/// How the program ended.
pub enum Ended {
    Exited(i32),
    Signaled { sig: i32, core: bool },
}

impl Ended {
    /// From a wait status.
    pub fn from_status(status: i32) -> Ended {
        if libc::WIFSIGNALED(status) {
            Ended::Signaled {
                sig: libc::WTERMSIG(status),
                core: libc::WCOREDUMP(status),
            }
        } else {
            Ended::Exited(libc::WEXITSTATUS(status))
        }
    }
}

/// The program, as the launcher waits for it.
pub enum Program<'a> {
    /// The launcher's child.
    Child(i32),
    /// In a terminal session of its own: its leader reports on it.
    Session(&'a mut Session),
}

/// What reaping found.
enum Reaped {
    /// How the program ended (it was one of the children).
    Program(Ended),
    /// No child is left.
    NoneLeft,
    /// Children are left, still running.
    Running,
}

/// Reaps every finished child (the program; orphans, which become ours as
/// the subreaper; a session leader).
fn reap_children(child: i32) -> Reaped {
    loop {
        let mut status = 0;
        // SAFETY: valid out pointer.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if r == child && (libc::WIFEXITED(status) || libc::WIFSIGNALED(status)) {
            return Reaped::Program(Ended::from_status(status));
        }
        if r > 0 {
            continue;
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return Reaped::NoneLeft;
        }
        return Reaped::Running;
    }
}

fn wait_child(mut program: Program<'_>, signals: Option<&Signals>) -> Ended {
    let child = match &program {
        Program::Child(pid) => *pid,
        Program::Session(s) => s.program(),
    };
    loop {
        // In a session the program is the leader's child, not ours, unless
        // the leader died (it then becomes ours: we are the subreaper).
        let reaped = reap_children(child);
        if let Reaped::Program(ended) = reaped {
            return ended;
        }
        let (extra, timeout) = match &mut program {
            Program::Session(s) => {
                // The leader writes its report before it ends.
                if let Some(status) = s.on_reports() {
                    return Ended::from_status(status);
                }
                s.check_foreground();
                (s.report_fd(), s.poll_ms())
            }
            Program::Child(_) => (None, 1000),
        };
        if let Reaped::NoneLeft = reaped {
            // Someone else reaped the program (should not happen): unknown
            // status.
            return Ended::Exited(EXIT_INTERNAL);
        }
        let Some(signals) = signals else {
            // No handlers: only the leader's reports and the time wake us.
            let mut pfd = libc::pollfd {
                fd: extra.unwrap_or(-1),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, timeout.min(100)) };
            continue;
        };
        for rec in signals.wait(extra, timeout) {
            on_signal_record(rec, child, &mut program);
        }
    }
}

/// What a signal the launcher received while waiting means for `program`
/// (its pid: `child`).
fn on_signal_record([sig, code, sender]: [i32; 3], child: i32, program: &mut Program<'_>) {
    match (sig, program) {
        (libc::SIGCHLD, _) => {}
        (libc::SIGCONT, Program::Session(s)) => s.resume(),
        (libc::SIGCONT, Program::Child(_)) => {}
        // Caught in a session only: passed on; the program's stop then
        // stops the launcher.
        // SAFETY: kill with a valid pid and signal number.
        (libc::SIGTSTP, _) => unsafe {
            libc::kill(child, libc::SIGTSTP);
        },
        _ => {
            if should_forward(code, sender, child) {
                // SAFETY: kill with a valid pid and signal number.
                unsafe { libc::kill(child, sig) };
            }
        }
    }
}

/// The signal handlers of `Signals::install`; None (after a warning)
/// when they cannot be set up: the program then runs without forwarding.
pub fn install_signals() -> Option<Signals> {
    match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            eprint(&format!(
                "cudnn-trace: warning: cannot set up signal handling: {}\n",
                crate::model::io_msg(&e)
            ));
            None
        }
    }
}

/// Waits for the program, forwarding signals when `signals` is set up.
pub fn wait_program(program: Program<'_>, signals: Option<&Signals>) -> Ended {
    match (program, signals) {
        (Program::Child(pid), None) => {
            let mut status = 0;
            // SAFETY: valid out pointer.
            while unsafe { libc::waitpid(pid, &mut status, 0) } < 0
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
            {}
            Ended::from_status(status)
        }
        (program, signals) => wait_child(program, signals),
    }
}

/// Ends the launcher with the signal that ended the program. Returns only if
/// that did not end it (the caller then exits 128+N).
pub fn die_of(sig: i32) {
    // SAFETY: plain libc calls on the launcher's own process state.
    unsafe {
        let mut cur: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_CORE, &mut cur) == 0 {
            libc::setrlimit(
                libc::RLIMIT_CORE,
                &libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: cur.rlim_max,
                },
            );
        }
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_signals_are_not_forwarded() {
        use std::os::unix::process::CommandExt;
        // From the terminal to our group: a program in our group got it too;
        // one that moved to a group of its own did not.
        let mut same = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let mut own = std::process::Command::new("sleep")
            .arg("5")
            .process_group(0)
            .spawn()
            .unwrap();
        assert!(!should_forward(libc::SI_KERNEL, 0, same.id() as i32));
        assert!(should_forward(libc::SI_KERNEL, 0, own.id() as i32));
        for c in [&mut same, &mut own] {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Sent by a process outside the tree (here: a pid that is not ours).
        assert!(should_forward(libc::SI_USER, 1, 12345));
        // Sent by the program itself.
        assert!(!should_forward(libc::SI_USER, 12345, 12345));
        // Sent by a descendant of the program: a shell (the "program") and
        // the sleep it started in the background.
        let mut sh = std::process::Command::new("/bin/sh")
            .args(["-c", "sleep 5 & echo $!; wait"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(sh.stdout.as_mut().unwrap()),
            &mut line,
        )
        .unwrap();
        let grandchild: i32 = line.trim().parse().unwrap();
        assert!(in_tree(grandchild, sh.id() as i32));
        assert!(!should_forward(libc::SI_USER, grandchild, sh.id() as i32));
        assert!(!in_tree(sh.id() as i32, grandchild));
        // SAFETY: plain kill of processes we started.
        unsafe { libc::kill(grandchild, libc::SIGKILL) };
        let _ = sh.wait();
    }
}
