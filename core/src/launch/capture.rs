//! A copy of the program's stderr, for `report` to quote (the frameworks'
//! own version-mismatch messages), taken without changing what the program
//! or the user sees.
//!
//! What happens depends on what the launcher's stdio is:
//!
//! * **stdin, stdout and stderr are the launcher's controlling terminal**
//!   (an interactive shell ran `cudnn-trace python train.py`, in the
//!   foreground or with `&`): the program gets a **terminal session of its
//!   own**, as `script(1)`, tmux and `ssh -t` give one: a new pty on its fd
//!   0, 1 and 2, its controlling terminal, with the user's modes and window
//!   size; the user's terminal in raw mode; keys and output relayed both
//!   ways; the user's job control passed on. [`super::session`] has the
//!   design. The copy is then the terminal's whole output (stdout, stderr,
//!   and the echo of what was typed), in the order written, with the pty's
//!   `\r\n` line ends turned back into `\n`.
//! * **stdout and stderr are one terminal, but not all three are the
//!   controlling one** (`cudnn-trace prog < input`, a job writing to a tty
//!   without one): one pty for fds 1 and 2, so that their order is kept,
//!   output only; stdin and the controlling terminal stay the user's, so
//!   keys and job control are unchanged.
//! * **only stderr is a terminal** (`cudnn-trace prog > out.log`): a pty for
//!   fd 2 only; stdout is elsewhere, so no order between them is visible.
//!   In both pty modes the slave starts with the real terminal's settings
//!   minus output processing (`OPOST`), because the real terminal does its
//!   own (no `\n` → `\r\n` twice); `isatty` stays true (colors, progress
//!   bars); its window size is the real terminal's, updated on `SIGWINCH`
//!   and whenever output is relayed.
//! * **a pipe or socket**: the program gets a new pipe (a socket pair when fd
//!   2 is a socket, so that it still sees a socket) and the relay copies it.
//!   When stdout is the very same pipe or socket (`2>&1 | tee log`), stdout
//!   goes through the new one too: two channels relayed separately would
//!   reorder lines written close together, and the program cannot tell (it
//!   sees one pipe for both, as before). The copy then holds stdout too, as
//!   the user's log does. When our write fails (the reader went away), the
//!   relay closes its end, so the program's next write fails with `EPIPE` /
//!   `SIGPIPE` as it would have.
//! * **a regular file** (`2>log`, `2>>log`): nothing is interposed. The
//!   offset where the program starts writing is noted, and what was written
//!   from there is read back when it ends.
//! * anything else (`/dev/null`, another device, the systemd journal's
//!   stream, which programs recognise through `JOURNAL_STREAM`), or
//!   `--no-capture-stderr`: nothing is done. A stderr that was closed when
//!   the launcher started (`2>&-`) stays closed for the program (Rust's
//!   runtime puts /dev/null there for the launcher itself).
//!
//! Why a whole session on a terminal, rather than a pty on fd 2 alone (this
//! module's first design)? With stderr on a pty of its own and stdout on the
//! real terminal, two streams relayed separately reach the screen out of
//! order (`out1 out2 err1 err2`, a Python REPL printing its prompt in the
//! middle of a traceback); fd 2 is nobody's controlling terminal, so
//! `tcgetpgrp(2)` fails and `bash -i` has no job control; modes set through
//! fd 2 apply to a terminal no key comes from. Putting stdout on that pty
//! too keeps the order but breaks full-screen programs (ncurses sets modes
//! through stdout, reads keys from stdin). Only a pty that is the program's
//! whole terminal has none of these faults; its costs are those of every
//! terminal multiplexer: `ttyname()` names the pty, and a launcher killed
//! outright cannot restore the user's modes itself (its session leader
//! does). And no pty at all cannot capture: a terminal's output cannot be
//! read back, and a pipe instead would make `isatty(2)` false (no colors,
//! other buffering, other framework behaviour).
//!
//! Case by case, what the program sees (without the launcher: the user's
//! terminal everywhere):
//!
//! | launcher's stdio | `isatty` / `ttyname` | `tcgetpgrp`, `/dev/tty` | keys, Ctrl-C/Z, `fg` |
//! |---|---|---|---|
//! | 0, 1, 2 the controlling terminal, foreground | true / the pty, on 0–2 | work (the pty) | as usual, through the pty |
//! | the same, launched with `&` | as above | as above; the program is in its pty's background | a read or `stty` stops it (SIGTTIN/SIGTTOU), the shell says so; `fg` gives it the keys; the user's terminal is never touched from the background (no SIGTTOU for the launcher) |
//! | stdin not a terminal (`< file`), 1 and 2 one terminal | 1, 2: true / the pty | on 1, 2 fail (no controlling terminal there); `/dev/tty` is the user's | stdin untouched; signals from the user's terminal, as usual |
//! | only stderr a terminal | 2: true / a pty | on 2 fail | unchanged |
//! | pipes, files, no terminal (CI, `2>&1 \| tee`) | unchanged | unchanged | unchanged |
//!
//! End of the relay: it reads until every writer has closed (the program and
//! the children that inherited fd 2; the launcher keeps no copy of the
//! program's end). Processes that outlive the program get a grace time
//! (`launch::outliving`), during which the relay goes on capturing. One that
//! holds the stream longer (a daemon, a `cmd &` of a shell script) would
//! hold it open forever: once the launcher stops waiting, the relay waits
//! [`GRACE`] for the end, then hands its end to a small relay *process*
//! forked for the purpose, which goes on copying (uncaptured) until that
//! process closes it too, and the launcher exits as usual. Closing the relay
//! instead would kill that process with `SIGPIPE` (EIO on a terminal) at its
//! next message; waiting would keep the launcher alive.
//!
//! `stderr.txt` keeps the bytes as they are (binary-safe), bounded: the
//! first and the last [`KEEP`] bytes, with a marker line between them when
//! something was left out. The head is written as it arrives, so `report`
//! can quote a message while a long job is still running.
//!
//! What the pty modes without a session still change (`--no-capture-stderr`
//! avoids all of it):
//!
//! * the pty is another terminal: `ttyname()` differs for the descriptors
//!   on it, and it is nobody's controlling terminal, so `tcgetpgrp()` on
//!   them fails; modes set through them apply to the pty, not to the
//!   terminal the keys come from. With stderr alone on it (stdout
//!   elsewhere), an interactive shell run as the program has no job control.
//! * a program that asks for the window size the moment it gets `SIGWINCH`
//!   can still see the old size (the relay gets the same signal). In a
//!   session the program gets SIGWINCH from its pty, after the change.
//!
//! In every mode, a reader that stops reading holds the relay, and with it
//! the launcher's end, as it would have held the program.

use super::exec::pipe_cloexec;
use super::pty::{open_pty, sync_winsize, Processing, WinchGuard};
use super::terminal::{tty_device, ProgramTty, RealTerminal, RelayControl};
use super::terminal::{CTL_DRAIN, CTL_KEYS_OFF, CTL_KEYS_ON, CTL_KEYS_PUSH};
use crate::model::record::{StderrRecord, KEEP, STDERR_FILE};
use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long the relay waits, once the launcher stopped waiting for the
/// program and its tree, for the last writer of its stderr to close it.
pub const GRACE: Duration = Duration::from_millis(250);

