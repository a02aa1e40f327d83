//! The per-process trace file: configuration, the header line, and the
//! one-`write(2)`-per-event writer.
//!
//! Crash safety comes from the design, not from flushing: each event is
//! formatted completely in memory and handed to the kernel with a single
//! `write` on an `O_APPEND` descriptor. Once that returns, the line survives
//! `abort()`, `_exit()`, a segfault or SIGKILL of the process. There is no
//! buffer, no thread and no signal handler. The one exception is the
//! start-up, while ld.so maps the program's libraries: events then go into
//! a shared mapping of the file's end, with the search in progress drawn
//! after them, so that a start-up failure (ld.so's `_exit(127)`) is on disk
//! too (`startup.rs`).
//!
//! This module runs in the audit namespace, which has its own libc, malloc
//! and errno: allocating here never touches the traced program's heap.

use crate::lock::ForkSafeLock;
use cudnn_trace_format::{basename, envvar, ev, json::Line, HEADER_ENV, SCHEMA_VERSION};
use std::ffi::{CStr, CString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// What the launcher (or the user) asked for, read once from the environment.
pub struct Config {
    pub dir: Vec<u8>,
    /// Full records for every library, not only the CUDA family.
    pub all: bool,
    /// LD_PRELOAD entries, to tell preloads from other loads.
    pub preloads: Vec<Vec<u8>>,
    /// LD_PRELOAD names the preload helper, so the `dlopen` result hook runs.
    pub preload_role: bool,
    /// `CUDNN_TRACE_SELF_TEST=panic` (`envvar::SELF_TEST`).
    pub self_test_panic: bool,
}

static CONFIG: OnceLock<Option<Config>> = OnceLock::new();

/// The configuration, or `None` when tracing is off in this process.
pub fn config() -> Option<&'static Config> {
    CONFIG.get_or_init(read_config).as_ref()
}

fn env_bytes(name: &str) -> Option<Vec<u8>> {
    std::env::var_os(name).map(|v| v.as_bytes().to_vec())
}

fn read_config() -> Option<Config> {
    if env_bytes(envvar::ENABLE).as_deref() == Some(b"0") || crate::say::secure_execution() {
        return None;
    }
    let dir = absolute(env_bytes(envvar::OUT_DIR).filter(|d| !d.is_empty())?);
    let all = env_bytes(envvar::MODE).as_deref() == Some(b"all");
    let preloads: Vec<Vec<u8>> = env_bytes("LD_PRELOAD")
        .map(|p| {
            p.split(|&c| c == b':' || c == b' ')
                .filter(|s| !s.is_empty())
                .map(<[u8]>::to_vec)
                .collect()
        })
        .unwrap_or_default();
    // The preload helper is a file of its own (`libcdtrace_preload.so`),
    // installed next to this library.
    let preload_role = preloads
        .iter()
        .any(|p| basename(p) == cdtrace_abi::bridge::PRELOAD_FILE.as_bytes());
    Some(Config {
        dir,
        all,
        preloads,
        preload_role,
        self_test_panic: env_bytes(envvar::SELF_TEST).as_deref() == Some(b"panic"),
    })
}

/// `dir` made absolute with the working directory the process started in:
/// a process that changes directory (and its forked children, which open
/// files of their own) keeps writing where it started to. A program
/// started by `exec` in another directory reads the variable afresh: the
/// launcher always passes an absolute directory.
fn absolute(dir: Vec<u8>) -> Vec<u8> {
    if dir.starts_with(b"/") {
        return dir;
    }
    match std::env::current_dir() {
        Ok(cwd) => {
            let mut abs = cwd.into_os_string().into_vec();
            if !abs.ends_with(b"/") {
                abs.push(b'/');
            }
            abs.extend_from_slice(&dir);
            abs
        }
        Err(_) => dir,
    }
}

/// Descriptor of this process's trace file; -1 until opened.
static FD: AtomicI32 = AtomicI32::new(-1);
/// The pid `FD` belongs to; a mismatch means we are in a forked child.
static FD_PID: AtomicU32 = AtomicU32::new(0);
/// Pid of the thread's process that is (re)opening the file; 0 when none.
static OPENING: AtomicU32 = AtomicU32::new(0);
static SEQ: AtomicU64 = AtomicU64::new(0);
/// Set once opening failed in this process: report it once, then stay quiet.
static BROKEN_PID: AtomicU32 = AtomicU32::new(0);
static PPID: AtomicU32 = AtomicU32::new(0);

