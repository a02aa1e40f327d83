//! The launcher's files in a trace directory, next to the trace files:
//! `launcher.json` (the run: command, how it ended, the pin, the findings
//! gate) and `stderr.txt` (the program's stderr, captured by
//! `launch::capture` for the findings that quote a framework's message).

use super::files::ReadError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Name of the launcher's record in a trace directory.
pub const LAUNCHER_FILE: &str = "launcher.json";

/// The program's stderr as captured, in the trace directory.
pub const STDERR_FILE: &str = "stderr.txt";

/// `stderr.txt` keeps the first and the last this many bytes.
pub const KEEP: usize = 256 << 10;

/// What the launcher records in `launcher.json`. Every field is optional on
/// reading, so a partial or older record still helps.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LauncherRecord {
    pub launcher_version: String,
    /// The program as typed.
    pub program: String,
    /// The file that was executed (after the PATH search).
    pub command: Option<String>,
    /// argv of the program, `argv[0]` as typed.
    pub argv: Vec<String>,
    pub cwd: Option<String>,
    pub out_dir: String,
    pub mode: String,
    pub shim: Option<String>,
    pub hostname: Option<String>,
    pub launcher_pid: u32,
    /// Pid of the program (the top traced process).
    pub pid: Option<u32>,
    pub start_wall_ms: u64,
    pub start: String,
    pub end_wall_ms: Option<u64>,
    pub end: Option<String>,
    /// Exit status when the program exited.
    pub exit_code: Option<i32>,
    /// Signal number when the program was killed by a signal.
    pub signal: Option<i32>,
    pub signal_name: Option<String>,
    pub core_dumped: Option<bool>,
    /// The launcher's own exit status.
    pub status: Option<i32>,
    /// Why (part of) the run cannot be traced: static or setuid program, ….
    pub warnings: Vec<String>,
    /// The program could not be started.
    pub error: Option<String>,
    /// The cuDNN pin (`--pin`) and what validation found; absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<PinRecord>,
    /// How the program's stderr was captured (`stderr.txt`, launch::capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<StderrRecord>,
    /// Findings counts and the `--fail-on` gate, written when the run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub findings: Option<FindingsRecord>,
    /// Processes of the program's tree still running when it ended
    /// (`launch::outliving`); absent when there were none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outlived: Vec<OutlivedRecord>,
}

/// One entry of `outlived` in `launcher.json`: a process of the program's
/// tree that was still running when the program ended.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct OutlivedRecord {
    pub pid: u32,
    /// Its command name (`/proc/PID/comm`) when the program ended.
    pub name: Option<String>,
    /// How long after the program it ended, in ms; None when it was still
    /// running when the launcher stopped waiting.
    pub ended_after_ms: Option<u64>,
    /// Its exit status, when the launcher reaped it (it had become the
    /// launcher's child).
    pub exit_code: Option<i32>,
    /// The signal that ended it, when the launcher reaped it.
    pub signal: Option<i32>,
    /// Still running when the launcher stopped waiting
    /// (`launch::outliving::CHILD_GRACE`): its trace may have grown since.
    pub still_running: bool,
}

impl OutlivedRecord {
    /// "still running when cudnn-trace ended", "ended 0.4 s after the
    /// program (exit status 0)", ….
    pub fn ending(&self) -> String {
        if self.still_running {
            return "still running when cudnn-trace ended (its trace may have grown since)".into();
        }
        let how = match (self.exit_code, self.signal) {
            (_, Some(sig)) => format!(
                ", killed by signal {sig}{}",
                signal_name(sig)
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            ),
            (Some(code), None) => format!(", exit status {code}"),
            _ => String::new(),
        };
        match self.ended_after_ms {
            Some(ms) => format!("outlived the program by {:.1} s{how}", ms as f64 / 1000.0),
            None => format!("outlived the program{how}"),
        }
    }
}

