//! The knowledge the rules use, as data: driver minimums per CUDA release,
//! the cuDNN support matrix, status and error code tables, the frameworks'
//! messages and the cuDNN file layout (`data/*.toml` at the repository root;
//! every row names its public sources, `data/sources.toml`).
//!
//! The files are embedded in the binary (so `cargo install` works anywhere);
//! a directory named by `CUDNN_TRACE_KNOWLEDGE_DIR` overrides any of them by
//! file name, so updating the tables needs no rebuild. An override that does
//! not parse or validate is reported and the embedded file is used instead.
//!
//! The table structs mirror the data files field for field, with
//! `deny_unknown_fields` so that a typo in a file is an error, not a silently
//! ignored row; some fields (notes, `since`, roles) are documentation that
//! no rule reads yet, hence the `dead_code` allowance for this module.
#![allow(dead_code)]

use super::{SourceRef, Ver};
use regex::Regex;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Directory whose `*.toml` files replace the embedded ones of the same name.
pub const KNOWLEDGE_DIR_ENV: &str = "CUDNN_TRACE_KNOWLEDGE_DIR";

pub const SOURCES: &str = "sources.toml";
pub const DRIVERS: &str = "cuda-drivers.toml";
pub const SUPPORT: &str = "cudnn-support.toml";
pub const STATUS: &str = "cudnn-status.toml";
pub const ERRORS: &str = "cuda-errors.toml";
pub const FRAMEWORKS: &str = "frameworks.toml";
pub const LAYOUT: &str = "cudnn-layout.toml";
pub const FINDINGS: &str = "findings.toml";
pub const PACKAGES: &str = "cudnn-packages.toml";
pub const IMPORTS: &str = "framework-imports.toml";

/// A file of `data/` at the repository root, embedded in the binary.
macro_rules! data {
    ($file:literal) => {
        include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../data/", $file))
    };
}

/// The embedded files, by name.
pub const EMBEDDED: &[(&str, &str)] = &[
    (SOURCES, data!("sources.toml")),
    (DRIVERS, data!("cuda-drivers.toml")),
    (SUPPORT, data!("cudnn-support.toml")),
    (STATUS, data!("cudnn-status.toml")),
    (ERRORS, data!("cuda-errors.toml")),
    (FRAMEWORKS, data!("frameworks.toml")),
    (LAYOUT, data!("cudnn-layout.toml")),
    (FINDINGS, data!("findings.toml")),
    (PACKAGES, data!("cudnn-packages.toml")),
    (IMPORTS, data!("framework-imports.toml")),
];

fn yes() -> bool {
    true
}

/// A public source (`[source.R9]`), or an observation on public artifacts
/// (`[source.E3]`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Source {
    pub title: String,
    #[serde(default)]
    pub urls: Vec<String>,
    /// An observation this project made on the public artifacts its URLs
    /// name (`E1` …), rather than a page that states the fact.
    #[serde(default)]
    pub experiment: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SourcesFile {
    source: BTreeMap<String, Source>,
}

/// A CUDA major's minor-version-compatibility range ([R10][R9]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverFamily {
    pub major: u32,
    pub mvc: bool,
    pub mvc_min_driver: Option<String>,
    pub mvc_max_driver: Option<String>,
    pub source: Vec<String>,
}

/// A toolkit minor and its bundled driver ([R9]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Toolkit {
    pub version: String,
    /// GA first, then updates.
    pub drivers: Vec<String>,
    #[serde(default)]
    pub releases: Vec<String>,
    #[serde(default = "yes")]
    pub verified: bool,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriversFile {
    pub family: Vec<DriverFamily>,
    pub toolkit: Vec<Toolkit>,
}

/// One CUDA flavour of a cuDNN release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnBuild {
    /// `12`, `11.0`, `10.2`: the CUDA major (and minor, when builds were per minor).
    pub cuda: String,
    pub toolkits: String,
    pub min_driver: Option<String>,
    pub min_sm: Option<String>,
    pub max_sm: Option<String>,
}

/// A range of cuDNN releases of the support matrix ([R15]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnRelease {
    pub from: String,
    pub to: String,
    pub min_sm: Option<String>,
    pub max_sm: Option<String>,
    #[serde(default)]
    pub compute_capabilities: Vec<String>,
    #[serde(default = "yes")]
    pub verified: bool,
    pub notes: Option<String>,
    pub source: Vec<String>,
    #[serde(default)]
    pub build: Vec<CudnnBuild>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SupportFile {
    release: Vec<CudnnRelease>,
}

/// A v9 status category (`CUDNN_STATUS_CATEGORY(code)`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusCategory {
    pub base: i64,
    pub name: String,
    pub meaning: String,
    pub source: Vec<String>,
}

/// A `cudnnStatus_t` name and its value per major ([R4][R5][R42]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnStatus {
    pub name: String,
    pub v7: Option<i64>,
    pub v8: Option<i64>,
    pub v9: Option<i64>,
    pub v9_name: Option<String>,
    pub since: Option<String>,
    pub meaning: String,
    #[serde(default)]
    pub create_causes: Vec<String>,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct StatusFile {
    category: Vec<StatusCategory>,
    status: Vec<CudnnStatus>,
}

/// A `cudaError_t` / `CUresult` code ([R7][R8][E1]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaError {
    pub value: i64,
    pub runtime: Option<String>,
    pub driver: Option<String>,
    pub meaning: String,
    #[serde(default)]
    pub causes: Vec<String>,
    #[serde(default)]
    pub messages: Vec<String>,
    #[serde(default)]
    pub messages_verified: bool,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorsFile {
    error: Vec<CudaError>,
}

/// An example a message pattern must match, with the values it must extract.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageExample {
    pub text: String,
    pub build: Option<String>,
    pub runtime: Option<String>,
    pub missing: Option<String>,
    pub library: Option<String>,
    pub cudnn_major: Option<String>,
    pub cuda_major: Option<String>,
    pub driver: Option<String>,
    pub names: Option<String>,
    pub path: Option<String>,
    pub tag: Option<String>,
    pub symbol: Option<String>,
    pub file: Option<String>,
    pub status: Option<String>,
    pub minimum: Option<String>,
    pub error: Option<String>,
    /// `driver_cuda` decoded (`11040` → `11.4`).
    pub driver_cuda: Option<String>,
}

