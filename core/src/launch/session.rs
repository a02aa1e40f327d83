//! The program in a terminal session of its own, as `script(1)`, tmux and
//! `ssh -t` run one, when the launcher's stdin, stdout and stderr are its
//! controlling terminal ([`super::capture`] decides).
//!
//! ```text
//! user's shell ── cudnn-trace (L) ── session leader (H) ── program (P)
//!                 raw terminal ⇄ pty master     pty slave: P's 0, 1, 2, controlling terminal
//! ```
//!
//! * **L**, the launcher, puts the user's terminal in raw mode and relays
//!   both ways (the capture's relay thread): keys to the pty, the pty's
//!   output to the screen and to `stderr.txt`. The pty has the user's modes,
//!   so its line discipline does what the user's would have done: echo,
//!   line editing, Ctrl-C → SIGINT, Ctrl-Z → SIGTSTP, Ctrl-\ → SIGQUIT,
//!   each to the pty's foreground process group, and every mode the program
//!   sets (curses' raw mode, a password prompt's no-echo) applies to the
//!   keys the user types. stdout and stderr are one stream, in the order
//!   written. Window size changes are passed on (SIGWINCH, then the pty's
//!   size, then the kernel's SIGWINCH to the program). Keys typed before
//!   the terminal went raw are passed on too, an end of file as the EOF key
//!   (`script` sends one when its own input ends; the kernel would turn a
//!   pending one into a NUL byte).
//! * **H** is a small fork of the launcher (no exec, async-signal-safe code
//!   only) that makes the session, takes the pty as its controlling
//!   terminal and starts P in a process group of its own, in the pty's
//!   foreground. It exists because P's process group must have a parent in
//!   the session but outside the group: otherwise it would be *orphaned*,
//!   and the kernel discards the terminal's stop signals to orphaned groups
//!   (Ctrl-Z would do nothing, and curses programs could not suspend). H
//!   waits for P with `WUNTRACED` and tells L when P stops or ends. It
//!   ignores the signals that are meant for P (Slurm, `docker stop` and
//!   the terminal signal whole process groups).
//! * **Job control is mirrored.** When P stops (Ctrl-Z, SIGTSTP from a
//!   `kill`, SIGTTIN from a read in the background), L gives the terminal
//!   its modes back and stops its own process group with the same signal,
//!   so the user's shell prints "Stopped" and has the terminal. When L is
//!   continued (`fg`, `bg`: SIGCONT), it takes the terminal again if it is
//!   in the foreground, and H continues P's group. While L is in the
//!   background, H holds the pty's foreground itself, so P is in the
//!   background of its pty too: it is stopped by SIGTTIN when it reads and
//!   by SIGTTOU when it sets modes (or writes, with `tostop`), exactly as
//!   it would be on the user's terminal. A `fg` of a running background job
//!   sends no SIGCONT: L then notices the foreground within 200 ms.
//! * **The modes come back on every path**: when P stops or ends, on an
//!   error, when L unwinds, and when L is killed outright (SIGKILL): H then
//!   sees its control pipe close, restores the modes it was given if the
//!   terminal was raw, and kills P as the launcher's death always did
//!   (PR_SET_PDEATHSIG).
//!
//! What differs from running without the launcher: `ttyname()` names
//! another terminal (the pty), the program's parent is H and its session
//! H's, and the copy in `stderr.txt` is the terminal's output (stdout,
//! stderr and the echo of what was typed, in order). Processes that outlive
//! the program keep the pty without it being their controlling terminal
//! (H ends with P, handing the pty's foreground to itself first, so that
//! its exit sends SIGHUP to no one).

use super::exec::{
    clone_shares_memory_safely, clone_vfork, pipe_cloexec, reap, set_disposition, ExecPlan,
};
use super::inherited::{self, inherited_mask};
use super::terminal::{ProgramTty, RealTerminal, RelayControl};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

// Records H sends L: [kind, value], one write(2) each.
const STARTED: i32 = 1; // value: P's pid
const FAILED: i32 = 2; // value: errno of setsid/TIOCSCTTY/fork
const STOPPED: i32 = 3; // value: the stop signal
const ENDED: i32 = 4; // value: P's wait status