/// How long [`Capture::may_wait`] gives the relay to reach the end of the
/// program's stream before the launcher records the end of the run on disk
/// (a version of `launcher.json` saved when nothing is left to wait for).
const SETTLE: Duration = Duration::from_millis(1);

/// Bytes relayed per read.
const CHUNK: usize = 64 << 10;

// ---------------------------------------------------------------------------
// A stderr closed when the launcher started

static STDERR_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

/// Runs before `main`, before the launcher opens /dev/null on a closed fd 2
/// ([`super::entry`]).
extern "C" fn note_stderr_at_start() {
    // SAFETY: F_GETFD only queries the descriptor table.
    if unsafe { libc::fcntl(2, libc::F_GETFD) } == -1 {
        STDERR_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

#[used]
#[link_section = ".init_array"]
static NOTE_STDERR_AT_START: extern "C" fn() = note_stderr_at_start;

/// Whether fd 2 was closed when the launcher started (`2>&-`).
fn closed_at_start() -> bool {
    STDERR_CLOSED_AT_START.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------
// What the program gets

/// The program's fd 2 (and fd 1) when they are not the launcher's own.
/// `launch::spawn` puts them in place with `dup2` between fork and exec.
#[derive(Default)]
pub struct ChildStdio {
    pub stderr: Option<OwnedFd>,
    pub stdout: Option<OwnedFd>,
    /// Close fd 2 in the program (it was closed when the launcher started).
    pub close_stderr: bool,
    /// A terminal session of its own (`launch::session`): its pty on
    /// stdin, stdout and stderr, started by a session leader.
    pub session: Option<ProgramTty>,
}

impl ChildStdio {
    /// The launcher's own stdio, except that a stderr closed at start stays
    /// closed.
    pub fn passthrough() -> ChildStdio {
        ChildStdio {
            close_stderr: closed_at_start(),
            ..Default::default()
        }
    }
}

// ---------------------------------------------------------------------------
// The capture

/// What the launcher does about the program's stderr, from before the
/// program starts until it has ended.
pub struct Capture {
    rec: StderrRecord,
    child: ChildStdio,
    job: Job,
    /// In a terminal session: the user's terminal and the relay's key
    /// direction, for the wait loop ([`Capture::take_terminal`]).
    terminal: Option<(RealTerminal, RelayControl)>,
}

enum Job {
    Nothing,
    /// stderr is a regular file: read back from `start`.
    File {
        start: u64,
        append: bool,
        dev: u64,
        ino: u64,
        store: Store,
    },
    Relay {
        /// Closed when the program has ended (the relay's cue to finish).
        ended: OwnedFd,
        /// Disconnected once the relay has ended.
        done: mpsc::Receiver<()>,
        thread: JoinHandle<RelayEnd>,
        _winch: Option<WinchGuard>,
    },
}

/// What the launcher's fd 2 is, for the relay.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// stdin, stdout and stderr are the launcher's controlling terminal:
    /// the program gets a terminal session of its own.
    Session,
    /// stdout and stderr are one terminal (stdin is not, or the terminal
    /// is not the launcher's controlling one): one pty for both, output
    /// only.
    Output,
    /// Only stderr is a terminal: a pty for fd 2.
    Pty,
    Pipe,
    Socket,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Session => "session",
            Kind::Output | Kind::Pty => "pty",
            Kind::Pipe => "pipe",
            Kind::Socket => "socket",
        }
    }

    /// Whether the program reads keys from the pty and writes both its
    /// streams to it (the copy then holds stdout too).
    fn is_terminal(self) -> bool {
        matches!(self, Kind::Session | Kind::Output | Kind::Pty)
    }
}

/// The terminal kind for a stderr that is a terminal.
fn terminal_kind() -> Kind {
    if RealTerminal::of_session().is_some() {
        Kind::Session
    } else if tty_device(1).is_some() && tty_device(1) == tty_device(2) {
        Kind::Output
    } else {
        Kind::Pty
    }
}

fn fstat(fd: RawFd) -> Option<libc::stat> {
    // SAFETY: a zeroed stat is a valid out-parameter.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer; fstat only queries.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some(st)
}

fn file_type(st: &libc::stat) -> libc::mode_t {
    st.st_mode & libc::S_IFMT
}

/// Whether `st` is the stream systemd gave the service (`JOURNAL_STREAM` is
/// `DEV:INODE` of it): programs that find it log to the journal directly,
/// so it must stay the program's own fd 2.
fn is_journal_stream(var: Option<&std::ffi::OsStr>, st: &libc::stat) -> bool {
    let Some(v) = var else {
        return false;
    };
    let v = v.to_string_lossy();
    let Some((dev, ino)) = v.split_once(':') else {
        return false;
    };
    dev.parse::<u64>().ok() == Some(st.st_dev) && ino.parse::<u64>().ok() == Some(st.st_ino)
}

/// The name the copy of stderr will take in `run_dir`: `stderr.txt`, or,
/// when that name is taken (an earlier run in the same directory, or
/// anything else), `stderr.<launcher pid>.txt`. `launcher.json` says it
/// while the program runs; the file itself is made at the first byte
/// ([`Store`]).
fn copy_name(run_dir: &Path) -> String {
    match fs::symlink_metadata(run_dir.join(STDERR_FILE)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => STDERR_FILE.to_string(),
        _ => fallback_name(),
    }
}

fn fallback_name() -> String {
    format!("stderr.{}.txt", std::process::id())
}

/// Creates the file for the copy of stderr in `run_dir`: `first`, else the
/// fallback name, created exclusively (never through a symlink or into a
/// file someone put there: an `--out` directory may be shared), 0600.
fn create_copy(run_dir: &Path, first: &str) -> io::Result<(String, File)> {
    let mut last = None;
    for name in [first.to_string(), fallback_name()] {
        match super::record::private_file(&run_dir.join(&name)) {
            Ok(f) => return Ok((name, f)),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::from(io::ErrorKind::AlreadyExists)))
}

impl Capture {
    /// Decides from the launcher's fd 2 and sets up the capture into
    /// `run_dir`. Never fails: when something cannot be set up, stderr is
    /// left alone and the record says why.
    pub fn begin(run_dir: &Path, enabled: bool) -> Capture {
        let none = Capture::none;
        if closed_at_start() {
            return none(
                "stderr was closed when cudnn-trace started; it is closed for the program too",
            );
        }
        if !enabled {
            return none("not captured (--no-capture-stderr)");
        }
        let Some(st) = fstat(2) else {
            return none("cannot inspect stderr");
        };
        if is_journal_stream(std::env::var_os("JOURNAL_STREAM").as_deref(), &st) {
            return none(
                "stderr is the systemd journal's stream (JOURNAL_STREAM); left to the program",
            );
        }
        // stdout is the same object (`2>&1`).
        let with_stdout = fstat(1).is_some_and(|o| {
            o.st_dev == st.st_dev && o.st_ino == st.st_ino && file_type(&o) == file_type(&st)
        });
        let kind = match file_type(&st) {
            libc::S_IFREG => return Capture::begin_file(run_dir, &st, with_stdout),
            // SAFETY: isatty only queries.
            libc::S_IFCHR if unsafe { libc::isatty(2) } == 1 => terminal_kind(),
            libc::S_IFIFO => Kind::Pipe,
            libc::S_IFSOCK => Kind::Socket,
            libc::S_IFCHR => {
                return none(
                    "stderr is a character device that is not a terminal (such as /dev/null)",
                )
            }
            _ => return none("stderr is not a terminal, pipe, socket or regular file"),
        };
        let with_stdout = match kind {
            Kind::Session | Kind::Output => true,
            Kind::Pty => false,
            _ => with_stdout,
        };
        match Capture::begin_relay(run_dir, kind, with_stdout) {
            Ok(c) => c,
            Err(e) => none(&format!(
                "not captured: cannot set up a {}: {}",
                kind.name(),
                crate::model::io_msg(&e)
            )),
        }
    }

