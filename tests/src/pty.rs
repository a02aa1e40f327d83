//! A pseudo-terminal standing for the user's terminal in the terminal tests
//! (`tests/terminal.rs`): a process (the launcher, or a shell that starts
//! it) runs as the session leader on its slave, as a login shell runs on a
//! real terminal, and the test types on the master and reads what the
//! screen would show.
//!
//! Synchronisation is by content, never by sleeping: [`Term::expect`] waits
//! until the screen shows a text (with a generous deadline, for loaded CI
//! machines), and every test sends its next keys only after the output that
//! proves the program is ready for them.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// What the terminal received, shared with the thread that reads it.
#[derive(Default)]
struct Screen {
    bytes: Vec<u8>,
    /// The master read EIO or EOF: every slave is closed.
    closed: bool,
}

/// A test terminal: the master, and everything it received so far. When
/// dropped (a test that failed half-way included) the master is closed: the
/// kernel hangs up its session, as when a terminal window is closed, so
/// that nothing the test started lives on.
pub struct Term {
    master: Arc<File>,
    /// Tells the reading thread to let go of the master.
    done: Arc<AtomicBool>,
    /// A slave kept open by the test (no controlling terminal of anyone):
    /// to read the terminal's modes, and so that the master keeps working
    /// between two programs.
    slave: File,
    slave_path: String,
    screen: Arc<(Mutex<Screen>, Condvar)>,
    /// Bytes of the screen already matched by [`Term::expect`].
    seen: usize,
}

/// How long a test waits for a text before failing: `CDT_TIMEOUT` (as the
/// other launcher tests), at least 60 s.
pub fn patience() -> Duration {
    crate::run::timeout().max(Duration::from_secs(60))
}

/// A new pseudo-terminal: its master, its slave (both close-on-exec, not
/// the controlling terminal) and the slave's path.
pub fn open_pty() -> (File, File, String) {
    // SAFETY: pty set-up on descriptors we own, with valid buffers.
    unsafe {
        let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
        assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
        let master = File::from_raw_fd(m);
        assert_eq!(libc::grantpt(m), 0);
        assert_eq!(libc::unlockpt(m), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(m, name.as_mut_ptr(), name.len()), 0);
        let s = libc::open(
            name.as_ptr(),
            libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
        );
        assert!(
            s >= 0,
            "opening the slave: {}",
            std::io::Error::last_os_error()
        );
        let path = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_string_lossy()
            .into_owned();
        (master, File::from_raw_fd(s), path)
    }
}

