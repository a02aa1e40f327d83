//! Reading the versions inside a cuDNN copy, in a separate process.
//!
//! The version that matters is the one the libraries report, not the one in
//! their names (pip wheels have only `.so.9`; a copied file keeps any name).
//! Reading it means loading the library, and loading cuDNN can end the
//! process that does it: the dispatcher `libcudnn.so.N` aborts on its first
//! call when a sub-library is missing \[E6\], and a library constructor
//! may do anything. So the launcher runs its own executable with
//! the hidden subcommand `__probe-cudnn DIR MAJOR` ([`child_main`]), which
//! never loads the dispatcher:
//!
//! * it `dlopen`s the core library by absolute path (`libcudnn_graph.so.9`,
//!   `libcudnn_ops_infer.so.8`: the one that implements the version queries,
//!   \[E9\], `reference` in data/cudnn-layout.toml) and calls
//!   `cudnnGetVersion`, `cudnnGetCudartVersion` and
//!   `cudnnGetMaxDeviceVersion`;
//! * then it `dlopen`s each sub-library that exports a `*VersionCheck`, by
//!   absolute path, in dependency order, and calls it: the sub-library
//!   compares itself with the core library it got bound to (the one already
//!   loaded, by SONAME) and returns non-zero when their versions differ.
//!
//! The child prints one JSON document ([`Probe`]) on stdout; [`run`] parses
//! it. The child gets an environment without `LD_*` and `CUDNN_TRACE*`
//! variables (no preloads, no other cuDNN through `LD_LIBRARY_PATH`, no
//! tracer), its own process group, and 20 seconds.
//!
//! [`run`] works on any directory, not only a pin directory: it is also the
//! way to report the versions of cuDNN copies found on disk.
//!
//! The report asks single files the same way ([`ask_with`], the child's
//! `--ask` form): the versions the shim does not ask inside the traced
//! program because asking has side effects there (a cuDNN sub-library's
//! `*VersionCheck` loads the driver and calls `cuInit`; `cuDriverGetVersion`
//! reads driver state; an 11.x runtime initialises), or that nobody asked.
//! Each [`Ask`] names one file by absolute path and what to call in it;
//! the side effects happen in the probe process, never in the program.
//! Which files, in which groups, and the cache: `machine::versions`.

use crate::model::io_msg;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString, OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The hidden subcommand that runs [`child_main`].
pub const SUBCOMMAND: &str = "__probe-cudnn";

/// How long the child may take. A cuDNN install is up to about 1 GB of
/// libraries (the unpacked pip wheels measure 0.4–1.1 GB \[E7\]), which a
/// cold disk may take seconds to map,
/// but not tens of seconds; a hung library constructor must not hang the
/// launcher.
pub const TIMEOUT: Duration = Duration::from_secs(20);

/// Most bytes read from the child's stdout/stderr.
const OUTPUT_LIMIT: u64 = 1 << 20;

/// The child's `--ask` form: `__probe-cudnn --ask JSON`, JSON a list of
/// [`Ask`]; it prints the list of [`Answer`]s, one per ask, in order.
pub const ASK_FLAG: &str = "--ask";

/// Most asks in one probe process.
pub const MAX_ASKS: usize = 64;

/// One question to one library file, asked in the probe process. The
/// asks of one process run in order, in one address space: a cuDNN
/// sub-library's check binds to the core library loaded before it (by
/// SONAME), so a group lists its core library first.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "ask", rename_all = "kebab-case")]
pub enum Ask {
    /// A cuDNN core library (`libcudnn_graph.so.9`, `libcudnn_ops_infer.so.8`):
    /// `cudnnGetVersion`, `cudnnGetCudartVersion`, `cudnnGetMaxDeviceVersion`.
    CudnnCore { path: String },
    /// A cuDNN sub-library's `*VersionCheck` (`function`), against the core
    /// library loaded before it.
    CudnnCheck { path: String, function: String },
    /// A CUDA runtime: `cudaRuntimeGetVersion`.
    Runtime { path: String },
    /// The driver: `cuDriverGetVersion`.
    Driver { path: String },
}