    /// Nothing done about stderr, for the reason `note`.
    fn none(note: &str) -> Capture {
        Capture {
            rec: StderrRecord {
                how: "none".into(),
                note: Some(note.to_string()),
                ..Default::default()
            },
            child: ChildStdio::passthrough(),
            job: Job::Nothing,
            terminal: None,
        }
    }

    fn begin_file(run_dir: &Path, st: &libc::stat, with_stdout: bool) -> Capture {
        // SAFETY: plain queries on fd 2.
        let flags = unsafe { libc::fcntl(2, libc::F_GETFL) };
        let append = flags >= 0 && flags & libc::O_APPEND != 0;
        // With O_APPEND every write goes to the end, wherever the offset is.
        // SAFETY: lseek with SEEK_CUR and 0 only reads the offset.
        let offset = unsafe { libc::lseek(2, 0, libc::SEEK_CUR) };
        let start = if append || offset < 0 {
            st.st_size as u64
        } else {
            offset as u64
        };
        let name = copy_name(run_dir);
        Capture {
            rec: StderrRecord {
                file: Some(name.clone()),
                how: "file".into(),
                with_stdout,
                ..Default::default()
            },
            child: ChildStdio::passthrough(),
            job: Job::File {
                start,
                append,
                dev: st.st_dev,
                ino: st.st_ino,
                store: Store::new(run_dir, name),
            },
            terminal: None,
        }
    }

    fn begin_relay(run_dir: &Path, kind: Kind, with_stdout: bool) -> io::Result<Capture> {
        let (ours, theirs, term) = open_channel(kind)?;
        // The program sees the flag its fd 2 had (Node.js, for one, sets
        // O_NONBLOCK on its stdio).
        // SAFETY: flag queries and updates on descriptors we own.
        unsafe {
            let flags = libc::fcntl(2, libc::F_GETFL);
            if flags >= 0 && flags & libc::O_NONBLOCK != 0 {
                let f = libc::fcntl(theirs.as_raw_fd(), libc::F_GETFL);
                if f >= 0 {
                    libc::fcntl(theirs.as_raw_fd(), libc::F_SETFL, f | libc::O_NONBLOCK);
                }
            }
        }
        let (ended_r, ended_w) = pipe_cloexec()?;
        let (winch, winch_r) = match kind.is_terminal().then(WinchGuard::install).flatten() {
            Some((g, r)) => (Some(g), Some(r)),
            None => (None, None),
        };
        let (input, control) = match term {
            Some(_) => {
                let (i, c) = Input::new(ours.as_raw_fd())?;
                (Some(i), Some(c))
            }
            None => (None, None),
        };
        let name = copy_name(run_dir);
        let relay = Relay {
            src: ours,
            // A terminal that has stdout too gets the output through it,
            // the launcher's messages through fd 2 (the same terminal).
            dst: if matches!(kind, Kind::Session | Kind::Output) {
                1
            } else {
                2
            },
            pty: kind.is_terminal(),
            ended: ended_r,
            winch: winch_r,
            store: Store::new(run_dir, name.clone()),
            input,
            crlf: (kind == Kind::Session).then_some(false),
            buf: vec![0u8; CHUNK],
        };
        // Started before the program, so that nothing the program writes
        // waits for it.
        // Dropped when the relay ends: what `may_wait` waits for.
        let (done_tx, done) = mpsc::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("stderr-relay".into())
            .spawn(move || {
                let _done = done_tx;
                relay.run()
            })?;
        let (child, terminal) = match (term, control) {
            (Some(t), Some(c)) => {
                let (child, t) = session_stdio(t, theirs, &c);
                (child, Some((t, c)))
            }
            _ => (
                ChildStdio {
                    stdout: with_stdout.then(|| theirs.try_clone()).transpose()?,
                    stderr: Some(theirs),
                    ..Default::default()
                },
                None,
            ),
        };
        Ok(Capture {
            rec: StderrRecord {
                file: Some(name),
                how: kind.name().into(),
                with_stdout,
                ..Default::default()
            },
            child,
            job: Job::Relay {
                ended: ended_w,
                done,
                thread,
                _winch: winch,
            },
            terminal,
        })
    }

    /// In a terminal session: the user's terminal and the relay's control,
    /// for the wait loop (once).
    pub fn take_terminal(&mut self) -> Option<(RealTerminal, RelayControl)> {
        self.terminal.take()
    }

    /// What `launcher.json` says while the program runs.
    pub fn record(&self) -> StderrRecord {
        self.rec.clone()
    }

    /// The descriptors the program gets.
    pub fn child_stdio(&self) -> &ChildStdio {
        &self.child
    }

    /// The program has been started: the launcher drops its copies of the
    /// program's ends, or the relay would never see the end of the stream.
    pub fn program_started(&mut self) {
        self.child.stderr = None;
        self.child.stdout = None;
        self.child.session = None;
    }

    /// Whether [`Capture::finish`] can wait on others, once the program has
    /// ended: a relay that is still running [`SETTLE`] later waits for the
    /// real stderr's reader (one that stops reading holds it for as long)
    /// or for processes that still hold the program's end. One that reached
    /// the end of the stream (the usual case, microseconds after the
    /// program's end), a read-back or no capture never waits.
    pub fn may_wait(&self) -> bool {
        match &self.job {
            Job::Relay { done, .. } => !matches!(
                done.recv_timeout(SETTLE),
                Err(mpsc::RecvTimeoutError::Disconnected)
            ),
            _ => false,
        }
    }

    /// The program has ended (or could not be started): finishes the copy,
    /// having delivered every byte read to the real stderr, and returns
    /// what `launcher.json` says about it. Waits at most [`GRACE`] for
    /// processes that still hold the program's stderr (plus the time a
    /// reader that does not read would have made the program itself wait).
    pub fn finish(self) -> StderrRecord {
        let Capture {
            mut rec,
            child,
            job,
            terminal,
        } = self;
        drop(child);
        // The user's modes back first (a program that could not start).
        drop(terminal);
        match job {
            Job::Nothing => {}
            Job::File {
                start,
                append,
                dev,
                ino,
                mut store,
            } => {
                if let Err(note) = read_back(&mut store, start, append, dev, ino) {
                    rec.note = Some(note);
                }
                store.finish_into(&mut rec);
            }
            Job::Relay {
                ended,
                done: _,
                thread,
                _winch,
            } => {
                drop(ended);
                match thread.join() {
                    Ok(end) => {
                        rec.left_open = end.left_open;
                        if end.note.is_some() {
                            rec.note = end.note;
                        }
                        end.store.finish_into(&mut rec);
                    }
                    Err(_) => rec.note = Some("the stderr relay failed".into()),
                }
            }
        }
        rec
    }
}

