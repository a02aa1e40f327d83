//! The one pipeline behind `run`'s summary and `report` (and any other
//! front end): read the traces (`model`) → the machine the report runs on
//! (`machine`) → analyse (`analysis`) → render (`render`).
//!
//! ```text
//! let report = Report::read(&paths);       // read, describe the machine, analyse
//! print!("{}", report.summary_text(&opts)); // render: text ...
//! print!("{}", report.json(all)?);          // ... or the JSON document
//! ```

use crate::analysis::findings::Severity;
use crate::analysis::{self, Analysis, Knowledge};
use crate::machine::Machine;
use crate::model::{self, FindingsRecord, TraceSet};
use crate::render::{self, json::Document, summary::TextOptions};
use std::path::PathBuf;

/// A trace set and what the analysis made of it.
pub struct Report {
    pub set: TraceSet,
    pub analysis: Analysis,
}

impl Report {
    /// Reads trace directories and files, and analyses them on this
    /// machine with the knowledge tables. The program's stderr is taken
    /// from the first run directory that has a `stderr.txt`.
    pub fn read(paths: &[PathBuf]) -> Report {
        let set = model::read_paths(paths);
        let stderr = model::captured_stderr(paths);
        Report::analyse(set, stderr.as_deref(), &Machine::this_host())
    }

    /// Analyses a trace set already read, with the program's `stderr` (when
    /// captured), on `machine`, with the knowledge tables.
    pub fn analyse(set: TraceSet, stderr: Option<&str>, machine: &Machine) -> Report {
        let (knowledge, warnings) = Knowledge::load();
        let analysis = analysis::analyse(&set, stderr, machine, &knowledge, warnings);
        Report { set, analysis }
    }

    /// The text summary: the process tree and each process's libraries.
    pub fn summary_text(&self, opts: &TextOptions) -> String {
        render::summary::render(&self.set, &self.analysis.tree, opts)
    }

    /// The findings section that follows the summary.
    pub fn findings_text(&self) -> String {
        render::findings::findings_text(&self.analysis.diagnosis)
    }

    /// What could not be read, one line each (bounded).
    pub fn problems_text(&self) -> String {
        render::findings::problems_text(&self.set.problems)
    }

    /// The machine-readable document. `all`: include libraries outside the
    /// CUDA family (only in traces taken with `--all`).
    pub fn document(&self, all: bool) -> Document<'_> {
        render::json::document(
            &self.set,
            &self.analysis.tree,
            all,
            &self.analysis.diagnosis,
        )
    }

    /// [`Report::document`] as pretty-printed JSON.
    pub fn json(&self, all: bool) -> serde_json::Result<String> {
        serde_json::to_string_pretty(&self.document(all))
    }

    /// `--fail-on LEVEL`: whether a finding reached it.
    pub fn trips(&self, level: Option<Severity>) -> bool {
        self.analysis.diagnosis.trips(level)
    }

    /// The findings counts and the `--fail-on` gate, as `launcher.json`
    /// records them.
    pub fn findings_record(&self, fail_on: Option<Severity>) -> FindingsRecord {
        let d = &self.analysis.diagnosis;
        let count = |s: Severity| d.all().filter(|f| f.severity == s).count();
        FindingsRecord {
            error: count(Severity::Error),
            warning: count(Severity::Warning),
            info: count(Severity::Info),
            fail_on: fail_on.map(|l| l.as_str().to_string()),
            tripped: self.trips(fail_on),
        }
    }
}
