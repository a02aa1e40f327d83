//! Reading trace directories and files into a model, forgivingly and as a
//! stream.
//!
//! Nothing in a trace can make this panic: a file that is not a trace is
//! skipped, a line that cannot be used is skipped, and every skip is recorded
//! as a [`Problem`] (file, line, what) for the caller to show (at most
//! [`MAX_PROBLEMS_PER_FILE`] per file, then how many more).
//!
//! A file is read line by line, never whole: repeated identical events are
//! folded as they are read (`fold.rs`), so the memory a trace takes grows
//! with the distinct events in it, not with its size, and a repeat costs a
//! hash lookup instead of a JSON parse.

use super::files::open_regular;
use super::fold::{split_line, Folded, Split};
use super::image::{Events, UNIQUE};
use super::{io_msg, LAUNCHER_FILE};
use cudnn_trace_format::read::{parse_line, Event, LineError, PinSettings, Process};
use cudnn_trace_format::SCHEMA_VERSION;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use super::image::{Failed, Image, Loss, Problem, TraceSet};

/// A longer line is not an event the shim wrote (its longest, a load with
/// every candidate the loader tried, is a few hundred KiB): skipped
/// without being held in memory.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Problems listed per file; the rest are counted in one more line (a
/// gigabyte of garbage must not become a gigabyte of messages).
pub const MAX_PROBLEMS_PER_FILE: usize = 50;

/// How often, in bytes read, the progress callback hears of it.
const PROGRESS_STEP: u64 = 4 << 20;

/// Reads trace directories (every `*.jsonl` in them plus `launcher.json`)
/// and single files.
pub fn read_paths(paths: &[PathBuf]) -> TraceSet {
    read_paths_with(paths, &mut |_| {})
}

/// [`read_paths`], telling `progress` how many bytes of trace files were
/// read so far (every few MiB and after each file), for a progress bar
/// against [`input_bytes`].
pub fn read_paths_with(paths: &[PathBuf], progress: &mut dyn FnMut(u64)) -> TraceSet {
    read_paths_as(paths, progress, Shared::new(true))
}

/// [`read_paths_with`], every image in a class of its own
/// ([`Image::class`]) with its own events and their own times: for the
/// timeline (`report --format chrome`), which draws each process's times.
pub fn read_paths_timed(paths: &[PathBuf], progress: &mut dyn FnMut(u64)) -> TraceSet {
    read_paths_as(paths, progress, Shared::new(false))
}

