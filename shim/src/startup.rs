//! The start-up window: how the search that ends a process reaches the disk.
//!
//! When ld.so cannot find a DT_NEEDED library at start-up it prints `error
//! while loading shared libraries: …` and calls `_exit(127)` right after the
//! last candidate: no audit callback follows, so a search kept in memory
//! until its outcome is known would be lost with the process (issue 14). A
//! line written per candidate (or per search) would cost a system call each,
//! for every start-up search of every process, where nearly all succeed.
//!
//! Instead, when the first recorded search of the start-up begins, the trace
//! file gets a window: [`WINDOW`] bytes past its end, allocated
//! (`fallocate`: a full disk is found out now, never as a SIGBUS later),
//! filled with newlines and mapped `MAP_SHARED`. Until the start-up objects
//! are all mapped (the first `LA_ACT_CONSISTENT`), every event goes into the
//! window with a memory copy instead of a `write(2)`, and the search in
//! progress is kept there too, as the `load_failed` line it becomes if the
//! process ends during it (`fatal: true`), redrawn in place as candidates
//! come. Stores to a shared file mapping are in the page cache at once: they
//! survive `_exit`, a crash or SIGKILL of the process. When the start-up is
//! over the window is unmapped and the file cut to its events, and writing
//! goes on with `write(2)` as before.
//!
//! Cost: `fstat`, `fallocate`, `mmap` when the window opens, `munmap` and
//! `ftruncate` when it closes (and again per further 64 KiB of start-up
//! events), none per event: the start-up's events, which used to cost a
//! `write` each, now cost none. Processes without a recorded start-up search
//! (in `cuda` mode, those that need no CUDA-family library to start) never
//! open one.
//!
//! A reader sees the window's unused bytes as empty lines, which every trace
//! reader skips. Only the loader's thread runs during the start-up (no code
//! of the program has run yet), so the window needs no lock; it is never
//! touched again once closed.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Bytes added past the end of the file for one window.
const WINDOW: usize = 64 * 1024;

pub struct Window {
    /// The process (and, at start-up, its only thread).
    pub pid: u32,
    /// Kind and fields of the line of the search in progress (drawn by the
    /// trace writer with the next `seq`).
    pub pending_body: Option<(&'static str, Vec<u8>)>,
    fd: i32,
    map: *mut u8,
    map_len: usize,
    /// Offset of the window's first byte in the mapping.
    delta: usize,
    /// File offset of the window's first byte.
    file_start: u64,
    cap: usize,
    /// Bytes of complete events.
    used: usize,
    /// Bytes after `used` taken by the line of the search in progress.
    pending: usize,
}

static CURRENT: AtomicPtr<Window> = AtomicPtr::new(core::ptr::null_mut());
/// The start-up is over: no window is opened again.
static OVER: AtomicBool = AtomicBool::new(false);

/// The open window, if any.
///
/// # Safety
/// Start-up only (one thread); the reference must not outlive [`close`].
pub unsafe fn current() -> Option<&'static mut Window> {
    CURRENT.load(Ordering::Acquire).as_mut()
}

/// Whether the start-up is still under way (a window may be opened).
pub fn under_way() -> bool {
    !OVER.load(Ordering::Relaxed)
}

/// Opens a window at the end of `fd` (with room for `need` bytes at least),
/// unless one is open or the start-up is over. `Ok(false)`: the start-up
/// is over. `Err(errno)`: none could be made (the file system cannot
/// allocate, a full disk: events are then written one by one, and a fatal
/// search is not recorded; the caller says so in the trace).
pub fn open(fd: i32, pid: u32, need: usize) -> Result<bool, i32> {
    if OVER.load(Ordering::Relaxed) {
        return Ok(false);
    }
    if !CURRENT.load(Ordering::Acquire).is_null() {
        return Ok(true);
    }
    match Window::new(fd, pid, need) {
        Ok(w) => {
            CURRENT.store(Box::into_raw(Box::new(w)), Ordering::Release);
            Ok(true)
        }
        Err(e) => {
            // Not tried again for every later search of this start-up.
            OVER.store(true, Ordering::Relaxed);
            Err(e)
        }
    }
}

/// The start-up is over: unmaps the window and cuts the file to its events.
pub fn close() {
    OVER.store(true, Ordering::Relaxed);
    let w = CURRENT.swap(core::ptr::null_mut(), Ordering::AcqRel);
    if !w.is_null() {
        // SAFETY: made by Box::into_raw in `open`; nobody else holds it.
        let w = unsafe { Box::from_raw(w) };
        w.finish();
    }
}

