//! The analysis: what the trace set means, as pure functions of the model
//! (the trace set, the program's stderr) and of the [`Machine`] the report
//! runs on, with the knowledge tables of `data/`.
//!
//! * [`tree`]: the processes as a tree (who started whom, exec chains, how
//!   the launcher's program ended);
//! * [`libraries`], [`failures`], [`pin`]: per process, the libraries that
//!   entered it, its failed loads (name-variant misses folded, repeats
//!   grouped) and what the cuDNN pin did: the facts the summary shows;
//! * [`files`]: what the machine says about those files where the trace
//!   could not (versions asked at report time in a probe process, the
//!   names a library asked for, its pip package);
//! * [`findings`]: the rules, from "what loaded" to "what is wrong and how
//!   to fix it", with the knowledge they use.
//!
//! Nothing here prints or formats for a reader: that is the `render` layer.

pub mod compare;
pub mod failures;
pub mod files;
pub mod findings;
pub mod fleet;
pub mod libraries;
pub mod pin;
pub mod policy;
pub mod tree;

pub use findings::{Finding, Knowledge, Severity};
pub use tree::{Link, ProcessTree};

use crate::machine::Machine;
use crate::model::TraceSet;
use std::collections::BTreeMap;

/// Everything the analysis concludes about a trace set: its process tree,
/// what the machine says about each image's files, and the findings.
pub struct Analysis {
    pub tree: ProcessTree,
    pub diagnosis: Diagnosis,
    /// One entry per image, in `TraceSet::images` order.
    pub files: Vec<files::ImageFiles>,
}

/// Analyses a trace set. `stderr`: what the program wrote to its stderr,
/// when the launcher captured it (framework messages are explained from
/// it); `knowledge_warnings`: what loading the knowledge tables reported.
pub fn analyse(
    set: &TraceSet,
    stderr: Option<&str>,
    machine: &Machine,
    knowledge: &Knowledge,
    knowledge_warnings: Vec<String>,
) -> Analysis {
    let files = files::of_set(set, machine);
    Analysis {
        tree: ProcessTree::new(set),
        diagnosis: diagnose(set, stderr, machine, knowledge, knowledge_warnings, &files),
        files,
    }
}

/// [`analyse`] with the knowledge tables in force, loaded only when a rule
/// could read them ([`needs_knowledge`]): a run of a program that touched
/// no CUDA library and wrote nothing to its stderr is reported without
/// parsing them, with the same result.
pub fn analyse_loading(set: &TraceSet, stderr: Option<&str>, machine: &Machine) -> Analysis {
    let files = files::of_set(set, machine);
    let (knowledge, warnings) = Knowledge::load_for(needs_knowledge(set, stderr, &files));
    Analysis {
        tree: ProcessTree::new(set),
        diagnosis: diagnose(set, stderr, machine, &knowledge, warnings, &files),
        files,
    }
}

/// For each image, the first image of its class (`Image::class`): itself
/// when none came before. Alike images have the same header but for
/// identity and times, and the same events: what the analysis makes of
/// the first stands for them all.
pub fn first_of_class(set: &TraceSet) -> Vec<usize> {
    let mut seen: rustc_hash::FxHashMap<u32, usize> = Default::default();
    (0..set.images.len())
        .map(|i| match set.images[i].class {
            crate::model::image::UNIQUE => i,
            c => *seen.entry(c).or_insert(i),
        })
        .collect()
}

/// Whether any rule could find anything in `set`: false only when no
/// process recorded a CUDA-family library, a failed load, a version, a
/// call, a driver client, a pin decision or a note, the machine found no
/// version, static runtime or start-up failure for any of them, and the
/// captured stderr is blank. Every rule starts from one of those facts, so
/// the tables need not be read (see `skipping_the_tables_changes_nothing`).
/// When in doubt this says true: a false true costs only time.
pub fn needs_knowledge(set: &TraceSet, stderr: Option<&str>, files: &[files::ImageFiles]) -> bool {
    let said = stderr.is_some_and(|s| !s.trim().is_empty());
    let traced = set.images.iter().any(|img| {
        img.loads.iter().any(|l| l.family.is_some())
            || !img.failed.is_empty()
            || !img.versions.is_empty()
            || !img.calls.is_empty()
            || !img.call_counts.is_empty()
            || !img.driver_clients.is_empty()
            || !img.pins.is_empty()
            || !img.notes.is_empty()
    });
    let found = files
        .iter()
        .any(|f| f.startup.is_some() || !f.static_runtimes.is_empty() || !f.versions.is_empty());
    said || traced || found
}

/// The findings of a trace set, and what they were computed with.
pub struct Diagnosis {
    /// One entry per image, in `TraceSet::images` order.
    pub images: Vec<findings::ImageFindings>,
    /// The findings a [`policy::Policy`] ignored, in the same order as
    /// `images` (empty when no policy applied): not counted, not shown
    /// in the text, not gated on, but kept for the JSON document.
    pub ignored: Vec<findings::ImageFindings>,
    pub knowledge_origin: BTreeMap<String, String>,
    pub knowledge_warnings: Vec<String>,
}

impl Diagnosis {
    /// The findings in force (not those a policy ignored).
    pub fn all(&self) -> impl Iterator<Item = &Finding> {
        self.images.iter().flat_map(|i| i.findings.iter())
    }

    /// The findings a policy ignored.
    pub fn ignored_all(&self) -> impl Iterator<Item = &Finding> {
        self.ignored.iter().flat_map(|i| i.findings.iter())
    }

    /// `--fail-on LEVEL`: whether a finding reached it.
    pub fn trips(&self, level: Option<Severity>) -> bool {
        level.is_some_and(|l| findings::fails(self.all(), l))
    }
}

/// Evaluates the findings rules over a trace set. `stderr`: what the
/// program wrote to its stderr, when the launcher captured it (framework
/// messages are explained from it).
/// `knowledge_warnings`: what loading the knowledge tables reported;
/// `files`: what the machine says about each image's files ([`files::of_set`]).
pub fn diagnose(
    set: &TraceSet,
    stderr: Option<&str>,
    machine: &Machine,
    knowledge: &Knowledge,
    knowledge_warnings: Vec<String>,
    files: &[files::ImageFiles],
) -> Diagnosis {
    let ctx = findings::Context { knowledge, machine };
    Diagnosis {
        images: findings::analyze_set(set, stderr, &ctx, files),
        ignored: Vec::new(),
        knowledge_origin: knowledge.origin.clone(),
        knowledge_warnings,
    }
}