impl Ask {
    pub fn path(&self) -> &str {
        match self {
            Ask::CudnnCore { path }
            | Ask::CudnnCheck { path, .. }
            | Ask::Runtime { path }
            | Ask::Driver { path } => path,
        }
    }
}

/// What one [`Ask`] got. Only the fields of its kind are set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Answer {
    /// Why nothing could be asked (`dlerror()`, a missing function).
    pub error: Option<String>,
    /// `cudnnGetVersion()` (91900), or the version `cudaRuntimeGetVersion` /
    /// `cuDriverGetVersion` wrote (13000).
    pub version: Option<i64>,
    /// `cudnnGetCudartVersion()`.
    pub cudart: Option<i64>,
    /// `cudnnGetMaxDeviceVersion()`.
    pub max_device: Option<i64>,
    /// What a `*VersionCheck`, `cudaRuntimeGetVersion` or
    /// `cuDriverGetVersion` returned (0: success; 34: a stub driver).
    pub status: Option<i64>,
}

/// What the child read (the JSON document it prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// The directory as the child got it.
    pub dir: String,
    pub major: u32,
    pub core: Core,
    /// One per sub-library with a `*VersionCheck`, in load order; empty
    /// when the core library did not load.
    pub checks: Vec<Check>,
}

/// The core library and its version queries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Core {
    /// File name in the directory (`libcudnn_graph.so.9`).
    pub file: String,
    /// Why it did not load (`dlerror()`); None when it loaded.
    pub error: Option<String>,
    /// `cudnnGetVersion()` (91900 = 9.19.0, 8907 = 8.9.7).
    pub version: Option<u64>,
    /// `cudnnGetCudartVersion()` (13000 = CUDA 13.0).
    pub cudart: Option<u64>,
    /// `cudnnGetMaxDeviceVersion()` (1210 = SM 12.1).
    pub max_device: Option<u64>,
}

/// One sub-library's cross-check against the core library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Check {
    /// File name in the directory (`libcudnn_ops.so.9`).
    pub file: String,
    /// `cudnnOpsVersionCheck`.
    pub function: String,
    /// Why it could not be called (load failure, missing symbol).
    pub error: Option<String>,
    /// What it returned: 0 = same version as the core library.
    pub status: Option<i64>,
}

/// Stem of the library that implements the version queries.
pub fn core_stem(major: u32) -> Option<&'static str> {
    match major {
        9 => Some("libcudnn_graph"),
        8 => Some("libcudnn_ops_infer"),
        _ => None,
    }
}

/// Sub-libraries with a version cross-check: (stem, function), in an order
/// where each one's cuDNN dependencies (DT_NEEDED \[E7\], data/cudnn-layout.toml)
/// are already loaded, so that they bind to this directory's copies by SONAME
/// even without RUNPATH (NVIDIA's v8 tarballs have none on sub-libraries
/// \[R45\]).
pub fn version_checks(major: u32) -> &'static [(&'static str, &'static str)] {
    match major {
        9 => &[
            ("libcudnn_ops", "cudnnOpsVersionCheck"),
            ("libcudnn_cnn", "cudnnCnnVersionCheck"),
            ("libcudnn_adv", "cudnnAdvVersionCheck"),
        ],
        8 => &[
            ("libcudnn_ops_train", "cudnnOpsTrainVersionCheck"),
            ("libcudnn_cnn_infer", "cudnnCnnInferVersionCheck"),
            ("libcudnn_cnn_train", "cudnnCnnTrainVersionCheck"),
            ("libcudnn_adv_infer", "cudnnAdvInferVersionCheck"),
            ("libcudnn_adv_train", "cudnnAdvTrainVersionCheck"),
        ],
        _ => &[],
    }
}

