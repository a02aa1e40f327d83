//! The cudnn-trace library: everything below the command line, so that
//! other front ends (a Python package, say) reuse it as the `cudnn-trace`
//! binary does.
//!
//! The layers, each importing only from the ones in its "imports" column
//! (`layers.rs` checks this, and that sibling modules name each other in no
//! circle, in `cargo test`):
//!
//! | layer | what | imports |
//! |---|---|---|
//! | [`model`] | what a trace says, read-only: the trace set (read forgivingly), `launcher.json`, `stderr.txt`, events, ELF, versions | — |
//! | [`machine`] | what is on this machine's disk, read once and kept (copies, packages, the ld.so cache, RUNPATHs), the pin directory's check, the out-of-process probe | model |
//! | [`analysis`] | what the traces mean: the process tree, per-process facts, the findings rules and their knowledge tables (`data/`) | model, machine |
//! | [`render`] | text summary, findings, JSON document, `explain`, `env` lines | model, machine, analysis |
//! | [`pipeline`] | read → machine → analyse → render, shared by `run` and `report` | all of the above |
//! | [`launch`] | running a program under the shim: target checks, environment, shim extraction, stderr capture, signals, `launcher.json` | model, machine |
//!
//! The binary crate (`cli/`) adds the command line and the commands, thin
//! glue over [`pipeline`] and [`launch`].

pub mod analysis;
pub mod launch;
#[cfg(test)]
mod layers;
pub mod machine;
pub mod model;
pub mod pipeline;
pub mod render;

#[cfg(test)]
mod testutil;