/// `findings` of `launcher.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct FindingsRecord {
    pub error: usize,
    pub warning: usize,
    pub info: usize,
    /// Findings left out by `--ignore` or the configuration file (not in
    /// the counts above, not gated on); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub ignored: usize,
    /// `--fail-on LEVEL`, when given.
    pub fail_on: Option<String>,
    /// Whether a finding reached LEVEL (the launcher then exits 3 if the
    /// program exited 0).
    pub tripped: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// `pin` of `launcher.json` (`docs/pin.md`): what `--pin` validated.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct PinRecord {
    /// The pin directory, canonical.
    pub dir: String,
    /// `strict` or `warn`.
    pub mode: String,
    /// cuDNN major of the directory's layout (8 or 9).
    pub major: Option<u32>,
    /// "9.19.0", when it could be read.
    pub version: Option<String>,
    /// `cudnnGetCudartVersion()` of the pinned cuDNN (13000 = built for CUDA 13.0).
    pub cuda_build: Option<u32>,
    /// `cudnnGetMaxDeviceVersion()` (900 = SM 9.0).
    pub max_device: Option<u32>,
    /// The cuDNN file names in the directory.
    pub files: Vec<String>,
    /// What validation warned about.
    pub warnings: Vec<String>,
}

impl LauncherRecord {
    /// "exit status 0", "killed by signal 9 (SIGKILL)", … when known.
    pub fn ending(&self) -> Option<String> {
        if let Some(sig) = self.signal {
            let name = self
                .signal_name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            let core = if self.core_dumped == Some(true) {
                ", core dumped"
            } else {
                ""
            };
            return Some(format!("killed by signal {sig}{name}{core}"));
        }
        if let Some(code) = self.exit_code {
            return Some(format!("exit status {code}"));
        }
        if let Some(e) = &self.error {
            return Some(format!("not started: {e}"));
        }
        if self.end_wall_ms.is_none() {
            return Some("still running, or the launcher was killed".into());
        }
        None
    }
}

/// `stderr` of `launcher.json`: how the program's stderr was captured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct StderrRecord {
    /// The copy, relative to the trace directory (`stderr.txt`); absent when
    /// nothing was captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `pty`, `pipe`, `socket` (relayed), `file` (read back from the file
    /// stderr was redirected to) or `none`.
    pub how: String,
    /// Bytes the program wrote while it was captured (the file holds all of
    /// them unless `truncated`).
    pub bytes: u64,
    /// Whether the middle was left out (see [`KEEP`]).
    pub truncated: bool,
    /// stdout went to the same place (`2>&1`), so the copy holds it too.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub with_stdout: bool,
    /// A process still held stderr open `launch::capture::GRACE` after the program had
    /// ended: what it wrote later was relayed, not captured.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub left_open: bool,
    /// Why nothing (or not everything) was captured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The largest `launcher.json` read: the launcher writes a few KiB.
pub const RECORD_CAP: u64 = 16 << 20;

/// How long a reader waits before reading again a `launcher.json` that
/// does not parse ([`read_record`]).
const REREAD_AFTER: Duration = Duration::from_millis(1);

/// Reads the `launcher.json` at `path`: the record, or why there is none,
/// in the words of a trace set's problem. A record that does not parse is
/// read once more, a moment later: the launcher writes its later versions
/// over the file in place (`launch::record`), and a read that meets such a
/// write, in the microseconds it takes, can see the start of one version
/// and the end of the one before.
pub fn read_record(path: &Path) -> Result<LauncherRecord, String> {
    read_record_with(
        || super::files::read_regular(path, RECORD_CAP),
        REREAD_AFTER,
    )
}

/// [`read_record`] over `read`, which gives the bytes (and whether there
/// were more than [`RECORD_CAP`]) each time it is called.
fn read_record_with(
    mut read: impl FnMut() -> Result<(Vec<u8>, bool), ReadError>,
    pause: Duration,
) -> Result<LauncherRecord, String> {
    let mut again = true;
    loop {
        let (bytes, more) = read().map_err(|e| e.to_string())?;
        if more {
            return Err("larger than 16 MiB, not a launcher record; skipped".into());
        }
        match serde_json::from_slice::<LauncherRecord>(&super::json::decode(&bytes)) {
            Ok(rec) => return Ok(rec),
            Err(_) if std::mem::replace(&mut again, false) => std::thread::sleep(pause),
            Err(e) => return Err(format!("not a launcher record: {e}")),
        }
    }
}

/// The program's captured stderr in the trace directory `run_dir`, as text
/// (invalid UTF-8 replaced); None when there is none. Its name is the one
/// `launcher.json` gives (`stderr.txt`, or another when that name was taken:
/// `launch::capture`). Read as trace files are: never through a symlink or a
/// hard link, never blocking on a FIFO (`model::trace`).
// Called by report and the launcher's summary (the findings that quote the
// frameworks' messages).
pub fn read_captured(run_dir: &Path) -> Option<String> {
    let rec = read_record(&run_dir.join(LAUNCHER_FILE)).ok();
    read_captured_as(run_dir, rec.as_ref())
}

