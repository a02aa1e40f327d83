//! The format of `tests/cases/NN_slug/case.toml` (described in
//! `tests/cases/README.md`). Unknown keys are errors, so that a typo cannot
//! silently drop an expectation.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Corpus id (`C01` …) or `clean-…` for a clean stack.
    pub id: String,
    pub title: String,
    /// Public URLs of the failure report(s) this case rebuilds.
    pub sources: Vec<String>,
    /// The framework and the versions involved, in one line.
    pub framework: String,
    /// Issue 9's classes (1–9) this case demonstrates; empty for a clean stack.
    #[serde(default)]
    pub classes: Vec<u8>,
    /// A clean stack: no error or warning may be found.
    #[serde(default)]
    pub clean: bool,
    /// The situation in one paragraph.
    pub situation: String,
    pub status: Status,
    #[serde(default)]
    pub stack: Vec<Stack>,
    #[serde(default)]
    pub library: Vec<Library>,
    #[serde(default)]
    pub file: Vec<FileOp>,
    pub program: Program,
    pub run: Run,
    #[serde(default)]
    pub expect: Expect,
}

/// What the case gave on main when it was written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Status {
    pub passes_on_main: bool,
    /// The main commit it was run against.
    pub main_commit: String,
    /// The first expectation that failed there (empty when it passed).
    #[serde(default)]
    pub first_failure: String,
}

/// A fake install made by `tests/fixtures/build-stack.sh`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stack {
    /// `cudnn9`, `cudnn8`, `cudnn7`, `cudnn-dispatcher`, `cudart`, `cuda`, `cuda-lib`.
    pub kind: String,
    /// Where: relative to the case's work directory, or an absolute system
    /// path (emulated, see `sysroot.rs`).
    pub at: String,
    #[serde(default)]
    pub args: Vec<String>,
    /// Delete these file names after building.
    #[serde(default)]
    pub remove: Vec<String>,
    /// Keep only the files whose names start with one of these.
    #[serde(default)]
    pub only: Vec<String>,
    /// Built for linking only: in `<work>/.link/<at>`, removed before the run.
    #[serde(default)]
    pub link_only: bool,
    /// The package that installed it: writes the package manager's record.
    pub pip: Option<Pip>,
    pub dpkg: Option<Dpkg>,
    pub conda: Option<Conda>,
    pub pacman: Option<Pacman>,
}

/// `<site-packages>/<dist>-<version>.dist-info` with METADATA and RECORD.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pip {
    /// Distribution name as in the directory name (`nvidia_cudnn_cu13`).
    pub dist: String,
    pub version: String,
    /// The site-packages directory, when it is not the stack's
    /// `…/site-packages` ancestor.
    pub site: Option<String>,
}

/// `/var/lib/dpkg/info/<package>.list` and a `/var/lib/dpkg/status` stanza.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dpkg {
    pub package: String,
    pub version: String,
    /// The directory the package's .list names the files under, when it is
    /// not the stack's own (`/usr/lib/x86_64-linux-gnu` for a stack at `/lib/…`).
    pub listed_under: Option<String>,
}

/// `<prefix>/conda-meta/<name>-<version>-<build>.json`; the prefix is the
/// parent of the stack's `lib` directory.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conda {
    pub name: String,
    pub version: String,
    pub build: String,
    #[serde(default = "default_channel")]
    pub channel: String,
}

fn default_channel() -> String {
    "conda-forge".into()
}

/// `/var/lib/pacman/local/<name>-<version>/{desc,files}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pacman {
    pub name: String,
    pub version: String,
}

/// A shared library compiled from one of the case's C sources (a framework
/// extension module, a plugin, a provider).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Library {
    pub source: String,
    pub at: String,
    pub soname: Option<String>,
    #[serde(flatten)]
    pub link: Link,
}

/// How a program or library is linked.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Link {
    /// DT_RPATH entries (`$ORIGIN/…` kept literal; relative paths are the work dir's).
    #[serde(default)]
    pub rpath: Vec<String>,
    /// DT_RUNPATH entries.
    #[serde(default)]
    pub runpath: Vec<String>,
    /// DT_NEEDED: `"DIR:SONAME"` (DIR as in `at`; a `link_only` stack's `at` works).
    #[serde(default)]
    pub needs: Vec<String>,
    /// `-D` macros.
    #[serde(default)]
    pub defines: Vec<String>,
}

