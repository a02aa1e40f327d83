//! Pseudo-terminals for the program: a new pty that looks like the user's
//! terminal (its modes, its window size), and the SIGWINCH handler that
//! keeps the window size in step.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// Who does the output processing (`\n` → `\r\n`, tabs, …) of what the
/// program writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Processing {
    /// The real terminal, which stays in its own modes: the pty passes the
    /// program's bytes through unchanged (`OPOST` off), so that they are
    /// processed once. For a pty that only carries output.
    Terminal,
    /// The pty, with every mode of the real terminal, which the launcher
    /// puts in raw mode: for a pty that is the program's whole terminal, so
    /// that the modes the program sets (raw, no echo, …) are the ones in
    /// force.
    Pty,
}

/// (master, slave) of a new pseudo-terminal that looks like the terminal on
/// `like`: its modes (output processing as `processing` says) and its
/// window size. Both ends are close-on-exec, and the slave is nobody's
/// controlling terminal yet.
pub fn open_pty(like: RawFd, processing: Processing) -> io::Result<(OwnedFd, OwnedFd)> {
    // SAFETY: open with a constant path; the result is checked.
    let m = unsafe {
        libc::open(
            c"/dev/ptmx".as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        )
    };
    if m < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor that we own.
    let master = unsafe { OwnedFd::from_raw_fd(m) };
    // SAFETY: pty calls on the master we own.
    if unsafe { libc::grantpt(m) } != 0 || unsafe { libc::unlockpt(m) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // O_NOCTTY: the launcher may have no controlling terminal (setsid), and
    // this one must never become it.
    let flags = libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC;
    // SAFETY: TIOCGPTPEER (Linux 4.13) opens the slave of our master.
    let mut s = unsafe { libc::ioctl(m, libc::TIOCGPTPEER as _, flags) };
    if s < 0 {
        let mut name = [0 as libc::c_char; 128];
        // SAFETY: buffer and its length; the name is NUL-terminated on success.
        if unsafe { libc::ptsname_r(m, name.as_mut_ptr(), name.len()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a NUL-terminated path.
        s = unsafe { libc::open(name.as_ptr(), flags) };
        if s < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: a new descriptor that we own.
    let slave = unsafe { OwnedFd::from_raw_fd(s) };
    // SAFETY: termios queries and updates with valid structs.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(like, &mut t) == 0 {
            if processing == Processing::Terminal {
                t.c_oflag &= !libc::OPOST;
            }
        } else if libc::tcgetattr(s, &mut t) == 0 {
            libc::cfmakeraw(&mut t);
        }
        if libc::tcsetattr(s, libc::TCSANOW, &t) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    let mut last = None;
    sync_winsize(like, m, &mut last);
    Ok((master, slave))
}

/// Gives the pty (`master`) the window size of the terminal `real` when it
/// changed.
pub fn sync_winsize(real: RawFd, master: RawFd, last: &mut Option<(u16, u16, u16, u16)>) {
    // SAFETY: a zeroed winsize is a valid out-parameter; the ioctls only
    // read the terminal's size and set the pty's.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(real, libc::TIOCGWINSZ, &mut ws) != 0 {
            return;
        }
        let key = (ws.ws_row, ws.ws_col, ws.ws_xpixel, ws.ws_ypixel);
        if *last != Some(key) && libc::ioctl(master, libc::TIOCSWINSZ, &ws) == 0 {
            *last = Some(key);
        }
    }
}

// ---------------------------------------------------------------------------
// SIGWINCH
//
// The launcher's other signals are read by the main thread (launch::signals, a
// self-pipe); this one concerns only the relay, so it has its own pipe, read
// by the relay thread, which sets the pty's size: the kernel then sends
// SIGWINCH to the pty's foreground group. A program that shares the user's
// terminal gets the user's SIGWINCH too, and if it asks its pty for the size
// at once it may still see the old one for a moment (the next relayed output
// resyncs too); one in a terminal session of its own gets only the pty's.

static WINCH_W: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_winch(_sig: libc::c_int) {
    // Async-signal-safe: one write(2); errno preserved.
    // SAFETY: errno location is valid for this thread; the byte is ours.
    unsafe {
        let errno = *libc::__errno_location();
        let fd = WINCH_W.load(Ordering::Relaxed);
        if fd >= 0 {
            libc::write(fd, b"w".as_ptr().cast(), 1);
        }
        *libc::__errno_location() = errno;
    }
}

/// The SIGWINCH handler; the previous disposition comes back when dropped.
pub struct WinchGuard {
    old: libc::sigaction,
}

impl WinchGuard {
    /// Installs it, unless SIGWINCH was inherited as ignored (the program
    /// keeps that). Returns the pipe's read end.
    pub fn install() -> Option<(WinchGuard, OwnedFd)> {
        // SAFETY: querying and setting a disposition with valid structs.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGWINCH, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction == libc::SIG_IGN
            {
                return None;
            }
            let mut fds = [0i32; 2];
            if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) != 0 {
                return None;
            }
            let r = OwnedFd::from_raw_fd(fds[0]);
            // The write end stays open for the life of the process: a
            // handler running on another thread could otherwise write into
            // a descriptor number reused meanwhile.
            let prev = WINCH_W.swap(fds[1], Ordering::Relaxed);
            if prev >= 0 {
                libc::close(prev);
            }
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_winch as *const () as usize;
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            if libc::sigaction(libc::SIGWINCH, &sa, std::ptr::null_mut()) != 0 {
                return None;
            }
            Some((WinchGuard { old }, r))
        }
    }
}

impl Drop for WinchGuard {
    fn drop(&mut self) {
        // SAFETY: restoring the disposition saved by install.
        unsafe { libc::sigaction(libc::SIGWINCH, &self.old, std::ptr::null_mut()) };
    }
}