/// The name of a non-zero `*VersionCheck` status (\[R4\], \[R5\];
/// data/cudnn-status.toml).
pub fn status_name(major: u32, status: i64) -> Option<&'static str> {
    match (major >= 9, status) {
        (true, 1002) => Some("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"),
        (true, 1001) => Some("CUDNN_STATUS_NOT_INITIALIZED"),
        (false, 14) => Some("CUDNN_STATUS_VERSION_MISMATCH"),
        (false, 1) => Some("CUDNN_STATUS_NOT_INITIALIZED"),
        _ => None,
    }
}

// ---------------------------------------------------------------------------
// Parent side

/// Reads the versions of the cuDNN `major` copy in `dir` (absolute) in a
/// child process of this executable. Err: one line saying why nothing could
/// be read (the child could not start, crashed, hung, printed no result).
pub fn run(dir: &Path, major: u32) -> Result<Probe, String> {
    let exe = std::env::current_exe()
        .map_err(|e| format!("cannot find this program's executable ({})", io_msg(&e)))?;
    run_with(&exe, dir, major, TIMEOUT)
}

enum Msg {
    Exit(std::io::Result<std::process::ExitStatus>),
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
}

/// [`run`] with an explicit executable (which must understand
/// [`SUBCOMMAND`]) and time limit.
pub fn run_with(exe: &Path, dir: &Path, major: u32, timeout: Duration) -> Result<Probe, String> {
    let args = [
        dir.as_os_str().to_owned(),
        OsString::from(major.to_string()),
    ];
    let out = run_child(exe, &args, timeout)?;
    serde_json::from_slice::<Probe>(&out.stdout).map_err(|_| out.no_result())
}

/// Asks library files their versions in one child process of `exe`
/// (which must understand [`SUBCOMMAND`]), in order: one [`Answer`] per
/// [`Ask`]. Err: one line saying why nothing could be read.
pub fn ask_with(exe: &Path, asks: &[Ask], timeout: Duration) -> Result<Vec<Answer>, String> {
    let json = serde_json::to_string(asks).map_err(|e| e.to_string())?;
    let out = run_child(
        exe,
        &[OsString::from(ASK_FLAG), OsString::from(json)],
        timeout,
    )?;
    match serde_json::from_slice::<Vec<Answer>>(&out.stdout) {
        Ok(a) if a.len() == asks.len() => Ok(a),
        _ => Err(out.no_result()),
    }
}

/// Whether a variable is passed to the child: only what a program needs to
/// run at all. The loader's variables (a preload or an audit module in the
/// child, or another cuDNN found through LD_LIBRARY_PATH, would falsify the
/// result), the tracer's, and anything a library reads to write somewhere
/// (a driver's or a framework's log file) stay out: the probe's side
/// effects must stay inside it.
fn kept(key: &OsStr) -> bool {
    matches!(
        key.as_bytes(),
        b"PATH" | b"HOME" | b"TMPDIR" | b"LANG" | b"LC_ALL" | b"LC_CTYPE" | b"LC_MESSAGES"
    )
}

/// A child that exited 0: its stdout, and the last line of its stderr.
struct ChildOutput {
    stdout: Vec<u8>,
    last: Option<String>,
    status: std::process::ExitStatus,
}

impl ChildOutput {
    fn no_result(&self) -> String {
        said(
            &self.last,
            format!("the probe process printed no result ({})", self.status),
        )
    }
}

/// `s`, with the child's last message.
fn said(last: &Option<String>, s: String) -> String {
    match last {
        Some(l) => format!("{s}; its last message: {l}"),
        None => s,
    }
}

