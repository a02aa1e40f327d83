//! Reading the versions inside a cuDNN copy, in a separate process.
//!
//! The version that matters is the one the libraries report, not the one in
//! their names (pip wheels have only `.so.9`; a copied file keeps any name).
//! Reading it means loading the library, and loading cuDNN can end the
//! process that does it: the dispatcher `libcudnn.so.N` aborts on its first
//! call when a sub-library is missing \[E6\], and a library constructor
//! may do anything. So the launcher runs its own executable with
//! the hidden subcommand `__probe-cudnn --ask JSON` ([`child_main`]), which
//! becomes the probe helper `cdtrace-probe` (`probe/`: a small dynamically
//! linked program, extracted beside the shim, since the CLI itself may be
//! linked statically and a static program cannot `dlopen`). For a cuDNN
//! copy ([`run`]) it never loads the dispatcher:
//!
//! * it `dlopen`s the core library by absolute path (`libcudnn_graph.so.9`,
//!   `libcudnn_ops_infer.so.8`: the one that implements the version queries,
//!   \[E9\], `reference` in data/cudnn-layout.toml) and calls
//!   `cudnnGetVersion`, `cudnnGetCudartVersion` and
//!   `cudnnGetMaxDeviceVersion`;
//! * then, when the core library loaded, it `dlopen`s each sub-library that
//!   exports a `*VersionCheck`, by absolute path, in dependency order, and
//!   calls it: the sub-library compares itself with the core library it got
//!   bound to (the one already loaded, by SONAME) and returns non-zero when
//!   their versions differ.
//!
//! The helper prints one JSON array, an [`Answer`] per [`Ask`], on stdout;
//! [`ask_with`] parses it, and [`run`] makes a [`Probe`] of it. The child
//! gets an environment without `LD_*` and `CUDNN_TRACE*` variables (no
//! preloads, no other cuDNN through `LD_LIBRARY_PATH`, no tracer), its own
//! process group, and 20 seconds.
//!
//! [`run`] works on any directory, not only a pin directory: it is also the
//! way to report the versions of cuDNN copies found on disk.
//!
//! The report asks single files the same way ([`ask_with`]): the versions
//! the shim does not ask inside the traced program because asking has side
//! effects there (a cuDNN sub-library's `*VersionCheck` loads the driver
//! and calls `cuInit`; `cuDriverGetVersion` reads driver state; an 11.x
//! runtime initialises), or that nobody asked.
//! Each [`Ask`] names one file by absolute path and what to call in it;
//! the side effects happen in the probe process, never in the program.
//! Which files, in which groups, and the cache: `machine::versions`.

use crate::model::io_msg;
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
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

/// The child's arguments: `__probe-cudnn --ask JSON`, JSON a list of
/// [`Ask`]; it prints the list of [`Answer`]s, one per ask, in order.
pub const ASK_FLAG: &str = "--ask";

/// The error of a [`Ask::CudnnCheck`] the helper did not run because the
/// [`Ask::CudnnCore`] before it did not load (the sub-library would bind to
/// whichever core library its search finds). `probe/src/main.rs` writes
/// the same words; `tests/probe_helper.rs` holds the two together.
pub const NOT_RUN: &str = "not run: its core library did not load";

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
/// [`SUBCOMMAND`]) and time limit: the core library and the version checks
/// asked in one process.
pub fn run_with(exe: &Path, dir: &Path, major: u32, timeout: Duration) -> Result<Probe, String> {
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
        return Ok(p);
    };
    p.core.file = format!("{stem}.so.{major}");
    let path = |file: &str| dir.join(file).to_string_lossy().into_owned();
    let files: Vec<(String, &str)> = version_checks(major)
        .iter()
        .map(|&(stem, function)| (format!("{stem}.so.{major}"), function))
        .collect();
    let mut asks = vec![Ask::CudnnCore {
        path: path(&p.core.file),
    }];
    asks.extend(files.iter().map(|(file, function)| Ask::CudnnCheck {
        path: path(file),
        function: function.to_string(),
    }));
    let answers = ask_with(exe, &asks, timeout)?;
    let core = &answers[0];
    let unsigned = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok());
    p.core.error = core.error.clone();
    p.core.version = unsigned(core.version);
    p.core.cudart = unsigned(core.cudart);
    p.core.max_device = unsigned(core.max_device);
    if answers[1..]
        .iter()
        .any(|a| a.error.as_deref() == Some(NOT_RUN))
    {
        return Ok(p);
    }
    p.checks = files
        .into_iter()
        .zip(&answers[1..])
        .map(|((file, function), a)| Check {
            file,
            function: function.to_string(),
            error: a.error.clone(),
            status: a.status,
        })
        .collect();
    Ok(p)
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

/// The helper's arguments for `asks` (`probe/src/main.rs`): `core PATH`,
/// `check PATH FUNCTION`, `runtime PATH`, `driver PATH`, in order.
pub fn helper_args(asks: &[Ask]) -> Vec<OsString> {
    let mut v = Vec::with_capacity(asks.len() * 3);
    for a in asks {
        let kind = match a {
            Ask::CudnnCore { .. } => "core",
            Ask::CudnnCheck { .. } => "check",
            Ask::Runtime { .. } => "runtime",
            Ask::Driver { .. } => "driver",
        };
        v.push(kind.into());
        v.push(a.path().into());
        if let Ask::CudnnCheck { function, .. } = a {
            v.push(function.into());
        }
    }
    v
}