/// The process's id, cached ([`crate::ids`]: no system call).
pub fn pid() -> u32 {
    crate::ids::pid()
}

/// The thread's id, cached ([`crate::ids`]: no system call).
pub fn tid() -> u32 {
    crate::ids::tid()
}

pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid pointer to a timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The trace file currently open: descriptor and identity. The program may
/// close any descriptor (daemons, `closefrom`, a child tidying up after
/// fork) and get the same number back for a file of its own, so the shim
/// checks the identity before writing and never closes a descriptor it is
/// not sure is still its own.
static FD_DEV: AtomicU64 = AtomicU64::new(0);
static FD_INO: AtomicU64 = AtomicU64::new(0);
/// The file's path, to reopen it if the program took the descriptor away.
static FD_PATH: ForkSafeLock<Vec<u8>> = ForkSafeLock::new(Vec::new());

fn identity(fd: i32) -> Option<(u64, u64)> {
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on any descriptor number is harmless.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

fn is_ours(fd: i32) -> bool {
    fd >= 0
        && identity(fd)
            == Some((
                FD_DEV.load(Ordering::Acquire),
                FD_INO.load(Ordering::Acquire),
            ))
}

/// Moves a fresh descriptor far above the ones the program uses, so that
/// the program's own `open` calls return the numbers they return untraced
/// (and a closed stdin/stdout/stderr is never filled by the trace).
fn move_high(fd: i32) -> i32 {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: plain libc calls on a descriptor we own.
    unsafe {
        let limit = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) == 0 {
            rl.rlim_cur.min(1 << 20) as i32
        } else {
            1024
        };
        // Near the top of the first 1024 (the historical select() limit that
        // many programs stay under), not of a large RLIMIT_NOFILE: the kernel
        // grows a process's descriptor table up to the highest number used.
        let cap = limit.min(1024);
        let floor = (cap - cap / 8).max(10);
        let high = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, floor);
        if high < 0 {
            return fd;
        }
        libc::close(fd);
        high
    }
}

/// Publishes `fd` as this process's trace file.
fn publish(fd: i32, me: u32) {
    let (dev, ino) = identity(fd).unwrap_or((0, 0));
    FD_DEV.store(dev, Ordering::Release);
    FD_INO.store(ino, Ordering::Release);
    FD.store(fd, Ordering::Release);
    FD_PID.store(me, Ordering::Release);
}

/// Opens (or, after a fork, re-opens) the trace file and writes the header.
/// Returns the descriptor to write to, or None when tracing is off/broken.
fn fd(me: u32) -> Option<i32> {
    if FD_PID.load(Ordering::Acquire) == me {
        let fd = FD.load(Ordering::Acquire);
        return (fd >= 0).then_some(fd);
    }
    let cfg = config()?;
    if BROKEN_PID.load(Ordering::Relaxed) == me {
        return None;
    }
    // Only one thread opens; the others wait for it. The flag holds the
    // opener's pid, so a child forked while a parent thread was opening
    // (that thread does not exist in the child) takes it over.
    loop {
        match OPENING.compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => break,
            Err(h) if h != me => {
                if OPENING
                    .compare_exchange(h, me, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
                {
                    break;
                }
            }
            Err(_) => {
                if FD_PID.load(Ordering::Acquire) == me {
                    let fd = FD.load(Ordering::Acquire);
                    return (fd >= 0).then_some(fd);
                }
                std::thread::yield_now();
            }
        }
    }
    let forked = FD_PID.load(Ordering::Relaxed) != 0;
    let old = FD.swap(-1, Ordering::AcqRel);
    if is_ours(old) {
        // Inherited from the parent across fork: the parent keeps its own.
        // SAFETY: the descriptor still refers to our trace file.
        unsafe { libc::close(old) };
    }
    SEQ.store(0, Ordering::Relaxed);
    // SAFETY: getppid has no preconditions.
    PPID.store(unsafe { libc::getppid() } as u32, Ordering::Relaxed);
    let out = start_file(cfg, me, if forked { "fork" } else { "exec" }, None);
    OPENING.store(0, Ordering::Release);
    out
}

