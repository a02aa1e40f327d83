//! The knowledge files of `data/` as types: each struct mirrors a file's
//! table field for field, with `deny_unknown_fields` so that a typo in a
//! file is an error, not a silently ignored row. Some fields (notes,
//! `since`, roles) are documentation that no rule reads yet.
//!
//! This file is compiled twice: into the library, and into `core/build.rs`
//! (by `#[path]`), which parses `data/*.toml` with these very types at build
//! time and embeds them as [`Embedded`] in postcard's compact form: reading
//! that at run time costs a fraction of parsing the TOML (issue 10). It may
//! therefore use only `std`, `serde`, `toml` and `postcard`, nothing of the
//! crate. A new field or row needs no change here beyond its type; a new
//! file, one line of [`tables!`].
#![allow(dead_code)]

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// The knowledge files: each file name and the type its content parses
/// into, once; [`Table`] and [`FILES`] are made from this list.
macro_rules! tables {
    ($($variant:ident($ty:ident) = $name:ident,)*) => {
        /// One knowledge file, parsed.
        #[derive(Debug, Clone, Deserialize, Serialize)]
        pub enum Table {
            $($variant($ty),)*
        }

        /// Every knowledge file, by name, in this order.
        pub const FILES: &[&str] = &[$($name,)*];

        impl Table {
            /// Parses the text of the knowledge file `name`.
            pub fn parse(name: &str, text: &str) -> Result<Table, String> {
                match name {
                    $($name => toml::from_str(text)
                        .map(Table::$variant)
                        .map_err(|e| e.to_string().trim_end().to_string()),)*
                    _ => Err(format!("{name}: not a knowledge file")),
                }
            }
        }
    };
}

tables! {
    Sources(SourcesFile) = SOURCES,
    Drivers(DriversFile) = DRIVERS,
    Support(SupportFile) = SUPPORT,
    Status(StatusFile) = STATUS,
    Errors(ErrorsFile) = ERRORS,
    Frameworks(FrameworksFile) = FRAMEWORKS,
    Layout(LayoutFile) = LAYOUT,
    Findings(FindingsFile) = FINDINGS,
    Packages(PackagesFile) = PACKAGES,
    Imports(ImportsFile) = IMPORTS,
}

/// What `core/build.rs` embeds: every file of [`FILES`], parsed, in that
/// order, and for each message of `frameworks.toml` (in its order) the texts
/// its pattern cannot match without (`needles::of_pattern`; `None`: none
/// known, the pattern is always run).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Embedded {
    pub tables: Vec<Table>,
    pub message_needles: Vec<Option<Vec<Vec<u8>>>>,
}

impl Embedded {
    /// The compact form (postcard).
    pub fn encode(&self) -> Result<Vec<u8>, String> {
        postcard::to_allocvec(self).map_err(|e| e.to_string())
    }

    /// Reads [`Embedded::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<Embedded, String> {
        postcard::from_bytes(bytes).map_err(|e| e.to_string())
    }
}

fn yes() -> bool {
    true
}

/// A public source (`[source.R9]`), or an observation on public artifacts
/// (`[source.E3]`).
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesFile {
    pub source: BTreeMap<String, Source>,
}

/// A CUDA major's minor-version-compatibility range ([R10][R9]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriverFamily {
    pub major: u32,
    pub mvc: bool,
    pub mvc_min_driver: Option<String>,
    pub mvc_max_driver: Option<String>,
    pub source: Vec<String>,
}

/// A toolkit minor and its bundled driver ([R9]).
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriversFile {
    pub family: Vec<DriverFamily>,
    pub toolkit: Vec<Toolkit>,
}

/// One CUDA flavour of a cuDNN release.
#[derive(Debug, Clone, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SupportFile {
    pub release: Vec<CudnnRelease>,
}

/// A v9 status category (`CUDNN_STATUS_CATEGORY(code)`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StatusCategory {
    pub base: i64,
    pub name: String,
    pub meaning: String,
    pub source: Vec<String>,
}

/// A `cudnnStatus_t` name and its value per major ([R4][R5][R42]).
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StatusFile {
    pub category: Vec<StatusCategory>,
    pub status: Vec<CudnnStatus>,
}

/// A `cudaError_t` / `CUresult` code ([R7][R8][E1]).
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorsFile {
    pub error: Vec<CudaError>,
}

/// An example a message pattern must match, with the values it must extract.
#[derive(Debug, Clone, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FrameworksFile {
    pub message: Vec<MessageSpec>,
    #[serde(default)]
    pub source: BTreeMap<String, Source>,
}

/// A cuDNN file of a major's layout ([R17][E6][E7]).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutLibrary {
    pub stem: String,
    pub role: String,
    pub required: bool,
    pub version_check: Option<String>,
    pub loads: Option<String>,
    pub since: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutMajor {
    pub major: u32,
    pub dispatcher: String,
    pub reference: String,
    pub notes: Option<String>,
    pub source: Vec<String>,
    pub library: Vec<LayoutLibrary>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LayoutFile {
    pub major: Vec<LayoutMajor>,
}

/// A package that ships cuDNN `cudnn` built for CUDA `cuda`
/// (`cudnn-packages.toml`): what a fix may tell the user to install.
#[derive(Debug, Clone, Deserialize, Serialize)]
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
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WheelNumbering {
    pub families: Vec<String>,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PackagesFile {
    pub package: Vec<CudnnPackage>,
    #[serde(default)]
    pub wheels: WheelNumbering,
}

/// A framework by the `site-packages` directory of its libraries, and how
/// a program makes it load its CUDA libraries first
/// (`framework-imports.toml`).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FrameworkImport {
    pub dir: String,
    pub name: String,
    pub module: String,
    pub first: String,
    pub source: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ImportsFile {
    pub framework: Vec<FrameworkImport>,
}

/// The long text of a finding code (`cudnn-trace explain`).
#[derive(Debug, Clone, Deserialize, Serialize)]
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

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FindingsFile {
    pub finding: Vec<FindingDoc>,
}