/// Reads what was written to the regular file on fd 2 since `start`.
fn read_back(
    store: &mut Store,
    start: u64,
    append: bool,
    dev: u64,
    ino: u64,
) -> Result<(), String> {
    // fd 2 is usually write-only: open the same file again to read it.
    let f = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open("/proc/self/fd/2")
        .map_err(|e| {
            format!(
                "cannot read back the file stderr went to: {}",
                crate::model::io_msg(&e)
            )
        })?;
    let st = fstat(f.as_raw_fd()).ok_or("cannot inspect the file stderr went to")?;
    if st.st_dev != dev || st.st_ino != ino || file_type(&st) != libc::S_IFREG {
        return Err("stderr is no longer the file it was".into());
    }
    let size = st.st_size as u64;
    // Without O_APPEND the shared offset tells where the program stopped
    // (older content past it is not the program's).
    // SAFETY: lseek only queries the offset.
    let offset = unsafe { libc::lseek(2, 0, libc::SEEK_CUR) };
    let end = if append || offset < 0 {
        size
    } else {
        (offset as u64).min(size)
    };
    if end <= start {
        return Ok(());
    }
    let total = end - start;
    let keep = KEEP as u64;
    if total <= 2 * keep {
        store.push(&read_range(&f, start, total));
    } else {
        store.push(&read_range(&f, start, keep));
        store.skip(total - 2 * keep);
        store.push(&read_range(&f, end - keep, keep));
    }
    Ok(())
}

/// Up to `len` bytes of `f` from `off` (fewer if it shrank meanwhile).
fn read_range(f: &File, off: u64, len: u64) -> Vec<u8> {
    let mut buf = vec![0u8; len as usize];
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    buf.truncate(got);
    buf
}

// ---------------------------------------------------------------------------
// The bounded copy

/// `stderr.txt` as it is written: the head straight to the file, the tail
/// in memory until the end.
struct Store {
    out: Out,
    /// The copy's name, once made.
    made: Option<String>,
    error: Option<String>,
    head: usize,
    tail: VecDeque<u8>,
    total: u64,
    /// Bytes neither in the head nor in the tail.
    lost: u64,
}

/// Where [`Store`] writes. The file is made at the first byte: a program
/// that writes nothing to stderr leaves no empty copy, and the launcher
/// makes one file fewer before the program starts (each one an inode
/// allocated on the user's file system: docs/benchmarks.md).
enum Out {
    /// Not made yet: the trace directory and the name to try first.
    Later {
        dir: std::path::PathBuf,
        name: String,
    },
    Open(File),
    /// It could not be made or written: the rest is relayed, not kept.
    Off,
}

impl Store {
    /// The copy named `name` in `run_dir`, made when the first byte comes.
    fn new(run_dir: &Path, name: String) -> Store {
        Store {
            out: Out::Later {
                dir: run_dir.to_path_buf(),
                name,
            },
            made: None,
            error: None,
            head: 0,
            tail: VecDeque::new(),
            total: 0,
            lost: 0,
        }
    }

    fn write(&mut self, b: &[u8]) {
        if b.is_empty() {
            return;
        }
        if let Out::Later { dir, name } = &self.out {
            match create_copy(dir, name) {
                Ok((made, f)) => {
                    self.made = Some(made);
                    self.out = Out::Open(f);
                }
                Err(e) => {
                    self.error = Some(format!(
                        "not captured: cannot create {}: {}",
                        dir.join(name).display(),
                        crate::model::io_msg(&e)
                    ));
                    self.out = Out::Off;
                }
            }
        }
        if let Out::Open(f) = &mut self.out {
            if let Err(e) = f.write_all(b) {
                // Stop writing; the relay itself goes on.
                self.error = Some(format!(
                    "cannot write {STDERR_FILE}: {}",
                    crate::model::io_msg(&e)
                ));
                self.out = Out::Off;
            }
        }
    }

    fn push(&mut self, mut b: &[u8]) {
        self.total += b.len() as u64;
        if self.head < KEEP {
            let n = (KEEP - self.head).min(b.len());
            self.write(&b[..n]);
            self.head += n;
            b = &b[n..];
        }
        if b.is_empty() {
            return;
        }
        if b.len() >= KEEP {
            self.lost += (self.tail.len() + b.len() - KEEP) as u64;
            self.tail.clear();
            b = &b[b.len() - KEEP..];
        }
        self.tail.extend(b);
        if self.tail.len() > KEEP {
            let extra = self.tail.len() - KEEP;
            self.lost += extra as u64;
            self.tail.drain(..extra);
        }
    }

    /// `n` bytes that follow the ones pushed so far but are not kept (the
    /// head must be full).
    fn skip(&mut self, n: u64) {
        self.total += n;
        self.lost += self.tail.len() as u64 + n;
        self.tail.clear();
    }

    /// Writes the tail (after the marker when something was left out) and
    /// fills in the record.
    fn finish_into(mut self, rec: &mut StderrRecord) {
        if self.lost > 0 {
            let marker = format!(
                "\n[cudnn-trace: {} bytes left out here; {STDERR_FILE} keeps the first and the last {} KiB]\n",
                self.lost,
                KEEP >> 10
            );
            self.write(marker.as_bytes());
        }
        let tail = std::mem::take(&mut self.tail);
        let (a, b) = tail.as_slices();
        self.write(a);
        self.write(b);
        if let Out::Open(f) = &mut self.out {
            let _ = f.flush();
        }
        rec.file = self.made;
        rec.bytes = self.total;
        rec.truncated = self.lost > 0;
        if let Some(e) = self.error {
            rec.note = Some(e);
        }
    }
}

// ---------------------------------------------------------------------------
// Channels

/// (the relay's end, the program's end) for `kind`, and the user's
/// terminal for a session.
fn open_channel(kind: Kind) -> io::Result<(OwnedFd, OwnedFd, Option<RealTerminal>)> {
    let (ours, theirs) = match kind {
        Kind::Session => {
            let t = RealTerminal::of_session()
                .ok_or_else(|| io::Error::other("the terminal is not the controlling one"))?;
            // Before raw mode: the pty gets the user's modes.
            let (m, s) = open_pty(1, Processing::Pty)?;
            return Ok((m, s, Some(t)));
        }
        Kind::Output => open_pty(1, Processing::Terminal)?,
        Kind::Pty => open_pty(2, Processing::Terminal)?,
        Kind::Pipe => open_pipe()?,
        Kind::Socket => open_socketpair()?,
    };
    Ok((ours, theirs, None))
}

/// The program's stdio in a terminal session: its pty (`slave`), for the
/// session leader. The user's terminal goes raw now, before the program
/// starts: whatever it prints, it prints with its keys already going to
/// its terminal (and what was typed ahead goes to it).
fn session_stdio(
    mut t: RealTerminal,
    slave: OwnedFd,
    relay: &RelayControl,
) -> (ChildStdio, RealTerminal) {
    let foreground = t.in_foreground();
    let saved = *t.saved();
    relay.push_keys(t.enter_raw());
    let tty = ProgramTty {
        slave,
        foreground,
        raw: t.is_raw(),
        saved,
    };
    let child = ChildStdio {
        session: Some(tty),
        ..Default::default()
    };
    (child, t)
}