fn read_paths_as(paths: &[PathBuf], progress: &mut dyn FnMut(u64), mut shared: Shared) -> TraceSet {
    let mut set = TraceSet::default();
    let mut done = 0u64;
    let mut add = |n: u64| {
        done += n;
        progress(done)
    };
    for p in paths {
        set.sources.push(p.clone());
        match fs::metadata(p) {
            Ok(md) if md.is_dir() => read_dir(p, &mut set, &mut shared, &mut add),
            Ok(_) => read_file(p, &mut set, &mut shared, &mut add),
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

/// The bytes of trace files [`read_paths`] would read (what a progress bar
/// counts to): the `*.jsonl` files of each directory, and each file given.
pub fn input_bytes(paths: &[PathBuf]) -> u64 {
    let size =
        |p: &Path| fs::symlink_metadata(p).map_or(0, |m| if m.is_file() { m.len() } else { 0 });
    paths
        .iter()
        .map(|p| match fs::read_dir(p) {
            Ok(rd) => rd
                .flatten()
                .map(|e| e.path())
                .filter(|f| f.extension().is_some_and(|x| x == "jsonl"))
                .map(|f| size(&f))
                .sum(),
            Err(_) => size(p),
        })
        .sum()
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
        p.events_mut().append(&c.events);
        // Its content is now its own.
        p.class = UNIQUE;
    }
}

fn read_dir(dir: &Path, set: &mut TraceSet, shared: &mut Shared, progress: &mut dyn FnMut(u64)) {
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
        read_file(&f, set, shared, progress);
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
    match super::record::read_record(path) {
        Ok(rec) => set.launchers.push((path.to_path_buf(), rec)),
        Err(what) => set.problems.push(Problem {
            file: path.display().to_string(),
            line: None,
            what,
        }),
    }
}

fn read_file(path: &Path, set: &mut TraceSet, shared: &mut Shared, progress: &mut dyn FnMut(u64)) {
    if path.file_name().is_some_and(|n| n == LAUNCHER_FILE) {
        read_launcher(path, set);
        return;
    }
    let (file, size) = match open_regular(path) {
        Ok(f) => f,
        Err(e) => {
            set.problems.push(Problem {
                file: path.display().to_string(),
                line: None,
                what: e.to_string(),
            });
            return;
        }
    };
    if size == 0 {
        set.empty_files.push(path.to_path_buf());
    }
    // A buffer no larger than the file: most traces are a few hundred
    // bytes, and a 1 MiB buffer for each costs an mmap, page faults and an
    // munmap (10,000 files in a fleet, one in every launcher run).
    let cap = usize::try_from(size).map_or(1 << 20, |n| n.clamp(4 << 10, 1 << 20));
    let reader = BufReader::with_capacity(cap, file);
    let (image, problems) = parse_shared(reader, path, shared, progress);
    set.problems.extend(problems);
    if let Some(img) = image {
        set.images.push(img);
    }
}

/// The part of an image's class key ([`Builder::content_key`]) that comes
/// from its header: every field but the process's identity (pid, ppid,
/// tid), its times and the rank variables of [`super::image::RANK_ENV`],
/// each length-prefixed so that no two headers share a key. Written field
/// by field rather than through `Debug` (a fifth of the launcher's summary
/// of a one-process run went to formatting the environment); the
/// destructuring names every field, so a new one cannot be left out
/// silently.
fn header_key(h: &Process) -> Vec<u8> {
    let Process {
        lost,
        lost_errno,
        v,
        shim,
        pid: _,
        ppid: _,
        tid: _,
        t_ns: _,
        wall_ms: _,
        exe,
        argv,
        hostname,
        cwd,
        env,
        mode,
        origin,
        glibc,
        calls,
        preload,
        pin,
    } = h;
    let mut k = Vec::with_capacity(512);
    let num = |k: &mut Vec<u8>, n: u64| k.extend_from_slice(&n.to_le_bytes());
    let text = |k: &mut Vec<u8>, s: &str| {
        num(k, s.len() as u64);
        k.extend_from_slice(s.as_bytes());
    };
    let opt = |k: &mut Vec<u8>, s: Option<&str>| match s {
        None => k.push(0),
        Some(s) => {
            k.push(1);
            text(k, s);
        }
    };
    num(&mut k, *lost);
    num(&mut k, *lost_errno as u64);
    num(&mut k, u64::from(*v));
    text(&mut k, shim);
    opt(&mut k, exe.as_deref());
    num(&mut k, argv.len() as u64);
    for a in argv {
        text(&mut k, a);
    }
    opt(&mut k, hostname.as_deref());
    opt(&mut k, cwd.as_deref());
    let kept = env
        .iter()
        .filter(|(name, _)| !super::image::RANK_ENV.contains(&name.as_str()));
    num(&mut k, kept.clone().count() as u64);
    for (name, value) in kept {
        text(&mut k, name);
        text(&mut k, value);
    }
    text(&mut k, mode);
    text(&mut k, origin);
    opt(&mut k, glibc.as_deref());
    opt(&mut k, calls.as_deref());
    k.push(u8::from(*preload));
    match pin {
        None => k.push(0),
        Some(PinSettings { dir, mode }) => {
            k.push(1);
            text(&mut k, dir);
            text(&mut k, mode);
        }
    }
    k
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
    parse_stream(bytes, path, &mut |_| {})
}

/// [`parse_trace`] from a reader, line by line, telling `progress` how
/// many more bytes were read (every [`PROGRESS_STEP`], and at the end).
pub fn parse_stream<R: BufRead>(
    r: R,
    path: &Path,
    progress: &mut dyn FnMut(u64),
) -> (Option<Image>, Vec<Problem>) {
    parse_shared(r, path, &mut Shared::new(false), progress)
}

/// What the files of one read share: each distinct event is parsed once
/// for all of them (a fleet of workers writes the same events), and the
/// images found so far by content, so that a twin shares its first's
/// [`Events`] and class ([`Image::class`]).
pub struct Shared {
    /// An event's identity (the line from `tid` on, `fold::split_line`) →
    /// its id and the event as first parsed (its `seq`, times, pid and
    /// tid are set anew for each image it is met in).
    events: FxHashMap<Box<[u8]>, (u32, Event)>,
    /// An image's content (see [`Builder::content_key`]) → its class and
    /// events; None: every image is of a class of its own.
    classes: Option<Classes>,
}

/// An image's content key → its class and events ([`Shared::classes`]).
type Classes = FxHashMap<Box<[u8]>, (u32, Arc<Events>)>;

impl Shared {
    /// `classes`: whether images of the same content share their events.
    pub fn new(classes: bool) -> Self {
        Shared {
            events: FxHashMap::default(),
            classes: classes.then(FxHashMap::default),
        }
    }

    /// The image's class and its events: those of an earlier image with
    /// the same content, else its own, the first of a new class.
    fn classify(&mut self, key: Option<Vec<u8>>, events: Events) -> (u32, Arc<Events>) {
        let (Some(classes), Some(key)) = (self.classes.as_mut(), key) else {
            return (UNIQUE, Arc::new(events));
        };
        let next = u32::try_from(classes.len()).unwrap_or(UNIQUE);
        let (class, shared) = classes
            .entry(key.into_boxed_slice())
            .or_insert_with(|| (next, Arc::new(events)));
        (*class, Arc::clone(shared))
    }
}

/// [`parse_stream`] sharing events and classes with the other files of a
/// read.
fn parse_shared<R: BufRead>(
    mut r: R,
    path: &Path,
    shared: &mut Shared,
    progress: &mut dyn FnMut(u64),
) -> (Option<Image>, Vec<Problem>) {
    let mut b = Builder::new(path, shared);
    let mut buf = Vec::new();
    let mut unreported = 0u64;
    loop {
        let line = match next_line(&mut r, &mut buf, MAX_LINE_BYTES) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                b.problem(None, format!("cannot read further: {}", io_msg(&e)));
                break;
            }
        };
        unreported += line.bytes;
        if unreported >= PROGRESS_STEP {
            progress(std::mem::take(&mut unreported));
        }
        if !b.line(&buf, &line) {
            break;
        }
    }
    progress(unreported);
    b.finish()
}

/// What [`next_line`] read.
struct Line {
    /// Ended by a newline (the last line of a file may not be).
    complete: bool,
    /// Longer than the cap: its bytes were dropped.
    overlong: bool,
    /// Bytes consumed, newline included.
    bytes: u64,
}

/// Reads the next line into `buf` (without its newline), holding at most
/// `cap` bytes of it. None at the end of the input.
fn next_line<R: BufRead>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<Line>> {
    buf.clear();
    let (mut overlong, mut bytes) = (false, 0u64);
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((bytes > 0).then_some(Line {
                complete: false,
                overlong,
                bytes,
            }));
        }
        let (take, complete) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i, true),
            None => (chunk.len(), false),
        };
        if !overlong && buf.len() + take > cap {
            overlong = true;
            buf.clear();
        }
        if !overlong {
            buf.extend_from_slice(&chunk[..take]);
        }
        let used = take + usize::from(complete);
        r.consume(used);
        bytes += used as u64;
        if complete {
            return Ok(Some(Line {
                complete,
                overlong,
                bytes,
            }));
        }
    }
}

