//! Findings: from "what loaded" to "what is wrong and how to fix it" (issue 3).
//!
//! A [`Facts`] model is built from one process image (its loads, failed loads,
//! notes, pins, the `version`/`call` events of `docs/versions-and-calls.md`,
//! the versions told by file names, and the program's stderr when the
//! launcher has it); rules in [`rules`] turn it into [`Finding`]s, each with a
//! stable code, a severity, the evidence and a concrete remedy. What the rules
//! know about CUDA, cuDNN and the frameworks is data ([`Knowledge`], the TOML
//! files in `data/` at the repository root, embedded at build time and
//! replaceable at run time through `CUDNN_TRACE_KNOWLEDGE_DIR`), so that a new
//! CUDA release or framework message needs no code change. What the rules
//! need from the disk (copies of a library, a requester's RUNPATH, the
//! kernel module) they ask the [`Machine`] in their [`Context`].
//!
//! The facts behind the rules are public sources: the comments cite them by
//! their ids in `data/sources.toml` (\[Rn\]: documentation, code and issues;
//! \[En\]: observations on public artifacts, each saying how to repeat it).

pub mod facts;
pub mod knowledge;
pub mod rules;

#[cfg(test)]
pub mod testkit;

pub use crate::model::Ver;
pub use facts::Facts;
pub use knowledge::Knowledge;

use crate::analysis::files::ImageFiles;
use crate::machine::Machine;
use crate::model::trace::{Image, TraceSet};
use serde::Serialize;

/// How bad a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong by itself.
    Info,
    /// Likely to go wrong, or already wrong in a way the program tolerated.
    Warning,
    /// The setup is broken (or the program already failed because of it).
    Error,
}

impl Severity {
    /// Parses `error`, `warning` or `info` (the values of `--fail-on`).
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One piece of evidence: a file that loaded or failed, a call, a version, a
/// message, a copy found on disk. Only the fields that apply are set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// What this is: `loaded`, `failed`, `tried`, `call`, `version`,
    /// `on disk`, `message`, `driver`, `gpu`, `fact`, `environment`.
    pub what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The version as text (`9.19.0`, `9.x`, `9.19.0.56, pip …`); in
    /// JSON, numbers and this text (`model::version::VersionDoc`).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::model::version::serialize_version_text"
    )]
    pub version: Option<String>,
    /// Why the loader picked the path (the trace's `reason`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub search_dir: Option<String>,
    /// The object that asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requester: Option<String>,
    /// Anything else, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// `seq` of the trace event this comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

impl Evidence {
    pub fn new(what: &str) -> Self {
        Evidence {
            what: what.to_string(),
            ..Default::default()
        }
    }
    pub fn path(mut self, p: impl Into<String>) -> Self {
        self.path = Some(p.into());
        self
    }
    pub fn version(mut self, v: impl Into<String>) -> Self {
        self.version = Some(v.into());
        self
    }
    pub fn version_opt(mut self, v: Option<String>) -> Self {
        self.version = v;
        self
    }
    pub fn reason(mut self, r: impl Into<String>) -> Self {
        self.reason = Some(r.into());
        self
    }
    pub fn search_dir_opt(mut self, d: Option<&str>) -> Self {
        self.search_dir = d.map(str::to_string);
        self
    }
    pub fn requester_opt(mut self, r: Option<&str>) -> Self {
        self.requester = r.map(str::to_string);
        self
    }
    pub fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }
    pub fn seq(mut self, s: u64) -> Self {
        self.seq = Some(s);
        self
    }
}

/// A source a finding rests on: a `data/sources.toml` id and its URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    pub id: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub urls: Vec<String>,
}

/// What to do about a finding: one primary fix, and other ways that also
/// work, each one line with the concrete paths. Rules build it; the
/// renderers show the fix on its own line and the alternatives folded
/// under it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Remedy {
    pub fix: String,
    pub alternatives: Vec<String>,
}

impl Remedy {
    pub fn new(fix: impl Into<String>) -> Self {
        Remedy {
            fix: fix.into(),
            alternatives: Vec::new(),
        }
    }

    /// Another way; ignored when empty or already listed.
    pub fn or(mut self, alternative: impl Into<String>) -> Self {
        let a = alternative.into();
        if !a.is_empty() && a != self.fix && !self.alternatives.contains(&a) {
            self.alternatives.push(a);
        }
        self
    }
}

