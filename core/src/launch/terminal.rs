//! The user's terminal while the program runs in a terminal session of its
//! own (`launch::session`): which terminal it is, whether the launcher is
//! in its foreground, and its modes (raw while keys are relayed, the user's
//! own otherwise); what the session leader is given; and the main thread's
//! handle on the relay's key direction (the relay is `launch::capture`'s).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::time::Duration;

/// What the session leader needs: the program's terminal (the pty's slave),
/// whether the launcher is in the foreground of the user's terminal, and
/// the user's modes (which H gives back if the launcher is killed while the
/// terminal is raw).
pub struct ProgramTty {
    pub slave: OwnedFd,
    pub foreground: bool,
    /// Whether the user's terminal is in raw mode (the launcher's doing).
    pub raw: bool,
    pub saved: libc::termios,
}

/// The main thread's side of the relay's key direction: a request pipe
/// (one byte per request) and the relay's acknowledgements of drains.
pub struct RelayControl {
    ctl: OwnedFd,
    acks: mpsc::Receiver<()>,
    keys: mpsc::Sender<Vec<u8>>,
}

/// The relay's side of [`RelayControl`].
pub struct RelayRequests {
    /// The request pipe's read end (non-blocking).
    pub ctl: OwnedFd,
    pub acks: mpsc::Sender<()>,
    /// Keys to give the program (announced by [`CTL_KEYS_PUSH`]).
    pub keys: mpsc::Receiver<Vec<u8>>,
}

/// Requests, as the relay reads them.
pub const CTL_KEYS_ON: u8 = b'1';
pub const CTL_KEYS_OFF: u8 = b'0';
pub const CTL_DRAIN: u8 = b'd';
pub const CTL_KEYS_PUSH: u8 = b'k';

impl RelayControl {
    /// This side, and the relay's.
    pub fn new() -> io::Result<(RelayControl, RelayRequests)> {
        let mut fds = [0i32; 2];
        // SAFETY: fds is a valid array of two ints.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: two new descriptors that we now own.
        let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        // SAFETY: flag changes on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(r.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(r.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
        let (ack_tx, ack_rx) = mpsc::channel();
        let (keys_tx, keys_rx) = mpsc::channel();
        Ok((
            RelayControl {
                ctl: w,
                acks: ack_rx,
                keys: keys_tx,
            },
            RelayRequests {
                ctl: r,
                acks: ack_tx,
                keys: keys_rx,
            },
        ))
    }

    fn send(&self, c: u8) {
        // SAFETY: writing one byte from a local.
        unsafe { libc::write(self.ctl.as_raw_fd(), [c].as_ptr().cast(), 1) };
    }

    /// Relays keys (`on`) or leaves the user's terminal alone.
    pub fn set_input(&self, on: bool) {
        self.send(if on { CTL_KEYS_ON } else { CTL_KEYS_OFF });
    }

    /// Gives the program's terminal `keys` (typed before the terminal went
    /// raw).
    pub fn push_keys(&self, keys: Vec<u8>) {
        if !keys.is_empty() && self.keys.send(keys).is_ok() {
            self.send(CTL_KEYS_PUSH);
        }
    }

    /// Waits (at most `limit`) until the relay has passed on what the pty
    /// holds now.
    pub fn drain(&self, limit: Duration) {
        while self.acks.try_recv().is_ok() {}
        self.send(CTL_DRAIN);
        let _ = self.acks.recv_timeout(limit);
    }
}

/// The terminal on the launcher's stdin, stdout and stderr.
pub struct RealTerminal {
    fd: RawFd,
    /// The modes to give back (the user's, as found when the launcher
    /// started or was last continued).
    saved: libc::termios,
    /// Whether the launcher has put it in raw mode.
    raw: bool,
}

fn stat(fd: RawFd) -> Option<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-parameter; fstat only queries.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

/// The device number of the terminal on `fd`, when it is one.
pub fn tty_device(fd: RawFd) -> Option<libc::dev_t> {
    // SAFETY: isatty only queries.
    if unsafe { libc::isatty(fd) } != 1 {
        return None;
    }
    stat(fd).map(|st| st.st_rdev)
}