/// A framework's (or cuDNN's) message, as written in `frameworks.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageSpec {
    pub id: String,
    pub framework: String,
    pub kind: String,
    pub pattern: String,
    pub version_format: Option<String>,
    pub rule: String,
    pub check: Option<String>,
    pub remedy: String,
    /// `jax-minimum`: the remedy when the minimum, not the build, is what
    /// the loaded cuDNN fails (`{minimum}`: the version it stands for).
    pub minimum_remedy: Option<String>,
    /// `failed-load` / `failed-call`: the text is the loader's (or a
    /// library's) own wording of a failure the trace records itself.
    pub restates: Option<String>,
    pub bypass: Option<String>,
    pub source: Vec<String>,
    #[serde(default)]
    pub example: Vec<MessageExample>,
}

/// `frameworks.toml`: the messages, and the public pages they were read
/// on (kept in the same file, so that a message and its source travel
/// together; the ids live beside those of `sources.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FrameworksFile {
    message: Vec<MessageSpec>,
    #[serde(default)]
    source: BTreeMap<String, Source>,
}

/// A message rule and its pattern.
#[derive(Debug, Clone)]
pub struct MessageRule {
    pub spec: MessageSpec,
    pub regex: LazyRegex,
}

/// A message pattern, compiled the first time it is used: compiling every
/// pattern of `frameworks.toml` was most of the launcher's start-up (about
/// 24 M instructions, 10 ms and more), paid by every run, also by the many
/// that capture no message to explain (issue 10). Patterns of an override
/// file are compiled when it is read (a bad one is refused there); the
/// embedded ones are checked by the tests.
#[derive(Debug, Clone)]
pub struct LazyRegex {
    pattern: String,
    compiled: std::sync::OnceLock<Result<Regex, String>>,
}

impl LazyRegex {
    /// `pattern` as a multi-line regex: `^` and `$` match at line ends in
    /// the multi-line stderr text.
    pub fn new(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: format!("(?m){pattern}"),
            compiled: std::sync::OnceLock::new(),
        }
    }

    /// The compiled pattern, or why it does not compile.
    pub fn compiled(&self) -> Result<&Regex, &str> {
        self.compiled
            .get_or_init(|| Regex::new(&self.pattern).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(String::as_str)
    }
}

impl std::ops::Deref for LazyRegex {
    type Target = Regex;

    /// The compiled pattern; one that does not compile matches nothing
    /// (never the case for tables that loaded: see [`LazyRegex`]).
    fn deref(&self) -> &Regex {
        static NOTHING: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        self.compiled()
            .unwrap_or_else(|_| NOTHING.get_or_init(|| Regex::new(r"\b\B").expect("valid")))
    }
}

/// What kinds of message the engine knows how to explain.
pub const MESSAGE_KINDS: &[&str] = &[
    "cudnn-version",
    "cudnn-gpu",
    "cudnn-missing",
    "requirement",
    "sublibrary",
    "driver",
    "cudnn-status",
    "cudnn-symbol",
    "runtime-multiple",
    "symbol-version",
    "library-version",
];

/// How `build`/`runtime` may be written (`frameworks.toml`'s header).
pub const VERSION_FORMATS: &[&str] = &["tuple", "dotted", "cudnn-int", "cudnn", "cuda-library-int"];

/// The frameworks' rules for build vs run-time versions.
pub const CHECKS: &[&str] = &[
    "same-major-minor-ge",
    "compat-version-eq",
    "major-minor-ge",
    "jax-minimum",
    "equal-or-newer-from-7",
    "equal",
];

/// Named groups the engine reads from a message match.
pub const MESSAGE_GROUPS: &[&str] = &[
    "build",
    "runtime",
    "minimum",
    "missing",
    "library",
    "error",
    "cudnn_major",
    "cuda_major",
    "driver",
    "path",
    "tag",
    "names",
    "symbol",
    "file",
    "status",
    "driver_cuda",
    "component",
];

/// A cuDNN file of a major's layout ([R17][E6][E7]).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutLibrary {
    pub stem: String,
    pub role: String,
    pub required: bool,
    pub version_check: Option<String>,
    pub loads: Option<String>,
    pub since: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutMajor {
    pub major: u32,
    pub dispatcher: String,
    pub reference: String,
    pub notes: Option<String>,
    pub source: Vec<String>,
    pub library: Vec<LayoutLibrary>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct LayoutFile {
    major: Vec<LayoutMajor>,
}

/// A package that ships cuDNN `cudnn` built for CUDA `cuda`
/// (`cudnn-packages.toml`): what a fix may tell the user to install.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudnnPackage {
    pub cudnn: u32,
    pub cuda: u32,
    /// The pip requirement, when a wheel exists.
    pub pip: Option<String>,
    /// The Debian package of NVIDIA's apt repositories (with a version glob).
    pub apt: String,
    pub source: Vec<String>,
}

/// The library families whose NVIDIA wheels are numbered with the
/// library's own version (`cudnn-packages.toml`'s `[wheels]`): a release's
/// major is the soname's, and one numbered otherwise (a date) is none of
/// the library's.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelNumbering {
    pub families: Vec<String>,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct PackagesFile {
    package: Vec<CudnnPackage>,
    #[serde(default)]
    wheels: WheelNumbering,
}

/// A framework by the `site-packages` directory of its libraries, and how
/// a program makes it load its CUDA libraries first
/// (`framework-imports.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameworkImport {
    pub dir: String,
    pub name: String,
    pub module: String,
    pub first: String,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ImportsFile {
    framework: Vec<FrameworkImport>,
}

/// The long text of a finding code (`cudnn-trace explain`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FindingDoc {
    pub code: String,
    pub name: String,
    pub title: String,
    /// The usual severity (a rule may choose another for a given case).
    pub severity: String,
    pub explain: String,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingsFile {
    finding: Vec<FindingDoc>,
}

/// Everything the rules know.
#[derive(Debug, Clone)]
pub struct Knowledge {
    pub sources: BTreeMap<String, Source>,
    /// The sources of `frameworks.toml`'s messages (its `[source.F…]`).
    pub message_sources: BTreeMap<String, Source>,
    pub drivers: DriversFile,
    pub releases: Vec<CudnnRelease>,
    pub categories: Vec<StatusCategory>,
    pub statuses: Vec<CudnnStatus>,
    pub errors: Vec<CudaError>,
    pub messages: Vec<MessageRule>,
    pub layout: Vec<LayoutMajor>,
    pub findings: Vec<FindingDoc>,
    pub packages: Vec<CudnnPackage>,
    pub wheels: WheelNumbering,
    pub imports: Vec<FrameworkImport>,
    /// Where each file came from: `embedded` or the override's path.
    pub origin: BTreeMap<String, String>,
}