impl From<String> for Remedy {
    fn from(fix: String) -> Self {
        Remedy::new(fix)
    }
}

/// One finding about one process image: a short title, one fix (and its
/// alternatives), the evidence, and the findings it follows from. Each
/// part is its own field so that a renderer can lay it out (title line,
/// fix line, evidence folded under them) and a later pass can rank
/// findings by effect.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Stable code (`CDT001` …): see [`CODES`] and `cudnn-trace explain`.
    pub code: &'static str,
    pub severity: Severity,
    /// What is wrong, in one short line; the paths and the details are
    /// in the evidence.
    pub title: String,
    /// The one thing to do, with the concrete paths.
    pub fix: String,
    /// Other ways that also work (a pin, a reinstall, a framework's own
    /// switch), in order of preference.
    pub alternatives: Vec<String>,
    pub evidence: Vec<Evidence>,
    /// Codes of the findings of the same process that this one follows
    /// from (a framework's message explained by the LD_LIBRARY_PATH
    /// finding that caused it): see [`link_consequences`].
    pub consequence_of: Vec<&'static str>,
    /// How many times what it reports happened, when more than once (a
    /// framework message logged once per attempt is one finding).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<usize>,
    /// public sources (`data/sources.toml`) of the rule and the data it used.
    pub sources: Vec<SourceRef>,
    /// What `--ignore`/`--severity` or the configuration file did to it
    /// (`analysis::policy`); None when nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<PolicyMark>,
}

/// What a per-code policy (`--ignore`, `--severity`, the configuration
/// file: `analysis::policy`) did to a finding; its `policy` field in the
/// JSON document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyMark {
    /// True when the finding was ignored (it is then in
    /// `Diagnosis::ignored`, not among the findings).
    pub ignored: bool,
    /// The rule's own severity, when the policy changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule_severity: Option<Severity>,
    /// `--ignore`, `--severity`, or the configuration file.
    pub by: String,
}

impl Finding {
    /// The fix and its alternatives, as one list.
    pub fn remedies(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.fix.as_str()).chain(self.alternatives.iter().map(String::as_str))
    }

    /// Every path the evidence names.
    fn paths(&self) -> impl Iterator<Item = &str> {
        self.evidence.iter().filter_map(|e| e.path.as_deref())
    }

    /// Whether this finding's evidence names one of `paths` as a file or
    /// as the requester of a failed load: a message naming
    /// `libcudnn_cnn_infer.so.8` follows from the failure of the
    /// `libnvrtc.so` that cnn_infer asked for. A bare soname matches a
    /// path with that file name, or the same library of the same major
    /// (`libcudnn_cnn_train.so.8` and `…/libcudnn_cnn_train.so.8.0.3`).
    fn names_any(&self, paths: &[&str]) -> bool {
        let same = |a: &str, b: &str| {
            a == b
                || ((!a.contains('/') || !b.contains('/'))
                    && crate::model::stem(crate::model::basename(a))
                        == crate::model::stem(crate::model::basename(b))
                    && so_major(a) == so_major(b))
        };
        self.evidence
            .iter()
            .flat_map(|e| e.path.iter().chain(e.requester.iter()))
            .any(|p| paths.iter().any(|q| same(p, q)))
    }
}

/// The soname major of a file name (`libx.so.8.0.3` → `8`).
fn so_major(p: &str) -> Option<&str> {
    let (_, v) = crate::model::basename(p).split_once(".so.")?;
    v.split('.').next()
}

/// Every code a rule can emit, with its short name. The long texts are in
/// `data/findings.toml` (`cudnn-trace explain`).
pub const CODES: &[(&str, &str)] = &[
    ("CDT001", "duplicate-library"),
    ("CDT002", "cudnn-sublibrary-mismatch"),
    ("CDT003", "cudnn-cuda-build-mismatch"),
    ("CDT004", "driver-too-old"),
    ("CDT005", "forward-compat-driver"),
    ("CDT006", "load-failed"),
    ("CDT007", "init-failed"),
    ("CDT008", "ld-library-path-shadows-runpath"),
    ("CDT009", "gpu-unsupported"),
    ("CDT010", "framework-message"),
    ("CDT011", "stub-driver"),
    ("CDT012", "resident-first"),
    ("CDT013", "wheel-date-version"),
    ("CDT014", "installed-wheel-unused"),
];

