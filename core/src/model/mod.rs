//! The model: what a trace says, read-only. Reading trace directories and
//! files forgivingly (a damaged line is a [`Problem`], never a panic), the
//! launcher's record and the program's captured stderr next to them, the
//! `version` and `call` events in the form the analysis uses, ELF dynamic
//! sections, and version numbers.
//!
//! Nothing here knows about the machine the report runs on or about what is
//! wrong: those are the `machine` and `analysis` layers above.

pub mod elf;
pub mod events;
pub mod name_version;
pub mod path;
pub mod record;
pub mod trace;
pub mod version;

pub use path::{basename, dirname, stem};
pub use record::{
    captured_stderr, signal_name, FindingsRecord, LauncherRecord, OutlivedRecord, PinRecord,
    LAUNCHER_FILE,
};
pub use trace::{read_paths, Failed, Image, Problem, TraceSet};
pub use version::Ver;

use std::path::Path;

/// An I/O error's text without the "(os error N)" suffix.
pub fn io_msg(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// `PATH: error text`, the error without its "(os error N)" suffix.
pub fn io_err(p: &Path, e: &std::io::Error) -> String {
    format!("{}: {}", p.display(), io_msg(e))
}