impl Knowledge {
    /// The embedded tables. They are validated by the tests, so this only
    /// fails if the binary was built from broken data.
    #[cfg(test)]
    pub fn embedded() -> Result<Knowledge, String> {
        let k = Self::parse_embedded()?;
        let problems = k.validate();
        if problems.is_empty() {
            Ok(k)
        } else {
            Err(problems.join("; "))
        }
    }

    /// The tables in force: the embedded ones, each replaced by the file of
    /// the same name in `$CUDNN_TRACE_KNOWLEDGE_DIR` when there is one and it
    /// is valid. Returns the warnings to show (an override that could not be
    /// used, and why).
    pub fn load() -> (Knowledge, Vec<String>) {
        Self::load_from(Self::override_dir().as_deref())
    }

    /// [`Knowledge::load`] when the rules will read the tables (`needed`);
    /// otherwise, and only when no override directory is set, no table is
    /// parsed: the tables are empty and `origin` says what a full load
    /// would have said (every file `embedded`), so reports are the same.
    /// Parsing the TOML was most of the launcher's start-up for a program
    /// that loads no CUDA library (issue 10). With an override directory
    /// the tables are always loaded: its files are checked, and a bad one
    /// reported, whatever the run.
    pub fn load_for(needed: bool) -> (Knowledge, Vec<String>) {
        let dir = Self::override_dir();
        if needed || dir.is_some() {
            return Self::load_from(dir.as_deref());
        }
        let mut k = Self::empty();
        for (name, _) in EMBEDDED {
            k.origin.insert(name.to_string(), "embedded".to_string());
        }
        (k, Vec::new())
    }

    /// `$CUDNN_TRACE_KNOWLEDGE_DIR`, when set and not empty.
    fn override_dir() -> Option<PathBuf> {
        std::env::var_os(KNOWLEDGE_DIR_ENV)
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    }

    /// [`Knowledge::load`] with an explicit override directory. Each file is
    /// parsed once (and the message patterns compiled once): an override is
    /// tried on a copy of the tables in force, which it replaces only when
    /// the whole still validates.
    pub fn load_from(dir: Option<&Path>) -> (Knowledge, Vec<String>) {
        let mut warnings = Vec::new();
        let mut k = match Self::parse_embedded() {
            Ok(k) => k,
            Err(e) => {
                // Cannot happen with tested embedded data; never panic.
                warnings.push(format!("knowledge tables: {e}"));
                return (Self::empty(), warnings);
            }
        };
        let Some(dir) = dir else {
            return (k, warnings);
        };
        if !dir.is_dir() {
            warnings.push(format!(
                "{KNOWLEDGE_DIR_ENV}={}: not a directory; using the built-in tables",
                dir.display()
            ));
        }
        for (name, _) in EMBEDDED {
            let p = dir.join(name);
            if !p.is_file() {
                continue;
            }
            match read_small(&p) {
                Ok(t) => {
                    // Try this one file in place of the one in force.
                    let mut trial = k.clone();
                    match trial
                        .set_table(name, &t, &p.display().to_string())
                        .map(|()| trial.validate())
                    {
                        Ok(problems) if problems.is_empty() => k = trial,
                        Ok(problems) => warnings.push(format!(
                            "{}: {}; using the built-in {name}",
                            p.display(),
                            problems.join("; ")
                        )),
                        Err(e) => warnings.push(format!("{e}; using the built-in {name}")),
                    }
                }
                Err(e) => warnings.push(format!(
                    "{}: cannot read ({e}); using the built-in {name}",
                    p.display()
                )),
            }
        }
        (k, warnings)
    }

    /// No knowledge at all (the rules then find only what needs none).
    pub fn empty() -> Knowledge {
        Knowledge {
            sources: BTreeMap::new(),
            message_sources: BTreeMap::new(),
            drivers: DriversFile {
                family: Vec::new(),
                toolkit: Vec::new(),
            },
            releases: Vec::new(),
            categories: Vec::new(),
            statuses: Vec::new(),
            errors: Vec::new(),
            messages: Vec::new(),
            layout: Vec::new(),
            findings: Vec::new(),
            packages: Vec::new(),
            wheels: WheelNumbering::default(),
            imports: Vec::new(),
            origin: BTreeMap::new(),
        }
    }

    /// The embedded files, parsed (not validated).
    fn parse_embedded() -> Result<Knowledge, String> {
        let mut k = Self::empty();
        for (name, text) in EMBEDDED {
            k.set_table(name, text, "embedded")?;
        }
        Ok(k)
    }

    /// Parses the file `name` (its `text`, read from `origin`) into the
    /// tables it holds, in place of theirs.
    fn set_table(&mut self, name: &str, text: &str, origin: &str) -> Result<(), String> {
        fn parse<T: for<'de> Deserialize<'de>>(
            name: &str,
            text: &str,
            origin: &str,
        ) -> Result<T, String> {
            toml::from_str(text).map_err(|e| {
                let msg = e.to_string();
                format!("{origin} ({name}): {}", msg.trim_end())
            })
        }
        match name {
            SOURCES => self.sources = parse::<SourcesFile>(name, text, origin)?.source,
            DRIVERS => self.drivers = parse(name, text, origin)?,
            SUPPORT => self.releases = parse::<SupportFile>(name, text, origin)?.release,
            STATUS => {
                let status: StatusFile = parse(name, text, origin)?;
                self.categories = status.category;
                self.statuses = status.status;
            }
            ERRORS => self.errors = parse::<ErrorsFile>(name, text, origin)?.error,
            FRAMEWORKS => {
                let frameworks: FrameworksFile = parse(name, text, origin)?;
                let mut messages = Vec::new();
                for spec in frameworks.message {
                    let regex = LazyRegex::new(&spec.pattern);
                    if origin != "embedded" {
                        regex.compiled().map_err(|e| {
                            format!("{FRAMEWORKS}: message {:?}: bad pattern: {e}", spec.id)
                        })?;
                    }
                    messages.push(MessageRule { spec, regex });
                }
                self.messages = messages;
                self.message_sources = frameworks.source;
            }
            LAYOUT => self.layout = parse::<LayoutFile>(name, text, origin)?.major,
            FINDINGS => self.findings = parse::<FindingsFile>(name, text, origin)?.finding,
            PACKAGES => {
                let packages: PackagesFile = parse(name, text, origin)?;
                self.packages = packages.package;
                self.wheels = packages.wheels;
            }
            IMPORTS => self.imports = parse::<ImportsFile>(name, text, origin)?.framework,
            _ => return Err(format!("{name}: not a knowledge file")),
        }
        self.origin.insert(name.to_string(), origin.to_string());
        Ok(())
    }