/// Which list of the image a folded event is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Load(usize),
    Failed(usize),
    Unload(usize),
    Note(usize),
    Pin(usize),
    Version(usize),
    Call(usize),
    CallCounts(usize),
    DriverClient(usize),
}

/// A recent failed request: what a `dlerror` event (which names its
/// request's `seq`) is matched against.
#[derive(Debug, Clone, Copy)]
struct Recent {
    seq: u64,
    tid: u32,
    group: usize,
    /// The failure written just before it, when there was one.
    before: Option<(usize, u32)>,
}

/// How many recent failures a `dlerror` event can still name. The shim
/// writes a `dlerror` event when the program reads the text, right after
/// its request failed; an older one is reported as unmatched.
const RECENT_FAILURES: usize = 1024;

/// One file's image as it is read: the events so far, folded, and the
/// bounded state needed to fold the next line.
struct Builder<'s> {
    path: PathBuf,
    label: String,
    /// The header, once read (the first line).
    header: Option<Process>,
    events: Events,
    shared: &'s mut Shared,
    problems: Vec<Problem>,
    /// Problems past [`MAX_PROBLEMS_PER_FILE`], counted.
    unlisted: usize,
    /// The 1-based number of the line being read.
    n: usize,
    /// Where each distinct event of this file is, by its id in
    /// [`Shared::events`].
    seen: FxHashMap<u32, Slot>,
    /// The distinct events in the order they first happened, by id; None
    /// once one could not be identified (a line of another layout): the
    /// image is then of a class of its own.
    order: Option<Vec<(Slot, u32)>>,
    recent: VecDeque<Recent>,
}

impl<'s> Builder<'s> {
    fn new(path: &Path, shared: &'s mut Shared) -> Self {
        Builder {
            path: path.to_path_buf(),
            label: path.display().to_string(),
            header: None,
            events: Events::default(),
            shared,
            problems: Vec::new(),
            unlisted: 0,
            n: 0,
            seen: FxHashMap::default(),
            order: Some(Vec::new()),
            recent: VecDeque::new(),
        }
    }

    fn problem(&mut self, line: Option<usize>, what: String) {
        if self.problems.len() >= MAX_PROBLEMS_PER_FILE {
            self.unlisted += 1;
            return;
        }
        self.problems.push(Problem {
            file: self.label.clone(),
            line,
            what,
        });
    }

    /// The image and the problems, once every line is read.
    fn finish(mut self) -> (Option<Image>, Vec<Problem>) {
        let image = self.header.take().map(|header| {
            // Kept for the whole report, beside thousands of others: no
            // room for growth.
            let mut events = std::mem::take(&mut self.events);
            events.shrink_to_fit();
            let key = self.content_key(&header, &events);
            let (class, events) = self.shared.classify(key, events);
            let index = image_index(&self.path);
            Image {
                events,
                class,
                ..Image::new(self.path.clone(), index, header)
            }
        });
        if self.n == 0 {
            self.problem(
                None,
                "empty file (its process could not write even its first line: a full disk?); skipped"
                    .into(),
            );
        }
        if self.unlisted > 0 {
            self.problems.push(Problem {
                file: self.label.clone(),
                line: None,
                what: format!("{} more problems in this file not listed", self.unlisted),
            });
        }
        (image, self.problems)
    }

    /// What makes two images alike ([`Image::class`]): the header but for
    /// identity (pids, rank variables) and times, and each distinct event (by id) with its first
    /// `seq`, count and last `seq`, and the `dlerror` texts of failures.
    /// None when an event could not be identified.
    fn content_key(&self, header: &Process, events: &Events) -> Option<Vec<u8>> {
        let order = self.order.as_ref()?;
        self.shared.classes.as_ref()?;
        let mut key = header_key(header);
        fn put(key: &mut Vec<u8>, n: u64) {
            key.extend_from_slice(&n.to_le_bytes());
        }
        macro_rules! counts {
            ($f:expr) => {{
                let f = $f;
                (f.seq, f.count, f.last_seq)
            }};
        }
        for &(slot, id) in order {
            put(&mut key, u64::from(id));
            let (seq, count, last) = match slot {
                Slot::Load(i) => counts!(&events.loads[i]),
                Slot::Unload(i) => counts!(&events.unloads[i]),
                Slot::Note(i) => counts!(&events.notes[i]),
                Slot::Pin(i) => counts!(&events.pins[i]),
                Slot::Version(i) => counts!(&events.versions[i]),
                Slot::Call(i) => counts!(&events.calls[i]),
                Slot::CallCounts(i) => counts!(&events.call_counts[i]),
                Slot::DriverClient(i) => counts!(&events.driver_clients[i]),
                Slot::Failed(i) => {
                    let f = &events.failed[i];
                    put(&mut key, f.dlerror.len() as u64);
                    for e in &f.dlerror {
                        put(&mut key, e.len() as u64);
                        key.extend_from_slice(e.as_bytes());
                    }
                    (f.ev.seq, f.count, f.last_seq)
                }
            };
            for n in [seq, count, last] {
                put(&mut key, n);
            }
        }
        Some(key)
    }

    /// Takes one line; false when the file turned out not to be a trace
    /// (nothing more to read).
    fn line(&mut self, raw: &[u8], line: &Line) -> bool {
        self.n += 1;
        let n = self.n;
        if line.overlong {
            let what = format!("line longer than {} MiB; skipped", MAX_LINE_BYTES >> 20);
            return self.not_first(n, what);
        }
        let split = split_line(raw);
        if self.header.is_some() && split.is_some_and(|sp| self.known(sp)) {
            return true;
        }
        if raw.iter().all(u8::is_ascii_whitespace) {
            return self.not_first(n, "blank first line; skipped".into());
        }
        let Ok(text) = std::str::from_utf8(raw) else {
            if self.header.is_none() {
                self.problem(
                    Some(n),
                    "not a trace file: first line is not text (binary data?); skipped".into(),
                );
                return false;
            }
            self.problem(Some(n), "line is not UTF-8 text; skipped".into());
            return true;
        };
        let text = text.trim_end_matches('\r');
        // The shim's layout names the kind first: `parse_line` then parses
        // straight into its type.
        let parsed = parse_line(text);
        if self.header.is_none() {
            return self.header(parsed, text, !line.complete);
        }
        match parsed {
            Ok(ev) => {
                let id = split.and_then(|sp| self.remember(sp, &ev));
                self.event(ev, id);
            }
            Err(e) => self.bad_line(&e, text, !line.complete),
        }
        true
    }

