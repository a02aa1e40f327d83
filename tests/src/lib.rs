//! Test support (see tests/README.md): the loader scenario suite that checks
//! the shim is transparent — a program traced by cudnn-trace must load the
//! same objects, in the same order, and print the same output as without it,
//! and the trace must say so.
//!
//! * [`tools`]: workspace/target paths; builds `cudnn-trace` and the shim once.
//! * [`spec`]: the `scenario.env` format.
//! * [`run`]: [`build_scenario`], [`run_bare`], [`run_traced`].
//! * [`lddebug`]: the glibc `LD_DEBUG=libs,files` oracle ([`ld_debug_loaded`]).
//! * [`trace`]: [`read_trace`] into [`ProcessTrace`]s.
//! * [`check`]: the comparisons; [`check_scenario`] / [`assert_scenario`].
//! * [`calls`]: the `call`, `call-count` and `version` directives.
//! * [`pin`]: the pinned runs of pin scenarios (`pin DIR`, docs/pin.md).
//! * [`launcher_support`]: helpers of the launcher tests (`tests/launcher.rs`).
//! * [`pty`]: a test terminal for the terminal tests (`tests/terminal.rs`).
//! * [`two_installs`]: the pip-9.19-and-system-9.14 situation of `tests/cli.rs` and `tests/compare.rs`.

pub mod calls;
pub mod case_dir;
pub mod check;
pub mod fuzz;
pub mod launcher_support;
pub mod lddebug;
pub mod pin;
pub mod pty;
pub mod run;
pub mod spec;
pub mod tools;
pub mod trace;
pub mod two_installs;

pub use check::{assert_scenario, check_scenario, Outcome};
pub use lddebug::{ld_debug_loaded, LdObject};
pub use run::{
    build_scenario, list_scenarios, run_bare, run_pinned, run_traced, Built, Driver, Run,
};
pub use spec::{PinSpec, Spec, Termination};
pub use tools::{tools, Tools};
pub use trace::{read_trace, ProcessTrace};