/// Writes to stderr, ignoring errors (the parent reads stdout only).
fn say(s: &str) {
    let _ = std::io::stderr().write_all(s.as_bytes());
}

/// The asks of `__probe-cudnn --ask JSON`; None for anything else.
fn parse_asks(args: &[OsString]) -> Option<Vec<Ask>> {
    match args {
        [flag, json] if flag == ASK_FLAG => {
            let asks: Vec<Ask> = serde_json::from_slice(json.as_bytes()).ok()?;
            (asks.len() <= MAX_ASKS).then_some(asks)
        }
        _ => None,
    }
}

/// `cudnn-trace __probe-cudnn --ask JSON`: this process becomes the probe
/// helper that `helper` finds (extracted beside the shim), which prints
/// the [`Answer`]s to the [`Ask`]s. Returns the exit status when it could
/// not (2: bad arguments; 1: no helper, or it could not be run).
pub fn child_main(args: &[OsString], helper: impl FnOnce() -> Result<PathBuf, String>) -> i32 {
    let Some(asks) = parse_asks(args) else {
        say(&format!(
            "usage: cudnn-trace {SUBCOMMAND} {ASK_FLAG} JSON\n"
        ));
        return 2;
    };
    let helper = match helper() {
        Ok(h) => h,
        Err(e) => {
            say(&format!("cudnn-trace: probe: {e}\n"));
            return 1;
        }
    };
    let e = std::process::Command::new(&helper)
        .args(helper_args(&asks))
        .exec();
    say(&format!(
        "cudnn-trace: probe: cannot run {}: {}\n",
        helper.display(),
        io_msg(&e)
    ));
    1
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
    fn the_helper_gets_one_word_group_per_ask() {
        let asks = [
            Ask::CudnnCore { path: "/c".into() },
            Ask::CudnnCheck {
                path: "/o".into(),
                function: "cudnnOpsVersionCheck".into(),
            },
            Ask::Runtime { path: "/r".into() },
            Ask::Driver { path: "/d".into() },
        ];
        let words: Vec<String> = helper_args(&asks)
            .iter()
            .map(|w| w.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            words,
            [
                "core",
                "/c",
                "check",
                "/o",
                "cudnnOpsVersionCheck",
                "runtime",
                "/r",
                "driver",
                "/d"
            ]
        );
        // The child takes the --ask form only, and no more than MAX_ASKS.
        let json = |a: &[Ask]| OsString::from(serde_json::to_string(a).unwrap());
        assert_eq!(parse_asks(&[ASK_FLAG.into(), json(&asks)]).unwrap(), asks);
        let many = vec![asks[2].clone(); MAX_ASKS + 1];
        assert!(parse_asks(&[ASK_FLAG.into(), json(&many)]).is_none());
        assert!(parse_asks(&["/d".into(), "9".into()]).is_none());
        assert!(parse_asks(&[ASK_FLAG.into(), "[{\"ask\":\"nope\"}]".into()]).is_none());
        // Bad arguments and a missing helper end the child with a status.
        assert_eq!(child_main(&["/d".into()], || unreachable!()), 2);
        let no_helper = child_main(&[ASK_FLAG.into(), json(&asks)], || Err("none".into()));
        assert_eq!(no_helper, 1);
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
        // A cuDNN 9 copy: the core library, then its three checks.
        let good = script(
            "good",
            r#"test "$1" = __probe-cudnn && test "$2" = --ask && test -z "$LD_PRELOAD$CUDNN_TRACE_PIN" || exit 9
case $3 in *'"path":"/x/libcudnn_graph.so.9"'*'"path":"/x/libcudnn_adv.so.9","function":"cudnnAdvVersionCheck"'*) ;; *) exit 8 ;; esac
echo '[{"version":91900,"cudart":13000,"max_device":1210},{"status":0},{"status":1002},{"error":"no adv"}]'"#,
        );
        let p = run_with(&good, Path::new("/x"), 9, TIMEOUT).unwrap();
        assert_eq!(p.dir, "/x");
        assert_eq!(p.core.file, "libcudnn_graph.so.9");
        assert_eq!(
            (p.core.version, p.core.cudart, p.core.max_device),
            (Some(91900), Some(13000), Some(1210))
        );
        let checks: Vec<_> = p
            .checks
            .iter()
            .map(|c| (c.file.as_str(), c.status, c.error.as_deref()))
            .collect();
        assert_eq!(
            checks,
            [
                ("libcudnn_ops.so.9", Some(0), None),
                ("libcudnn_cnn.so.9", Some(1002), None),
                ("libcudnn_adv.so.9", None, Some("no adv"))
            ]
        );
        // The core library did not load: no checks ran, none is listed.
        let no_core = script(
            "nocore",
            &format!(
                r#"echo '[{{"error":"gone"}},{{"error":"{NOT_RUN}"}},{{"error":"{NOT_RUN}"}},{{"error":"{NOT_RUN}"}}]'"#
            ),
        );
        let p = run_with(&no_core, Path::new("/x"), 9, TIMEOUT).unwrap();
        assert_eq!(p.core.error.as_deref(), Some("gone"));
        assert!(p.checks.is_empty());
        // A major this tool does not know: no process at all.
        let p = run_with(Path::new("/nonexistent"), Path::new("/x"), 7, TIMEOUT).unwrap();
        assert_eq!(p.core.error.as_deref(), Some("cuDNN 7 is not supported"));
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