/// The findings of one process image, as `report --json` carries them.
#[derive(Debug, Clone, Serialize)]
pub struct ImageFindings {
    /// The image's trace file.
    pub file: String,
    pub pid: u32,
    pub findings: Vec<Finding>,
}

/// What to evaluate with.
pub struct Context<'k> {
    pub knowledge: &'k Knowledge,
    /// The machine the report runs on, read on demand and kept.
    pub machine: &'k Machine,
}

/// Evaluates every rule over one process image's facts. The findings come
/// sorted: errors first, then by code.
pub fn evaluate(facts: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = rules::run_all(facts, ctx);
    link_consequences(&mut out);
    out.sort_by(rank);
    out
}

/// The order findings are shown in: errors first; within a severity, the
/// findings that follow from no other before their consequences; then by
/// code.
pub fn rank(a: &Finding, b: &Finding) -> std::cmp::Ordering {
    b.severity
        .cmp(&a.severity)
        .then(standing(a).cmp(&standing(b)))
        .then(a.code.cmp(b.code))
}

/// Where a finding stands in the story: 0 a root cause (how the libraries
/// were put together, following from no other finding), 1 a symptom that
/// nothing explained (a framework's message, a failed create: what the
/// program suffered, never the cause itself), 2 a consequence of another.
fn standing(f: &Finding) -> u8 {
    if !f.consequence_of.is_empty() {
        2
    } else if SYMPTOMS.contains(&f.code) {
        1
    } else {
        0
    }
}

/// Findings that report what the program suffered (a framework's message,
/// a failed `cudnnCreate`/`cuInit`) rather than how the libraries were
/// put together.
const SYMPTOMS: &[&str] = &["CDT007", "CDT010"];

/// Marks each symptom finding (see [`SYMPTOMS`]) as a consequence of the
/// warnings and errors of the same process about how its libraries were
/// put together, when both name the same file: PyTorch's "compiled against
/// 9.19 but found 9.14" follows from the LD_LIBRARY_PATH finding that
/// names the 9.14 `libcudnn_graph.so.9`. A deliberately narrow first
/// ranking; the root cause is then the first finding that follows from no
/// other.
pub fn link_consequences(findings: &mut [Finding]) {
    let links: Vec<Vec<&'static str>> = findings
        .iter()
        .map(|s| {
            if !SYMPTOMS.contains(&s.code) {
                return Vec::new();
            }
            let mut causes: Vec<&'static str> = findings
                .iter()
                .filter(|c| !SYMPTOMS.contains(&c.code) && c.severity >= Severity::Warning)
                .filter(|c| c.names_any(&s.paths().collect::<Vec<_>>()))
                .map(|c| c.code)
                .collect();
            causes.dedup();
            causes
        })
        .collect();
    for (f, causes) in findings.iter_mut().zip(links) {
        for c in causes {
            if !f.consequence_of.contains(&c) {
                f.consequence_of.push(c);
            }
        }
    }
    link_effects(findings);
    close_causes(findings);
    raise_causes(findings);
}