/// [`read_captured`] with the run's record already read (None: none).
fn read_captured_as(run_dir: &Path, rec: Option<&LauncherRecord>) -> Option<String> {
    // A record that names no copy has none (nothing captured, or nothing
    // written): a `stderr.txt` there is another run's. Without a record,
    // the usual name.
    let name = match rec.and_then(|r| r.stderr.as_ref()) {
        Some(s) => s.file.clone()?,
        None => STDERR_FILE.to_string(),
    };
    if name.contains('/') || name.starts_with('.') {
        return None;
    }
    // The launcher writes at most 2 × KEEP bytes and the marker line.
    let bytes = super::files::read_small(&run_dir.join(name), (2 * KEEP + 4096) as u64)?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The program's captured stderr (`stderr.txt`), if one of `paths` is a run
/// directory that has it. `launchers`: the records already read with the
/// traces (`TraceSet::launchers`), by path, so that a run directory's
/// record is not read twice.
pub fn captured_stderr(
    paths: &[PathBuf],
    launchers: &[(PathBuf, LauncherRecord)],
) -> Option<String> {
    paths.iter().find_map(|p| {
        let known = launchers
            .iter()
            .find(|(file, _)| file.parent() == Some(p.as_path()))
            .map(|(_, rec)| rec);
        match known {
            Some(rec) => read_captured_as(p, Some(rec)),
            None => read_captured(p),
        }
    })
}

/// Name of a signal (`SIGKILL`), for the common ones.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    Some(match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read that met the launcher writing over the record (the start of
    /// the new version, the end of the old one) is read again; a record
    /// that still does not parse is a problem, said once.
    #[test]
    fn a_record_that_does_not_parse_is_read_once_more() {
        let new = br#"{"program": "p", "pid": 2}
"#;
        let torn = br#"{"program": "p", "pid": 2}
 "pid": 1}
"#;
        let mut reads = vec![torn.to_vec(), new.to_vec()].into_iter();
        let rec = read_record_with(|| Ok((reads.next().unwrap(), false)), Duration::ZERO);
        assert_eq!(rec.unwrap().pid, Some(2));
        let mut calls = 0;
        let bad = read_record_with(
            || {
                calls += 1;
                Ok((b"{".to_vec(), false))
            },
            Duration::ZERO,
        );
        assert!(bad.unwrap_err().starts_with("not a launcher record: "));
        assert_eq!(calls, 2);
        let huge = read_record_with(|| Ok((Vec::new(), true)), Duration::ZERO);
        assert!(huge.unwrap_err().contains("16 MiB"));
    }

    /// The copy is the one the record names: the record read with the
    /// traces when there is one (not read again), else the run directory's.
    #[test]
    fn the_copy_is_found_through_the_record_read_with_the_traces() {
        let d = crate::testutil::tempdir("captured");
        std::fs::write(d.join(STDERR_FILE), "another run's").unwrap();
        std::fs::write(d.join("stderr.7.txt"), "this run's").unwrap();
        let named = |file: Option<&str>| LauncherRecord {
            stderr: Some(StderrRecord {
                file: file.map(str::to_string),
                how: "file".into(),
                ..Default::default()
            }),
            ..Default::default()
        };
        let known = |rec: LauncherRecord| vec![(d.join(LAUNCHER_FILE), rec)];
        let paths = [d.clone()];
        // No launcher.json on disk: only the record given can name the copy.
        let got = captured_stderr(&paths, &known(named(Some("stderr.7.txt"))));
        assert_eq!(got.as_deref(), Some("this run's"));
        assert_eq!(captured_stderr(&paths, &known(named(None))), None);
        // Not among the records read: the directory's own record, or the
        // usual name without one.
        assert_eq!(
            captured_stderr(&paths, &[]).as_deref(),
            Some("another run's")
        );
        let rec = serde_json::to_vec(&named(Some("stderr.7.txt"))).unwrap();
        std::fs::write(d.join(LAUNCHER_FILE), rec).unwrap();
        assert_eq!(captured_stderr(&paths, &[]).as_deref(), Some("this run's"));
    }

    #[test]
    fn signal_names() {
        assert_eq!(signal_name(9), Some("SIGKILL"));
        assert_eq!(signal_name(11), Some("SIGSEGV"));
        assert_eq!(signal_name(64), None);
    }
}