    /// Everything wrong with the tables: rows without a source or with an
    /// unknown one, unparsable versions, duplicate codes, message examples
    /// that do not match or extract other values. Empty when all is well.
    pub fn validate(&self) -> Vec<String> {
        let mut p = Vec::new();
        for id in self.message_sources.keys() {
            if self.sources.contains_key(id) {
                p.push(format!("{FRAMEWORKS}: source {id} is also in {SOURCES}"));
            }
        }
        let mut src = |file: &str, row: &str, ids: &[String]| {
            if ids.is_empty() {
                p.push(format!("{file}: {row}: no source"));
            }
            for id in ids {
                if self.source(id).is_none() {
                    p.push(format!("{file}: {row}: unknown source {id:?}"));
                }
            }
        };
        for f in &self.drivers.family {
            src(DRIVERS, &format!("family {}", f.major), &f.source);
        }
        for t in &self.drivers.toolkit {
            src(DRIVERS, &format!("toolkit {}", t.version), &t.source);
        }
        for r in &self.releases {
            src(SUPPORT, &format!("release {}..{}", r.from, r.to), &r.source);
        }
        for c in &self.categories {
            src(STATUS, &format!("category {}", c.base), &c.source);
        }
        for s in &self.statuses {
            src(STATUS, &s.name, &s.source);
        }
        for e in &self.errors {
            src(ERRORS, &format!("error {}", e.value), &e.source);
        }
        for m in &self.messages {
            src(FRAMEWORKS, &m.spec.id, &m.spec.source);
        }
        for l in &self.layout {
            src(LAYOUT, &format!("major {}", l.major), &l.source);
        }
        for d in &self.findings {
            src(FINDINGS, &d.code, &d.source);
        }
        for r in &self.packages {
            src(
                PACKAGES,
                &format!("cuDNN {} for CUDA {}", r.cudnn, r.cuda),
                &r.source,
            );
        }
        if !self.wheels.families.is_empty() {
            src(PACKAGES, "wheels", &self.wheels.source);
        }
        for fw in &self.imports {
            src(IMPORTS, &fw.dir, &fw.source);
        }
        p.extend(self.validate_rows());
        for m in &self.messages {
            if let Err(e) = m.regex.compiled() {
                p.push(format!(
                    "{FRAMEWORKS}: message {:?}: bad pattern: {e}",
                    m.spec.id
                ));
            }
        }
        p.extend(self.validate_values());
        p
    }

    /// One row per (cuDNN, CUDA) major; a wheel named for its CUDA major
    /// (`nvidia-cudnn-cu12==9.*`) and its cuDNN major, so that a fix never
    /// installs another major than the row says. One framework per
    /// `site-packages` directory.
    fn validate_rows(&self) -> Vec<String> {
        let mut p = Vec::new();
        for (i, r) in self.packages.iter().enumerate() {
            let row = format!("{PACKAGES}: cuDNN {} for CUDA {}", r.cudnn, r.cuda);
            if self.packages[..i]
                .iter()
                .any(|q| (q.cudnn, q.cuda) == (r.cudnn, r.cuda))
            {
                p.push(format!("{row}: listed twice"));
            }
            if let Some(pip) = &r.pip {
                if !pip.contains(&format!("-cu{}==", r.cuda))
                    || !pip.ends_with(&format!("=={}.*", r.cudnn))
                {
                    p.push(format!("{row}: pip {pip:?} is not of these majors"));
                }
            }
        }
        for (i, fw) in self.imports.iter().enumerate() {
            if self.imports[..i].iter().any(|g| g.dir == fw.dir) {
                p.push(format!("{IMPORTS}: {}: listed twice", fw.dir));
            }
        }
        p
    }