impl Window {
    fn new(fd: i32, pid: u32, need: usize) -> Result<Window, i32> {
        let errno = || std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        let mut st: libc::stat = unsafe { core::mem::zeroed() };
        // SAFETY: fstat into a local buffer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(errno());
        }
        let file_start = st.st_size as u64;
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        let map_off = file_start & !(page - 1);
        let delta = (file_start - map_off) as usize;
        let cap = WINDOW.max(need.saturating_mul(2));
        // Blocks for the whole window now: a store to a page the file
        // system cannot back would be a SIGBUS in the program.
        // SAFETY: plain system calls on our own descriptor.
        if unsafe { libc::fallocate(fd, 0, file_start as i64, cap as i64) } != 0 {
            return Err(errno());
        }
        let map_len = delta + cap;
        let map = unsafe {
            libc::mmap(
                core::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                map_off as i64,
            )
        };
        if map == libc::MAP_FAILED {
            let e = errno();
            // Give the allocated bytes back.
            unsafe { libc::ftruncate(fd, file_start as i64) };
            return Err(e);
        }
        let w = Window {
            pid,
            pending_body: None,
            fd,
            map: map.cast(),
            map_len,
            delta,
            file_start,
            cap,
            used: 0,
            pending: 0,
        };
        // Unused bytes read as empty lines.
        w.bytes(0, cap).fill(b'\n');
        Ok(w)
    }

    /// The window's bytes `[from, to)`.
    #[allow(clippy::mut_from_ref)]
    fn bytes(&self, from: usize, to: usize) -> &mut [u8] {
        if self.map.is_null() {
            return &mut [];
        }
        let to = to.min(self.cap);
        let from = from.min(to);
        // SAFETY: inside the mapping, which lives as long as `self`.
        unsafe { core::slice::from_raw_parts_mut(self.map.add(self.delta + from), to - from) }
    }

    /// Appends a complete event line (the line of the search in progress,
    /// if any, is overwritten: redraw it with [`Window::set_pending`]).
    /// `Err(errno)` when it does not fit and no fresh window could be made.
    pub fn append(&mut self, line: &[u8]) -> Result<(), i32> {
        if self.used + line.len() > self.cap {
            // Full: cut the file to what is in, start a new window at its end.
            let need = line.len() + self.pending;
            let (fd, pid) = (self.fd, self.pid);
            let body = self.pending_body.take();
            self.clear_pending();
            let old = core::mem::replace(
                self,
                Window {
                    pid,
                    pending_body: None,
                    fd,
                    map: core::ptr::null_mut(),
                    map_len: 0,
                    delta: 0,
                    file_start: 0,
                    cap: 0,
                    used: 0,
                    pending: 0,
                },
            );
            old.finish();
            *self = Window::new(fd, pid, need)?;
            self.pending_body = body;
        }
        let end = self.used + line.len();
        self.bytes(self.used, end).copy_from_slice(line);
        self.pending = self.pending.saturating_sub(line.len());
        self.used = end;
        Ok(())
    }

    /// Draws `line`, the search in progress as the event it becomes if the
    /// process ends during it, after the complete events.
    pub fn set_pending(&mut self, line: &[u8]) {
        if self.used + line.len() > self.cap {
            return; // does not fit: the next append opens more room
        }
        let old_end = self.used + self.pending;
        let end = self.used + line.len();
        self.bytes(self.used, end).copy_from_slice(line);
        if old_end > end {
            self.bytes(end, old_end).fill(b'\n');
        }
        self.pending = line.len();
    }

    /// The search in progress ended (its outcome is written as an event).
    pub fn clear_pending(&mut self) {
        let (from, to) = (self.used, self.used + self.pending);
        self.bytes(from, to).fill(b'\n');
        self.pending = 0;
    }

    /// Unmaps the window and cuts the file after the complete events.
    fn finish(self) {
        if self.map.is_null() {
            return;
        }
        // SAFETY: our mapping and descriptor; the mapping is gone before
        // the file shrinks under it.
        unsafe {
            libc::munmap(self.map.cast(), self.map_len);
            libc::ftruncate(self.fd, (self.file_start + self.used as u64) as i64);
        }
    }
}