// Commands L sends H: one byte each.
/// L is in the foreground and the terminal raw: give the pty's foreground
/// back to the program.
const CMD_FOREGROUND: u8 = b'F';
/// L is in the background: H takes the pty's foreground.
const CMD_BACKGROUND: u8 = b'B';
/// Continue the program's process group (it was stopped).
const CMD_CONTINUE: u8 = b'C';
/// The launcher put the user's terminal in raw mode.
const CMD_RAW: u8 = b'R';
/// The launcher gave the user's terminal its modes back.
const CMD_COOKED: u8 = b'r';

/// Signals H ignores: those meant for the program, which reach H too when
/// they are sent to a whole process group or session (or the terminal's),
/// and the job-control ones (H sets the pty's foreground group from the
/// background).
const LEADER_IGNORES: [i32; 16] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
    libc::SIGPIPE,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
    libc::SIGWINCH,
    libc::SIGXCPU,
];

/// The launcher's side of the session leader.
pub struct Leader {
    pid: i32,
    program: i32,
    ctl: OwnedFd,
    reports: OwnedFd,
    /// H's end of the reports is closed (it ended, or was killed: the
    /// program, killed by its PR_SET_PDEATHSIG, is then the launcher's
    /// child, reaped as such).
    gone: bool,
}

/// What the leader said.
enum Report {
    Stopped(i32),
    Ended(i32),
}