/// (read end, write end); the same capacity as the pipe on fd 2, which the
/// program can see with F_GETPIPE_SZ.
fn open_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = pipe_cloexec()?;
    // SAFETY: fcntl queries and sets on descriptors we hold. An error
    // (EPERM above pipe-max-size) just leaves the default.
    unsafe {
        let size = libc::fcntl(2, libc::F_GETPIPE_SZ);
        if size > 0 {
            libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, size);
        }
    }
    Ok((r, w))
}

/// (our end, the program's end).
fn open_socketpair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair returned two new descriptors that we now own.
    let (ours, theirs) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Nothing goes from us to the program.
    // SAFETY: shutdown on a socket we own.
    unsafe { libc::shutdown(ours.as_raw_fd(), libc::SHUT_WR) };
    Ok((ours, theirs))
}

// ---------------------------------------------------------------------------
// The relay thread

struct Relay {
    src: OwnedFd,
    /// The real stderr (fd 2, or fd 1 when the pty has stdout too; another
    /// descriptor in unit tests).
    dst: RawFd,
    pty: bool,
    ended: OwnedFd,
    winch: Option<OwnedFd>,
    store: Store,
    /// In a terminal session: the keys, from the user's terminal to the
    /// program's.
    input: Option<Input>,
    /// In a terminal session, whose pty turns `\n` into `\r\n`: the copy
    /// gets the program's line ends back. The flag: a `\r` held back at the
    /// end of the last chunk.
    crlf: Option<bool>,
    /// The read buffer, allocated by the launcher's main thread: the first
    /// `malloc` in a new thread makes glibc create an arena for it (a
    /// 128 MiB reservation, two `munmap`s and an `mprotect`), and a
    /// `calloc` there clears every page (16 page faults for 64 KiB) that a
    /// program with no output would never touch. From the main arena's
    /// fresh top, `calloc` clears nothing and the pages stay untouched
    /// until the program writes.
    buf: Vec<u8>,
}

struct RelayEnd {
    store: Store,
    left_open: bool,
    note: Option<String>,
}

/// The keys of a terminal session: read from the user's terminal (fd 0)
/// while the launcher is in its foreground, written to the pty master.
struct Input {
    on: bool,
    /// stdin ended (a hung-up terminal) or the program's terminal is gone.
    closed: bool,
    /// Read, not yet taken by the pty (the program is not reading).
    pending: Vec<u8>,
    /// The main thread's requests ([`RelayControl`]); `ctl` is None once
    /// its end is closed.
    ctl: Option<OwnedFd>,
    acks: mpsc::Sender<()>,
    typed: mpsc::Receiver<Vec<u8>>,
}

impl Input {
    /// The relay's and the main thread's ends; `master` (the pty's master)
    /// becomes non-blocking, so that a program that does not read its keys
    /// never holds its output.
    fn new(master: RawFd) -> io::Result<(Input, RelayControl)> {
        let (control, requests) = RelayControl::new()?;
        // SAFETY: flag changes on a descriptor we own.
        unsafe {
            let fl = libc::fcntl(master, libc::F_GETFL);
            libc::fcntl(master, libc::F_SETFL, fl | libc::O_NONBLOCK);
        }
        Ok((
            Input {
                on: false,
                closed: false,
                pending: Vec::new(),
                ctl: Some(requests.ctl),
                acks: requests.acks,
                typed: requests.keys,
            },
            control,
        ))
    }

    fn wants_keys(&self) -> bool {
        self.on && !self.closed && self.pending.is_empty()
    }
}

/// Blocks the signals others send in this thread: their handlers run in
/// the main thread, whose waiting they are meant to interrupt.
fn block_async_signals() {
    // SAFETY: building and applying a signal set for this thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut set);
        for sig in [
            libc::SIGSEGV,
            libc::SIGBUS,
            libc::SIGFPE,
            libc::SIGILL,
            libc::SIGTRAP,
            libc::SIGSYS,
            libc::SIGABRT,
        ] {
            libc::sigdelset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Writes all of `b` to `fd`, waiting when it is non-blocking and full.
/// Async-signal-safe (no allocation): the relay process uses it too.
fn write_all_fd(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        // SAFETY: writing from a buffer we own.
        let n = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if n > 0 {
            b = &b[n as usize..];
            continue;
        }
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        match errno() {
            libc::EINTR => {}
            libc::EAGAIN => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, -1) };
            }
            e => return Err(io::Error::from_raw_os_error(e)),
        }
    }
    Ok(())
}

/// Why the relay stopped.
enum Stop {
    /// Every writer closed the program's stderr.
    Eof,
    /// Writers remain after the grace period.
    Lingering,
    /// Writing to the real stderr failed.
    Destination(io::Error),
    /// Reading failed.
    Source(io::Error),
}

