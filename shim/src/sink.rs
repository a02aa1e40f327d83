//! Handing finished lines to the trace file, and what happens when the file
//! system does not take them (issue 11: a full disk is never silent).
//!
//! In the normal case a line costs one `write(2)` and nothing else: no
//! lock, no check. When a write fails (`ENOSPC`, `EDQUOT`, `EIO`, …) or is
//! short (the file system took part of the line), the process enters
//! *trouble*, and from then on:
//!
//! - every line that could not be written whole is counted as lost;
//! - the count and the first `errno` are kept in the file's header, in place
//!   (the header has a fixed-width `"lost":0 …,"lost_errno":0 …` field
//!   near its start, rewritten with `pwrite` on a second descriptor of the
//!   same file: overwriting bytes that are already there needs no room), so
//!   the CLI can tell a full disk from a killed process even if nothing
//!   more could ever be written;
//! - each later line is written together with what the failure left
//!   behind, in one `write`: a newline that ends a torn line, a `note`
//!   event saying how many events were lost and why (`lost`, `errno`), and
//!   the header itself if even that could not be written. When the file
//!   system takes it, the process is out of trouble;
//! - the first process of the process tree to meet it says it once on
//!   stderr (`say::once_per_tree`), unless the launcher runs the tree (its
//!   summary says it).
//!
//! In trouble, writers take a lock (the writes are in order, one note per
//! loss), and each lost line costs the failed `write`, an `fstat` and a
//! `pwrite` of the header: nothing of this runs while the disk takes the
//! trace.

use crate::lock::ForkSafeLock;
use crate::say;
use std::sync::atomic::{AtomicBool, Ordering};

/// Width of the header's loss fields: a `u64` and an `errno`.
pub const LOST_WIDTH: usize = 20;
pub const ERRNO_WIDTH: usize = 5;

/// Set while [`Trouble`] has something to do on the next write.
static TROUBLE: AtomicBool = AtomicBool::new(false);

#[derive(Default)]
struct Trouble {
    /// Lines lost in this process image.
    lost: u64,
    /// Lost since the last note that said so was written.
    unsaid: u64,
    /// The first errno (`ENOSPC` for a short write), 0 when none.
    errno: i32,
    /// A line was cut short: the next write starts with a newline.
    torn: bool,
    /// The header, while it is not on disk yet.
    header: Option<Vec<u8>>,
    /// File offset of the header's `lost` value (0: no header on disk).
    mark_off: usize,
    /// A descriptor of the trace file for `pwrite` (not `O_APPEND`), or -1.
    mark_fd: i32,
    /// Stderr was told (or need not be) in this process.
    told: bool,
    /// The `seq` taken for the loss note not written yet (0: none).
    note_seq: u64,
}

static STATE: ForkSafeLock<Option<Trouble>> = ForkSafeLock::new(None);

fn with<R>(f: impl FnOnce(&mut Trouble) -> R) -> R {
    STATE.with(|s| {
        f(s.get_or_insert_with(|| Trouble {
            mark_fd: -1,
            ..Trouble::default()
        }))
    })
}

/// How one `write` went.
enum Wrote {
    All,
    Short(usize),
    Failed(i32),
}

fn write_once(fd: i32, buf: &[u8]) -> Wrote {
    loop {
        // SAFETY: writing a buffer we own.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 {
            return if n as usize == buf.len() {
                Wrote::All
            } else {
                Wrote::Short(n as usize)
            };
        }
        let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if e != libc::EINTR {
            return Wrote::Failed(e);
        }
    }
}

/// A new trace file for this process (opened, or after a fork): no trouble
/// yet. `header` is its header line, `mark_off` the offset of its `lost`
/// value in it, `wrote` whether it is on disk. A descriptor kept for the
/// previous file (the parent's, after a fork) is closed when
/// `was_ours(fd)` says it is still that file's.
pub fn start(fd: i32, header: &[u8], mark_off: usize, was_ours: impl Fn(i32) -> bool) {
    let old = with(|t| {
        let old = t.mark_fd;
        *t = Trouble {
            mark_fd: -1,
            mark_off,
            ..Trouble::default()
        };
        old
    });
    if old >= 0 && was_ours(old) {
        // SAFETY: a descriptor of the previous trace file, ours.
        unsafe { libc::close(old) };
    }
    TROUBLE.store(false, Ordering::Release);
    match write_once(fd, header) {
        Wrote::All => {}
        outcome => with(|t| {
            t.header = Some(header.to_vec());
            t.header_failed(fd, &outcome);
        }),
    }
}

/// Writes one complete line (one event).
pub fn write(fd: i32, line: &[u8]) {
    if !TROUBLE.load(Ordering::Acquire) {
        match write_once(fd, line) {
            Wrote::All => return,
            outcome => return with(|t| t.lost_one(&outcome, false)),
        }
    }
    with(|t| t.write(fd, line));
}

/// Something the trace lost without a line being lost (the start-up window
/// found no room): records `errno` in the header.
pub fn trouble(errno: i32) {
    with(|t| {
        if t.errno == 0 {
            t.errno = errno;
        }
        t.mark();
    });
}