/// Runs `exe SUBCOMMAND ARGS...` with a clean environment, its own process
/// group and a time limit; Ok when it exited (0 or not: the caller parses
/// what it printed), Err when it could not start, was killed or hung.
fn run_child(exe: &Path, args: &[OsString], timeout: Duration) -> Result<ChildOutput, String> {
    let mut cmd = Command::new(exe);
    cmd.arg(SUBCOMMAND)
        .args(args)
        .env_clear()
        .envs(std::env::vars_os().filter(|(k, _)| kept(k)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group: on timeout the whole group is killed, including
        // anything a library constructor started.
        .process_group(0);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            // Not in the terminal's process group, so Ctrl-C does not reach
            // it: it must go when the launcher goes.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            if libc::getppid() != parent {
                libc::_exit(128 + libc::SIGKILL);
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot start the probe process {}: {}",
            exe.display(),
            io_msg(&e)
        )
    })?;
    let pid = child.id() as libc::pid_t;
    let (tx, rx) = mpsc::channel();
    let read = |r: Option<Box<dyn Read + Send>>, wrap: fn(Vec<u8>) -> Msg| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(r) = r {
                let _ = r.take(OUTPUT_LIMIT).read_to_end(&mut v);
            }
            let _ = tx.send(wrap(v));
        });
    };
    read(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Msg::Stdout,
    );
    read(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Msg::Stderr,
    );
    {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Msg::Exit(child.wait()));
        });
    }
    drop(tx);
    // The three threads report; stop waiting at the deadline (a grandchild
    // holding the pipes open would otherwise keep the readers forever).
    let deadline = Instant::now() + timeout;
    let (mut status, mut out, mut err) = (None, None, None);
    while status.is_none() || out.is_none() || err.is_none() {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Msg::Exit(s)) => status = Some(s),
            Ok(Msg::Stdout(v)) => out = Some(v),
            Ok(Msg::Stderr(v)) => err = Some(v),
            Err(_) => break,
        }
    }
    let Some(status) = status else {
        // SAFETY: kill of the process group we created.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let limit = if timeout.subsec_millis() == 0 {
            format!("{} s", timeout.as_secs())
        } else {
            format!("{} ms", timeout.as_millis())
        };
        return Err(format!("the probe process did not finish within {limit}"));
    };
    let status = status.map_err(|e| format!("waiting for the probe process: {}", io_msg(&e)))?;
    let last = last_line(err.as_deref().unwrap_or_default());
    if let Some(sig) = status.signal() {
        let name = crate::model::signal_name(sig)
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        return Err(said(
            &last,
            format!("the probe process was killed by signal {sig}{name}"),
        ));
    }
    let out = ChildOutput {
        stdout: out.unwrap_or_default(),
        last,
        status,
    };
    if !status.success() {
        return Err(out.no_result());
    }
    Ok(out)
}

/// The last non-empty line of `bytes`, shortened.
fn last_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    let mut s: String = line.chars().take(300).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    Some(s)
}

// ---------------------------------------------------------------------------
// Child side

/// `dlerror()` as text.
fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated string valid until the
    // next dl* call on this thread; it is copied at once.
    let p = unsafe { libc::dlerror() };
    if p.is_null() {
        "unknown error".into()
    } else {
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// `dlopen(path, RTLD_NOW | RTLD_LOCAL)`: every symbol bound now, so that a
/// sub-library that cannot bind to the core library fails here, and nothing
/// added to the global scope where a later library could bind to it.
fn dl_open(path: &Path) -> Result<*mut libc::c_void, String> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| "NUL in path".to_string())?;
    // SAFETY: a valid C string; dlopen has no other preconditions.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if h.is_null() {
        Err(dl_error())
    } else {
        Ok(h)
    }
}

fn dl_sym(h: *mut libc::c_void, name: &str) -> Option<*mut libc::c_void> {
    let c = CString::new(name).ok()?;
    // SAFETY: a handle from dlopen and a valid C string.
    let p = unsafe { libc::dlsym(h, c.as_ptr()) };
    (!p.is_null()).then_some(p)
}

/// Calls `size_t name(void)` from the library `h`.
fn call_size(h: *mut libc::c_void, name: &str) -> Option<u64> {
    let p = dl_sym(h, name)?;
    // SAFETY: cuDNN declares these as `size_t f(void)` (cudnn_graph.h,
    // cudnn_ops_infer.h).
    let f: unsafe extern "C" fn() -> libc::size_t = unsafe { std::mem::transmute(p) };
    Some(unsafe { f() } as u64)
}