/// Creates a new trace file for this process, writes its header (and
/// `note`, if given, right after it) and publishes it. None when no file
/// can be made there (said once per process tree; the program runs on).
fn start_file(cfg: &Config, me: u32, origin: &str, note: Option<String>) -> Option<i32> {
    match open_trace_file(&cfg.dir, me) {
        Ok((fd, path)) => {
            let fd = move_high(fd);
            FD_PATH.with(|p| *p = path);
            let header = header(cfg, origin);
            // Before publishing: no other thread can see the file before
            // its header is written. A descriptor kept for the parent's
            // file is still recognised by the old identity here.
            crate::sink::start(fd, &header, header_mark_offset(), is_ours);
            publish(fd, me);
            if let Some(n) = note {
                self::note("warning", &n);
            }
            Some(fd)
        }
        Err(e) => {
            BROKEN_PID.store(me, Ordering::Relaxed);
            FD.store(-1, Ordering::Release);
            FD_PID.store(me, Ordering::Release);
            // One clear message per process tree; the program runs on.
            if crate::say::top_of_tree() {
                crate::say::line(&format!(
                    "cannot create trace files in {} ({}): this process and its children are \
                     not traced; they run on",
                    crate::say::esc(&cfg.dir),
                    crate::say::errno_text(e)
                ));
            }
            None
        }
    }
}

/// The descriptor to write the next event to: the published one if it is
/// still our file, else our file reopened (appending) on a new descriptor.
///
/// Reopening goes by path, which anyone who can write the directory may
/// have changed: the path is opened with `O_NOFOLLOW` (never through a
/// symlink) and the file used only if it is the very file this process
/// created (device and inode). Otherwise, or when it is gone, the trace
/// goes on in a new file of this process (`origin: "reopen"`), created
/// exclusively like the first, whose first event says why. Nothing is ever
/// written into a file the shim did not create.
fn checked_fd(me: u32) -> Option<i32> {
    let fd = fd(me)?;
    if is_ours(fd) {
        return Some(fd);
    }
    // The program closed our descriptor (and may have reused the number):
    // leave that number alone. One thread reopens; the others find its
    // descriptor published when they get the lock.
    REOPENING.with(|_| {
        let fd = FD.load(Ordering::Acquire);
        if is_ours(fd) {
            return Some(fd);
        }
        reopen(me)
    })
}

/// Serialises [`reopen`].
static REOPENING: ForkSafeLock<()> = ForkSafeLock::new(());

fn reopen(me: u32) -> Option<i32> {
    let new = open_own_file(libc::O_RDWR | libc::O_APPEND);
    if new >= 0 {
        publish(new, me);
        return Some(new);
    }
    let old = FD_PATH.with(|p| p.clone());
    let cfg = config()?;
    let why = format!(
        "the trace file {} was replaced by another file or a symlink (or removed) after the \
         program closed the shim's descriptor: it is left alone, and this process's trace goes \
         on in this file",
        crate::say::esc(&old)
    );
    start_file(cfg, me, "reopen", Some(why))
}

/// Whether `fd` is open on this process's trace file (device and inode).
pub fn is_own_file(fd: i32) -> bool {
    is_ours(fd)
}

/// This process's trace file opened again by its path, with `flags` (plus
/// `O_NOFOLLOW | O_CLOEXEC`), moved high: only if what is at the path is
/// the very file this process created. -1 otherwise.
pub fn open_own_file(flags: i32) -> i32 {
    let Ok(c) = CString::new(FD_PATH.with(|p| p.clone())) else {
        return -1;
    };
    // SAFETY: valid C string; no O_CREAT.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_NOFOLLOW | libc::O_CLOEXEC) };
    if fd < 0 {
        return -1;
    }
    if !is_ours(fd) {
        // SAFETY: the descriptor we just opened.
        unsafe { libc::close(fd) };
        return -1;
    }
    move_high(fd)
}

fn open_trace_file(dir: &[u8], pid: u32) -> Result<(i32, Vec<u8>), i32> {
    for n in 0..10_000u32 {
        let mut path = dir.to_vec();
        path.extend_from_slice(b"/");
        path.extend_from_slice(pid.to_string().as_bytes());
        if n > 0 {
            path.push(b'.');
            path.extend_from_slice(n.to_string().as_bytes());
        }
        path.extend_from_slice(b".jsonl");
        let c = CString::new(path.clone()).map_err(|_| libc::EINVAL)?;
        // SAFETY: valid C string; flags are plain ints.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                // Read-write: the start-up window maps it shared (startup.rs).
                // O_EXCL never opens what is there, a symlink included. 0600:
                // argv, environment and paths are for the owner alone (a
                // process that dropped privileges owns its own files).
                libc::O_RDWR
                    | libc::O_CREAT
                    | libc::O_EXCL
                    | libc::O_NOFOLLOW
                    | libc::O_APPEND
                    | libc::O_CLOEXEC,
                0o600,
            )
        };
        if fd >= 0 {
            return Ok((fd, path));
        }
        let err = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
        if err != libc::EEXIST {
            return Err(err);
        }
    }
    Err(libc::EEXIST)
}