    fn validate_values(&self) -> Vec<String> {
        let mut p = Vec::new();
        let ver = |p: &mut Vec<String>, file: &str, what: &str, v: &str| {
            if Ver::parse(v).is_none() {
                p.push(format!("{file}: {what}: {v:?} is not a version"));
            }
        };
        let mut majors = BTreeSet::new();
        for f in &self.drivers.family {
            if !majors.insert(f.major) {
                p.push(format!("{DRIVERS}: family {} twice", f.major));
            }
            if f.mvc && f.mvc_min_driver.is_none() {
                p.push(format!(
                    "{DRIVERS}: family {}: mvc without mvc_min_driver",
                    f.major
                ));
            }
            for v in f.mvc_min_driver.iter().chain(f.mvc_max_driver.iter()) {
                ver(&mut p, DRIVERS, &format!("family {}", f.major), v);
            }
        }
        let mut seen = BTreeSet::new();
        for t in &self.drivers.toolkit {
            ver(&mut p, DRIVERS, "toolkit", &t.version);
            if !seen.insert(t.version.clone()) {
                p.push(format!("{DRIVERS}: toolkit {} twice", t.version));
            }
            if t.verified && t.drivers.is_empty() {
                p.push(format!(
                    "{DRIVERS}: toolkit {}: verified but no driver",
                    t.version
                ));
            }
            for d in &t.drivers {
                ver(&mut p, DRIVERS, &format!("toolkit {}", t.version), d);
            }
        }
        for r in &self.releases {
            let row = format!("release {}..{}", r.from, r.to);
            ver(&mut p, SUPPORT, &row, &r.from);
            ver(&mut p, SUPPORT, &row, &r.to);
            if let (Some(a), Some(b)) = (Ver::parse(&r.from), Ver::parse(&r.to)) {
                if a > b {
                    p.push(format!("{SUPPORT}: {row}: from > to"));
                }
            }
            for sm in r
                .min_sm
                .iter()
                .chain(r.max_sm.iter())
                .chain(&r.compute_capabilities)
            {
                ver(&mut p, SUPPORT, &row, sm);
            }
            if r.build.is_empty() {
                p.push(format!("{SUPPORT}: {row}: no build"));
            }
            for b in &r.build {
                ver(&mut p, SUPPORT, &row, &b.cuda);
                for v in b.min_driver.iter().chain(&b.min_sm).chain(&b.max_sm) {
                    ver(&mut p, SUPPORT, &row, v);
                }
            }
        }
        for (major, pick) in [
            (
                7,
                (|s: &CudnnStatus| s.v7) as fn(&CudnnStatus) -> Option<i64>,
            ),
            (8, |s| s.v8),
            (9, |s| s.v9),
        ] {
            let mut vals = BTreeSet::new();
            for s in &self.statuses {
                if let Some(v) = pick(s) {
                    if !vals.insert(v) {
                        p.push(format!("{STATUS}: v{major} value {v} twice"));
                    }
                }
            }
        }
        let mut vals = BTreeSet::new();
        for e in &self.errors {
            if !vals.insert(e.value) {
                p.push(format!("{ERRORS}: {} twice", e.value));
            }
            if e.runtime.is_none() && e.driver.is_none() {
                p.push(format!(
                    "{ERRORS}: {}: neither runtime nor driver name",
                    e.value
                ));
            }
        }
        let mut ids = BTreeSet::new();
        for m in &self.messages {
            let s = &m.spec;
            if !ids.insert(s.id.clone()) {
                p.push(format!("{FRAMEWORKS}: {} twice", s.id));
            }
            if !MESSAGE_KINDS.contains(&s.kind.as_str()) {
                p.push(format!("{FRAMEWORKS}: {}: unknown kind {:?}", s.id, s.kind));
            }
            for name in m.regex.capture_names().flatten() {
                if !MESSAGE_GROUPS.contains(&name) {
                    p.push(format!("{FRAMEWORKS}: {}: unknown group {name:?}", s.id));
                }
            }
            let has = |g: &str| m.regex.capture_names().flatten().any(|n| n == g);
            if (has("build") || has("runtime")) && s.version_format.is_none() {
                p.push(format!(
                    "{FRAMEWORKS}: {}: versions without version_format",
                    s.id
                ));
            }
            if let Some(f) = &s.version_format {
                if !VERSION_FORMATS.contains(&f.as_str()) {
                    p.push(format!(
                        "{FRAMEWORKS}: {}: unknown version_format {f:?}",
                        s.id
                    ));
                }
            }
            if let Some(r) = &s.restates {
                if !["failed-load", "failed-call"].contains(&r.as_str()) {
                    p.push(format!("{FRAMEWORKS}: {}: unknown restates {r:?}", s.id));
                }
            }
            if let Some(c) = &s.check {
                if !CHECKS.contains(&c.as_str()) {
                    p.push(format!("{FRAMEWORKS}: {}: unknown check {c:?}", s.id));
                }
            }
            if s.example.is_empty() {
                p.push(format!("{FRAMEWORKS}: {}: no example", s.id));
            }
            for (i, ex) in s.example.iter().enumerate() {
                p.extend(check_example(m, i, ex));
            }
        }
        let mut maj = BTreeSet::new();
        for l in &self.layout {
            if !maj.insert(l.major) {
                p.push(format!("{LAYOUT}: major {} twice", l.major));
            }
            for stem in [&l.dispatcher, &l.reference] {
                if !l.library.iter().any(|x| &x.stem == stem) {
                    p.push(format!(
                        "{LAYOUT}: major {}: {stem} is not one of its libraries",
                        l.major
                    ));
                }
            }
        }
        let mut codes = BTreeSet::new();
        for d in &self.findings {
            if !codes.insert(d.code.clone()) {
                p.push(format!("{FINDINGS}: {} twice", d.code));
            }
            if super::Severity::parse(&d.severity).is_none() {
                p.push(format!(
                    "{FINDINGS}: {}: bad severity {:?}",
                    d.code, d.severity
                ));
            }
        }
        for (code, name) in super::CODES {
            match self.findings.iter().find(|d| d.code == *code) {
                None => p.push(format!("{FINDINGS}: no entry for {code}")),
                Some(d) if d.name != *name => p.push(format!(
                    "{FINDINGS}: {code}: name {:?}, want {name:?}",
                    d.name
                )),
                Some(_) => {}
            }
        }
        p
    }

    /// Resolves source ids to [`SourceRef`]s (unknown ids are kept, without URL).
    pub fn source_refs<S: AsRef<str>>(&self, ids: &[S]) -> Vec<SourceRef> {
        let mut out: Vec<SourceRef> = Vec::new();
        for id in ids {
            let id = id.as_ref();
            if out.iter().any(|r| r.id == id) {
                continue;
            }
            out.push(SourceRef {
                id: id.to_string(),
                urls: self.source(id).map(|s| s.urls.clone()).unwrap_or_default(),
            });
        }
        out
    }

    /// A source by id, from `sources.toml` or `frameworks.toml`.
    pub fn source(&self, id: &str) -> Option<&Source> {
        self.sources
            .get(id)
            .or_else(|| self.message_sources.get(id))
    }

    // ---- look-ups used by the rules ----

    /// The MVC row of a CUDA major.
    pub fn family(&self, major: u32) -> Option<&DriverFamily> {
        self.drivers.family.iter().find(|f| f.major == major)
    }

    /// The toolkit row of `major.minor`.
    pub fn toolkit(&self, v: &Ver) -> Option<&Toolkit> {
        let want = v.prefix(2);
        self.drivers
            .toolkit
            .iter()
            .find(|t| Ver::parse(&t.version).is_some_and(|x| x.prefix(2) == want))
    }

    /// The support-matrix row containing a cuDNN version.
    pub fn release(&self, v: &Ver) -> Option<&CudnnRelease> {
        self.releases
            .iter()
            .find(|r| match (Ver::parse(&r.from), Ver::parse(&r.to)) {
                (Some(a), Some(b)) => v.within(&a, &b),
                _ => false,
            })
    }

    /// The framework whose libraries live in `site-packages/<dir>`.
    /// Whether NVIDIA's wheels of a library family are numbered with the
    /// library's own version (`[wheels]` of `cudnn-packages.toml`).
    pub fn wheel_numbered_like_library(&self, family: &str) -> bool {
        self.wheels.families.iter().any(|f| f == family)
    }

    /// The pip requirement of cuDNN `cudnn` built for CUDA `cuda`, when
    /// such a wheel exists (`cudnn-packages.toml`).
    pub fn cudnn_wheel(&self, cudnn: u32, cuda: u32) -> Option<&str> {
        self.packages
            .iter()
            .find(|r| (r.cudnn, r.cuda) == (cudnn, cuda))?
            .pip
            .as_deref()
    }

    pub fn framework_import(&self, dir: &str) -> Option<&FrameworkImport> {
        self.imports.iter().find(|f| f.dir == dir)
    }

    /// The layout of a cuDNN major.
    pub fn layout(&self, major: u32) -> Option<&LayoutMajor> {
        self.layout.iter().find(|l| l.major == major)
    }

