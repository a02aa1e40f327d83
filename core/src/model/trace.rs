//! Reading trace directories and files into a model, forgivingly.
//!
//! Nothing in a trace can make this panic: a file that is not a trace is
//! skipped, a line that cannot be used is skipped, and every skip is recorded
//! as a [`Problem`] (file, line, what) for the caller to show.

use super::files::read_regular;
use super::{io_msg, LauncherRecord, LAUNCHER_FILE};
use cudnn_trace_format::read::{
    parse_line, Call, CallCounts, DriverClient, Event, LineError, Load, LoadFailed, Note, Pin,
    Process, Unload, Version,
};
use cudnn_trace_format::SCHEMA_VERSION;
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// At most this much of one trace file is read (the rest is reported).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Something that could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: String,
    /// 1-based line number, when the problem is one line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub what: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file, self.what),
            None => write!(f, "{}: {}", self.file, self.what),
        }
    }
}

/// A failed load with the error texts the program read for it.
#[derive(Debug, Clone)]
pub struct Failed {
    pub ev: LoadFailed,
    /// Texts of the `dlerror` events whose `req` is this failure's `seq`.
    pub dlerror: Vec<String>,
}

impl Failed {
    /// The loader's error text: the one the program received when the shim
    /// saw it, else the one recorded with the failure.
    pub fn errors(&self) -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for e in self.ev.error.iter().chain(self.dlerror.iter()) {
            if !e.is_empty() && !v.contains(&e.as_str()) {
                v.push(e);
            }
        }
        v
    }
}

/// One trace file: one process image.
#[derive(Debug, Clone)]
pub struct Image {
    pub file: PathBuf,
    /// `n` of `<pid>.<n>.jsonl` (0 for `<pid>.jsonl`).
    pub index: u32,
    pub header: Process,
    pub loads: Vec<Load>,
    pub failed: Vec<Failed>,
    pub unloads: Vec<Unload>,
    pub notes: Vec<Note>,
    /// The pin's decisions, in order (`docs/pin.md`).
    pub pins: Vec<Pin>,
    /// What the libraries said about their versions (`docs/versions-and-calls.md`).
    pub versions: Vec<Version>,
    /// The program's first calls per function and library.
    pub calls: Vec<Call>,
    /// Call totals (at exit, or when a library was unloaded).
    pub call_counts: Vec<CallCounts>,
    /// The objects that asked the driver for its entry points (a CUDA
    /// runtime, shared or linked into another object).
    pub driver_clients: Vec<DriverClient>,
}

impl Image {
    pub fn host(&self) -> &str {
        self.header.hostname.as_deref().unwrap_or("")
    }