impl Relay {
    fn run(mut self) -> RelayEnd {
        block_async_signals();
        let mut buf = std::mem::take(&mut self.buf);
        let mut deadline: Option<Instant> = None;
        let mut size = None;
        if self.pty {
            sync_winsize(self.dst, self.src.as_raw_fd(), &mut size);
        }
        let stop = loop {
            let timeout = match deadline {
                None => -1,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break Stop::Lingering;
                    }
                    left.as_millis().clamp(1, i32::MAX as u128) as i32
                }
            };
            let keys_waiting = self.input.as_ref().is_some_and(|i| !i.pending.is_empty());
            let poll_fd = |fd: RawFd, watch: bool| libc::pollfd {
                // Negative: not watched.
                fd: if watch { fd } else { -1 },
                events: libc::POLLIN,
                revents: 0,
            };
            let mut fds = [
                libc::pollfd {
                    fd: self.src.as_raw_fd(),
                    events: libc::POLLIN | if keys_waiting { libc::POLLOUT } else { 0 },
                    revents: 0,
                },
                // Not watched once the program ended.
                poll_fd(self.ended.as_raw_fd(), deadline.is_none()),
                poll_fd(self.winch.as_ref().map_or(-1, |w| w.as_raw_fd()), true),
                poll_fd(
                    self.input
                        .as_ref()
                        .and_then(|i| i.ctl.as_ref())
                        .map_or(-1, AsRawFd::as_raw_fd),
                    true,
                ),
                poll_fd(0, self.input.as_ref().is_some_and(Input::wants_keys)),
            ];
            // SAFETY: a valid array of pollfds and its length.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
            if n < 0 {
                if errno() == libc::EINTR {
                    continue;
                }
                break Stop::Source(io::Error::last_os_error());
            }
            if fds[2].revents != 0 {
                if let Some(w) = &self.winch {
                    drain_fd(w.as_raw_fd());
                }
                sync_winsize(self.dst, self.src.as_raw_fd(), &mut size);
            }
            if fds[3].revents != 0 {
                if let Err(stop) = self.on_control(&mut buf, &mut size) {
                    break stop;
                }
            }
            if fds[4].revents != 0 {
                self.read_keys();
            }
            if fds[0].revents & libc::POLLOUT != 0 {
                self.write_keys();
            }
            if fds[1].revents != 0 {
                // The program has ended (the launcher closed its end).
                deadline = Some(Instant::now() + GRACE);
            }
            if fds[0].revents & !libc::POLLOUT == 0 {
                continue;
            }
            if let Err(stop) = self.pass_output(&mut buf, &mut size) {
                break stop;
            }
        };
        self.end(stop, &mut buf)
    }

    /// One read of the program's output, passed to the user and to the
    /// copy. Ok(false): nothing was there.
    fn pass_output(
        &mut self,
        buf: &mut [u8],
        size: &mut Option<(u16, u16, u16, u16)>,
    ) -> Result<bool, Stop> {
        // SAFETY: reading into a buffer we own.
        let got = unsafe { libc::read(self.src.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if got > 0 {
            let chunk = &buf[..got as usize];
            if self.pty {
                sync_winsize(self.dst, self.src.as_raw_fd(), size);
            }
            // The user first, then the copy.
            let sent = write_all_fd(self.dst, chunk);
            self.keep(chunk);
            return match sent {
                Ok(()) => Ok(true),
                Err(e) => Err(Stop::Destination(e)),
            };
        }
        if got == 0 {
            return Err(Stop::Eof);
        }
        match errno() {
            libc::EINTR | libc::EAGAIN => Ok(false),
            // A pty master reads EIO once no slave is open.
            libc::EIO if self.pty => Err(Stop::Eof),
            e => Err(Stop::Source(io::Error::from_raw_os_error(e))),
        }
    }

    /// Puts a chunk of output in the copy.
    fn keep(&mut self, chunk: &[u8]) {
        match &mut self.crlf {
            Some(held) => {
                let lf = undo_onlcr(chunk, held);
                self.store.push(&lf);
            }
            None => self.store.push(chunk),
        }
    }

    /// The main thread's requests (terminal sessions).
    fn on_control(
        &mut self,
        buf: &mut [u8],
        size: &mut Option<(u16, u16, u16, u16)>,
    ) -> Result<(), Stop> {
        let Some(ctl) = self
            .input
            .as_ref()
            .and_then(|i| i.ctl.as_ref().map(AsRawFd::as_raw_fd))
        else {
            return Ok(());
        };
        let mut cmds = [0u8; 64];
        // SAFETY: reading our non-blocking pipe into a local buffer.
        let n = unsafe { libc::read(ctl, cmds.as_mut_ptr().cast(), cmds.len()) };
        if n == 0 {
            // The main thread's end is gone: no more keys, nothing to watch.
            if let Some(i) = &mut self.input {
                i.on = false;
                i.ctl = None;
            }
            return Ok(());
        }
        for &c in &cmds[..n.max(0) as usize] {
            match c {
                CTL_KEYS_ON | CTL_KEYS_OFF => {
                    if let Some(i) = &mut self.input {
                        i.on = c == CTL_KEYS_ON;
                    }
                }
                CTL_KEYS_PUSH => {
                    if let Some(i) = &mut self.input {
                        while let Ok(keys) = i.typed.try_recv() {
                            i.pending.extend(keys);
                        }
                    }
                    self.write_keys();
                }
                CTL_DRAIN => {
                    // Everything the pty holds now (it is non-blocking).
                    let mut result = Ok(());
                    loop {
                        match self.pass_output(buf, size) {
                            Ok(true) => continue,
                            Ok(false) => break,
                            Err(stop) => {
                                result = Err(stop);
                                break;
                            }
                        }
                    }
                    if let Some(i) = &self.input {
                        let _ = i.acks.send(());
                    }
                    result?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Keys typed by the user, to be given to the program's terminal.
    fn read_keys(&mut self) {
        let Some(input) = &mut self.input else {
            return;
        };
        let mut keys = [0u8; 4096];
        // SAFETY: reading into a local buffer. The launcher is in the
        // foreground (the main thread said so), so no SIGTTIN.
        let n = unsafe { libc::read(0, keys.as_mut_ptr().cast(), keys.len()) };
        if n > 0 {
            input.pending.extend_from_slice(&keys[..n as usize]);
            self.write_keys();
        } else if n == 0 || !matches!(errno(), libc::EINTR | libc::EAGAIN) {
            input.closed = true;
        }
    }

    /// As much of the pending keys as the program's terminal takes.
    fn write_keys(&mut self) {
        let Some(input) = &mut self.input else {
            return;
        };
        while !input.pending.is_empty() {
            // SAFETY: writing from a buffer we own to our non-blocking master.
            let n = unsafe {
                libc::write(
                    self.src.as_raw_fd(),
                    input.pending.as_ptr().cast(),
                    input.pending.len(),
                )
            };
            if n > 0 {
                input.pending.drain(..n as usize);
                continue;
            }
            match errno() {
                libc::EINTR => continue,
                libc::EAGAIN => return,
                _ => {
                    // The program's terminal is gone.
                    input.pending.clear();
                    input.closed = true;
                    return;
                }
            }
        }
    }

    /// The end of the relay: a process that still holds the stream gets a
    /// relay process of its own.
    fn end(mut self, stop: Stop, buf: &mut [u8]) -> RelayEnd {
        if let Some(held) = self.crlf {
            if held {
                self.store.push(b"\r");
            }
        }
        let (left_open, note) = match stop {
            Stop::Eof => (false, None),
            Stop::Lingering => {
                let note = if hand_off(&self.src, self.dst, buf) {
                    "a process that outlived the program still held its stderr when \
                     cudnn-trace ended; its later output was relayed but not captured"
                        .to_string()
                } else {
                    "a process that outlived the program still held its stderr when \
                     cudnn-trace ended, and no relay process could be started for it: its \
                     later output is lost"
                        .to_string()
                };
                (true, Some(note))
            }
            // Dropping our end below makes the program's next write fail
            // (EPIPE and SIGPIPE for a pipe, EIO for a terminal), as it
            // would have on the real stderr.
            Stop::Destination(e) => (
                false,
                Some(format!(
                    "the real stderr stopped taking output ({}); capture ended there",
                    crate::model::io_msg(&e)
                )),
            ),
            Stop::Source(e) => (
                false,
                Some(format!(
                    "reading the program's stderr failed ({}); capture ended there",
                    crate::model::io_msg(&e)
                )),
            ),
        };
        drop(self.src);
        RelayEnd {
            store: self.store,
            left_open,
            note,
        }
    }
}

/// Reads a non-blocking pipe until it is empty.
fn drain_fd(fd: RawFd) {
    let mut drain = [0u8; 64];
    // SAFETY: reading a non-blocking pipe into a local buffer.
    while unsafe { libc::read(fd, drain.as_mut_ptr().cast(), drain.len()) } > 0 {}
}

/// `chunk` with each `\r\n` turned back into `\n` (a pty's `ONLCR`);
/// `held`: a `\r` at the end of the previous chunk, not yet written.
fn undo_onlcr(chunk: &[u8], held: &mut bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(chunk.len() + 1);
    for &b in chunk {
        if std::mem::take(held) && b != b'\n' {
            out.push(b'\r');
        }
        if b == b'\r' {
            *held = true;
        } else {
            out.push(b);
        }
    }
    out
}

/// Forks a process that goes on relaying `src` to `dst` until its writers
/// are gone, so that the launcher can exit. Returns whether it started.
fn hand_off(src: &OwnedFd, dst: RawFd, buf: &mut [u8]) -> bool {
    let src = src.as_raw_fd();
    // The relay process reads blocking (a terminal session's master is
    // non-blocking; the descriptor is the launcher's alone).
    // SAFETY: flag changes on a descriptor we own.
    unsafe {
        let fl = libc::fcntl(src, libc::F_GETFL);
        if fl >= 0 {
            libc::fcntl(src, libc::F_SETFL, fl & !libc::O_NONBLOCK);
        }
    }
    let (ptr, len) = (buf.as_mut_ptr(), buf.len());
    // SAFETY: the child only makes async-signal-safe system calls (the
    // launcher has other threads) on memory allocated before the fork, and
    // ends with _exit.
    match unsafe { libc::fork() } {
        0 => unsafe { relay_process(src, dst, ptr, len) },
        pid => pid > 0,
    }
}

/// The body of the relay process: copies `src` to `dst` until EOF or a
/// write error. Nothing here allocates.
unsafe fn relay_process(src: RawFd, dst: RawFd, buf: *mut u8, len: usize) -> ! {
    // It is part of the stream, not of the job: the terminal's and the
    // job's signals are for the processes writing to it, and it ends when
    // they are gone. SIGTERM still ends it.
    let mut ign: libc::sigaction = std::mem::zeroed();
    ign.sa_sigaction = libc::SIG_IGN;
    let mut dfl: libc::sigaction = std::mem::zeroed();
    dfl.sa_sigaction = libc::SIG_DFL;
    for sig in [
        libc::SIGINT,
        libc::SIGQUIT,
        libc::SIGHUP,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGPWR,
        libc::SIGWINCH,
        libc::SIGPIPE,
    ] {
        libc::sigaction(sig, &ign, std::ptr::null_mut());
    }
    for sig in [libc::SIGTERM, libc::SIGCHLD] {
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
    }
    let mut none: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut none);
    libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    libc::prctl(libc::PR_SET_NAME, c"cdtrace-relay".as_ptr());
    // Keep only the destination (as fd 2) and the source (as fd 3):
    // holding the launcher's stdin or stdout would keep a pipeline waiting
    // for this process. (In the launcher dst is 2 and src is above 2.)
    if src <= 2 || (dst != 2 && libc::dup2(dst, 2) < 0) || (src != 3 && libc::dup2(src, 3) < 0) {
        libc::_exit(1);
    }
    if libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) != 0 {
        let mut lim: libc::rlimit = std::mem::zeroed();
        let max = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur.min(65536) as i32
        } else {
            1024
        };
        for fd in 4..max {
            libc::close(fd);
        }
    }
    libc::close(0);
    libc::close(1);
    loop {
        let n = libc::read(3, buf.cast(), len);
        if n == 0 {
            break;
        }
        if n < 0 {
            if *libc::__errno_location() == libc::EINTR {
                continue;
            }
            break;
        }
        // The n bytes just read into buf (n <= len).
        if write_all_fd(2, std::slice::from_raw_parts(buf, n as usize)).is_err() {
            libc::_exit(0);
        }
    }
    libc::_exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::record::read_captured;
    use crate::testutil::tempdir;
    use std::io::Read;

    fn store_in(dir: &Path) -> Store {
        Store::new(dir, STDERR_FILE.into())
    }

    fn finish(store: Store, dir: &Path) -> (StderrRecord, Vec<u8>) {
        let mut rec = StderrRecord::default();
        store.finish_into(&mut rec);
        (rec, fs::read(dir.join(STDERR_FILE)).unwrap())
    }

    #[test]
    fn small_output_is_kept_whole() {
        let d = tempdir("capture-small");
        let mut s = store_in(&d);
        s.push(b"partial ");
        s.push(b"line\n\xff\x00binary");
        let (rec, bytes) = finish(s, &d);
        assert_eq!(bytes, b"partial line\n\xff\x00binary");
        assert_eq!(rec.bytes, 21);
        assert!(!rec.truncated);
        assert_eq!(read_captured(&d).unwrap(), "partial line\n\u{fffd}\0binary");
    }

    #[test]
    fn exactly_two_keeps_is_not_truncated() {
        let d = tempdir("capture-edge");
        let data: Vec<u8> = (0..2 * KEEP).map(|i| (i % 251) as u8).collect();
        let mut s = store_in(&d);
        for c in data.chunks(CHUNK - 7) {
            s.push(c);
        }
        let (rec, bytes) = finish(s, &d);
        assert!(!rec.truncated);
        assert_eq!(rec.bytes, data.len() as u64);
        assert!(bytes == data);
    }

    #[test]
    fn large_output_keeps_head_and_tail() {
        let d = tempdir("capture-large");
        let data: Vec<u8> = (0..(5 << 20)).map(|i: usize| (i % 253) as u8).collect();
        let mut s = store_in(&d);
        // Uneven pieces, one larger than KEEP.
        let mut rest = &data[..];
        for size in [10usize, KEEP + 3, 1, CHUNK, 3 * KEEP].iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let n = (*size).min(rest.len());
            s.push(&rest[..n]);
            rest = &rest[n..];
        }
        let (rec, bytes) = finish(s, &d);
        assert!(rec.truncated);
        assert_eq!(rec.bytes, data.len() as u64);
        assert!(bytes[..KEEP] == data[..KEEP]);
        assert!(bytes[bytes.len() - KEEP..] == data[data.len() - KEEP..]);
        let marker = String::from_utf8_lossy(&bytes[KEEP..bytes.len() - KEEP]).into_owned();
        let lost = data.len() - 2 * KEEP;
        assert_eq!(
            marker,
            format!("\n[cudnn-trace: {lost} bytes left out here; stderr.txt keeps the first and the last 256 KiB]\n")
        );
        let text = read_captured(&d).unwrap();
        assert!(text.contains("bytes left out here"));
    }

    #[test]
    fn skip_leaves_a_gap() {
        let d = tempdir("capture-skip");
        let mut s = store_in(&d);
        s.push(&vec![b'a'; KEEP]);
        s.skip(100);
        s.push(&vec![b'z'; KEEP]);
        let (rec, bytes) = finish(s, &d);
        assert!(rec.truncated);
        assert_eq!(rec.bytes, 2 * KEEP as u64 + 100);
        assert!(bytes.starts_with(&vec![b'a'; KEEP]));
        assert!(bytes.ends_with(&vec![b'z'; KEEP]));
        assert!(String::from_utf8_lossy(&bytes).contains("100 bytes left out"));
    }

    #[test]
    fn read_captured_needs_a_regular_file() {
        let d = tempdir("capture-read");
        assert_eq!(read_captured(&d), None);
        fs::create_dir(d.join(STDERR_FILE)).unwrap();
        assert_eq!(read_captured(&d), None);
        let e = tempdir("capture-read-empty");
        fs::write(e.join(STDERR_FILE), b"").unwrap();
        assert_eq!(read_captured(&e).as_deref(), Some(""));
    }

    /// A program that writes nothing to stderr leaves no copy, and its
    /// record names none: a `stderr.txt` beside it (another run's, in a
    /// shared `--out` directory) is not quoted as its own.
    #[test]
    fn no_byte_no_copy_and_no_other_runs_copy() {
        let d = tempdir("capture-none");
        let mut rec = StderrRecord {
            file: Some(STDERR_FILE.into()),
            how: "pipe".into(),
            ..Default::default()
        };
        Store::new(&d, STDERR_FILE.into()).finish_into(&mut rec);
        assert_eq!((rec.file.as_deref(), rec.bytes), (None, 0));
        assert!(fs::read_dir(&d).unwrap().next().is_none(), "nothing made");

        fs::write(d.join(STDERR_FILE), b"another run's message\n").unwrap();
        let launcher = crate::model::LauncherRecord {
            stderr: Some(rec),
            ..Default::default()
        };
        let json = crate::model::json::to_pretty(&launcher).unwrap();
        fs::write(d.join(crate::model::LAUNCHER_FILE), json).unwrap();
        assert_eq!(read_captured(&d), None);
        // Without a record, the usual name.
        fs::remove_file(d.join(crate::model::LAUNCHER_FILE)).unwrap();
        assert!(read_captured(&d).is_some());
    }

    /// The copy's name is the one said before the program started, or the
    /// fallback when something took it meanwhile.
    #[test]
    fn the_copy_is_made_at_the_first_byte_under_the_name_said() {
        let d = tempdir("capture-lazy");
        assert_eq!(copy_name(&d), STDERR_FILE);
        let mut s = Store::new(&d, copy_name(&d));
        fs::write(d.join(STDERR_FILE), b"taken meanwhile").unwrap();
        s.push(b"hello\n");
        let mut rec = StderrRecord::default();
        s.finish_into(&mut rec);
        let name = rec.file.expect("a copy was made");
        assert_eq!(name, fallback_name());
        assert_eq!(fs::read(d.join(&name)).unwrap(), b"hello\n");
        assert_eq!(copy_name(&d), fallback_name(), "stderr.txt is taken now");
    }

    #[test]
    fn record_json_shape() {
        let rec = StderrRecord {
            file: Some(STDERR_FILE.into()),
            how: "pipe".into(),
            bytes: 12,
            truncated: false,
            ..Default::default()
        };
        let v = serde_json::to_value(&rec).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"file": "stderr.txt", "how": "pipe", "bytes": 12, "truncated": false})
        );
        let back: StderrRecord = serde_json::from_value(serde_json::json!({"how": "pty"})).unwrap();
        assert_eq!(back.how, "pty");
        assert_eq!(back.file, None);
    }

    #[test]
    fn journal_stream_is_recognised() {
        let (_r, w) = pipe_cloexec().unwrap();
        let st = fstat(w.as_raw_fd()).unwrap();
        let var = |v: &str| std::ffi::OsString::from(v);
        let same = var(&format!("{}:{}", st.st_dev, st.st_ino));
        assert!(is_journal_stream(Some(&same), &st));
        let other = var(&format!("{}:{}", st.st_dev, st.st_ino + 1));
        assert!(!is_journal_stream(Some(&other), &st));
        assert!(!is_journal_stream(Some(&var("junk")), &st));
        assert!(!is_journal_stream(None, &st));
    }

    #[test]
    fn pty_passes_bytes_unchanged() {
        let Ok((m, s)) = open_pty(2, Processing::Terminal) else {
            eprintln!("no pseudo-terminals here");
            return;
        };
        let mut slave = File::from(s);
        slave.write_all(b"a\nb\r\n\tc").unwrap();
        drop(slave);
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: reading into a local buffer.
            let n = unsafe { libc::read(m.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            got.extend_from_slice(&buf[..n as usize]);
        }
        assert_eq!(got, b"a\nb\r\n\tc");
    }

    #[test]
    fn a_terminal_sessions_line_ends_are_the_programs_in_the_copy() {
        let mut held = false;
        let mut out = Vec::new();
        // A \r\n split between two reads, a \r alone, \r\r\n.
        for chunk in [&b"a\r\nb\r"[..], b"\nc\rd\r\r\n", b"e\r"] {
            out.extend(undo_onlcr(chunk, &mut held));
        }
        assert_eq!(out, b"a\nb\nc\rd\r\ne");
        assert!(held, "the last \\r waits for what follows");
    }

    /// A relay from a new pipe into another pipe (standing for the real
    /// stderr), in a thread as in the launcher.
    fn relay_into_pipe(d: &Path) -> (File, OwnedFd, JoinHandle<RelayEnd>, File) {
        let (r, w) = open_pipe().unwrap();
        let (dst_r, dst_w) = pipe_cloexec().unwrap();
        let (ended_r, ended_w) = pipe_cloexec().unwrap();
        let relay = Relay {
            src: r,
            dst: dst_w.as_raw_fd(),
            pty: false,
            ended: ended_r,
            winch: None,
            store: store_in(d),
            input: None,
            crlf: None,
            buf: vec![0u8; CHUNK],
        };
        let t = std::thread::spawn(move || {
            let _keep = dst_w;
            relay.run()
        });
        (File::from(w), ended_w, t, File::from(dst_r))
    }

    #[test]
    fn relay_copies_until_every_writer_closed() {
        let d = tempdir("capture-relay");
        let (mut w, ended, t, mut dst) = relay_into_pipe(&d);
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 256) as u8).collect();
        let reader = std::thread::spawn(move || {
            let mut v = Vec::new();
            dst.read_to_end(&mut v).unwrap();
            v
        });
        w.write_all(&data[..5]).unwrap();
        w.write_all(&data[5..]).unwrap();
        // A second writer (a child that inherited fd 2) keeps it open after
        // the program's end, then closes it within the grace period.
        let w2 = w.try_clone().unwrap();
        drop(w);
        drop(ended);
        drop(w2);
        let end = t.join().unwrap();
        assert!(!end.left_open);
        assert!(end.note.is_none());
        assert!(reader.join().unwrap() == data);
        let mut rec = StderrRecord::default();
        end.store.finish_into(&mut rec);
        assert_eq!(rec.bytes, data.len() as u64);
        assert!(!rec.truncated);
        assert!(fs::read(d.join(STDERR_FILE)).unwrap() == data);
    }

    #[test]
    fn relay_stops_when_the_reader_is_gone() {
        let d = tempdir("capture-epipe");
        let (mut w, _ended, t, dst) = relay_into_pipe(&d);
        drop(dst);
        // The relay reads this, fails to pass it on, and closes its end.
        w.write_all(b"line\n").unwrap();
        let end = t.join().unwrap();
        // Our own SIGPIPE is ignored (Rust's runtime does that), so the
        // next write returns EPIPE.
        assert_eq!(
            w.write_all(b"line\n").map_err(|e| e.raw_os_error()),
            Err(Some(libc::EPIPE)),
            "writes must fail once the relay is gone"
        );
        let mut rec = StderrRecord::default();
        end.store.finish_into(&mut rec);
        assert_eq!(rec.bytes, 5, "what was read is in the copy");
        assert!(end
            .note
            .unwrap_or_default()
            .contains("stopped taking output"));
    }
}
