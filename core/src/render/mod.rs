//! The render layer: what the analysis concluded, written for a reader.
//!
//! * [`summary`]: the text summary (the process tree, each process's
//!   libraries, failed loads and pin);
//! * [`findings`]: the findings blocks and the summary's findings section;
//! * [`json`]: the `report --json` document;
//! * [`explain`]: `cudnn-trace explain`;
//! * [`mod@env`]: the settings `cudnn-trace env --pin` prints (shell,
//!   Dockerfile, systemd);
//! * [`text`]: escaping untrusted text for a terminal, shell quoting.
//!
//! Functions here return strings; printing them is the commands' job.

pub mod env;
pub mod explain;
pub mod findings;
pub mod json;
pub mod summary;
pub mod text;
