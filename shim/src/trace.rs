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
use std::ffi::{CStr, CString, OsStr};
use std::os::unix::ffi::OsStrExt;
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
    if env_bytes(envvar::ENABLE).as_deref() == Some(b"0") {
        return None;
    }
    let dir = env_bytes(envvar::OUT_DIR).filter(|d| !d.is_empty())?;
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
    })
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

pub fn pid() -> u32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() as u32 }
}

pub fn tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::syscall(libc::SYS_gettid) as u32 }
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
    let result = open_trace_file(&cfg.dir, me);
    let out = match result {
        Ok((fd, path)) => {
            let fd = move_high(fd);
            FD_PATH.with(|p| *p = path);
            // The header goes first: no other thread can see the file
            // before it is published.
            write_header(fd, cfg, if forked { "fork" } else { "exec" });
            publish(fd, me);
            Some(fd)
        }
        Err(err) => {
            BROKEN_PID.store(me, Ordering::Relaxed);
            FD_PID.store(me, Ordering::Release);
            // One clear message; the program itself runs on untouched.
            let msg = format!(
                "cudnn-trace: cannot write a trace file in {:?}: {err}; process {me} is not traced\n",
                OsStr::from_bytes(&cfg.dir)
            );
            // SAFETY: writing a buffer we own to stderr.
            unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
            None
        }
    };
    OPENING.store(0, Ordering::Release);
    out
}

/// The descriptor to write the next event to: the published one if it is
/// still our file, else the file reopened (appending) on a new descriptor.
fn checked_fd(me: u32) -> Option<i32> {
    let fd = fd(me)?;
    if is_ours(fd) {
        return Some(fd);
    }
    // The program closed our descriptor (and may have reused the number):
    // leave that number alone and reopen our file.
    let path = FD_PATH.with(|p| p.clone());
    let c = CString::new(path).ok()?;
    // SAFETY: valid C string.
    let new = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_APPEND | libc::O_CLOEXEC) };
    if new < 0 {
        return None;
    }
    let new = move_high(new);
    publish(new, me);
    Some(new)
}

fn open_trace_file(dir: &[u8], pid: u32) -> std::io::Result<(i32, Vec<u8>)> {
    for n in 0..10_000u32 {
        let mut path = dir.to_vec();
        path.extend_from_slice(b"/");
        path.extend_from_slice(pid.to_string().as_bytes());
        if n > 0 {
            path.push(b'.');
            path.extend_from_slice(n.to_string().as_bytes());
        }
        path.extend_from_slice(b".jsonl");
        let c = CString::new(path.clone()).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        // SAFETY: valid C string; flags are plain ints.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                // Read-write: the start-up window maps it shared (startup.rs).
                libc::O_RDWR | libc::O_CREAT | libc::O_EXCL | libc::O_APPEND | libc::O_CLOEXEC,
                0o644,
            )
        };
        if fd >= 0 {
            return Ok((fd, path));
        }
        let err = std::io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EEXIST) {
            return Err(err);
        }
    }
    Err(std::io::ErrorKind::AlreadyExists.into())
}

fn read_link(path: &str) -> Option<Vec<u8>> {
    std::fs::read_link(path)
        .ok()
        .map(|p| p.as_os_str().as_bytes().to_vec())
}

fn write_header(fd: i32, cfg: &Config, origin: &str) {
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
                    if let Some(v) = env_bytes(name) {
                        o.bytes(name, &v);
                    }
                }
            })
        })
        .str("mode", if cfg.all { "all" } else { "cuda" })
        .str("origin", origin)
        .bytes("glibc", glibc)
        .bool("preload", cfg.preload_role);
    if let Some(p) = crate::pin::settings() {
        l.nested("pin", |n| {
            n.object(|o| {
                o.bytes("dir", &p.dir).str("mode", p.mode());
            })
        });
    }
    l.finish();
    write_all(fd, &buf);
}

fn write_all(fd: i32, buf: &[u8]) {
    loop {
        // SAFETY: writing a buffer we own.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // A short write to a regular O_APPEND file only happens on a full
            // disk; a retry would tear the line anyway.
            return;
        }
    }
}

/// Makes sure the trace file exists (and its header is written).
pub fn ensure_open() {
    let _ = fd(pid());
}

/// Writes one event. `build` adds the event-specific fields after the common
/// ones. Returns the event's `seq` (0 when nothing was written).
pub fn emit(kind: &str, build: impl FnOnce(&mut Line<'_>)) -> u64 {
    // SAFETY: a window exists only during the start-up, on its one thread.
    if let Some(w) = unsafe { crate::startup::current() } {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
        let line = render(kind, seq, w.pid, w.pid, build);
        if w.append(&line) {
            draw_pending(w);
            return seq;
        }
        // No room could be made: on with write(2).
        crate::startup::close();
        if let Some(fd) = checked_fd(pid()) {
            write_all(fd, &line);
        }
        return seq;
    }
    let me = pid();
    let Some(fd) = checked_fd(me) else { return 0 };
    let seq = SEQ.fetch_add(1, Ordering::Relaxed) + 1;
    let buf = render(kind, seq, me, tid(), build);
    write_all(fd, &buf);
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
    match checked_fd(me) {
        Some(fd) => crate::startup::open(fd, me, 0),
        None => false,
    }
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
