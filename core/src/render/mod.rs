//! The render layer: what the analysis concluded, written for a reader.
//!
//! * [`summary`]: the text summary (the process tree, each process's
//!   libraries, failed loads and pin);
//! * [`findings`]: the verdict and the findings blocks;
//! * [`json`]: the `report --format json` document;
//! * [`markdown`]: the short `report --format markdown` block for a bug
//!   report;
//! * [`explain`]: `cudnn-trace explain`;
//! * [`mod@env`]: the settings `cudnn-trace env --pin` prints (shell,
//!   Dockerfile, systemd);
//! * [`text`]: escaping untrusted text for a terminal, shell quoting, the
//!   `…/` legend;
//! * [`style`]: the terminal's width and colour ([`TextOptions`]), and the
//!   last pass of every text (escaping, wrapping).
//!
//! Functions here return strings; printing them is the commands' job.

pub mod chrome;
pub mod diff;
pub mod env;
pub mod explain;
pub mod findings;
pub mod fleet;
pub mod json;
pub mod markdown;
pub mod style;
pub mod summary;
pub mod text;

pub use style::TextOptions;

/// The output formats of `report` (`--format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    #[default]
    Text,
    Json,
    Markdown,
    /// Chrome Trace Event JSON (`chrome`).
    Chrome,
}

impl Format {
    pub fn parse(s: &str) -> Option<Format> {
        match s {
            "text" => Some(Format::Text),
            "json" => Some(Format::Json),
            "markdown" | "md" => Some(Format::Markdown),
            "chrome" => Some(Format::Chrome),
            _ => None,
        }
    }
}