/// A consequence's severity is carried by its causes (issue 9, class 4:
/// rank by effect): two CUDA runtime majors are only a warning until
/// cudnn-frontend refuses them with an error, and then the finding that
/// names who brought the second one must outrank the message it explains.
/// When one of its causes is already that severe, the others keep theirs:
/// the error is explained, and their own ranking among them stands.
fn raise_causes(findings: &mut [Finding]) {
    let mut raise: Vec<(&'static str, Severity)> = Vec::new();
    for s in findings.iter().filter(|s| !s.consequence_of.is_empty()) {
        let causes = || {
            findings
                .iter()
                .filter(|c| s.consequence_of.contains(&c.code))
        };
        if causes().all(|c| c.severity < s.severity) {
            raise.extend(causes().map(|c| (c.code, s.severity)));
        }
    }
    for f in findings.iter_mut() {
        for (code, sev) in &raise {
            if f.code == *code && f.severity < *sev {
                f.severity = *sev;
            }
        }
    }
}

/// A consequence of a consequence follows from the root too: XLA's
/// "Possibly insufficient driver version" follows from the driver finding,
/// which follows from the LD_LIBRARY_PATH finding that brought the CUDA 12
/// cuDNN in; each names every cause up to the root.
fn close_causes(findings: &mut [Finding]) {
    loop {
        let mut changed = false;
        for i in 0..findings.len() {
            let upstream: Vec<&'static str> = findings[i]
                .consequence_of
                .iter()
                .flat_map(|c| {
                    findings
                        .iter()
                        .filter(move |g| g.code == *c)
                        .flat_map(|g| g.consequence_of.iter().copied())
                })
                .filter(|u| *u != findings[i].code)
                .collect();
            for u in upstream {
                if !findings[i].consequence_of.contains(&u) {
                    findings[i].consequence_of.push(u);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
}

/// Findings about what a library cannot do where it is (built for a CUDA
/// the driver or the runtime does not serve, a GPU it does not support).
const EFFECTS: &[&str] = &["CDT003", "CDT004", "CDT009"];
/// Findings about how a library got into the process from where it should
/// not have (a second copy, a mixed install, LD_LIBRARY_PATH over RUNPATH,
/// another framework's resident copy).
const PLACEMENTS: &[&str] = &["CDT001", "CDT002", "CDT008", "CDT012"];

/// Marks an effect (see [`EFFECTS`]) as a consequence of a placement
/// warning or error (see [`PLACEMENTS`]) that names a file of the same
/// directory: the driver is too old for the CUDA 12.2 cuDNN only because
/// LD_LIBRARY_PATH brought that cuDNN in over the CUDA 11 one the program
/// meant (jax#17553; issue 9, class 4).
fn link_effects(findings: &mut [Finding]) {
    let dirs = |f: &Finding| -> Vec<String> {
        f.paths()
            .filter(|p| p.starts_with('/'))
            .map(|p| crate::model::dirname(p).to_string())
            .collect()
    };
    let links: Vec<Vec<&'static str>> = findings
        .iter()
        .map(|e| {
            // A failed create follows from what made that copy unusable,
            // too (a cuDNN built for a CUDA the driver does not serve).
            let causes: &[&str] = match e.code {
                c if EFFECTS.contains(&c) => PLACEMENTS,
                "CDT007" => &[
                    "CDT001", "CDT002", "CDT008", "CDT012", "CDT003", "CDT004", "CDT009",
                ],
                _ => return Vec::new(),
            };
            let mine = dirs(e);
            findings
                .iter()
                .filter(|c| causes.contains(&c.code) && c.severity >= Severity::Warning)
                .filter(|c| dirs(c).iter().any(|d| mine.contains(d)))
                .map(|c| c.code)
                .collect()
        })
        .collect();
    for (f, causes) in findings.iter_mut().zip(links) {
        for c in causes {
            if !f.consequence_of.contains(&c) {
                f.consequence_of.push(c);
            }
        }
    }
}

/// Evaluates a whole trace set. `stderr`, the
/// program's standard error when the launcher captured it, is one text for
/// the whole run: its framework messages are explained in every image that
/// loaded (or failed to load) a cuDNN or CUDA runtime library, else in the
/// launcher's top image, else in the first.
/// `files`: what the machine says about each image's files (in
/// `set.images` order; missing entries count as nothing said).
pub fn analyze_set(
    set: &TraceSet,
    stderr: Option<&str>,
    ctx: &Context<'_>,
    files: &[ImageFiles],
) -> Vec<ImageFindings> {
    let wants_stderr: Vec<bool> = {
        let relevant: Vec<bool> = set.images.iter().map(cuda_relevant).collect();
        if relevant.iter().any(|&r| r) {
            relevant
        } else {
            let mut v = vec![false; set.images.len()];
            if let Some(first) = v.first_mut() {
                *first = true;
            }
            v
        }
    };
    let stderr = stderr.map(|s| facts::StderrFacts::new(s, ctx.knowledge));
    // An image alike an earlier one with the same stderr (`Image::class`)
    // has its findings: the rules read neither pids nor times.
    let first = crate::analysis::first_of_class(set);
    let mut out: Vec<ImageFindings> = Vec::with_capacity(set.images.len());
    for (i, img) in set.images.iter().enumerate() {
        let j = first[i];
        let findings = if j != i && wants_stderr[j] == wants_stderr[i] {
            out[j].findings.clone()
        } else {
            let err = if wants_stderr[i] {
                stderr.as_ref()
            } else {
                None
            };
            evaluate(&Facts::new(img, err).with_files(files.get(i)), ctx)
        };
        out.push(ImageFindings {
            file: img.file.display().to_string(),
            pid: img.header.pid,
            findings,
        });
    }
    out
}

/// Findings that are the same (code, title, fix) in several processes
/// (torchrun's workers all loading the same wrong cuDNN) folded into one,
/// with the pids they occur in, most severe first: for a run's summary.
pub fn fold_across(images: &[ImageFindings]) -> Vec<(Finding, Vec<u32>)> {
    let mut out: Vec<(Finding, Vec<u32>)> = Vec::new();
    for img in images {
        for f in &img.findings {
            match out.iter_mut().find(|(g, _)| {
                g.code == f.code
                    && g.title == f.title
                    && g.fix == f.fix
                    && g.alternatives == f.alternatives
            }) {
                Some((_, pids)) => {
                    if !pids.contains(&img.pid) {
                        pids.push(img.pid);
                    }
                }
                None => out.push((f.clone(), vec![img.pid])),
            }
        }
    }
    out.sort_by(|a, b| rank(&a.0, &b.0));
    out
}

/// Whether an image loaded or failed to load cuDNN or a CUDA runtime.
fn cuda_relevant(img: &Image) -> bool {
    let fam = |f: Option<&str>| matches!(f, Some("cudnn" | "cudart" | "cuda"));
    img.loads.iter().any(|l| fam(l.family.as_deref()))
        || img.failed.iter().any(|f| fam(f.ev.family.as_deref()))
}

/// The severity gate of `--fail-on LEVEL`: true when any finding is at
/// least as severe as `level`.
pub fn fails<'a>(findings: impl IntoIterator<Item = &'a Finding>, level: Severity) -> bool {
    findings.into_iter().any(|f| f.severity >= level)
}

#[cfg(test)]
mod tests {
    use super::testkit::*;
    use super::*;

    /// A bare finding of `code` whose one evidence is a loaded `path`.
    fn loaded_finding(code: &'static str, severity: Severity, path: &str) -> Finding {
        Finding {
            code,
            severity,
            title: String::new(),
            fix: String::new(),
            alternatives: Vec::new(),
            evidence: vec![Evidence::new("loaded").path(path)],
            consequence_of: Vec::new(),
            sources: Vec::new(),
            policy: None,
            count: None,
        }
    }

    #[test]
    fn probe_situation_end_to_end() {
        let fs = probe_trace().findings();
        let codes: Vec<&str> = fs.iter().map(|f| f.code).collect();
        // Errors first, then by code.
        assert_eq!(codes, vec!["CDT008", "CDT010", "CDT002"], "{fs:#?}");
        assert_eq!(fs[2].severity, Severity::Warning);
        assert!(fails(&fs, Severity::Error));
        let json = serde_json::to_value(&fs).unwrap();
        assert_eq!(json[0]["code"], "CDT008");
        assert_eq!(json[0]["severity"], "error");
        assert!(json[1]["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == "R24"));
    }

    #[test]
    fn severity_gate() {
        let f = |s| Finding {
            code: "CDT001",
            severity: s,
            title: String::new(),
            fix: String::new(),
            alternatives: Vec::new(),
            evidence: Vec::new(),
            consequence_of: Vec::new(),
            count: None,
            sources: Vec::new(),
            policy: None,
        };
        let warn = [f(Severity::Info), f(Severity::Warning)];
        assert!(fails(&warn, Severity::Warning));
        assert!(fails(&warn, Severity::Info));
        assert!(!fails(&warn, Severity::Error));
        assert!(!fails(&[], Severity::Info));
        assert_eq!(Severity::parse("warning"), Some(Severity::Warning));
        assert_eq!(Severity::parse("fatal"), None);
        assert!(Severity::Error > Severity::Warning && Severity::Warning > Severity::Info);
    }

    #[test]
    fn set_analysis_puts_stderr_on_cuda_processes() {
        let mut set = TraceSet::default();
        // A launcher-like parent without CUDA, and the worker that loaded cuDNN.
        set.images.push(Trace::new().image());
        set.images.push(probe_trace().image());
        let k = Knowledge::embedded().unwrap();
        let m = Machine::with_disk(FakeDisk::default());
        let ctx = Context {
            knowledge: &k,
            machine: &m,
        };
        let stderr = probe_trace().stderr.unwrap();
        let r = analyze_set(&set, Some(&stderr), &ctx, &[]);
        assert_eq!(r.len(), 2);
        assert!(r[0].findings.is_empty());
        assert!(r[1].findings.iter().any(|f| f.code == "CDT010"));
        // Nothing relevant anywhere: the message goes to the first image.
        let mut set = TraceSet::default();
        set.images.push(Trace::new().image());
        let r = analyze_set(&set, Some(&stderr), &ctx, &[]);
        assert!(r[0].findings.iter().any(|f| f.code == "CDT010"));
    }

    #[test]
    fn identical_findings_of_several_processes_fold() {
        let one = probe_trace().findings();
        let imgs = vec![
            ImageFindings {
                file: "1.jsonl".into(),
                pid: 1,
                findings: one.clone(),
            },
            ImageFindings {
                file: "2.jsonl".into(),
                pid: 2,
                findings: one.clone(),
            },
            ImageFindings {
                file: "3.jsonl".into(),
                pid: 3,
                findings: Vec::new(),
            },
        ];
        let folded = fold_across(&imgs);
        assert_eq!(folded.len(), one.len());
        assert!(folded.iter().all(|(_, pids)| pids == &vec![1, 2]));
        assert_eq!(folded[0].0.severity, Severity::Error);
    }

    /// A driver finding about a cuDNN that LD_LIBRARY_PATH brought in
    /// follows from the LD_LIBRARY_PATH finding, and so does the framework
    /// message that follows from the driver finding (jax#17553).
    #[test]
    fn effects_follow_placements_and_causes_close() {
        let f = |code, path: &str| loaded_finding(code, Severity::Error, path);
        let mut fs = vec![
            f("CDT010", "/usr/lib/x86_64-linux-gnu/libcuda.so.1"),
            f(
                "CDT004",
                "/usr/local/cuda-12.2/lib64/libcudnn_ops_infer.so.8",
            ),
            f("CDT008", "/usr/local/cuda-12.2/lib64/libcudnn.so.8"),
        ];
        fs[0]
            .evidence
            .push(Evidence::new("x").path("/usr/local/cuda-12.2/lib64/libcudnn_ops_infer.so.8"));
        link_consequences(&mut fs);
        fs.sort_by(rank);
        let codes: Vec<(&str, Vec<&str>)> = fs
            .iter()
            .map(|f| (f.code, f.consequence_of.clone()))
            .collect();
        assert_eq!(
            codes,
            vec![
                ("CDT008", vec![]),
                ("CDT004", vec!["CDT008"]),
                ("CDT010", vec!["CDT004", "CDT008"]),
            ]
        );
    }

    /// A warning whose consequence is an error is raised to an error and
    /// ranks first (two CUDA runtime majors, then cudnn-frontend's
    /// "Multiple libcudart libraries found", cudnn-frontend#267); a
    /// warning nothing follows from stays a warning.
    #[test]
    fn a_cause_is_as_severe_as_its_consequences() {
        let f = loaded_finding;
        let rt = "/usr/local/tcpxo/lib64/libcudart.so.12";
        let mut fs = vec![
            f("CDT010", Severity::Error, rt),
            f("CDT001", Severity::Warning, rt),
            f("CDT008", Severity::Warning, "/opt/other/libcudnn.so.9"),
        ];
        link_consequences(&mut fs);
        fs.sort_by(rank);
        let got: Vec<(&str, Severity)> = fs.iter().map(|f| (f.code, f.severity)).collect();
        assert_eq!(
            got,
            vec![
                ("CDT001", Severity::Error),
                ("CDT010", Severity::Error),
                ("CDT008", Severity::Warning),
            ]
        );
    }

    /// Nothing in a trace or in stderr makes the rules panic.
    #[test]
    fn hostile_input_does_not_panic() {
        let _ = hostile_trace().findings();
        let _ = probe_trace().stderr("\u{0}\u{ffff}Loaded runtime CuDNN library: 99999999999.0.0 but source was compiled with: 0.0.0").findings();
    }
}