/// The process is exiting: if lost events were not said in the file yet,
/// try once more.
pub fn at_exit(fd: i32) {
    if TROUBLE.load(Ordering::Acquire) {
        with(|t| t.write(fd, b""));
    }
}

impl Trouble {
    /// The header did not go out whole: whatever part of it made it is cut
    /// again (it is written whole, first, or not at all) and it waits.
    fn header_failed(&mut self, fd: i32, outcome: &Wrote) {
        // SAFETY: our own descriptor; nothing else writes to the file while
        // its header is missing (every writer holds this lock).
        unsafe { libc::ftruncate(fd, 0) };
        self.mark_off = 0;
        if self.errno == 0 {
            self.errno = match outcome {
                Wrote::Failed(e) => *e,
                _ => libc::ENOSPC,
            };
        }
        TROUBLE.store(true, Ordering::Release);
        if !self.told {
            self.told = true;
            tell(self.errno);
        }
    }

    /// The write of a line went wrong (`outcome`); `said`: the loss note
    /// went out whole with it.
    fn lost_one(&mut self, outcome: &Wrote, said: bool) {
        let errno = match outcome {
            Wrote::All => return,
            Wrote::Short(n) => {
                self.torn |= *n > 0 && self.header.is_none();
                libc::ENOSPC
            }
            Wrote::Failed(e) => *e,
        };
        self.lost += 1;
        self.unsaid = if said { 1 } else { self.unsaid + 1 };
        if self.errno == 0 {
            self.errno = errno;
        }
        TROUBLE.store(true, Ordering::Release);
        self.mark();
        if !self.told {
            self.told = true;
            tell(errno);
        }
    }

    /// Writes `line` after what the trouble left behind, in one `write`.
    fn write(&mut self, fd: i32, line: &[u8]) {
        let mut buf = Vec::with_capacity(line.len() + 512);
        let header_len = self.header.as_ref().map_or(0, |h| {
            buf.extend_from_slice(h);
            h.len()
        });
        if self.torn && header_len == 0 {
            buf.push(b'\n');
        }
        if self.unsaid > 0 {
            // One seq per note, taken once however often it is tried.
            if self.note_seq == 0 {
                self.note_seq = crate::trace::next_seq();
            }
            buf.extend_from_slice(&crate::trace::loss_note(
                self.note_seq,
                self.lost,
                self.unsaid,
                self.errno,
            ));
        }
        let said_len = buf.len();
        buf.extend_from_slice(line);
        if buf.is_empty() {
            return;
        }
        let outcome = write_once(fd, &buf);
        let written = match outcome {
            Wrote::All => buf.len(),
            Wrote::Short(n) => n,
            Wrote::Failed(_) => 0,
        };
        if header_len > 0 {
            if written < header_len {
                self.header_failed(fd, &outcome);
                if !line.is_empty() {
                    self.lost += 1;
                    self.unsaid += 1;
                }
                return;
            }
            self.header = None;
            self.mark_off = crate::trace::header_mark_offset();
            self.mark();
        }
        if written > 0 {
            // The newline that ends a torn line went out first.
            self.torn = false;
        }
        if written >= said_len && self.unsaid > 0 {
            self.unsaid = 0;
            self.note_seq = 0;
        }
        if matches!(outcome, Wrote::All) {
            TROUBLE.store(self.unsaid > 0, Ordering::Release);
        } else if !line.is_empty() {
            self.lost_one(&outcome, written >= said_len);
        }
    }

    /// Rewrites the header's loss fields in place (when the header is on
    /// disk): `"lost":N…,"lost_errno":E…` at their fixed width.
    fn mark(&mut self) {
        if self.mark_off == 0 {
            return;
        }
        if self.mark_fd < 0 || !crate::trace::is_own_file(self.mark_fd) {
            self.mark_fd = crate::trace::open_own_file(libc::O_WRONLY);
        }
        if self.mark_fd < 0 {
            return;
        }
        let text = format!(
            "{:<lw$},\"lost_errno\":{:<ew$}",
            self.lost,
            self.errno,
            lw = LOST_WIDTH,
            ew = ERRNO_WIDTH
        );
        // SAFETY: writing a buffer we own over bytes of the header.
        unsafe {
            libc::pwrite(
                self.mark_fd,
                text.as_ptr().cast(),
                text.len(),
                self.mark_off as libc::off_t,
            )
        };
    }
}

/// Says once per process tree that the trace directory takes no more
/// (production only: under the launcher its summary says it).
fn tell(errno: i32) {
    let Some(cfg) = crate::trace::config() else {
        return;
    };
    let first = say::once_per_tree(&cfg.dir, "full");
    if !first || std::env::var_os(cudnn_trace_format::envvar::SHIM).is_some() {
        return;
    }
    say::line(&format!(
        "cannot write to the trace directory {} ({}): events of this process tree are being \
         lost from now on (each trace file's header counts them); the program runs on",
        say::esc(&cfg.dir),
        say::errno_text(errno)
    ));
}