    /// The sub-library stem whose `*VersionCheck` function this is.
    pub fn version_check_stem(&self, func: &str) -> Option<(u32, &str)> {
        self.layout.iter().find_map(|l| {
            l.library
                .iter()
                .find(|x| x.version_check.as_deref() == Some(func))
                .map(|x| (l.major, x.stem.as_str()))
        })
    }

    /// A `cudnnStatus_t` value decoded with the numbering of cuDNN `major`
    /// (7 and earlier use v7's, 8 v8's, 9 and later v9's; [R4][R5][R42]).
    pub fn cudnn_status(&self, major: u32, value: i64) -> Option<&CudnnStatus> {
        self.statuses.iter().find(|s| {
            let v = match major {
                0..=7 => s.v7,
                8 => s.v8,
                _ => s.v9,
            };
            v == Some(value)
        })
    }

    /// The name of a status in cuDNN `major`'s numbering (v9's canonical name).
    pub fn cudnn_status_name(s: &CudnnStatus, major: u32) -> &str {
        if major >= 9 {
            s.v9_name.as_deref().unwrap_or(&s.name)
        } else {
            &s.name
        }
    }

    /// The v9 category of a status value (`CUDNN_STATUS_CATEGORY`).
    pub fn cudnn_category(&self, value: i64) -> Option<&StatusCategory> {
        let base = value / 1000 * 1000;
        self.categories.iter().find(|c| c.base == base)
    }

    /// A CUDA runtime / driver error code.
    pub fn cuda_error(&self, value: i64) -> Option<&CudaError> {
        self.errors.iter().find(|e| e.value == value)
    }
}

/// Reads a knowledge file (at most 4 MiB: these are small tables).
fn read_small(p: &Path) -> Result<String, String> {
    let md = std::fs::metadata(p).map_err(|e| crate::model::io_msg(&e))?;
    if md.len() > 4 << 20 {
        return Err("larger than 4 MiB".into());
    }
    std::fs::read_to_string(p).map_err(|e| crate::model::io_msg(&e))
}

/// The versions a message's `build`/`runtime` text stands for.
pub fn message_version(format: Option<&str>, text: &str) -> Option<Ver> {
    let int = |t: &str| t.trim().parse::<u64>().ok().map(Ver::from_cudnn_int);
    match format? {
        "tuple" | "dotted" => Ver::parse(text),
        "cudnn-int" => int(text),
        // cuBLAS / cuSPARSE (10 and later) are major*10000+minor*100+patch,
        // the scheme of cuDNN 9's integers.
        "cuda-library-int" => int(text).filter(|v| v.major() >= 10),
        // One wording printed CUDNN_VERSION integers, later tuples.
        "cudnn" => int(text).or_else(|| Ver::parse(text.trim_matches(|c| c == '(' || c == ')'))),
        _ => None,
    }
}

/// `cudaDriverGetVersion()`'s integer in a message (`11040` → 11.4).
pub fn driver_cuda_version(text: &str) -> Option<Ver> {
    text.trim().parse::<u64>().ok().map(Ver::from_cuda_int)
}

/// A version as cuDNN's own integer (`CUDNN_VERSION`, `cudnnGetVersion`):
/// major*1000+minor*100+patch before cuDNN 9, major*10000+minor*100+patch
/// from 9 on.
pub fn cudnn_int(v: &Ver) -> u64 {
    let part = |i: usize| u64::from(v.0.get(i).copied().unwrap_or(0));
    let scale = if v.major() >= 9 { 10000 } else { 1000 };
    part(0) * scale + part(1) * 100 + part(2)
}

/// The oldest cuDNN whose integer is at least `min`: what a check
/// `min <= cudnnGetVersion()` asks for. An integer below 90000 whose
/// pre-9 reading has major 9 or more (JAX's 9100, "9.1.0") is below every
/// cuDNN 9 integer (90000 and up), so it asks for cuDNN 9.0.0.
pub fn cudnn_int_threshold(min: u64) -> Ver {
    let v = Ver::from_cudnn_int(min);
    if min < 90000 && v.major() >= 9 {
        Ver(vec![9, 0, 0])
    } else {
        v
    }
}