impl Term {
    /// A new terminal of `rows` × `cols`, in the modes a terminal emulator
    /// gives a new pty (cooked: echo, line editing, signals, `\n` → `\r\n`).
    pub fn new(rows: u16, cols: u16) -> Term {
        let (master, slave, slave_path) = open_pty();
        let screen = Arc::new((Mutex::new(Screen::default()), Condvar::new()));
        let master = Arc::new(master);
        let done = Arc::new(AtomicBool::new(false));
        let reader = Arc::clone(&master);
        let stop = Arc::clone(&done);
        let shared = Arc::clone(&screen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            loop {
                let mut pfd = libc::pollfd {
                    fd: reader.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                let ready = unsafe { libc::poll(&mut pfd, 1, 100) };
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if ready <= 0 {
                    continue;
                }
                let n = match (&*reader).read(&mut buf) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => 0,
                };
                let (lock, cv) = &*shared;
                let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
                if n == 0 {
                    s.closed = true;
                    cv.notify_all();
                    return;
                }
                s.bytes.extend_from_slice(&buf[..n]);
                cv.notify_all();
            }
        });
        let t = Term {
            master,
            done,
            slave,
            slave_path,
            screen,
            seen: 0,
        };
        t.resize(rows, cols);
        t
    }

    /// The slave's path (`/dev/pts/N`).
    pub fn slave_path(&self) -> &str {
        &self.slave_path
    }

    /// Starts `cmd` as a login shell runs on a terminal (see [`Term::prepare`]).
    pub fn spawn(&self, mut cmd: Command) -> Child {
        self.prepare(&mut cmd);
        cmd.spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?} on a terminal: {e}"))
    }

    /// Makes `cmd` start as a terminal emulator starts a login shell: the
    /// session leader, with the terminal as its controlling terminal (so
    /// its process group is the foreground one) and as its stdin, stdout
    /// and stderr, every signal at its default and none blocked. Not what
    /// the tests inherited: run in the background of a non-interactive
    /// shell (`cmd &`, as CI may be), they have SIGINT and SIGQUIT ignored,
    /// which a shell on the terminal would hand to its jobs, and Ctrl-C
    /// would then end nothing, traced or not. A test that wants another
    /// state sets it on `cmd` after this.
    pub fn prepare(&self, cmd: &mut Command) {
        cmd.stdin(self.stdio())
            .stdout(self.stdio())
            .stderr(self.stdio());
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                for sig in 1..=libc::SIGRTMAX() {
                    // SIGKILL, SIGSTOP and glibc's own signals refuse: no matter.
                    libc::signal(sig, libc::SIG_DFL);
                }
                let mut none: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut none);
                if libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut()) < 0
                    || libc::setsid() < 0
                    || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// The slave as a `Stdio` (another descriptor for the same slave).
    pub fn stdio(&self) -> Stdio {
        Stdio::from(self.slave.try_clone().expect("dup the slave"))
    }

    /// Types `keys`.
    pub fn send(&self, keys: &str) {
        (&*self.master)
            .write_all(keys.as_bytes())
            .expect("writing to the terminal");
    }

    /// Resizes the terminal (the kernel sends SIGWINCH to its foreground
    /// process group).
    pub fn resize(&self, rows: u16, cols: u16) {
        let ws = libc::winsize {
            ws_row: rows,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        // SAFETY: TIOCSWINSZ with a valid winsize.
        let r = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::TIOCSWINSZ, &ws) };
        assert_eq!(r, 0, "TIOCSWINSZ: {}", std::io::Error::last_os_error());
    }

    /// The terminal's modes now.
    pub fn modes(&self) -> libc::termios {
        termios(self.slave.as_raw_fd())
    }

    /// Everything the terminal showed so far, `\r` removed.
    pub fn text(&self) -> String {
        let (lock, _) = &*self.screen;
        let s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        clean(&s.bytes)
    }

    /// Waits until the screen, past what earlier calls matched, shows
    /// `want` (`\r` ignored); returns the text up to and including it and
    /// moves past it. Fails with the whole screen after [`patience`].
    pub fn expect(&mut self, want: &str) -> String {
        self.expect_within(want, patience()).unwrap_or_else(|| {
            panic!(
                "the terminal never showed {want:?}; it showed:\n{}",
                self.text()
            )
        })
    }

    /// [`Term::expect`] with a deadline; None when `want` did not come.
    pub fn expect_within(&mut self, want: &str, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        let (lock, cv) = &*self.screen;
        let mut s = lock.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            let rest = clean(&s.bytes[self.seen.min(s.bytes.len())..]);
            if let Some(i) = rest.find(want) {
                let upto = &rest[..i + want.len()];
                // Advance in raw bytes: as many as make up `upto` without \r.
                let mut kept = 0;
                let mut raw = self.seen;
                while kept < upto.len() && raw < s.bytes.len() {
                    if s.bytes[raw] != b'\r' {
                        kept += 1;
                    }
                    raw += 1;
                }
                self.seen = raw;
                return Some(upto.to_string());
            }
            let now = Instant::now();
            if now >= deadline || s.closed {
                return None;
            }
            s = cv
                .wait_timeout(s, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
    }
}

/// Bytes as text, `\r` removed (the terminal turns `\n` into `\r\n`).
fn clean(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\r', "")
}

/// The modes of the terminal on `fd`.
pub fn termios(fd: RawFd) -> libc::termios {
    // SAFETY: a zeroed termios is a valid out-parameter.
    let mut t: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; tcgetattr only reads.
    let r = unsafe { libc::tcgetattr(fd, &mut t) };
    assert_eq!(r, 0, "tcgetattr: {}", std::io::Error::last_os_error());
    t
}

/// Whether the process `pid` is gone or a zombie.
pub fn gone(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.is_empty()
        || stat
            .rsplit(')')
            .next()
            .is_some_and(|s| s.trim_start().starts_with('Z'))
}

/// Waits up to [`patience`] for `cond`, checking every 10 ms (for state
/// that no output announces, such as a process ending or a mode restored).
pub fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + patience();
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "{what}: not within {:?}",
            patience()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