/// Reads one record; None at EOF.
fn read_record(fd: RawFd) -> Option<[i32; 2]> {
    let mut rec = [0i32; 2];
    loop {
        // SAFETY: reading into a local array of the record's size.
        let n = unsafe { libc::read(fd, rec.as_mut_ptr().cast(), std::mem::size_of_val(&rec)) };
        if n == std::mem::size_of_val(&rec) as isize {
            return Some(rec);
        }
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
}

impl Leader {
    /// Forks H, which starts the program from `plan` on `tty`. Returns once
    /// the program has been executed; Err: why it could not be (errno of
    /// the exec, as `Command::spawn` reports it).
    pub fn start(plan: &ExecPlan, tty: &ProgramTty) -> io::Result<Leader> {
        let (ctl_r, ctl_w) = pipe_cloexec()?;
        let (rep_r, rep_w) = pipe_cloexec()?;
        let (err_r, err_w) = pipe_cloexec()?;
        let mut keep_ignored = [false; 65];
        for sig in LEADER_IGNORES {
            // SIGPIPE's is the runtime's: `inherited` has the launcher's,
            // for the program.
            keep_ignored[sig as usize] = sig != libc::SIGPIPE && inherited::ignored_now(sig);
        }
        let args = LeaderArgs {
            slave: tty.slave.as_raw_fd(),
            ctl: ctl_r.as_raw_fd(),
            report: rep_w.as_raw_fd(),
            exec_err: err_w.as_raw_fd(),
            foreground: tty.foreground,
            raw: tty.raw,
            saved: tty.saved,
            keep_ignored,
            mask: inherited_mask(),
            share_memory: clone_shares_memory_safely(),
            plan,
        };
        // SAFETY: the child runs only async-signal-safe code on memory
        // made before the fork, and never returns.
        let pid = match unsafe { libc::fork() } {
            -1 => return Err(io::Error::last_os_error()),
            0 => unsafe { leader_main(&args) },
            pid => pid,
        };
        drop((ctl_r, rep_w, err_w));
        let program = match read_record(rep_r.as_raw_fd()) {
            Some([STARTED, p]) => p,
            Some([FAILED, errno]) => {
                reap(pid);
                return Err(io::Error::from_raw_os_error(errno));
            }
            _ => {
                reap(pid);
                return Err(io::Error::other("the terminal session could not be set up"));
            }
        };
        // The exec closes the program's copy of err_w: EOF means it ran.
        let mut errno = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            // SAFETY: reading into the rest of a local buffer.
            let n =
                unsafe { libc::read(err_r.as_raw_fd(), errno[got..].as_mut_ptr().cast(), 4 - got) };
            if n > 0 {
                got += n as usize;
            } else if n == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        if got == 4 {
            // The program exits 127; H reports it and ends.
            reap(pid);
            return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(errno)));
        }
        // SAFETY: flag changes on our own pipe's read end.
        unsafe {
            let fl = libc::fcntl(rep_r.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(rep_r.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
        Ok(Leader {
            pid,
            program,
            ctl: ctl_w,
            reports: rep_r,
            gone: false,
        })
    }

    /// The program's pid.
    pub fn program(&self) -> i32 {
        self.program
    }

    /// H's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    fn send(&self, cmd: u8) {
        // SAFETY: writing one byte from a local.
        unsafe { libc::write(self.ctl.as_raw_fd(), [cmd].as_ptr().cast(), 1) };
    }

    /// What H has said since the last call (non-blocking); once H has said
    /// that the program ended, H is reaped too ([`Leader::reap_ended`]).
    fn reports(&mut self) -> Vec<Report> {
        let out = self.read_reports();
        if out.iter().any(|r| matches!(r, Report::Ended(_))) {
            self.reap_ended(LEADER_END);
        }
        out
    }

    /// Reaps H after its ENDED report, waiting at most `within` for its end
    /// (the report pipe's end of file: H's exit closes the last writer, the
    /// program having closed its copy before its exec). H ends right after
    /// the report (`on_child`), and left a child of the launcher it would
    /// have the end of the run look for processes that outlive the
    /// program, which reads every `/proc/PID/stat` of the host
    /// ([`super::outliving`]). Left to that look's reaping if H does not
    /// end in time (stopped by a SIGSTOP, say).
    fn reap_ended(&mut self, within: Duration) {
        let deadline = std::time::Instant::now() + within;
        while !self.gone {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            let mut pfd = libc::pollfd {
                fd: self.reports.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, left.as_millis().clamp(1, 1000) as i32) };
            // Nothing follows ENDED; this reads to the end of file.
            self.read_reports();
        }
        // Its descriptors are closed: H is in its exit, a zombie at once.
        reap(self.pid);
    }

    fn read_reports(&mut self) -> Vec<Report> {
        let mut out = Vec::new();
        loop {
            let mut rec = [0i32; 2];
            // SAFETY: reading our non-blocking pipe into a local record.
            let n = unsafe {
                libc::read(
                    self.reports.as_raw_fd(),
                    rec.as_mut_ptr().cast(),
                    std::mem::size_of_val(&rec),
                )
            };
            if n == 0 {
                self.gone = true;
            }
            if n != std::mem::size_of_val(&rec) as isize {
                if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                    continue;
                }
                return out;
            }
            match rec {
                [STOPPED, sig] => out.push(Report::Stopped(sig)),
                [ENDED, status] => out.push(Report::Ended(status)),
                _ => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------
// H: the session leader (a fork of the launcher; async-signal-safe only)

struct LeaderArgs<'a> {
    slave: RawFd,
    ctl: RawFd,
    report: RawFd,
    exec_err: RawFd,
    foreground: bool,
    raw: bool,
    saved: libc::termios,
    /// Signals of LEADER_IGNORES the program keeps ignored (the launcher
    /// inherited them ignored).
    keep_ignored: [bool; 65],
    /// The signal mask the launcher inherited (None: not known, then no
    /// signal is blocked).
    mask: Option<libc::sigset_t>,
    /// P may be started on H's memory ([`start_program`]).
    share_memory: bool,
    plan: &'a ExecPlan,
}

unsafe fn errno() -> i32 {
    *libc::__errno_location()
}

unsafe fn tell(fd: RawFd, kind: i32, value: i32) {
    let rec = [kind, value];
    libc::write(fd, rec.as_ptr().cast(), std::mem::size_of_val(&rec));
}

/// Closes every descriptor from 3 up but those in `keep`.
unsafe fn close_all_but(keep: &mut [RawFd]) {
    keep.sort_unstable();
    let mut from = 3;
    let close = |lo: i32, hi: i32| {
        if libc::syscall(libc::SYS_close_range, lo as u32, hi as u32, 0u32) != 0 {
            let mut lim: libc::rlimit = std::mem::zeroed();
            let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
                lim.rlim_cur.min(65536) as i32
            } else {
                1024
            };
            for fd in lo..hi.min(max.saturating_sub(1)).saturating_add(1) {
                libc::close(fd);
            }
        }
    };
    for &fd in keep.iter() {
        if fd > from {
            close(from, fd - 1);
        }
        from = from.max(fd + 1);
    }
    close(from, i32::MAX);
}

unsafe fn leader_main(a: &LeaderArgs<'_>) -> ! {
    // A fork of a process with threads: no allocation, no locks from here.
    close_all_but(&mut [a.slave, a.ctl, a.report, a.exec_err]);
    libc::prctl(libc::PR_SET_NAME, c"cdtrace-tty".as_ptr());
    for sig in LEADER_IGNORES {
        set_disposition(sig, libc::SIG_IGN);
    }
    // The launcher's SIGCHLD handler has SA_NOCLDSTOP, which would hide
    // the program's stops: the default disposition, blocked, read through
    // a signalfd.
    set_disposition(libc::SIGCHLD, libc::SIG_DFL);
    let mut chld: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut chld);
    libc::sigaddset(&mut chld, libc::SIGCHLD);
    libc::sigprocmask(libc::SIG_SETMASK, &chld, std::ptr::null_mut());
    let sfd = libc::signalfd(-1, &chld, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
    if sfd < 0 || libc::setsid() < 0 || libc::ioctl(a.slave, libc::TIOCSCTTY, 0) < 0 {
        tell(a.report, FAILED, errno());
        libc::_exit(1);
    }
    let me = libc::getpid();
    let pid = start_program(a, me);
    if pid < 0 {
        tell(a.report, FAILED, errno());
        libc::_exit(1);
    }
    // Both sides set the group and the foreground, as shells do, so that
    // neither order of running after the fork leaves a window.
    libc::setpgid(pid, pid);
    if a.foreground {
        libc::tcsetpgrp(a.slave, pid);
    }
    libc::close(a.exec_err);
    tell(a.report, STARTED, pid);
    leader_loop(a, pid, sfd)
}

/// Starts P; its pid, or -1 with errno set. As the launcher starts a
/// program without a terminal ([`super::spawn`]): a child on H's memory and
/// a stack of its own, H waiting until it has executed the program or
/// failed to (CLONE_VFORK), where glibc allows; a fork otherwise. H is a
/// copy of the whole launcher, and a fork of it would copy its page tables
/// for a child that only executes.
unsafe fn start_program(a: &LeaderArgs<'_>, leader: i32) -> i32 {
    if !a.share_memory {
        let pid = libc::fork();
        if pid == 0 {
            program_main(a, leader);
        }
        return pid;
    }
    // No handler of H's may run in P, on H's memory: signals wait, blocked,
    // until P has reset the dispositions (it sets the program's mask last).
    let mut all: libc::sigset_t = std::mem::zeroed();
    libc::sigfillset(&mut all);
    let mut old: libc::sigset_t = std::mem::zeroed();
    libc::sigprocmask(libc::SIG_SETMASK, &all, &mut old);
    let start = ProgramStart { a, leader };
    let pid = clone_vfork(
        program_entry,
        (&start as *const ProgramStart<'_>).cast_mut().cast(),
    );
    let e = errno();
    libc::sigprocmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    *libc::__errno_location() = e;
    pid
}

/// What [`program_entry`] is given.
struct ProgramStart<'a> {
    a: &'a LeaderArgs<'a>,
    leader: i32,
}

extern "C" fn program_entry(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the ProgramStart that H, waiting, holds.
    unsafe {
        let s = &*(arg as *const ProgramStart<'_>);
        program_main(s.a, s.leader)
    }
}

/// P between its start and the exec: async-signal-safe calls only, and on
/// H's memory nothing written but errno.
unsafe fn program_main(a: &LeaderArgs<'_>, leader: i32) -> ! {
    libc::setpgid(0, 0);
    if a.foreground {
        // SIGTTOU is still ignored (H's), so this works from any group.
        libc::tcsetpgrp(a.slave, libc::getpid());
    }
    for fd in 0..3 {
        if libc::dup2(a.slave, fd) < 0 {
            let e = errno();
            libc::write(a.exec_err, (&e as *const i32).cast(), 4);
            libc::_exit(127);
        }
    }
    for fd in [a.slave, a.ctl, a.report] {
        libc::close(fd);
    }
    // Tied to H, which is tied to the launcher: a launcher killed outright
    // takes the program with it.
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    if libc::getppid() != leader {
        libc::_exit(128 + libc::SIGKILL);
    }
    // The dispositions the program would have had without the launcher:
    // what the launcher inherited ignored stays ignored (SIGPIPE and
    // SIGCHLD as noted before the launcher changed them), every other
    // signal the default.
    for sig in LEADER_IGNORES {
        let h = if a.keep_ignored[sig as usize] {
            libc::SIG_IGN
        } else {
            libc::SIG_DFL
        };
        set_disposition(sig, h);
    }
    for sig in inherited::changed() {
        set_disposition(sig, inherited::disposition(sig));
    }
    let mask = a.mask.unwrap_or_else(|| {
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        none
    });
    libc::sigprocmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
    let e = a.plan.exec();
    libc::write(a.exec_err, (&e as *const i32).cast(), 4);
    libc::_exit(127)
}

/// H's state after the program started.
struct LeaderState<'a> {
    a: &'a LeaderArgs<'a>,
    /// The program.
    pid: i32,
    /// H's own process group.
    own: i32,
    stopped: bool,
    /// Whether the user's terminal is raw (to give its modes back if the
    /// launcher is killed).
    raw: bool,
    /// The pty's foreground group when H took it (bash's job, say).
    saved_fg: libc::pid_t,
}

/// H's life after the program started: report its stops and its end, and
/// move the pty's foreground as the launcher says.
unsafe fn leader_loop(a: &LeaderArgs<'_>, pid: i32, sfd: RawFd) -> ! {
    let mut st = LeaderState {
        a,
        pid,
        own: libc::getpgrp(),
        stopped: false,
        raw: a.raw,
        saved_fg: 0,
    };
    loop {
        let mut fds = [
            libc::pollfd {
                fd: a.ctl,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: sfd,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        if libc::poll(fds.as_mut_ptr(), 2, -1) < 0 {
            continue;
        }
        if fds[1].revents != 0 {
            let mut info = [0u8; 128];
            while libc::read(sfd, info.as_mut_ptr().cast(), info.len()) > 0 {}
            st.on_child();
        }
        if fds[0].revents != 0 {
            st.on_commands();
        }
    }
}

impl LeaderState<'_> {
    /// The program stopped (reported) or ended (reported, and H ends).
    unsafe fn on_child(&mut self) {
        loop {
            let mut status = 0;
            if libc::waitpid(self.pid, &mut status, libc::WNOHANG | libc::WUNTRACED) != self.pid {
                return;
            }
            if libc::WIFSTOPPED(status) {
                self.stopped = true;
                tell(self.a.report, STOPPED, libc::WSTOPSIG(status));
                continue;
            }
            // Before H's exit sends SIGHUP to the pty's foreground group:
            // make that H's own, so that what the program left running in
            // its group (a `cmd &` of `sh -c`) keeps running, as on the
            // user's terminal.
            libc::tcsetpgrp(self.a.slave, self.own);
            tell(self.a.report, ENDED, status);
            libc::_exit(0);
        }
    }

    unsafe fn on_commands(&mut self) {
        let mut cmds = [0u8; 64];
        let n = libc::read(self.a.ctl, cmds.as_mut_ptr().cast(), cmds.len());
        if n < 0 && errno() == libc::EINTR {
            return;
        }
        if n <= 0 {
            // The launcher is gone (killed outright): give the user's
            // terminal its modes back, and end the program as the
            // launcher's death always did.
            if self.raw {
                libc::tcsetattr(0, libc::TCSANOW, &self.a.saved);
            }
            libc::kill(self.pid, libc::SIGKILL);
            libc::_exit(0);
        }
        for &c in &cmds[..n as usize] {
            self.command(c);
        }
    }

    unsafe fn command(&mut self, c: u8) {
        let slave = self.a.slave;
        match c {
            CMD_RAW => self.raw = true,
            CMD_COOKED => self.raw = false,
            CMD_FOREGROUND if libc::tcgetpgrp(slave) == self.own => {
                let back = if self.saved_fg > 0 && libc::kill(-self.saved_fg, 0) == 0 {
                    self.saved_fg
                } else {
                    libc::getpgid(self.pid)
                };
                if back > 0 {
                    libc::tcsetpgrp(slave, back);
                }
            }
            CMD_BACKGROUND => {
                let cur = libc::tcgetpgrp(slave);
                if cur > 0 && cur != self.own {
                    self.saved_fg = cur;
                    libc::tcsetpgrp(slave, self.own);
                }
            }
            CMD_CONTINUE if self.stopped => {
                self.stopped = false;
                let g = libc::getpgid(self.pid);
                libc::kill(if g > 0 { -g } else { self.pid }, libc::SIGCONT);
            }
            _ => {}
        }
    }
}

// ---------------------------------------------------------------------------
// The launcher's side while the program runs

/// The session as the launcher's wait loop drives it: the leader, the
/// user's terminal, and the relay's key direction.
pub struct Session {
    leader: Leader,
    term: RealTerminal,
    relay: RelayControl,
    /// Whether the launcher has the terminal: foreground, raw, keys relayed.
    active: bool,
    program_stopped: bool,
}

/// How long the launcher waits for the relay to pass on what the program
/// wrote before it gives the terminal its modes back.
const DRAIN: Duration = Duration::from_millis(500);

/// How long the launcher waits for H to end after it reported the
/// program's end.
const LEADER_END: Duration = Duration::from_millis(100);

impl Session {
    pub fn new(leader: Leader, term: RealTerminal, relay: RelayControl) -> Session {
        let active = term.is_raw();
        relay.set_input(active);
        Session {
            leader,
            term,
            relay,
            active,
            program_stopped: false,
        }
    }

    pub fn program(&self) -> i32 {
        self.leader.program
    }

    pub fn leader_pid(&self) -> i32 {
        self.leader.pid
    }

    /// The descriptor that is readable when the leader has news.
    pub fn report_fd(&self) -> Option<RawFd> {
        (!self.leader.gone).then(|| self.leader.reports.as_raw_fd())
    }

    /// How long the wait loop may sleep: short in the background, where a
    /// `fg` of the running job sends no SIGCONT and only a look at the
    /// terminal tells.
    pub fn poll_ms(&self) -> i32 {
        if self.active {
            1000
        } else {
            200
        }
    }

    /// Handles the leader's reports; the program's wait status when it
    /// ended.
    pub fn on_reports(&mut self) -> Option<i32> {
        for r in self.leader.reports() {
            match r {
                Report::Stopped(sig) => {
                    self.program_stopped = true;
                    self.suspend(sig);
                }
                Report::Ended(st) => {
                    self.end();
                    return Some(st);
                }
            }
        }
        None
    }

    /// The program stopped with `sig`: the launcher stops as it would have,
    /// with the user's modes back on the terminal, and goes on when
    /// continued.
    fn suspend(&mut self, sig: i32) {
        self.release();
        if sig == libc::SIGSTOP || own_group_can_stop() {
            stop_own_group(sig);
        } else if sig != libc::SIGTSTP && !self.term.in_foreground() {
            // An orphaned group in the background (SIGTTIN, SIGTTOU): the
            // kernel would neither stop it nor let it read (EIO). Give the
            // program its pty's foreground, where it waits for keys that
            // do not come, rather than stop it again and again.
            self.leader.send(CMD_FOREGROUND);
            self.program_stopped = false;
            self.leader.send(CMD_CONTINUE);
            return;
        }
        // Continued; or, in an orphaned group where the kernel discards
        // SIGTSTP, never stopped: go on either way.
        self.resume();
    }

    /// Keys no longer relayed, what the program wrote on the screen, the
    /// user's modes back.
    fn release(&mut self) {
        self.relay.set_input(false);
        self.relay.drain(DRAIN);
        if self.term.is_raw() {
            self.term.restore();
            self.leader.send(CMD_COOKED);
        }
        self.active = false;
    }

    /// After SIGCONT, or when the launcher finds itself in the foreground:
    /// takes the terminal when it may, tells H, continues the program.
    pub fn resume(&mut self) {
        if self.term.in_foreground() {
            if !self.term.is_raw() {
                self.relay.push_keys(self.term.enter_raw());
                if self.term.is_raw() {
                    self.leader.send(CMD_RAW);
                }
                // The window may have changed while the launcher was stopped
                // or in the background (SIGWINCH goes to the foreground
                // only): the relay's SIGWINCH handling looks again.
                // SAFETY: a signal to ourselves; its handler only writes a
                // byte to a pipe (launch::pty).
                unsafe { libc::kill(libc::getpid(), libc::SIGWINCH) };
            }
            self.leader.send(CMD_FOREGROUND);
            self.active = self.term.is_raw();
            self.relay.set_input(self.active);
        } else {
            self.leader.send(CMD_BACKGROUND);
            self.active = false;
        }
        if self.program_stopped {
            self.program_stopped = false;
            self.leader.send(CMD_CONTINUE);
        }
    }

    /// Called when the wait loop wakes up: a launcher in the background
    /// that is now in the foreground takes the terminal.
    pub fn check_foreground(&mut self) {
        if !self.active && !self.program_stopped && self.term.in_foreground() {
            self.resume();
        }
    }

    /// The program ended: the terminal is the user's again (what processes
    /// that outlive it write is still relayed, not their keys).
    fn end(&mut self) {
        self.release();
    }
}

/// Whether a stop signal sent to the launcher's process group would stop
/// it: not when the group is orphaned (no parent in the session outside the
/// group), where the kernel discards SIGTSTP, SIGTTIN and SIGTTOU. The
/// launcher's parent (the user's shell) is what normally keeps it attached.
fn own_group_can_stop() -> bool {
    // SAFETY: plain queries.
    unsafe {
        let parent = libc::getppid();
        let pg = libc::getpgid(parent);
        pg >= 0 && pg != libc::getpgrp() && libc::getsid(parent) == libc::getsid(0)
    }
}

/// Stops the launcher's process group with `sig` (the default action, for
/// the moment), as the terminal would have stopped it; returns once
/// continued.
fn stop_own_group(sig: i32) {
    // SAFETY: saving, setting and restoring a disposition; kill(0, …)
    // signals our own group. The main thread does not block `sig`, so it
    // takes the stop before kill returns.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigemptyset(&mut dfl.sa_mask);
        let mut old: libc::sigaction = std::mem::zeroed();
        let changed = sig != libc::SIGSTOP && libc::sigaction(sig, &dfl, &mut old) == 0;
        libc::kill(0, sig);
        if changed {
            libc::sigaction(sig, &old, std::ptr::null_mut());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::FromRawFd;
    use std::path::Path;
    use std::time::Instant;

    /// A pty: (master, slave).
    fn pty() -> (OwnedFd, OwnedFd) {
        let (mut m, mut s) = (-1, -1);
        // SAFETY: valid out pointers; no name, modes or size asked for.
        let r = unsafe {
            libc::openpty(
                &mut m,
                &mut s,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(r, 0, "openpty: {}", io::Error::last_os_error());
        // SAFETY: two new descriptors that we now own.
        unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
    }

    /// Once H has said that the program ended, the launcher has reaped H
    /// too (H ends right after saying it): with H left a child, the look
    /// for processes that outlive the program read every `/proc/PID/stat`
    /// of the host at the end of every run in a terminal.
    #[test]
    fn the_leader_is_reaped_once_it_reports_the_end() {
        let (_master, slave) = pty();
        // SAFETY: a zeroed termios is a valid out-parameter.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a descriptor we own, a valid out pointer.
        assert_eq!(unsafe { libc::tcgetattr(slave.as_raw_fd(), &mut saved) }, 0);
        let tty = ProgramTty {
            slave,
            foreground: false,
            raw: false,
            saved,
        };
        let opts = super::super::Options {
            program: "/bin/true".into(),
            ..Default::default()
        };
        let plan = ExecPlan::new(&opts, Path::new("/bin/true"), None).unwrap();
        let mut leader = Leader::start(&plan, &tty).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            assert!(Instant::now() < deadline, "no report of the end from H");
            let mut pfd = libc::pollfd {
                fd: leader.reports.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            unsafe { libc::poll(&mut pfd, 1, 100) };
            if let Some(st) = leader.reports().into_iter().find_map(|r| match r {
                Report::Ended(st) => Some(st),
                Report::Stopped(_) => None,
            }) {
                break st;
            }
        };
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "{status:#x}"
        );
        let mut st = 0;
        // SAFETY: valid out pointer.
        let r = unsafe { libc::waitpid(leader.pid(), &mut st, libc::WNOHANG) };
        let e = io::Error::last_os_error().raw_os_error();
        assert!(
            r == -1 && e == Some(libc::ECHILD),
            "H is still the launcher's child (waitpid gave {r}, status {st:#x})"
        );
    }
}