fn read_link(path: &str) -> Option<Vec<u8>> {
    std::fs::read_link(path)
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
}

/// The header starts with these bytes, then the `lost` value
/// ([`crate::sink`] rewrites it in place).
const HEADER_START: &[u8] = b"{\"ev\":\"process\",\"lost\":";

/// Offset of the `lost` value in the file (the header is its first line).
pub fn header_mark_offset() -> usize {
    HEADER_START.len()
}

/// What `calls` says in the header: whether calls are recorded and
/// libraries asked for their versions in this process, and if not, why.
fn calls_state() -> &'static str {
    crate::calls::off_reason().unwrap_or("on")
}

fn header(cfg: &Config, origin: &str) -> Vec<u8> {
    let exe = read_link("/proc/self/exe");
    let cmdline = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let argv: Vec<&[u8]> = cmdline
        .split(|&c| c == 0)
        .filter(|s| !s.is_empty())
        .collect();
    let mut host = [0u8; 256];
    // SAFETY: buffer and its length.
    let host = if unsafe { libc::gethostname(host.as_mut_ptr().cast(), host.len()) } == 0 {
        let end = host.iter().position(|&c| c == 0).unwrap_or(host.len());
        Some(host[..end].to_vec())
    } else {
        None
    };
    let cwd = std::env::current_dir()
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec());
    // SAFETY: glibc returns a static string.
    let glibc = unsafe { CStr::from_ptr(crate::sys::gnu_get_libc_version()) }.to_bytes();
    let wall_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let mut buf = Vec::with_capacity(1024);
    let mut l = Line::new(&mut buf);
    l.str("ev", ev::PROCESS)
        .padded_u64("lost", 0, crate::sink::LOST_WIDTH)
        .padded_u64("lost_errno", 0, crate::sink::ERRNO_WIDTH)
        .u64("v", SCHEMA_VERSION as u64)
        .str("shim", env!("CARGO_PKG_VERSION"))
        .u64("pid", pid() as u64)
        .u64("ppid", PPID.load(Ordering::Relaxed) as u64)
        .u64("tid", tid() as u64)
        .u64("t_ns", monotonic_ns())
        .u64("wall_ms", wall_ms)
        .opt_bytes("exe", exe.as_deref())
        .str_array("argv", argv.iter().copied())
        .opt_bytes("hostname", host.as_deref())
        .opt_bytes("cwd", cwd.as_deref())
        .nested("env", |n| {
            n.object(|o| {
                for name in HEADER_ENV {
                    // The value ld.so searches: a forked child's
                    // environment may have changed since (environ.rs).
                    let v = if *name == "LD_LIBRARY_PATH" {
                        crate::environ::at_start().map(<[u8]>::to_vec)
                    } else {
                        env_bytes(name)
                    };
                    if let Some(v) = v {
                        o.bytes(name, &v);
                    }
                }
            })
        })
        .str("mode", if cfg.all { "all" } else { "cuda" })
        .str("origin", origin)
        .bytes("glibc", glibc)
        .str("calls", calls_state())
        .bool("preload", cfg.preload_role);
    if let Some(p) = crate::pin::settings() {
        l.nested("pin", |n| {
            n.object(|o| {
                o.bytes("dir", &p.dir).str("mode", p.mode());
            })
        });
    }
    l.finish();
    debug_assert!(buf.starts_with(HEADER_START));
    buf
}

/// Makes sure the trace file exists (and its header is written).
pub fn ensure_open() {
    let _ = fd(pid());
}

/// The process is exiting: what the disk did not take is said if it can be.
pub fn exiting() {
    if let Some(fd) = checked_fd(pid()) {
        crate::sink::at_exit(fd);
    }
}

/// Takes the next `seq`.
pub fn next_seq() -> u64 {
    SEQ.fetch_add(1, Ordering::Relaxed) + 1
}

/// The `note` that says `unsaid` events (of `lost` in all) could not be
/// written, and why: written ahead of the first event the file takes again
/// ([`crate::sink`]).
pub fn loss_note(seq: u64, lost: u64, unsaid: u64, errno: i32) -> Vec<u8> {
    let file = FD_PATH.with(|p| p.clone());
    render(ev::NOTE, seq, pid(), tid(), |l| {
        l.str("level", "error")
            .str(
                "msg",
                &format!(
                    "{unsaid} events could not be written to {} ({}) and are lost ({lost} in all \
                     in this file)",
                    crate::say::esc(&file),
                    crate::say::errno_text(errno)
                ),
            )
            .u64("lost", unsaid)
            .i64("errno", errno as i64);
    })
}