    /// A line that cannot be used: on the first line, the file is not a
    /// trace (false); later, a skipped line (true).
    fn not_first(&mut self, n: usize, what: String) -> bool {
        if self.header.is_none() {
            self.problem(Some(n), format!("not a trace file: {what}"));
            return false;
        }
        if !what.starts_with("blank") {
            self.problem(Some(n), what);
        }
        true
    }

    /// An event met before, in this file or another: a repeat is counted,
    /// an event new to this file copied from the one parsed before (false:
    /// never met, to be parsed).
    fn known(&mut self, s: Split<'_>) -> bool {
        let Some((id, ev)) = self.shared.events.get(s.rest) else {
            return false;
        };
        let id = *id;
        if kind_of(ev).as_bytes() != s.kind {
            return false;
        }
        let Some(&slot) = self.seen.get(&id) else {
            let mut ev = ev.clone();
            restamp(&mut ev, &s);
            self.event(ev, Some(id));
            return true;
        };
        let img = &mut self.events;
        let (seq, t) = (s.seq, s.t_ns);
        match slot {
            Slot::Load(i) => img.loads[i].again(seq, t),
            Slot::Unload(i) => img.unloads[i].again(seq, t),
            Slot::Note(i) => img.notes[i].again(seq, t),
            Slot::Pin(i) => img.pins[i].again(seq, t),
            Slot::Version(i) => img.versions[i].again(seq, t),
            Slot::Call(i) => img.calls[i].again(seq, t),
            Slot::CallCounts(i) => img.call_counts[i].again(seq, t),
            Slot::DriverClient(i) => img.driver_clients[i].again(seq, t),
            Slot::Failed(i) => {
                let f = &mut img.failed[i];
                f.count += 1;
                f.last_seq = f.last_seq.max(seq);
                self.remember_failure(seq, s.tid, i);
            }
        }
        true
    }

    /// The first line: the process header, or the file is not a trace.
    fn header(&mut self, parsed: Result<Event, LineError>, text: &str, truncated: bool) -> bool {
        let n = self.n;
        match parsed {
            Ok(Event::Process(header)) => {
                if header.v > SCHEMA_VERSION {
                    self.problem(
                        Some(n),
                        format!(
                            "schema version {} is newer than this reader's ({SCHEMA_VERSION}); reading what it can",
                            header.v
                        ),
                    );
                }
                self.header = Some(header);
                true
            }
            Ok(_) => {
                self.problem(
                    Some(n),
                    "not a trace file: first line is not a process header; skipped".into(),
                );
                false
            }
            Err(e) => {
                let why = if truncated {
                    "truncated process header".to_string()
                } else {
                    describe(&e, text)
                };
                self.problem(
                    Some(n),
                    format!(
                        "not a trace file: first line is not a process header ({why}); skipped"
                    ),
                );
                false
            }
        }
    }

    /// A new event parsed: its id, and the event kept for the lines (of
    /// any file) that repeat it. None for an event that is not kept in a
    /// list (a `dlerror`, a second header) or whose identity is another
    /// kind's.
    fn remember(&mut self, s: Split<'_>, ev: &Event) -> Option<u32> {
        if matches!(ev, Event::Process(_) | Event::DlError(_)) || kind_of(ev).as_bytes() != s.kind {
            return None;
        }
        let next = u32::try_from(self.shared.events.len()).ok()?;
        let (id, kept) = self
            .shared
            .events
            .entry(s.rest.into())
            .or_insert_with(|| (next, ev.clone()));
        // The same bytes as another kind's event: not one identity.
        (kind_of(kept) == kind_of(ev)).then_some(*id)
    }

    /// A new event (not a repeat): added to its list, and where it is
    /// remembered by its id (`id`), so that its repeats are folded into it.
    /// Without an id, the image is of a class of its own.
    fn event(&mut self, ev: Event, id: Option<u32>) {
        let img = &mut self.events;
        let slot = match ev {
            Event::Process(_) => {
                self.problem(Some(self.n), "second process header ignored".into());
                return;
            }
            Event::DlError(d) => return self.dlerror(d.req, &d.error),
            Event::Load(l) => push(&mut img.loads, l.seq, l.t_ns, l, Slot::Load),
            Event::Unload(u) => push(&mut img.unloads, u.seq, u.t_ns, u, Slot::Unload),
            Event::Note(x) => push(&mut img.notes, x.seq, x.t_ns, x, Slot::Note),
            Event::Pin(x) => push(&mut img.pins, x.seq, x.t_ns, x, Slot::Pin),
            Event::Version(x) => push(&mut img.versions, x.seq, x.t_ns, x, Slot::Version),
            Event::Call(x) => push(&mut img.calls, x.seq, x.t_ns, x, Slot::Call),
            Event::CallCounts(x) => push(&mut img.call_counts, x.seq, x.t_ns, x, Slot::CallCounts),
            Event::DriverClient(x) => push(
                &mut img.driver_clients,
                x.seq,
                x.t_ns,
                x,
                Slot::DriverClient,
            ),
            Event::LoadFailed(f) => {
                let (seq, tid, i) = (f.seq, f.tid, img.failed.len());
                img.failed.push(Failed::one(f));
                self.remember_failure(seq, tid, i);
                Slot::Failed(i)
            }
        };
        match id {
            Some(id) => {
                self.seen.entry(id).or_insert(slot);
                if let Some(order) = self.order.as_mut() {
                    order.push((slot, id));
                }
            }
            None => self.order = None,
        }
    }