/// Reads everything (in this process: the child).
fn probe(dir: &Path, major: u32) -> Probe {
    let mut p = Probe {
        dir: dir.to_string_lossy().into_owned(),
        major,
        core: Core {
            file: String::new(),
            error: None,
            version: None,
            cudart: None,
            max_device: None,
        },
        checks: Vec::new(),
    };
    let Some(stem) = core_stem(major) else {
        p.core.error = Some(format!("cuDNN {major} is not supported"));
        return p;
    };
    p.core.file = format!("{stem}.so.{major}");
    let core = match dl_open(&dir.join(&p.core.file)) {
        Ok(h) => h,
        Err(e) => {
            p.core.error = Some(e);
            return p;
        }
    };
    p.core.version = call_size(core, "cudnnGetVersion");
    p.core.cudart = call_size(core, "cudnnGetCudartVersion");
    p.core.max_device = call_size(core, "cudnnGetMaxDeviceVersion");
    for &(stem, function) in version_checks(major) {
        let file = format!("{stem}.so.{major}");
        let mut c = Check {
            file: file.clone(),
            function: function.into(),
            error: None,
            status: None,
        };
        match dl_open(&dir.join(&file)) {
            Err(e) => c.error = Some(e),
            Ok(h) => match dl_sym(h, function) {
                None => c.error = Some(format!("it has no {function}")),
                Some(f) => {
                    // SAFETY: `cudnnStatus_t f(void)`; cudnnStatus_t is an
                    // int-sized enum.
                    let f: unsafe extern "C" fn() -> libc::c_int =
                        unsafe { std::mem::transmute(f) };
                    c.status = Some(i64::from(unsafe { f() }));
                }
            },
        }
        p.checks.push(c);
    }
    p
}

/// Calls `int name(int *)` (`cudaRuntimeGetVersion`, `cuDriverGetVersion`)
/// from the library `h`: (status, value written).
fn call_int_out(h: *mut libc::c_void, name: &str) -> Option<(i64, i64)> {
    let p = dl_sym(h, name)?;
    // SAFETY: both are declared `cudaError_t/CUresult f(int *)`: an
    // int-sized enum and a pointer to an int we own.
    let f: unsafe extern "C" fn(*mut libc::c_int) -> libc::c_int =
        unsafe { std::mem::transmute(p) };
    let mut v: libc::c_int = 0;
    let status = unsafe { f(&mut v) };
    Some((i64::from(status), i64::from(v)))
}

/// Asks one file (in this process: the child). Libraries stay loaded: a
/// later check binds to the core library loaded here.
fn answer(ask: &Ask) -> Answer {
    let mut a = Answer::default();
    let h = match dl_open(Path::new(ask.path())) {
        Ok(h) => h,
        Err(e) => {
            a.error = Some(e);
            return a;
        }
    };
    let missing = |f: &str| Some(format!("it has no {f}"));
    match ask {
        Ask::CudnnCore { .. } => {
            a.version = call_size(h, "cudnnGetVersion").map(|v| v as i64);
            a.cudart = call_size(h, "cudnnGetCudartVersion").map(|v| v as i64);
            a.max_device = call_size(h, "cudnnGetMaxDeviceVersion").map(|v| v as i64);
            if a.version.is_none() {
                a.error = missing("cudnnGetVersion");
            }
        }
        Ask::CudnnCheck { function, .. } => match dl_sym(h, function) {
            None => a.error = missing(function),
            Some(f) => {
                // SAFETY: `cudnnStatus_t f(void)`; cudnnStatus_t is an
                // int-sized enum.
                let f: unsafe extern "C" fn() -> libc::c_int = unsafe { std::mem::transmute(f) };
                a.status = Some(i64::from(unsafe { f() }));
            }
        },
        Ask::Runtime { .. } | Ask::Driver { .. } => {
            let function = match ask {
                Ask::Runtime { .. } => "cudaRuntimeGetVersion",
                _ => "cuDriverGetVersion",
            };
            match call_int_out(h, function) {
                None => a.error = missing(function),
                Some((status, v)) => {
                    a.status = Some(status);
                    a.version = (status == 0).then_some(v);
                }
            }
        }
    }
    a
}