/// Extra files: a symlink (`link`), a copy (`copy`), a text file (`text`),
/// an empty directory (`dir`), or a removal (`remove`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileOp {
    pub at: String,
    pub link: Option<String>,
    pub copy: Option<String>,
    pub text: Option<String>,
    #[serde(default)]
    pub dir: bool,
    #[serde(default)]
    pub remove: bool,
}

/// The program that plays the framework.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Program {
    /// C source, relative to the case directory.
    #[serde(default = "default_main")]
    pub source: String,
    pub at: String,
    #[serde(flatten)]
    pub link: Link,
}

fn default_main() -> String {
    "main.c".into()
}

/// How it is run and how it must end (which shows the situation is the real one).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Run {
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory, relative to the work dir.
    pub cwd: Option<String>,
    /// Exit status (default 0 unless `signal` is set).
    pub exit: Option<i32>,
    /// `SIGABRT`, `SIGSEGV`: the program dies of it.
    pub signal: Option<String>,
    /// Texts the program's stderr must contain (the framework's message).
    #[serde(default)]
    pub stderr: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    #[serde(default)]
    pub cause: Vec<FindingSpec>,
    #[serde(default)]
    pub message: Vec<FindingSpec>,
    /// Findings that must be present, wherever they rank (who made a library
    /// resident first, a version learnt from a file name); the cause may be one.
    #[serde(default)]
    pub fact: Vec<FindingSpec>,
    /// Findings that may be present besides (e.g. a true side remark).
    #[serde(default)]
    pub also: Vec<FindingSpec>,
    /// No finding's fix (or alternative) may contain any of these.
    #[serde(default)]
    pub forbid_fix: Vec<String>,
    /// No finding may say any of these anywhere.
    #[serde(default)]
    pub forbid: Vec<String>,
    /// No evidence path may contain any of these (noise such as glibc-hwcaps lines).
    #[serde(default)]
    pub no_evidence_path: Vec<String>,
    /// Every evidence that cites `path` with a version shows one starting
    /// with `version` (a known version, not "9 (major only)").
    #[serde(default)]
    pub versions: Vec<Cite>,
}

/// A finding the report must (or, in `also`, may) hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingSpec {
    /// Any of these codes (empty: any code).
    #[serde(default)]
    pub codes: Vec<String>,
    /// At least this severity (`info`, `warning`, `error`); default error
    /// for a cause, none otherwise.
    pub severity: Option<String>,
    /// At most this severity (a remark that must not alarm).
    pub at_most: Option<String>,
    /// The framework message it must quote.
    pub quote: Option<String>,
    /// Evidence it must cite.
    #[serde(default)]
    pub cites: Vec<Cite>,
    /// Phrases its title, evidence or fix must contain.
    #[serde(default)]
    pub says: Vec<String>,
    /// Phrases its fix (or an alternative) must contain.
    #[serde(default)]
    pub fix: Vec<String>,
    /// At least one of these phrases must be in its fix (several right ways).
    #[serde(default)]
    pub fix_any: Vec<String>,
    /// Phrases it must not contain anywhere.
    #[serde(default)]
    pub not: Vec<String>,
    /// Cause: first finding of its process and no consequence (default true).
    pub root: Option<bool>,
    /// Message: marked as a consequence of the cause (default true).
    pub consequence: Option<bool>,
    /// How many times the message occurred (one finding with a count).
    pub count: Option<u64>,
    /// Only one finding may match.
    #[serde(default)]
    pub unique: bool,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cite {
    /// A file, or a directory: then any file in it (or a search there).
    pub path: String,
    /// The loader's reason (`ld.so.cache`, `LD_LIBRARY_PATH`, `RUNPATH`, `RPATH`, `path`, …).
    pub reason: Option<String>,
    pub requester: Option<String>,
    /// The version shown must start with this.
    pub version: Option<String>,
}

pub fn load(path: &Path) -> Result<Case, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