/// Writes one event. `build` adds the event-specific fields after the common
/// ones. Returns the event's `seq` (0 when nothing was written).
pub fn emit(kind: &str, build: impl FnOnce(&mut Line<'_>)) -> u64 {
    // SAFETY: a window exists only during the start-up, on its one thread.
    if let Some(w) = unsafe { crate::startup::current() } {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        let line = render(kind, seq, w.pid, w.pid, build);
        let Err(e) = w.append(&line) else {
            draw_pending(w);
            return seq;
        };
        // No room could be made: on with write(2).
        crate::startup::close();
        if let Some(fd) = checked_fd(pid()) {
            crate::sink::write(fd, &line);
            window_lost(e);
        }
        return seq;
    }
    let me = pid();
    let Some(fd) = checked_fd(me) else { return 0 };
    let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
    let buf = render(kind, seq, me, tid(), build);
    crate::sink::write(fd, &buf);
    seq
}

/// One event line: the common fields, then `build`'s.
fn render(kind: &str, seq: u64, pid: u32, tid: u32, build: impl FnOnce(&mut Line<'_>)) -> Vec<u8> {
    let mut buf = Vec::with_capacity(512);
    let mut l = Line::new(&mut buf);
    l.str("ev", kind)
        .u64("seq", seq)
        .u64("t_ns", monotonic_ns())
        .u64("pid", pid as u64)
        .u64("ppid", PPID.load(Ordering::Relaxed) as u64)
        .u64("tid", tid as u64);
    build(&mut l);
    l.finish();
    buf
}

/// Start-up: makes sure later events go into the start-up window
/// (`startup.rs`), opening it if needed. False when there is none.
pub fn startup_window() -> bool {
    if !crate::startup::under_way() {
        return false;
    }
    let me = pid();
    let Some(fd) = checked_fd(me) else {
        return false;
    };
    match crate::startup::open(fd, me, 0) {
        Ok(open) => open,
        Err(e) => {
            window_lost(e);
            false
        }
    }
}

/// The start-up window could not be made (`errno`): the start-up's events
/// are written one by one, but a library missing at start-up would not be
/// recorded. Said in the trace; a full disk also in the header.
fn window_lost(errno: i32) {
    if matches!(errno, libc::ENOSPC | libc::EDQUOT) {
        crate::sink::trouble(errno);
    }
    note(
        if errno == libc::ENOSPC || errno == libc::EDQUOT {
            "error"
        } else {
            "warning"
        },
        &format!(
            "no start-up window could be allocated in the trace file ({}): a library missing              at start-up would not be recorded",
            crate::say::errno_text(errno)
        ),
    );
}

/// Start-up: the search in progress, as the event (`kind`, fields from
/// `build`) it becomes if the process ends during it. It takes the next
/// `seq` and is redrawn after every event, until [`startup_settled`].
pub fn startup_pending(kind: &'static str, build: impl FnOnce(&mut Line<'_>)) {
    // SAFETY: start-up only, one thread.
    let Some(w) = (unsafe { crate::startup::current() }) else {
        return;
    };
    let mut body = Vec::with_capacity(512);
    build(&mut Line::fields(&mut body));
    w.pending_body = Some((kind, body));
    draw_pending(w);
}

/// Start-up: the search in progress ended; its outcome is an event of its own.
pub fn startup_settled() {
    // SAFETY: start-up only, one thread.
    if let Some(w) = unsafe { crate::startup::current() } {
        w.pending_body = None;
        w.clear_pending();
    }
}

/// The start-up objects are all mapped: events are written one by one again.
pub fn startup_over() {
    crate::startup::close();
}

fn draw_pending(w: &mut crate::startup::Window) {
    let Some((kind, body)) = w.pending_body.take() else {
        return;
    };
    let seq = SEQ.load(Ordering::Relaxed) + 1;
    let line = render(kind, seq, w.pid, w.pid, |l| {
        l.raw(&body);
    });
    w.set_pending(&line);
    w.pending_body = Some((kind, body));
}

/// A `note` event (the shim's own message).
pub fn note(level: &str, msg: &str) {
    emit(ev::NOTE, |l| {
        l.str("level", level).str("msg", msg);
    });
}