/// Writes to stderr, ignoring errors (the parent reads stdout only).
fn say(s: &str) {
    let _ = std::io::stderr().write_all(s.as_bytes());
}

/// What the child was asked to do.
enum Job {
    Dir(OsString, u32),
    Asks(Vec<Ask>),
}

fn parse_job(args: &[OsString]) -> Option<Job> {
    match args {
        [flag, json] if flag == ASK_FLAG => {
            let asks: Vec<Ask> = serde_json::from_slice(json.as_bytes()).ok()?;
            (asks.len() <= MAX_ASKS).then_some(Job::Asks(asks))
        }
        [dir, major] => Some(Job::Dir(dir.clone(), major.to_str()?.parse().ok()?)),
        _ => None,
    }
}

/// `cudnn-trace __probe-cudnn DIR MAJOR`: prints a [`Probe`] as JSON on
/// stdout; `cudnn-trace __probe-cudnn --ask JSON`: the [`Answer`]s to the
/// [`Ask`]s. Returns the exit status (2: bad arguments).
pub fn child_main(args: &[OsString]) -> i32 {
    let Some(job) = parse_job(args) else {
        say(&format!(
            "usage: cudnn-trace {SUBCOMMAND} DIR MAJOR | {SUBCOMMAND} {ASK_FLAG} JSON\n"
        ));
        return 2;
    };
    // Library constructors may print on stdout: keep the real stdout for
    // the result and point fd 1 at stderr meanwhile.
    // SAFETY: plain descriptor calls on this process's own descriptors.
    let result_fd = unsafe { libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3) };
    if result_fd < 0 || unsafe { libc::dup2(2, 1) } < 0 {
        say("cudnn-trace: probe: cannot set up stdout\n");
        return 1;
    }
    let text = match job {
        Job::Dir(dir, major) => serde_json::to_vec(&probe(Path::new(&dir), major)),
        Job::Asks(asks) => serde_json::to_vec(&asks.iter().map(answer).collect::<Vec<_>>()),
    };
    let Ok(mut text) = text else {
        return 1;
    };
    text.push(b'\n');
    // SAFETY: result_fd is ours (duplicated above) and owned by this File.
    let mut out = unsafe { <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(result_fd) };
    match out.write_all(&text) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names() {
        assert_eq!(
            status_name(9, 1002),
            Some("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")
        );
        assert_eq!(status_name(8, 14), Some("CUDNN_STATUS_VERSION_MISMATCH"));
        assert_eq!(status_name(8, 1002), None);
    }

    #[test]
    fn environment_is_cleared() {
        for k in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "LD_LIBRARY_PATH",
            "CUDNN_TRACE_PIN",
            "CUDNN_TRACE",
            "CUDA_VISIBLE_DEVICES",
            "FAKE_CUDA_LOG",
        ] {
            assert!(!kept(OsStr::new(k)), "{k}");
        }
        for k in ["PATH", "HOME", "LANG"] {
            assert!(kept(OsStr::new(k)), "{k}");
        }
    }

    #[test]
    fn asks_in_this_process_report_load_errors() {
        let d = crate::testutil::tempdir("probe-asks");
        let p = |f: &str| d.join(f).to_string_lossy().into_owned();
        let a = answer(&Ask::Runtime {
            path: p("libcudart.so.13"),
        });
        assert!(a.error.unwrap().contains("libcudart.so.13"));
        assert_eq!((a.version, a.status), (None, None));
        // libc has no cudnnGetVersion: loaded, but nothing to call.
        let libc_path = "/lib/x86_64-linux-gnu/libc.so.6";
        if Path::new(libc_path).exists() {
            let a = answer(&Ask::CudnnCore {
                path: libc_path.into(),
            });
            assert_eq!(a.error.as_deref(), Some("it has no cudnnGetVersion"));
        }
        // The arguments: both forms, and nonsense.
        let asks = vec![Ask::Driver { path: "/x".into() }];
        let json = OsString::from(serde_json::to_string(&asks).unwrap());
        assert!(matches!(parse_job(&[ASK_FLAG.into(), json]), Some(Job::Asks(a)) if a == asks));
        assert!(matches!(
            parse_job(&["/d".into(), "9".into()]),
            Some(Job::Dir(_, 9))
        ));
        assert!(parse_job(&[ASK_FLAG.into(), "[{\"ask\":\"nope\"}]".into()]).is_none());
        assert!(parse_job(&["/d".into()]).is_none());
    }

    #[test]
    fn probe_in_this_process_reports_load_errors() {
        let d = crate::testutil::tempdir("probe-empty");
        let p = probe(&d, 9);
        assert_eq!(p.core.file, "libcudnn_graph.so.9");
        let e = p.core.error.unwrap();
        assert!(e.contains("libcudnn_graph.so.9"), "{e}");
        assert!(p.checks.is_empty());
        assert_eq!(
            probe(&d, 7).core.error.as_deref(),
            Some("cuDNN 7 is not supported")
        );
    }

    #[test]
    fn parent_reports_what_went_wrong() {
        // A stand-in for the executable: a script that answers like the
        // child would, or misbehaves.
        let d = crate::testutil::tempdir("probe-parent");
        let script = |name: &str, body: &str| {
            use std::os::unix::fs::PermissionsExt;
            let p = d.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            p
        };
        let good = script(
            "good",
            r#"test "$1" = __probe-cudnn && test "$3" = 9 && test -z "$LD_PRELOAD$CUDNN_TRACE_PIN" || exit 9
echo '{"dir":"'"$2"'","major":9,"core":{"file":"libcudnn_graph.so.9","error":null,"version":91900,"cudart":13000,"max_device":1210},"checks":[]}'"#,
        );
        let p = run_with(&good, Path::new("/x"), 9, TIMEOUT).unwrap();
        assert_eq!(p.dir, "/x");
        assert_eq!(p.core.version, Some(91900));
        // The --ask form: one answer per ask, else no result.
        let asker = script(
            "asker",
            r#"test "$2" = --ask && test -z "$FAKE_CUDA_LOG" || exit 9
echo '[{"version":13000,"status":0},{"error":"x: cannot open shared object file"}]'"#,
        );
        let asks = [
            Ask::Runtime { path: "/r".into() },
            Ask::Driver { path: "/d".into() },
        ];
        let a = ask_with(&asker, &asks, TIMEOUT).unwrap();
        assert_eq!((a[0].version, a[0].status), (Some(13000), Some(0)));
        assert!(a[1].error.is_some());
        assert_eq!(
            ask_with(&asker, &asks[..1], TIMEOUT).unwrap_err(),
            "the probe process printed no result (exit status: 0)"
        );

        // (SIGTERM rather than the SIGABRT of a real abort: no core dump.)
        let killed = script(
            "killed",
            "echo 'Could not load library x' >&2; kill -TERM $$",
        );
        assert_eq!(
            run_with(&killed, Path::new("/x"), 9, TIMEOUT).unwrap_err(),
            "the probe process was killed by signal 15 (SIGTERM); its last message: Could not load library x"
        );
        let junk = script("junk", "echo not json; exit 0");
        assert_eq!(
            run_with(&junk, Path::new("/x"), 9, TIMEOUT).unwrap_err(),
            "the probe process printed no result (exit status: 0)"
        );
        // Hangs, with a grandchild holding the pipes: both are killed.
        let hang = script("hang", "sleep 30 & wait");
        let start = Instant::now();
        assert_eq!(
            run_with(&hang, Path::new("/x"), 9, Duration::from_millis(300)).unwrap_err(),
            "the probe process did not finish within 300 ms"
        );
        assert!(start.elapsed() < Duration::from_secs(10));
    }
}