fn check_example(m: &MessageRule, i: usize, ex: &MessageExample) -> Vec<String> {
    let mut p = Vec::new();
    let id = &m.spec.id;
    let Some(c) = m.regex.captures(&ex.text) else {
        return vec![format!("{FRAMEWORKS}: {id}: example {i} does not match")];
    };
    let fmt = m.spec.version_format.as_deref();
    for (group, want, is_version) in [
        ("build", &ex.build, true),
        ("runtime", &ex.runtime, true),
        ("missing", &ex.missing, false),
        ("library", &ex.library, false),
        ("cudnn_major", &ex.cudnn_major, false),
        ("cuda_major", &ex.cuda_major, false),
        ("driver", &ex.driver, false),
        ("names", &ex.names, false),
        ("path", &ex.path, false),
        ("tag", &ex.tag, false),
        ("symbol", &ex.symbol, false),
        ("file", &ex.file, false),
        ("status", &ex.status, false),
        ("minimum", &ex.minimum, false),
        ("error", &ex.error, false),
        ("driver_cuda", &ex.driver_cuda, true),
    ] {
        let got = c.name(group).map(|g| g.as_str());
        let got = match (is_version, group) {
            (true, "driver_cuda") => got.and_then(driver_cuda_version).map(|v| v.to_string()),
            (true, _) => got
                .and_then(|g| message_version(fmt, g))
                .map(|v| v.to_string()),
            (false, _) => got.map(str::to_string),
        };
        match (want, &got) {
            (Some(w), Some(g)) if w == g => {}
            (None, _) => {}
            (Some(w), g) => p.push(format!(
                "{FRAMEWORKS}: {id}: example {i}: {group} is {g:?}, want {w:?}"
            )),
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::tempdir;

    #[test]
    fn embedded_tables_parse_and_validate() {
        let k = Knowledge::embedded().unwrap_or_else(|e| panic!("{e}"));
        assert!(k.sources.len() > 80);
        assert!(k.drivers.toolkit.len() >= 25);
        assert!(k.releases.len() >= 15);
        assert!(k.statuses.len() >= 40);
        assert_eq!(k.errors.len(), 10);
        assert!(k.messages.len() >= 10);
        assert_eq!(k.layout.len(), 3);
        assert!(k.origin.values().all(|o| o == "embedded"));
    }

    #[test]
    fn every_row_has_a_known_source_with_an_address() {
        let k = Knowledge::embedded().unwrap();
        // validate() checks ids; here: every id resolves to a public address.
        let all: Vec<&Vec<String>> = k
            .drivers
            .family
            .iter()
            .map(|f| &f.source)
            .chain(k.drivers.toolkit.iter().map(|t| &t.source))
            .chain(k.releases.iter().map(|r| &r.source))
            .chain(k.statuses.iter().map(|s| &s.source))
            .chain(k.errors.iter().map(|e| &e.source))
            .chain(k.messages.iter().map(|m| &m.spec.source))
            .chain(k.layout.iter().map(|l| &l.source))
            .collect();
        for ids in all {
            assert!(!ids.is_empty());
            for r in k.source_refs(ids) {
                assert!(!r.urls.is_empty(), "{} has no URL", r.id);
            }
        }
        // Every source, cited or not, is public: no address or title that
        // points at files a user does not have, or at third-party copies of
        // NVIDIA's headers.
        for (id, s) in k.sources.iter().chain(&k.message_sources) {
            assert!(!s.urls.is_empty(), "{id} has no URL");
            for bad in ["facts.md", "/reference/", "research/", ".log"] {
                assert!(!s.title.contains(bad), "{id}: {}", s.title);
            }
            for u in &s.urls {
                assert!(u.starts_with("https://"), "{id}: {u}");
                for mirror in ["zspace/", "Minerallka/", "huggingface.co"] {
                    assert!(!u.contains(mirror), "{id}: {u}");
                }
            }
        }
        // The URL of a reference as the table gives it.
        let r9 = &k.source_refs(&["R9"])[0];
        assert_eq!(
            r9.urls,
            vec![
                "https://docs.nvidia.com/cuda/archive/13.2.2/cuda-toolkit-release-notes/index.html"
            ]
        );
    }

    #[test]
    fn unverified_rows_are_marked() {
        let k = Knowledge::embedded().unwrap();
        let v = |s: &str| Ver::parse(s).unwrap();
        // The 8.6–8.8 and 9.18–9.28 rows are inferred, not read from a matrix.
        assert!(!k.release(&v("8.7.0")).unwrap().verified);
        assert!(!k.release(&v("9.19.0")).unwrap().verified);
        assert!(k.release(&v("9.17.1")).unwrap().verified);
        assert!(k.release(&v("8.9.7.29")).unwrap().verified);
        // [R9]: 13.3 from third-party quotes, 13.4/13.5 unknown.
        assert!(!k.toolkit(&v("13.3")).unwrap().verified);
        assert!(k.toolkit(&v("13.4")).unwrap().drivers.is_empty());
        assert!(k.toolkit(&v("13.0.96")).unwrap().verified);
        // No row: unknown.
        assert!(k.release(&v("9.2.0")).is_none());
        assert!(k.release(&v("6.0.21")).is_none());
    }

    #[test]
    fn driver_lookups() {
        let k = Knowledge::embedded().unwrap();
        let v = |s: &str| Ver::parse(s).unwrap();
        assert_eq!(k.family(13).unwrap().mvc_min_driver.as_deref(), Some("580"));
        assert_eq!(
            k.family(12).unwrap().mvc_min_driver.as_deref(),
            Some("525.60.13")
        );
        assert_eq!(
            k.family(11).unwrap().mvc_min_driver.as_deref(),
            Some("450.80.02")
        );
        assert!(!k.family(10).unwrap().mvc);
        assert_eq!(k.toolkit(&v("12.9")).unwrap().drivers[0], "575.51.03");
        assert_eq!(k.toolkit(&v("13.0")).unwrap().drivers[2], "580.95.05");
        assert!(k.toolkit(&v("12.7")).is_none());
    }

    #[test]
    fn status_decoding_depends_on_the_major() {
        let k = Knowledge::embedded().unwrap();
        let name = |major, v| {
            k.cudnn_status(major, v)
                .map(|s| Knowledge::cudnn_status_name(s, major).to_string())
        };
        // [R4][R5][R42] and E4: cudnnCreate without a GPU: v9 1001, v8 1.
        assert_eq!(
            name(9, 1001).as_deref(),
            Some("CUDNN_STATUS_NOT_INITIALIZED")
        );
        assert_eq!(name(8, 1).as_deref(), Some("CUDNN_STATUS_NOT_INITIALIZED"));
        assert_eq!(name(7, 1).as_deref(), Some("CUDNN_STATUS_NOT_INITIALIZED"));
        assert_eq!(name(9, 1), None);
        assert_eq!(
            name(8, 14).as_deref(),
            Some("CUDNN_STATUS_VERSION_MISMATCH")
        );
        assert_eq!(name(7, 14), None);
        assert_eq!(
            name(9, 1002).as_deref(),
            Some("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH")
        );
        assert_eq!(
            name(9, 3007).as_deref(),
            Some("CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH")
        );
        assert_eq!(name(8, 6).as_deref(), Some("CUDNN_STATUS_ARCH_MISMATCH"));
        assert_eq!(
            name(9, 4003).as_deref(),
            Some("CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED")
        );
        assert_eq!(
            name(9, 3014).as_deref(),
            Some("CUDNN_STATUS_NOT_SUPPORTED_INVALID_DYNAMIC_SHAPE")
        );
        // The v9 category helpers.
        assert_eq!(
            k.cudnn_category(3005).unwrap().name,
            "CUDNN_STATUS_NOT_SUPPORTED"
        );
        assert_eq!(k.cudnn_category(1008).unwrap().base, 1000);
        assert_eq!(
            k.cudnn_category(5004).unwrap().name,
            "CUDNN_STATUS_EXECUTION_FAILED"
        );
        assert!(k.cudnn_category(9000).is_none());
        // Create failures come with causes.
        assert!(!k.cudnn_status(9, 1001).unwrap().create_causes.is_empty());
    }

    #[test]
    fn cuda_error_table() {
        let k = Knowledge::embedded().unwrap();
        for v in [3, 34, 35, 36, 100, 101, 209, 222, 803, 804] {
            let e = k.cuda_error(v).unwrap_or_else(|| panic!("{v}"));
            assert!(!e.meaning.is_empty() && !e.causes.is_empty(), "{v}");
        }
        assert_eq!(
            k.cuda_error(804).unwrap().driver.as_deref(),
            Some("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE")
        );
        assert_eq!(
            k.cuda_error(35).unwrap().runtime.as_deref(),
            Some("cudaErrorInsufficientDriver")
        );
        assert!(k.cuda_error(101).unwrap().runtime.is_none());
    }

    /// The cuDNN package table is whole and checked: a row of another
    /// major's wheel, or a second row for one pair, is a problem.
    #[test]
    fn cudnn_package_table() {
        let mut k = Knowledge::embedded().unwrap();
        let pairs: Vec<(u32, u32)> = k.packages.iter().map(|r| (r.cudnn, r.cuda)).collect();
        assert!(
            pairs.contains(&(9, 13)) && !pairs.contains(&(8, 13)),
            "{pairs:?}"
        );
        assert!(k.packages.iter().all(|r| r.cudnn != 7 || r.pip.is_none()));
        let mut bad = k.packages[1].clone();
        bad.pip = Some("nvidia-cudnn-cu12==8.*".into());
        k.packages.push(bad);
        let problems = k.validate();
        assert!(
            problems.iter().any(|p| p.contains("listed twice"))
                && problems
                    .iter()
                    .any(|p| p.contains("is not of these majors")),
            "{problems:?}"
        );
    }

    /// The import-order table knows the frameworks of the CDT012 reports
    /// (jax#18032, Paddle#66947, CTranslate2#1897), each directory once.
    #[test]
    fn framework_import_table() {
        let mut k = Knowledge::embedded().unwrap();
        for (dir, module) in [
            ("jaxlib", "jax"),
            ("paddle", "paddle"),
            ("ctranslate2", "ctranslate2"),
        ] {
            assert_eq!(k.framework_import(dir).unwrap().module, module);
        }
        assert!(k.framework_import("numpy").is_none());
        let again = k.imports[0].clone();
        k.imports.push(again);
        assert!(k.validate().iter().any(|p| p.contains("listed twice")));
    }

    #[test]
    fn layout_table() {
        let k = Knowledge::embedded().unwrap();
        assert_eq!(k.layout(9).unwrap().reference, "libcudnn_graph");
        assert_eq!(k.layout(8).unwrap().reference, "libcudnn_ops_infer");
        assert_eq!(
            k.version_check_stem("cudnnOpsVersionCheck"),
            Some((9, "libcudnn_ops"))
        );
        assert_eq!(
            k.version_check_stem("cudnnCnnInferVersionCheck"),
            Some((8, "libcudnn_cnn_infer"))
        );
        let l9 = k.layout(9).unwrap();
        let req: Vec<&str> = l9
            .library
            .iter()
            .filter(|l| l.required)
            .map(|l| l.stem.as_str())
            .collect();
        assert!(req.contains(&"libcudnn_graph") && !req.contains(&"libcudnn_adv"));
    }

    #[test]
    fn override_directory_replaces_files_and_bad_ones_are_refused() {
        let d = tempdir("knowledge");
        // A valid override: a driver table with one more (made-up) toolkit.
        let mut drivers = EMBEDDED
            .iter()
            .find(|(n, _)| *n == DRIVERS)
            .unwrap()
            .1
            .to_string();
        drivers.push_str(
            "\n[[toolkit]]\nversion = \"13.9\"\ndrivers = [\"650.1\"]\nsource = [\"R9\"]\n",
        );
        std::fs::write(d.join(DRIVERS), drivers).unwrap();
        // A broken one: bad TOML.
        std::fs::write(d.join(STATUS), "[[status]\nname=").unwrap();
        // One that parses but fails validation: a row without a source.
        std::fs::write(
            d.join(ERRORS),
            "[[error]]\nvalue = 35\nruntime = \"x\"\nmeaning = \"m\"\nsource = []\n",
        )
        .unwrap();
        let (k, warnings) = Knowledge::load_from(Some(&d));
        assert!(k.toolkit(&Ver::parse("13.9").unwrap()).is_some());
        assert_eq!(k.origin[DRIVERS], d.join(DRIVERS).display().to_string());
        assert_eq!(k.origin[STATUS], "embedded");
        assert_eq!(k.errors.len(), 10, "the bad errors file was refused");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains(STATUS) || warnings[1].contains(STATUS));
        assert!(
            warnings.iter().any(|w| w.contains("no source")),
            "{warnings:?}"
        );
        // A message whose example no longer matches is refused too.
        let fw = EMBEDDED.iter().find(|(n, _)| *n == FRAMEWORKS).unwrap().1;
        std::fs::write(
            d.join(FRAMEWORKS),
            fw.replace("build = \"9.19.0\"", "build = \"9.18.0\""),
        )
        .unwrap();
        let (k2, w2) = Knowledge::load_from(Some(&d));
        assert!(
            w2.iter().any(|w| w.contains(
                "pytorch-cudnn-version: example 0: build is Some(\"9.19.0\"), want \"9.18.0\""
            )),
            "{w2:?}"
        );
        // And one whose pattern no longer matches its example.
        std::fs::write(
            d.join(FRAMEWORKS),
            fw.replacen("PyTorch was compiled", "PyTorch was built", 1),
        )
        .unwrap();
        let (_, w3) = Knowledge::load_from(Some(&d));
        assert!(
            w3.iter().any(|w| w.contains("example 0 does not match")),
            "{w3:?}"
        );
        assert_eq!(k2.origin[FRAMEWORKS], "embedded");
        // Not a directory.
        let (_, w4) = Knowledge::load_from(Some(&d.join("nope")));
        assert!(w4[0].contains("not a directory"));
    }

    /// The integers of cuDNN versions, both ways, and what an absolute
    /// minimum asks for (JAX's 9100 is every cuDNN 9, no cuDNN 8).
    #[test]
    fn cudnn_integers_and_thresholds() {
        let v = |s: &str| Ver::parse(s).unwrap();
        assert_eq!(cudnn_int(&v("7.1.2")), 7102);
        assert_eq!(cudnn_int(&v("8.9.6")), 8906);
        assert_eq!(cudnn_int(&v("9.1.0")), 90100);
        assert_eq!(cudnn_int(&v("9.19.0.56")), 91900);
        assert_eq!(cudnn_int_threshold(9100).to_string(), "9.0.0");
        assert_eq!(cudnn_int_threshold(8600).to_string(), "8.6.0");
        assert_eq!(cudnn_int_threshold(90800).to_string(), "9.8.0");
        assert_eq!(driver_cuda_version("11040").unwrap().to_string(), "11.4");
        assert_eq!(driver_cuda_version("9000").unwrap().to_string(), "9.0");
        assert_eq!(
            message_version(Some("cudnn"), "(8, 3, 2)")
                .unwrap()
                .to_string(),
            "8.3.2"
        );
        assert_eq!(
            message_version(Some("cudnn"), "7401").unwrap().to_string(),
            "7.4.1"
        );
    }
}