    /// The process's `LD_LIBRARY_PATH`, split (empty entries left out).
    pub fn ld_library_path(&self) -> Vec<String> {
        self.header
            .env
            .get("LD_LIBRARY_PATH")
            .map(|v| {
                v.split(':')
                    .filter(|d| !d.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// Everything read from the paths given.
#[derive(Debug, Default)]
pub struct TraceSet {
    pub images: Vec<Image>,
    pub launchers: Vec<(PathBuf, LauncherRecord)>,
    pub problems: Vec<Problem>,
    /// The directories and files read.
    pub sources: Vec<PathBuf>,
    /// Trace files that were empty: a process that could not write even
    /// its first line (a full disk), or not a trace.
    pub empty_files: Vec<PathBuf>,
    /// Directories in which the shim left its "disk full" marker
    /// (`.cudnn-trace-full.*`, docs/trace-format.md).
    pub full_dirs: Vec<PathBuf>,
}

/// What a full disk (or a quota, an I/O error) cost the traces read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Loss {
    /// Events the shim could not write (the headers' `lost`).
    pub events: u64,
    /// Process images that lost events.
    pub images: usize,
    /// The first failed write's errno, as its text (`No space left on device`).
    pub error: Option<String>,
    /// Trace files left empty.
    pub empty_files: usize,
    /// The directories concerned.
    pub dirs: Vec<String>,
}

impl TraceSet {
    /// What the disk did not take, when it did not take something.
    pub fn loss(&self) -> Option<Loss> {
        let lossy: Vec<&Image> = self
            .images
            .iter()
            .filter(|i| i.header.lost > 0 || i.header.lost_errno != 0)
            .collect();
        let full = !self.full_dirs.is_empty();
        if lossy.is_empty() && !full {
            return None;
        }
        let errno = lossy
            .iter()
            .map(|i| i.header.lost_errno)
            .find(|&e| e != 0)
            .or(full.then_some(libc::ENOSPC));
        let mut dirs: Vec<String> = lossy
            .iter()
            .filter_map(|i| i.file.parent())
            .chain(self.full_dirs.iter().map(PathBuf::as_path))
            .map(|d| d.display().to_string())
            .collect();
        dirs.sort();
        dirs.dedup();
        Some(Loss {
            events: lossy.iter().map(|i| i.header.lost).sum(),
            images: lossy.iter().filter(|i| i.header.lost > 0).count(),
            error: errno.map(|e| io_msg(&std::io::Error::from_raw_os_error(e))),
            empty_files: if full { self.empty_files.len() } else { 0 },
            dirs,
        })
    }
}

/// Reads trace directories (every `*.jsonl` in them plus `launcher.json`)
/// and single files.
pub fn read_paths(paths: &[PathBuf]) -> TraceSet {
    let mut set = TraceSet::default();
    for p in paths {
        set.sources.push(p.clone());
        match fs::metadata(p) {
            Ok(md) if md.is_dir() => read_dir(p, &mut set),
            Ok(_) => read_file(p, &mut set),
            Err(e) => set.problems.push(Problem {
                file: p.display().to_string(),
                line: None,
                what: format!("cannot read: {}", io_msg(&e)),
            }),
        }
    }
    set.images.sort_by(|a, b| {
        (a.host(), a.header.pid, a.index, &a.file).cmp(&(b.host(), b.header.pid, b.index, &b.file))
    });
    join_reopened(&mut set.images);
    set
}

/// Joins each file the shim started when the process's own file was
/// replaced (`origin: "reopen"`, docs/trace-format.md) to the image before
/// it: the same process image, continued. Its events follow, its note (why)
/// is kept.
fn join_reopened(images: &mut Vec<Image>) {
    let mut i = 1;
    while i < images.len() {
        let (prev, cur) = images.split_at_mut(i);
        let (p, c) = (&mut prev[i - 1], &mut cur[0]);
        if c.header.origin != "reopen" || (p.host(), p.header.pid) != (c.host(), c.header.pid) {
            i += 1;
            continue;
        }
        let c = images.remove(i);
        let p = &mut images[i - 1];
        p.header.lost += c.header.lost;
        if p.header.lost_errno == 0 {
            p.header.lost_errno = c.header.lost_errno;
        }
        p.loads.extend(c.loads);
        p.failed.extend(c.failed);
        p.unloads.extend(c.unloads);
        p.notes.extend(c.notes);
        p.pins.extend(c.pins);
        p.versions.extend(c.versions);
        p.calls.extend(c.calls);
        p.call_counts.extend(c.call_counts);
    }
}

fn read_dir(dir: &Path, set: &mut TraceSet) {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            set.problems.push(Problem {
                file: dir.display().to_string(),
                line: None,
                what: format!("cannot read directory: {}", io_msg(&e)),
            });
            return;
        }
    };
    let mut files = Vec::new();
    let mut subdirs = Vec::new();
    let mut launcher = None;
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
        if name == LAUNCHER_FILE {
            launcher = Some(path);
        } else if name.as_encoded_bytes().starts_with(b".cudnn-trace-full.") {
            if !set.full_dirs.iter().any(|d| d == dir) {
                set.full_dirs.push(dir.to_path_buf());
            }
        } else if is_dir {
            subdirs.push(path);
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    files.sort();
    let found = !files.is_empty() || launcher.is_some();
    if let Some(l) = launcher {
        read_launcher(&l, set);
    }
    for f in files {
        read_file(&f, set);
    }
    if !found {
        let mut runs: Vec<PathBuf> = subdirs.into_iter().filter(|d| looks_like_run(d)).collect();
        runs.sort();
        let what = match runs.last() {
            Some(newest) => format!(
                "no trace files (*.jsonl) here; it holds {} run director{} (newest: {}): pass one of them",
                runs.len(),
                if runs.len() == 1 { "y" } else { "ies" },
                newest.display()
            ),
            None => "no trace files (*.jsonl) and no launcher.json here".into(),
        };
        set.problems.push(Problem {
            file: dir.display().to_string(),
            line: None,
            what,
        });
    }
}

/// Where the launcher puts its runs by default, and where `report` looks
/// when it gets no path.
pub const DEFAULT_OUT: &str = "cudnn-trace-out";

/// The newest run directory under `./cudnn-trace-out`.
pub fn newest_run() -> Option<PathBuf> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(DEFAULT_OUT)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && looks_like_run(p))
        .collect();
    // Names start with YYYYmmdd-HHMMSS: the last in name order is the newest.
    runs.sort();
    runs.pop()
}

/// Whether a directory holds a run: trace files or a launcher record.
pub fn looks_like_run(dir: &Path) -> bool {
    fs::read_dir(dir)
        .map(|rd| {
            rd.flatten().any(|e| {
                let p = e.path();
                e.file_name() == LAUNCHER_FILE || p.extension().is_some_and(|x| x == "jsonl")
            })
        })
        .unwrap_or(false)
}

fn read_launcher(path: &Path, set: &mut TraceSet) {
    let label = path.display().to_string();
    // The launcher writes a few KiB; more is not one of its records.
    match read_regular(path, 16 << 20) {
        Ok((_, true)) => set.problems.push(Problem {
            file: label,
            line: None,
            what: "larger than 16 MiB, not a launcher record; skipped".into(),
        }),
        Ok((bytes, false)) => {
            match serde_json::from_slice::<LauncherRecord>(&super::json::decode(&bytes)) {
                Ok(rec) => set.launchers.push((path.to_path_buf(), rec)),
                Err(e) => set.problems.push(Problem {
                    file: label,
                    line: None,
                    what: format!("not a launcher record: {e}"),
                }),
            }
        }
        Err(e) => set.problems.push(Problem {
            file: label,
            line: None,
            what: e.to_string(),
        }),
    }
}

fn read_file(path: &Path, set: &mut TraceSet) {
    read_file_capped(path, MAX_FILE_BYTES, set)
}

fn read_file_capped(path: &Path, cap: u64, set: &mut TraceSet) {
    if path.file_name().is_some_and(|n| n == LAUNCHER_FILE) {
        read_launcher(path, set);
        return;
    }
    let label = path.display().to_string();
    let (mut bytes, more) = match read_regular(path, cap) {
        Ok(r) => r,
        Err(e) => {
            set.problems.push(Problem {
                file: label,
                line: None,
                what: e.to_string(),
            });
            return;
        }
    };
    if more {
        // Up to the last complete line: the cut is not a truncated event.
        let end = bytes.iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(end);
        set.problems.push(Problem {
            file: label,
            line: None,
            what: format!(
                "larger than {} MiB; only its first {} bytes (complete lines) were read",
                cap >> 20,
                bytes.len()
            ),
        });
    }
    if bytes.is_empty() {
        set.empty_files.push(path.to_path_buf());
    }
    let (image, problems) = parse_trace(&bytes, path);
    set.problems.extend(problems);
    if let Some(img) = image {
        set.images.push(img);
    }
}

/// `n` of `<pid>.<n>.jsonl`.
fn image_index(path: &Path) -> u32 {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    stem.split_once('.')
        .and_then(|(_, n)| n.parse().ok())
        .unwrap_or(0)
}

/// Parses one trace file's content. Returns the image (None when the file
/// is not a trace) and the problems met.
pub fn parse_trace(bytes: &[u8], path: &Path) -> (Option<Image>, Vec<Problem>) {
    let label = path.display().to_string();
    let mut problems = Vec::new();
    let mut problem = |line: Option<usize>, what: String| {
        problems.push(Problem {
            file: label.clone(),
            line,
            what,
        });
    };
    if bytes.is_empty() {
        problem(
            None,
            "empty file (its process could not write even its first line: a full disk?); skipped"
                .into(),
        );
        return (None, problems);
    }
    let complete = bytes.ends_with(b"\n");
    let mut lines: Vec<&[u8]> = bytes.split(|&c| c == b'\n').collect();
    if complete {
        lines.pop();
    }
    let last = lines.len();
    let mut image: Option<Image> = None;
    for (i, raw) in lines.iter().enumerate() {
        let n = i + 1;
        let truncated = n == last && !complete;
        if raw.iter().all(u8::is_ascii_whitespace) {
            if image.is_none() {
                problem(
                    Some(n),
                    "not a trace file: blank first line; skipped".into(),
                );
                return (None, problems);
            }
            continue;
        }
        let text = match std::str::from_utf8(raw) {
            Ok(t) => t,
            Err(_) => {
                if image.is_none() {
                    problem(
                        Some(n),
                        "not a trace file: first line is not text (binary data?); skipped".into(),
                    );
                    return (None, problems);
                }
                problem(Some(n), "line is not UTF-8 text; skipped".into());
                continue;
            }
        };
        let parsed = parse_line(text.trim_end_matches('\r'));
        let Some(img) = image.as_mut() else {
            // The first line must be a process header.
            match parsed {
                Ok(Event::Process(header)) => {
                    if header.v > SCHEMA_VERSION {
                        problem(
                            Some(n),
                            format!(
                                "schema version {} is newer than this reader's ({SCHEMA_VERSION}); reading what it can",
                                header.v
                            ),
                        );
                    }
                    image = Some(Image {
                        file: path.to_path_buf(),
                        index: image_index(path),
                        header,
                        loads: Vec::new(),
                        failed: Vec::new(),
                        unloads: Vec::new(),
                        notes: Vec::new(),
                        pins: Vec::new(),
                        versions: Vec::new(),
                        calls: Vec::new(),
                        call_counts: Vec::new(),
                        driver_clients: Vec::new(),
                    });
                }
                Ok(_) => {
                    problem(
                        Some(n),
                        "not a trace file: first line is not a process header; skipped".into(),
                    );
                    return (None, problems);
                }
                Err(e) => {
                    let why = if truncated {
                        "truncated process header".to_string()
                    } else {
                        describe(&e, text)
                    };
                    problem(
                        Some(n),
                        format!(
                            "not a trace file: first line is not a process header ({why}); skipped"
                        ),
                    );
                    return (None, problems);
                }
            }
            continue;
        };
        match parsed {
            Ok(Event::Process(_)) => problem(Some(n), "second process header ignored".into()),
            Ok(Event::Load(l)) => img.loads.push(l),
            Ok(Event::LoadFailed(f)) => img.failed.push(Failed {
                ev: f,
                dlerror: Vec::new(),
            }),
            Ok(Event::Unload(u)) => img.unloads.push(u),
            Ok(Event::Note(note)) => img.notes.push(note),
            Ok(Event::Pin(p)) => img.pins.push(p),
            Ok(Event::Version(v)) => img.versions.push(v),
            Ok(Event::Call(c)) => img.calls.push(c),
            Ok(Event::CallCounts(c)) => img.call_counts.push(c),
            Ok(Event::DriverClient(c)) => img.driver_clients.push(c),
            Ok(Event::DlError(d)) => {
                match img.failed.iter().rposition(|f| f.ev.seq == d.req) {
                    Some(i) => {
                        // A request that failed for a missing dependency: the
                        // text (which names the dependency) explains the
                        // dependency's own failure, written just before it.
                        let dep = i
                            .checked_sub(1)
                            .filter(|_| img.failed[i].ev.dependency_failed)
                            .filter(|&j| {
                                let (r, f) = (&img.failed[i].ev, &img.failed[j].ev);
                                f.tid == r.tid
                                    && f.error.is_none()
                                    && d.error.contains(f.name.as_str())
                            });
                        if let Some(j) = dep {
                            img.failed[j].dlerror.push(d.error.clone());
                        }
                        img.failed[i].dlerror.push(d.error)
                    }
                    None => problem(
                        Some(n),
                        format!(
                        "dlerror event for request seq {} that has no load_failed event; ignored",
                        d.req
                    ),
                    ),
                }
            }
            Err(_) if truncated && (img.header.lost > 0 || img.header.lost_errno != 0) => problem(
                Some(n),
                "last line cut short: the disk took no more (the header counts the events lost); ignored"
                    .into(),
            ),
            Err(_) if truncated => problem(
                Some(n),
                "truncated last line (the process was probably killed while writing it); ignored"
                    .into(),
            ),
            Err(e) => problem(Some(n), format!("{}; skipped", describe(&e, text))),
        }
    }
    (image, problems)
}

fn describe(e: &LineError, text: &str) -> String {
    match e {
        LineError::NotJson(_) => {
            let mut shown: String = text.chars().take(40).collect();
            if shown.len() < text.len() {
                shown.push('…');
            }
            format!("not a JSON object: {shown:?}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{header, tempdir};

    const LOAD: &str = r#"{"ev":"load","seq":1,"t_ns":10,"pid":4242,"ppid":1,"tid":4242,"name":"libcudnn.so.9","path":"/v/nvidia/cudnn/lib/libcudnn.so.9","realpath":"/v/nvidia/cudnn/lib/libcudnn.so.9.14.0","reason":"RUNPATH","reason_owner":"/v/torch/lib/libtorch_cuda.so","search_dir":"/v/nvidia/cudnn/lib","requester":"/v/torch/lib/libtorch_cuda.so","via":"needed","mode":null,"lmid":0,"soname":"libcudnn.so.9","dev":1,"ino":2,"size":3,"build_id":"ab","family":"cudnn","tried":[],"new":true}"#;
    const FAILED: &str = r#"{"ev":"load_failed","seq":2,"t_ns":11,"pid":4242,"ppid":1,"tid":4242,"name":"libcudnn_adv.so.9","requester":"/v/nvidia/cudnn/lib/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[{"path":"/usr/local/cuda/lib64/libcudnn_adv.so.9","reason":"LD_LIBRARY_PATH","result":"missing"}],"error":null,"errno":2}"#;
    const DLERROR: &str = r#"{"ev":"dlerror","seq":3,"t_ns":12,"pid":4242,"ppid":1,"tid":4242,"req":2,"error":"libcudnn_adv.so.9: cannot open shared object file: No such file or directory"}"#;

    fn parse(s: &str) -> (Option<Image>, Vec<Problem>) {
        parse_trace(s.as_bytes(), Path::new("d/4242.jsonl"))
    }

    #[test]
    fn good_file_with_dlerror_merged() {
        let s = format!("{}\n{LOAD}\n{FAILED}\n{DLERROR}\n", header(4242, 1, "exec"));
        let (img, probs) = parse(&s);
        assert!(probs.is_empty(), "{probs:?}");
        let img = img.unwrap();
        assert_eq!(img.header.pid, 4242);
        assert_eq!(img.loads.len(), 1);
        assert_eq!(img.failed.len(), 1);
        assert_eq!(
            img.failed[0].errors(),
            vec!["libcudnn_adv.so.9: cannot open shared object file: No such file or directory"]
        );
    }

    #[test]
    fn truncated_garbage_and_unknown_lines_are_skipped() {
        let s = format!(
            "{}\n{LOAD}\nthis is not json\n{{\"ev\":\"future_kind\",\"seq\":9}}\n{{\"no_ev\":1}}\n\
             {{\"ev\":\"load\",\"seq\":\"bad\"}}\n[1,2]\n{FAILED}\n{{\"ev\":\"load\",\"seq\":7,\"pa",
            header(4242, 1, "exec")
        );
        let (img, probs) = parse(&s);
        let img = img.unwrap();
        assert_eq!(img.loads.len(), 1);
        assert_eq!(img.failed.len(), 1);
        let lines: Vec<Option<usize>> = probs.iter().map(|p| p.line).collect();
        assert_eq!(
            lines,
            vec![Some(3), Some(4), Some(5), Some(6), Some(7), Some(9)]
        );
        assert!(probs[0].what.contains("not a JSON object"));
        assert!(probs[1].what.contains("unknown event kind \"future_kind\""));
        assert!(probs[2].what.contains("without an \"ev\""));
        assert!(probs[3].what.contains("bad \"load\" event"));
        assert!(probs[5].what.contains("truncated last line"));
        assert!(probs.iter().all(|p| p.file == "d/4242.jsonl"));
    }

    #[test]
    fn files_that_are_not_traces() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "empty file"),
            (b"\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\n", "not text"),
            (b"hello world\n", "first line is not a process header"),
            (b"{\"ev\":\"note\",\"seq\":1,\"t_ns\":1,\"pid\":1,\"ppid\":0,\"tid\":1,\"level\":\"info\",\"msg\":\"x\"}\n", "first line is not a process header"),
            (b"{\"ev\":\"process\",\"v\":1,\"shim\":\"0.1", "truncated process header"),
            (b"\n\n", "blank first line"),
            (b"{\"ev\":\"process\"}\n", "bad \"process\" event"),
        ];
        for (bytes, want) in cases {
            let (img, probs) = parse_trace(bytes, Path::new("x.jsonl"));
            assert!(img.is_none(), "{want}");
            assert_eq!(probs.len(), 1, "{want}: {probs:?}");
            assert!(probs[0].what.contains(want), "{want}: {probs:?}");
        }
    }

    #[test]
    fn header_only_and_invalid_utf8_later() {
        let mut b = format!("{}\n", header(7, 1, "exec")).into_bytes();
        b.extend_from_slice(b"\xff\xfe\n");
        let (img, probs) = parse_trace(&b, Path::new("7.1.jsonl"));
        let img = img.unwrap();
        assert_eq!(img.index, 1);
        assert_eq!(probs.len(), 1);
        assert!(probs[0].what.contains("UTF-8"));
        // dlerror for an unknown request.
        let s = format!("{}\n{DLERROR}\n", header(4242, 1, "exec"));
        let (img, probs) = parse(&s);
        assert!(img.is_some());
        assert!(probs[0].what.contains("no load_failed"));
    }

    #[test]
    fn newer_schema_is_read_with_a_warning() {
        let h = header(5, 1, "exec").replace("\"v\":1", "\"v\":2");
        let (img, probs) = parse(&format!("{h}\n"));
        assert!(img.is_some());
        assert!(probs[0].what.contains("newer"));
    }

    #[test]
    fn directories_and_unreadable_paths() {
        let d = tempdir("readdir");
        fs::write(
            d.join("10.jsonl"),
            format!("{}\n{LOAD}\n", header(10, 1, "exec")),
        )
        .unwrap();
        fs::write(d.join("11.jsonl"), "garbage\n").unwrap();
        fs::write(d.join("12.jsonl"), "").unwrap();
        fs::write(d.join("notes.txt"), "ignored").unwrap();
        fs::write(
            d.join(LAUNCHER_FILE),
            r#"{"program":"python","pid":10,"exit_code":3,"future":1}"#,
        )
        .unwrap();
        let set = read_paths(&[d.clone(), d.join("missing")]);
        assert_eq!(set.images.len(), 1);
        assert_eq!(set.launchers.len(), 1);
        assert_eq!(set.launchers[0].1.exit_code, Some(3));
        assert_eq!(set.problems.len(), 3, "{:?}", set.problems);

        // A directory of runs, not a run.
        let top = tempdir("readtop");
        fs::create_dir_all(top.join("20260101-000000-1")).unwrap();
        fs::write(top.join("20260101-000000-1/1.jsonl"), "x").unwrap();
        let set = read_paths(std::slice::from_ref(&top));
        assert!(set.images.is_empty());
        assert!(
            set.problems[0].what.contains("pass one of them"),
            "{:?}",
            set.problems
        );

        // A bad launcher.json.
        let bad = tempdir("readbadl");
        fs::write(bad.join(LAUNCHER_FILE), "\x00\x01").unwrap();
        let set = read_paths(&[bad]);
        assert!(set.problems[0].what.contains("not a launcher record"));
    }

    #[test]
    fn unreadable_file_is_a_problem() {
        let d = tempdir("unreadable");
        let f = d.join("1.jsonl");
        fs::write(&f, format!("{}\n", header(1, 0, "exec"))).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&f, fs::Permissions::from_mode(0o000)).unwrap();
        let set = read_paths(std::slice::from_ref(&f));
        // root can read anything; then the file is simply read.
        if set.images.is_empty() {
            assert!(set.problems[0].what.contains("cannot read"));
        }
        // A directory given as a file name that does not exist.
        let set = read_paths(&[d.join("nope.jsonl")]);
        assert!(set.problems[0].what.contains("cannot read"));
    }

