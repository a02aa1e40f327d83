//! The machine-readable document of `report --format json` and the
//! launcher's `--json-summary` (described in `docs/output.md`).

use crate::analysis::files::{ImageFiles, NotAsked, StartupFailure, StaticRuntime};
use crate::analysis::findings::{fold_across, Finding, ImageFindings, Severity};
use crate::analysis::libraries::{libraries_with, LibraryView};
use crate::analysis::pin::{pin_view, PinView};
use crate::analysis::{Diagnosis, Link, ProcessTree};
use crate::model::{Failed, LauncherRecord, Problem, TraceSet};
use cudnn_trace_format::read::Tried;
use serde::Serialize;
use std::collections::BTreeMap;

/// Version of the JSON document; bump when a field changes meaning.
/// 2: versions are objects of numbers (`{"major":9,"minor":19,"patch":0,
/// "text":"9.19.0"}`); a finding has `fix`, `alternatives` and
/// `consequence_of` instead of `remedy`; the flat, ranked `findings` list.
pub const REPORT_VERSION: u32 = 2;

#[derive(Serialize)]
pub struct Document<'a> {
    pub report_version: u32,
    pub tool_version: &'static str,
    pub sources: Vec<String>,
    pub launchers: Vec<&'a LauncherRecord>,
    /// Written one process at a time (no list of them all is built).
    pub processes: Processes<'a>,
    pub problems: &'a [Problem],
    /// How many findings of each severity, over all processes.
    pub findings_total: BTreeMap<&'static str, usize>,
    /// How many findings `--ignore` or the configuration file left out
    /// (each process lists them in `ignored_findings`); absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    pub findings_ignored: usize,
    /// Every finding once, ranked (the root cause first, as the text
    /// verdict names it): identical findings of several processes folded,
    /// with their pids. Findings the policy ignored are not in it.
    pub findings: Vec<FlatFinding>,
    /// The findings the policy ignored, folded the same way, each with its
    /// `policy` mark; absent when none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_findings: Vec<FlatFinding>,
    /// Where each knowledge table came from (`embedded` or an override path).
    pub knowledge: &'a BTreeMap<String, String>,
    pub knowledge_warnings: &'a [String],
    /// What a full disk cost the traces (events not written, empty files),
    /// when it cost something (docs/trace-format.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_loss: Option<crate::model::trace::Loss>,
}

/// A finding of the flat list, with the processes it was made in.
#[derive(Serialize)]
pub struct FlatFinding {
    #[serde(flatten)]
    pub finding: Finding,
    pub pids: Vec<u32>,
}

/// The findings of every process as one ranked, folded list.
fn flat(images: &[ImageFindings]) -> Vec<FlatFinding> {
    fold_across(images)
        .into_iter()
        .map(|(finding, pids)| FlatFinding { finding, pids })
        .collect()
}

#[derive(Serialize)]
pub struct ProcessDoc<'a> {
    pub file: String,
    pub pid: u32,
    pub ppid: u32,
    /// `n` of `<pid>.<n>.jsonl`: 0 for the first image of a pid.
    pub image: u32,
    pub hostname: Option<&'a str>,
    pub exe: Option<&'a str>,
    pub argv: &'a [String],
    pub cwd: Option<&'a str>,
    /// `exec` or `fork`.
    pub origin: &'a str,
    pub mode: &'a str,
    pub shim: &'a str,
    pub glibc: Option<&'a str>,
    pub preload: bool,
    pub wall_ms: u64,
    pub env: &'a BTreeMap<String, String>,
    /// The trace file of the parent image in the tree (its process, or for
    /// an exec, the previous image of the same pid).
    pub parent: Option<String>,
    /// `child`, `exec` (new image of `parent`'s pid) or `root`.
    pub link: &'static str,
    /// Whether this pid is the program the launcher started.
    pub top: bool,
    /// How it ended, when the launcher knows.
    pub ended: Option<String>,
    pub libraries: &'a [LibraryView],
    /// Libraries whose version could not be asked at report time, and why.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub versions_not_asked: &'a [NotAsked],
    /// Objects that carry a CUDA runtime linked into them (`nvidia`: one
    /// of NVIDIA's libraries, which all do).
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub static_runtimes: &'a [StaticRuntime],
    /// The library the loader could not find at start-up, with the copies
    /// on this machine, when that is how the process ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_failure: Option<&'a StartupFailure>,
    pub failed_loads: Vec<FailedDoc<'a>>,
    pub notes: Vec<NoteDoc<'a>>,
    /// What is wrong, with evidence and a remedy (`cudnn-trace explain CODE`).
    pub findings: &'a [Finding],
    /// Findings that `--ignore` or the configuration file left out, each
    /// with its `policy` mark; absent when none.
    #[serde(skip_serializing_if = "<[Finding]>::is_empty")]
    pub ignored_findings: &'a [Finding],
    /// The cuDNN pin of this process and what it did; absent when not pinned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pin: Option<PinView>,
}

#[derive(Serialize)]
pub struct FailedDoc<'a> {
    pub seq: u64,
    /// How many identical failures this stands for (1 for one).
    pub count: u64,
    pub name: &'a str,
    pub family: Option<&'a str>,
    pub requester: Option<&'a str>,
    pub via: &'a str,
    pub mode: Option<i64>,
    pub lmid: i64,
    pub tried: Vec<TriedDoc<'a>>,
    /// The loader's error texts (recorded with the failure, and what the
    /// program read from `dlerror()`), without repeats.
    pub errors: Vec<&'a str>,
    pub errno: Option<i32>,
    /// ld.so gave up during this start-up search and ended the process
    /// (exit status 127, before `main`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fatal: bool,
}