    /// Keeps the last [`RECENT_FAILURES`] failures for `dlerror` events.
    fn remember_failure(&mut self, seq: u64, tid: u32, group: usize) {
        let before = self.recent.back().map(|r| (r.group, r.tid));
        if self.recent.len() == RECENT_FAILURES {
            self.recent.pop_front();
        }
        self.recent.push_back(Recent {
            seq,
            tid,
            group,
            before,
        });
    }

    /// The text the program read for the failed request `req`.
    fn dlerror(&mut self, req: u64, error: &str) {
        let Some(r) = self.recent.iter().rev().find(|r| r.seq == req).copied() else {
            // Its failure may be among the events a full disk cost.
            let why = if self.lossy() {
                " (lost to the full disk)"
            } else {
                ""
            };
            self.problem(
                Some(self.n),
                format!(
                    "dlerror event for request seq {req} that has no load_failed event{why}; ignored"
                ),
            );
            return;
        };
        let failed = &mut self.events.failed;
        // A request that failed for a missing dependency: the text (which
        // names the dependency) explains the dependency's own failure,
        // written just before it.
        if let Some((j, tid)) = r.before.filter(|_| failed[r.group].ev.dependency_failed) {
            let dep = &failed[j].ev;
            if tid == r.tid && dep.error.is_none() && error.contains(dep.name.as_str()) {
                failed[j].add_dlerror(error);
            }
        }
        failed[r.group].add_dlerror(error);
    }

    /// Whether the header says a write of this file failed (a full disk).
    fn lossy(&self) -> bool {
        self.header
            .as_ref()
            .is_some_and(|h| h.lost > 0 || h.lost_errno != 0)
    }

    fn bad_line(&mut self, e: &LineError, text: &str, truncated: bool) {
        let n = Some(self.n);
        let lossy = self.lossy();
        let what = match () {
            _ if truncated && lossy => "last line cut short: the disk took no more (the header counts the events lost); ignored".to_string(),
            _ if truncated => "truncated last line (the process was probably killed while writing it); ignored".to_string(),
            // The disk filled in the middle of this line and later took
            // writes again: the shim ended the line with a newline and
            // went on (docs/trace-format.md, "A full disk").
            _ if lossy && torn_event(text) => "line cut short when the disk was full (the header counts the events lost); ignored".to_string(),
            _ => format!("{}; skipped", describe(e, text)),
        };
        self.problem(n, what);
    }
}

/// The `ev` of an event.
fn kind_of(ev: &Event) -> &'static str {
    use cudnn_trace_format::ev;
    match ev {
        Event::Process(_) => ev::PROCESS,
        Event::Load(_) => ev::LOAD,
        Event::LoadFailed(_) => ev::LOAD_FAILED,
        Event::Unload(_) => ev::UNLOAD,
        Event::DlError(_) => ev::DLERROR,
        Event::Note(_) => ev::NOTE,
        Event::Pin(_) => ev::PIN,
        Event::Version(_) => ev::VERSION,
        Event::Call(_) => ev::CALL,
        Event::CallCounts(_) => ev::CALL_COUNTS,
        Event::DriverClient(_) => ev::DRIVER_CLIENT,
    }
}

/// An event parsed from another line with the same identity, made this
/// line's: its `seq`, times, pid, ppid and tid (everything else is in the
/// identity, so the result is what parsing this line gives).
fn restamp(ev: &mut Event, s: &Split<'_>) {
    macro_rules! stamp {
        ($e:expr) => {{
            let e = $e;
            (e.seq, e.t_ns, e.pid, e.ppid, e.tid) = (s.seq, s.t_ns, s.pid, s.ppid, s.tid);
        }};
    }
    match ev {
        Event::Load(e) => {
            stamp!(&mut *e);
            if s.t_start_ns.is_some() {
                e.t_start_ns = s.t_start_ns;
            }
        }
        Event::LoadFailed(e) => {
            stamp!(&mut *e);
            if s.t_start_ns.is_some() {
                e.t_start_ns = s.t_start_ns;
            }
        }
        // Never kept as an event of a list.
        Event::Process(_) => {}
        Event::Unload(e) => stamp!(e),
        Event::DlError(e) => stamp!(e),
        Event::Note(e) => stamp!(e),
        Event::Pin(e) => stamp!(e),
        Event::Version(e) => stamp!(e),
        Event::Call(e) => stamp!(e),
        Event::CallCounts(e) => stamp!(e),
        Event::DriverClient(e) => stamp!(e),
    }
}

/// Adds an event seen once to `list`; returns its slot.
fn push<T>(list: &mut Vec<Folded<T>>, seq: u64, t_ns: u64, ev: T, slot: fn(usize) -> Slot) -> Slot {
    list.push(Folded::one(ev, seq, t_ns));
    slot(list.len() - 1)
}