fn modes(fd: RawFd) -> Option<libc::termios> {
    // SAFETY: a zeroed termios is a valid out-parameter; tcgetattr reads.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    (unsafe { libc::tcgetattr(fd, &mut t) } == 0).then_some(t)
}

impl RealTerminal {
    /// The terminal, when stdin, stdout and stderr are all the launcher's
    /// controlling terminal: only then can the launcher follow the user's
    /// job control (be stopped, continued, moved to the background by the
    /// shell) and pass it on to the program.
    pub fn of_session() -> Option<RealTerminal> {
        let dev = tty_device(0)?;
        if tty_device(1)? != dev || tty_device(2)? != dev {
            return None;
        }
        // tcgetpgrp fails (ENOTTY) on a terminal that is not the caller's
        // controlling terminal.
        // SAFETY: plain queries.
        if unsafe { libc::tcgetpgrp(0) } < 0
            || unsafe { libc::tcgetsid(0) } != unsafe { libc::getsid(0) }
        {
            return None;
        }
        Some(RealTerminal {
            fd: 0,
            saved: modes(0)?,
            raw: false,
        })
    }

    /// Whether the launcher's process group is the terminal's foreground
    /// one (it may read it and set its modes without being stopped).
    pub fn in_foreground(&self) -> bool {
        // SAFETY: plain queries.
        unsafe { libc::tcgetpgrp(self.fd) == libc::getpgrp() }
    }

    /// The modes the program's terminal starts with: the user's.
    pub fn saved(&self) -> &libc::termios {
        &self.saved
    }

    pub fn is_raw(&self) -> bool {
        self.raw
    }

    /// Takes the terminal's present modes as the user's, and puts it in raw
    /// mode: every key goes to the program's terminal as typed, and every
    /// byte from it reaches the screen as it is (its own terminal did the
    /// processing). Only in the foreground (else the kernel would stop the
    /// launcher with SIGTTOU); nothing happens when it is raw already.
    ///
    /// Returns the keys typed ahead in whole lines, and an end of file
    /// (Ctrl-D, or `script` with its input at its end) as the EOF key: in
    /// raw mode the kernel would hand a pending EOF over as a NUL byte.
    pub fn enter_raw(&mut self) -> Vec<u8> {
        if self.raw || !self.in_foreground() {
            return Vec::new();
        }
        if let Some(now) = modes(self.fd) {
            self.saved = now;
        }
        let ahead = self.typed_ahead();
        let mut t = self.saved;
        // SAFETY: cfmakeraw edits our copy; tcsetattr applies it.
        unsafe {
            libc::cfmakeraw(&mut t);
            t.c_cc[libc::VMIN] = 1;
            t.c_cc[libc::VTIME] = 0;
            if libc::tcsetattr(self.fd, libc::TCSADRAIN, &t) == 0 {
                self.raw = true;
            }
        }
        ahead
    }

    /// What a read in the user's modes returns now without waiting (in
    /// canonical mode: whole lines, or 0 for an end of file).
    fn typed_ahead(&self) -> Vec<u8> {
        let canonical = self.saved.c_lflag & libc::ICANON != 0;
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd; a read into a local buffer, which
            // does not block (poll said so), in the foreground.
            let n = unsafe {
                if libc::poll(&mut pfd, 1, 0) != 1 || pfd.revents & libc::POLLIN == 0 {
                    break;
                }
                libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len())
            };
            match n {
                0 if canonical => out.push(self.saved.c_cc[libc::VEOF]),
                n if n > 0 => out.extend_from_slice(&buf[..n as usize]),
                _ => break,
            }
            if n == 0 {
                break;
            }
        }
        out
    }

    /// Gives the terminal the user's modes back, when it is raw.
    pub fn restore(&mut self) {
        if !self.raw {
            return;
        }
        // SAFETY: tcsetattr with the modes read earlier. The launcher is in
        // the foreground: it is raw only there, and leaves it only stopped,
        // which restore precedes.
        unsafe { libc::tcsetattr(self.fd, libc::TCSADRAIN, &self.saved) };
        self.raw = false;
    }
}

impl Drop for RealTerminal {
    /// Every way out of the launcher (an error, a panic) gives the modes
    /// back; a launcher killed outright has the session leader do it
    /// ([`super::session`]).
    fn drop(&mut self) {
        self.restore();
    }
}