    #[test]
    fn fifos_and_devices_are_skipped_not_read() {
        let d = tempdir("fifo");
        let fifo = d.join("9.jsonl");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        fs::write(d.join("10.jsonl"), format!("{}\n", header(10, 1, "exec"))).unwrap();
        // Nobody ever writes to the FIFO: reading it would block forever.
        let (tx, rx) = std::sync::mpsc::channel();
        let paths = vec![d.clone(), fifo.clone(), PathBuf::from("/dev/zero")];
        std::thread::spawn(move || {
            let _ = tx.send(read_paths(&paths));
        });
        let set = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a FIFO or device blocked");
        assert_eq!(set.images.len(), 1);
        let fifo_label = fifo.display().to_string();
        let whats: Vec<String> = set.problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(set.problems.len(), 3, "{whats:?}");
        assert!(set
            .problems
            .iter()
            .all(|p| p.what.contains("not a regular file")));
        assert_eq!(
            set.problems.iter().filter(|p| p.file == fifo_label).count(),
            2
        );
        assert!(set.problems[2].file == "/dev/zero" && set.problems[2].what.contains("device"));
    }

    #[test]
    fn big_files_are_read_up_to_a_cap() {
        let d = tempdir("cap");
        let f = d.join("10.jsonl");
        let mut s = format!("{}\n", header(10, 1, "exec"));
        let keep = s.len() as u64 + LOAD.len() as u64 + 1;
        for _ in 0..10 {
            s.push_str(LOAD);
            s.push('\n');
        }
        fs::write(&f, &s).unwrap();
        let mut set = TraceSet::default();
        // Room for the header, one load and part of the next.
        read_file_capped(&f, keep + 20, &mut set);
        assert_eq!(set.images.len(), 1);
        assert_eq!(set.images[0].loads.len(), 1);
        assert_eq!(set.problems.len(), 1, "{:?}", set.problems);
        assert!(set.problems[0]
            .what
            .contains(&format!("first {keep} bytes")));
        // Exactly at the cap: all of it, no problem.
        let mut set = TraceSet::default();
        read_file_capped(&f, s.len() as u64, &mut set);
        assert_eq!(set.images[0].loads.len(), 10);
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        assert_eq!(MAX_FILE_BYTES, 256 << 20);
    }
}