#[derive(Serialize)]
pub struct TriedDoc<'a> {
    pub path: &'a str,
    pub reason: &'a str,
    pub result: &'a str,
}

#[derive(Serialize)]
pub struct NoteDoc<'a> {
    pub seq: u64,
    /// How many identical notes this stands for (1 for one).
    pub count: u64,
    pub level: &'a str,
    pub msg: &'a str,
}

fn tried(t: &Tried) -> TriedDoc<'_> {
    TriedDoc {
        path: &t.path,
        reason: &t.reason,
        result: &t.result,
    }
}

/// The machine-readable document. `all`: include libraries outside the
/// CUDA family (only in traces taken with `--all`).
pub fn document<'a>(
    set: &'a TraceSet,
    tree: &'a ProcessTree,
    all: bool,
    d: &'a Diagnosis,
) -> Document<'a> {
    document_with(set, tree, all, d, &[])
}

/// The `processes` of the document: each one's entry is made as it is
/// written, so that a report of ten thousand processes never holds ten
/// thousand entries (their library lists are computed) at once.
pub struct Processes<'a> {
    set: &'a TraceSet,
    tree: &'a ProcessTree,
    all: bool,
    d: &'a Diagnosis,
    files: &'a [ImageFiles],
}

impl Serialize for Processes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.set.images.len()))?;
        // The library list of the image before, for the images alike it
        // (`Image::class`; alike images are read in a row).
        let mut libs: Option<(usize, Vec<LibraryView>)> = None;
        for (i, img) in self.set.images.iter().enumerate() {
            let alike = libs
                .as_ref()
                .is_some_and(|(j, _)| self.set.images[*j].alike(img));
            if !alike {
                libs = Some((i, libraries_with(img, self.all, self.files.get(i))));
            }
            let libs = libs.as_ref().map_or(&[][..], |(_, l)| &l[..]);
            seq.serialize_element(&self.process(i, libs))?;
        }
        seq.end()
    }
}

impl<'a> Processes<'a> {
    /// The entry of image `i`, with its libraries.
    fn process<'b>(&self, i: usize, libraries: &'b [LibraryView]) -> ProcessDoc<'b>
    where
        'a: 'b,
    {
        let (set, files, d) = (self.set, self.files, self.d);
        let img = &set.images[i];
        let h = &img.header;
        let (parent, link) = match self.tree.link[i] {
            Link::Root => (None, "root"),
            Link::Child(p) => (Some(set.images[p].file.display().to_string()), "child"),
            Link::Exec(p) => (Some(set.images[p].file.display().to_string()), "exec"),
        };
        ProcessDoc {
            file: img.file.display().to_string(),
            pid: h.pid,
            ppid: h.ppid,
            image: img.index,
            hostname: h.hostname.as_deref(),
            exe: h.exe.as_deref(),
            argv: &h.argv,
            cwd: h.cwd.as_deref(),
            origin: &h.origin,
            mode: &h.mode,
            shim: &h.shim,
            glibc: h.glibc.as_deref(),
            preload: h.preload,
            wall_ms: h.wall_ms,
            env: &h.env,
            parent,
            link,
            top: self.tree.top[i],
            ended: self.tree.ending[i].clone(),
            libraries,
            versions_not_asked: files.get(i).map_or(&[][..], |f| &f.not_asked[..]),
            startup_failure: files.get(i).and_then(|f| f.startup.as_ref()),
            static_runtimes: files.get(i).map_or(&[][..], |f| &f.static_runtimes[..]),
            failed_loads: img.failed.iter().map(failed_doc).collect(),
            notes: img
                .notes
                .iter()
                .map(|n| NoteDoc {
                    seq: n.seq,
                    count: n.count,
                    level: &n.level,
                    msg: &n.msg,
                })
                .collect(),
            pin: pin_view(img),
            findings: d.images.get(i).map_or(&[][..], |f| &f.findings[..]),
            ignored_findings: d.ignored.get(i).map_or(&[][..], |f| &f.findings[..]),
        }
    }
}

fn failed_doc(f: &Failed) -> FailedDoc<'_> {
    FailedDoc {
        seq: f.ev.seq,
        count: f.count,
        name: &f.ev.name,
        family: f.ev.family.as_deref(),
        requester: f.ev.requester.as_deref(),
        via: &f.ev.via,
        mode: f.ev.mode,
        lmid: f.ev.lmid,
        tried: f.ev.tried.iter().map(tried).collect(),
        errors: f.errors(),
        errno: f.ev.errno,
        fatal: f.ev.fatal,
    }
}

/// [`document`] with what the machine says about each image's files
/// (versions found outside the trace, files that could not be asked).
pub fn document_with<'a>(
    set: &'a TraceSet,
    tree: &'a ProcessTree,
    all: bool,
    d: &'a Diagnosis,
    files: &'a [ImageFiles],
) -> Document<'a> {
    let processes = Processes {
        set,
        tree,
        all,
        d,
        files,
    };
    Document {
        report_version: REPORT_VERSION,
        tool_version: env!("CARGO_PKG_VERSION"),
        sources: set
            .sources
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        launchers: launchers(set),
        processes,
        problems: &set.problems,
        findings_total: [Severity::Error, Severity::Warning, Severity::Info]
            .into_iter()
            .map(|s| (s.as_str(), d.all().filter(|f| f.severity == s).count()))
            .collect(),
        findings_ignored: d.ignored_all().count(),
        findings: flat(&d.images),
        ignored_findings: flat(&d.ignored),
        knowledge: &d.knowledge_origin,
        knowledge_warnings: &d.knowledge_warnings,
        trace_loss: set.loss(),
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The launcher records of the set, for the JSON document.
pub fn launchers(set: &TraceSet) -> Vec<&LauncherRecord> {
    set.launchers.iter().map(|(_, r)| r).collect()
}