/// Whether `text` is the start of an event line that was cut short.
fn torn_event(text: &str) -> bool {
    text.starts_with("{\"ev\":") && !text.ends_with('}')
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
    use crate::model::fold::split_line;
    use crate::testutil::{header, tempdir};

    const LOAD: &str = r#"{"ev":"load","seq":1,"t_ns":10,"pid":4242,"ppid":1,"tid":4242,"name":"libcudnn.so.9","path":"/v/nvidia/cudnn/lib/libcudnn.so.9","realpath":"/v/nvidia/cudnn/lib/libcudnn.so.9.14.0","reason":"RUNPATH","reason_owner":"/v/torch/lib/libtorch_cuda.so","search_dir":"/v/nvidia/cudnn/lib","requester":"/v/torch/lib/libtorch_cuda.so","via":"needed","mode":null,"lmid":0,"soname":"libcudnn.so.9","dev":1,"ino":2,"size":3,"build_id":"ab","family":"cudnn","tried":[],"new":true}"#;
    const FAILED: &str = r#"{"ev":"load_failed","seq":2,"t_ns":11,"pid":4242,"ppid":1,"tid":4242,"name":"libcudnn_adv.so.9","requester":"/v/nvidia/cudnn/lib/libcudnn.so.9","via":"dlopen","mode":2,"lmid":0,"family":"cudnn","tried":[{"path":"/usr/local/cuda/lib64/libcudnn_adv.so.9","reason":"LD_LIBRARY_PATH","result":"missing"}],"error":null,"errno":2}"#;
    const DLERROR: &str = r#"{"ev":"dlerror","seq":3,"t_ns":12,"pid":4242,"ppid":1,"tid":4242,"req":2,"error":"libcudnn_adv.so.9: cannot open shared object file: No such file or directory"}"#;

    fn parse(s: &str) -> (Option<Image>, Vec<Problem>) {
        parse_trace(s.as_bytes(), Path::new("d/4242.jsonl"))
    }

    /// Every field of a header but the process's identity, its times and
    /// the rank variables tells two classes apart, and the length prefixes
    /// keep shifted strings apart.
    #[test]
    fn a_header_key_holds_every_field_but_identity_and_times() {
        let base = header(7, 1, "exec");
        let key = |line: &str| match parse_line(line) {
            Ok(Event::Process(p)) => header_key(&p),
            other => panic!("{line}: {other:?}"),
        };
        let same = [
            (r#""pid":7,"ppid":1,"tid":7"#, r#""pid":8,"ppid":2,"tid":9"#),
            (r#""t_ns":7000"#, r#""t_ns":1"#),
            (r#""wall_ms":1763700000000"#, r#""wall_ms":1"#),
            (r#""env":{"#, r#""env":{"RANK":"3","LOCAL_RANK":"1","#),
        ];
        for (from, to) in same {
            assert!(base.contains(from), "{from}");
            assert_eq!(key(&base), key(&base.replacen(from, to, 1)), "{to}");
        }
        let differs = [
            (r#""v":1"#, r#""lost":3,"v":1"#),
            (r#""v":1"#, r#""lost_errno":28,"v":1"#),
            (r#""v":1"#, r#""v":2"#),
            (r#""shim":"0.1.0""#, r#""shim":"0.1.1""#),
            (r#""exe":"/usr/bin/python3.11""#, r#""exe":null"#),
            (
                r#""argv":["python","train.py"]"#,
                r#""argv":["pytho","ntrain.py"]"#,
            ),
            (r#""argv":["python","train.py"]"#, r#""argv":["python"]"#),
            (r#""hostname":"node1""#, r#""hostname":"node2""#),
            (r#""cwd":"/w""#, r#""cwd":null"#),
            (r#""env":{"#, r#""env":{"CUDA_VISIBLE_DEVICES":"1","#),
            (r#""mode":"cuda""#, r#""mode":"all""#),
            (r#""origin":"exec""#, r#""origin":"fork""#),
            (r#""glibc":"2.36""#, r#""glibc":"2.39""#),
            (r#""preload":true"#, r#""calls":"on","preload":true"#),
            (r#""preload":true"#, r#""preload":false"#),
            (
                r#""preload":true"#,
                r#""preload":true,"pin":{"dir":"/p","mode":"strict"}"#,
            ),
        ];
        for (from, to) in differs {
            assert!(base.contains(from), "{from}");
            assert_ne!(key(&base), key(&base.replacen(from, to, 1)), "{to}");
        }
        let pin = |dir: &str, mode: &str| {
            key(&base.replacen(
                r#""preload":true"#,
                &format!(r#""preload":true,"pin":{{"dir":"{dir}","mode":"{mode}"}}"#),
                1,
            ))
        };
        assert_ne!(pin("/ps", "trict"), pin("/p", "strict"));
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

    /// `line` with its `seq`, `t_ns` and `tid` set.
    fn at(line: &str, seq: u64, tid: u32) -> String {
        let s = split_line(line.as_bytes()).unwrap();
        let rest = std::str::from_utf8(s.rest).unwrap();
        let kind = std::str::from_utf8(s.kind).unwrap();
        format!(
            r#"{{"ev":"{kind}","seq":{seq},"t_ns":{},"pid":4242,"ppid":1,"tid":{tid}{rest}"#,
            seq * 10
        )
    }

    /// A worker's trace: LOAD, FAILED and its DLERROR `rounds` times, in
    /// process `pid` (its own tid and times; the load with a search start).
    fn worker(pid: u32, ppid: u32, rounds: u64) -> String {
        let mut t = header(pid, ppid, "fork");
        for r in 0..rounds {
            let seq = 3 * r + 1;
            let mine = |l: &str, seq: u64| {
                at(l, seq, pid + 7)
                    .replace(
                        r#""pid":4242,"ppid":1,"#,
                        &format!(r#""pid":{pid},"ppid":{ppid},"#),
                    )
                    .replace(r#""t_ns":"#, &format!(r#""t_ns":{pid}"#))
            };
            let load = mine(LOAD, seq);
            let start = u64::from(pid) * 100 + r;
            let load = format!(
                r#"{},"t_start_ns":{start}}}"#,
                load.strip_suffix('}').unwrap()
            );
            t += &format!("\n{load}\n{}\n", mine(FAILED, seq + 1));
            t += &DLERROR
                .replace(r#""seq":3"#, &format!(r#""seq":{}"#, seq + 2))
                .replace(r#""req":2"#, &format!(r#""req":{}"#, seq + 1));
        }
        t + "\n"
    }

    #[test]
    fn alike_images_share_their_events_and_a_class() {
        let d = tempdir("classes");
        for (pid, rounds) in [(11, 2), (12, 2), (13, 2), (14, 3)] {
            fs::write(d.join(format!("{pid}.jsonl")), worker(pid, 10, rounds)).unwrap();
        }
        // The same events in another layout: not identified, not shared.
        let other = worker(15, 10, 2).replace(r#"{"ev":"load","seq":"#, r#"{"ev":"load","seq" :"#);
        fs::write(d.join("15.jsonl"), other).unwrap();
        let set = read_paths(std::slice::from_ref(&d));
        assert!(set.problems.is_empty(), "{:?}", set.problems);
        let img = |pid: u32| set.images.iter().find(|i| i.header.pid == pid).unwrap();
        assert!(img(11).alike(img(12)) && img(12).alike(img(13)));
        assert!(Arc::ptr_eq(&img(11).events, &img(13).events));
        assert_eq!(img(12).loads[0].count, 2);
        // One more round: another count, another class.
        assert!(!img(14).alike(img(11)) && img(14).class != UNIQUE);
        assert_eq!(img(15).class, UNIQUE);
        assert!(!img(15).alike(img(15)));
        assert_eq!((img(13).header.pid, img(13).header.ppid), (13, 10));
        // Workers of a job differ in their rank variables: still alike
        // (each keeps its own header); another GPU is another class.
        let env = |pid: u32, var: &str, v: &str| {
            let t =
                worker(pid, 10, 2).replacen(r#""env":{"#, &format!(r#""env":{{"{var}":"{v}","#), 1);
            fs::write(d.join(format!("{pid}.jsonl")), t).unwrap();
        };
        env(31, "RANK", "1");
        env(32, "RANK", "2");
        env(33, "CUDA_VISIBLE_DEVICES", "1");
        let set = read_paths(std::slice::from_ref(&d));
        let img = |pid: u32| set.images.iter().find(|i| i.header.pid == pid).unwrap();
        assert!(img(31).alike(img(32)) && img(31).alike(img(11)));
        assert_eq!(img(32).header.env["RANK"], "2");
        assert!(!img(33).alike(img(11)));
        for pid in [31, 32, 33] {
            fs::remove_file(d.join(format!("{pid}.jsonl"))).unwrap();
        }

        // Read for the timeline: no classes, and each image's events are
        // exactly what reading its file alone gives (an event met in an
        // earlier file is copied and given this line's seq, times, pid and
        // tid, never parsed again).
        let timed = read_paths_timed(std::slice::from_ref(&d), &mut |_| {});
        for t in &timed.images {
            assert_eq!(t.class, UNIQUE);
            let alone = parse_trace(&fs::read(&t.file).unwrap(), &t.file).0.unwrap();
            assert_eq!(format!("{:?}", t.events), format!("{:?}", alone.events));
            assert_eq!(t.loads[0].pid, t.header.pid);
            assert_eq!(t.loads[0].t_start_ns, Some(u64::from(t.header.pid) * 100));
        }
        // With classes, an image's events are its class's first's: the
        // same but for times, tids and pids.
        let mask = |i: &Image| {
            let mut e = (*i.events).clone();
            for l in &mut e.loads {
                (l.ev.t_ns, l.ev.t_start_ns, l.ev.pid, l.ev.tid, l.last_t_ns) = (0, None, 0, 0, 0);
            }
            for f in &mut e.failed {
                (f.ev.t_ns, f.ev.pid, f.ev.tid) = (0, 0, 0);
            }
            format!("{e:?}")
        };
        for (a, b) in set.images.iter().zip(&timed.images) {
            assert_eq!(a.file, b.file);
            assert_eq!(mask(a), mask(b));
        }
    }

    #[test]
    fn repeated_identical_events_are_folded_with_a_count() {
        let unload = r#"{"ev":"unload","seq":2,"t_ns":1,"pid":4242,"ppid":1,"tid":4242,"path":"/v/nvidia/cudnn/lib/libcudnn.so.9","lmid":0,"family":"cudnn"}"#;
        let mut s = format!("{}\n", header(4242, 1, "exec"));
        for k in 0..1000u64 {
            s += &at(LOAD, 2 * k + 1, 4242 + (k % 3) as u32);
            s.push('\n');
            s += &at(unload, 2 * k + 2, 4242);
            s.push('\n');
        }
        // The same library by another requester: another event.
        s += &at(
            &LOAD.replace("libtorch_cuda.so\",\"via", "other.so\",\"via"),
            3000,
            4242,
        );
        s.push('\n');
        let (img, probs) = parse(&s);
        assert!(probs.is_empty(), "{probs:?}");
        let img = img.unwrap();
        assert_eq!(img.loads.len(), 2);
        let (first, other) = (&img.loads[0], &img.loads[1]);
        assert_eq!((first.count, first.seq, first.last_seq), (1000, 1, 1999));
        assert_eq!((first.t_ns, first.last_t_ns), (10, 19990));
        assert_eq!(first.tid, 4242, "the first occurrence's");
        assert_eq!((other.count, other.seq), (1, 3000));
        assert_eq!(img.unloads.len(), 1);
        assert_eq!(
            (img.unloads[0].count, img.unloads[0].last_seq),
            (1000, 2000)
        );
    }

    #[test]
    fn folded_failures_keep_what_the_program_read() {
        let mut s = format!("{}\n", header(4242, 1, "exec"));
        for k in 0..100u64 {
            s += &at(FAILED, 2 * k + 1, 4242);
            s.push('\n');
            // The program reads the text of some of them.
            if k % 10 == 0 {
                s += &DLERROR.replace(r#""req":2"#, &format!(r#""req":{}"#, 2 * k + 1));
                s.push('\n');
            }
        }
        let (img, probs) = parse(&s);
        assert!(probs.is_empty(), "{probs:?}");
        let img = img.unwrap();
        assert_eq!(img.failed.len(), 1);
        assert_eq!((img.failed[0].count, img.failed[0].last_seq), (100, 199));
        assert_eq!(
            img.failed[0].errors(),
            vec!["libcudnn_adv.so.9: cannot open shared object file: No such file or directory"]
        );
    }

    /// A header that counts lost events, as the shim rewrites it in place.
    fn lossy_header(pid: u32, lost: u64) -> String {
        header(pid, 1, "exec").replacen(
            r#"{"ev":"process","#,
            &format!(r#"{{"ev":"process","lost":{lost:<20},"lost_errno":28   ,"#),
            1,
        )
    }

    #[test]
    fn a_line_torn_by_a_full_disk_is_explained_where_it_is() {
        // The disk filled in the middle of a line, then took writes again:
        // the shim ended the line, wrote its loss note and went on.
        let torn = &FAILED[..60];
        let note = r#"{"ev":"note","seq":3,"t_ns":13,"pid":4242,"ppid":1,"tid":4242,"level":"error","msg":"1 events could not be written to d/4242.jsonl (No space left on device) and are lost (1 in all in this file)","lost":1,"errno":28}"#;
        let s = format!(
            "{}\n{LOAD}\n{torn}\n{note}\n{DLERROR}\n",
            lossy_header(4242, 1)
        );
        let (img, probs) = parse(&s);
        assert_eq!(probs.len(), 2, "{probs:?}");
        assert_eq!(probs[0].line, Some(3));
        assert!(
            probs[0]
                .what
                .starts_with("line cut short when the disk was full"),
            "{probs:?}"
        );
        // The text the program read for the failure that was torn.
        assert_eq!(probs[1].line, Some(5));
        assert!(
            probs[1].what.contains("(lost to the full disk)"),
            "{probs:?}"
        );
        let img = img.unwrap();
        assert_eq!(img.header.lost, 1);
        assert_eq!(img.notes.len(), 1);
        assert_eq!(img.notes[0].ev.lost, Some(1));
        // Without a loss in the header the same bytes are just not JSON.
        let s = format!("{}\n{LOAD}\n{torn}\n{DLERROR}\n", header(4242, 1, "exec"));
        let (_, probs) = parse(&s);
        assert!(probs[0].what.contains("not a JSON object"), "{probs:?}");
        assert!(!probs[1].what.contains("full disk"), "{probs:?}");
    }

    #[test]
    fn lines_of_another_layout_are_read_not_folded() {
        // Fields in another order (a hand-written trace): read one by one.
        let moved = LOAD
            .replace(r#""seq":1,"t_ns":10,"#, "")
            .replace(r#""new":true}"#, r#""new":true,"seq":1,"t_ns":10}"#);
        let s = format!("{}\n{moved}\n{moved}\n", header(4242, 1, "exec"));
        let (img, probs) = parse(&s);
        assert!(probs.is_empty(), "{probs:?}");
        let img = img.unwrap();
        assert_eq!(img.loads.len(), 2);
        assert!(img.loads.iter().all(|l| l.count == 1));
    }

    #[test]
    fn big_files_are_streamed_long_lines_skipped_problems_bounded() {
        let mut s = format!("{}\n{LOAD}\n", header(10, 1, "exec"));
        // A line longer than any event: skipped without being held.
        s.push_str(&"x".repeat(MAX_LINE_BYTES + 10));
        s.push('\n');
        for _ in 0..(MAX_PROBLEMS_PER_FILE + 7) {
            s.push_str("garbage\n");
        }
        s.push_str(FAILED);
        s.push('\n');
        let mut seen = 0u64;
        let (img, probs) = parse_stream(s.as_bytes(), Path::new("d/10.jsonl"), &mut |n| seen += n);
        assert_eq!(seen, s.len() as u64, "progress counts every byte");
        let img = img.unwrap();
        assert_eq!((img.loads.len(), img.failed.len()), (1, 1));
        assert_eq!(probs.len(), MAX_PROBLEMS_PER_FILE + 1, "{probs:?}");
        assert_eq!(probs[0].line, Some(3));
        assert!(probs[0].what.contains("longer than 16 MiB"), "{probs:?}");
        assert!(probs[1].what.contains("not a JSON object"), "{probs:?}");
        assert_eq!(
            probs.last().unwrap().what,
            "8 more problems in this file not listed"
        );
        // A file that is one long line is not a trace.
        let long = "y".repeat(MAX_LINE_BYTES + 1);
        let (img, probs) = parse(&long);
        assert!(img.is_none());
        assert!(
            probs[0].what.contains("not a trace file: line longer"),
            "{probs:?}"
        );
    }

    #[test]
    fn a_stream_in_small_pieces_reads_as_the_whole() {
        // Lines cut across every buffer boundary, a repeat, a failure and
        // its dlerror, a bad line and a truncated last one.
        let s = format!(
            "{}\n{LOAD}\n{}\n{FAILED}\n{DLERROR}\nnot json\n{}\n{{\"ev\":\"load\",\"seq\":9",
            header(4242, 1, "exec"),
            at(LOAD, 7, 4243),
            at(FAILED, 8, 4242),
        );
        let (whole, pw) = parse(&s);
        for cap in [1, 2, 7, 64, 333] {
            let r = std::io::BufReader::with_capacity(cap, s.as_bytes());
            let (img, probs) = parse_stream(r, Path::new("d/4242.jsonl"), &mut |_| {});
            assert_eq!(probs, pw, "buffer of {cap}");
            let (a, b) = (img.unwrap(), whole.as_ref().unwrap());
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "buffer of {cap}");
        }
        let img = whole.unwrap();
        assert_eq!((img.loads[0].count, img.failed[0].count), (2, 2));
        assert_eq!(pw.len(), 2, "{pw:?}");
    }

    #[test]
    fn input_bytes_counts_the_trace_files() {
        let d = tempdir("inbytes");
        fs::write(d.join("1.jsonl"), "abc").unwrap();
        fs::write(d.join("2.jsonl"), "defg").unwrap();
        fs::write(d.join("notes.txt"), "ignored").unwrap();
        assert_eq!(input_bytes(&[d.clone(), d.join("1.jsonl")]), 10);
    }
}
