//! The commands: thin glue between the command line and the layers below.
//! Each reads its arguments, calls the library (`pipeline` for `report` and
//! the end of a run, `launch` to run a program, `render` for the texts) and
//! prints; none holds logic of its own beyond exit statuses.

pub mod completions;
pub mod diff;
pub mod env;
pub mod explain;
pub mod man;
pub mod probe;
pub mod report;
pub mod run;

use crate::args::{self, Command, PolicyArgs};
use cudnn_trace_core::analysis::policy::{self, Action, Origin, Policy};
use cudnn_trace_core::launch;
use cudnn_trace_core::render;
use std::ffi::OsString;

/// The exit status of a usage error.
pub const USAGE: i32 = 2;

/// Runs the command `argv` (the arguments after the program name) asks for;
/// returns the exit status.
pub fn main(argv: &[OsString]) -> i32 {
    match args::parse(argv) {
        Ok(Command::Version) => {
            print_stdout(&version_text());
            0
        }
        Ok(Command::Report(r)) => report::run(r),
        Ok(Command::Diff(d)) => diff::run(d),
        Ok(Command::Explain(code)) => explain::run(code.as_deref()),
        Ok(Command::Run(r)) => run::run(r),
        Ok(Command::Env(e)) => env::run(e),
        Ok(Command::Completions(shell)) => completions::run(shell),
        Ok(Command::Man(m)) => man::run(m),
        Ok(Command::Probe(a)) => probe::run(&a),
        // A usage error, or the help or version text: clap prints them
        // (help and version on stdout, where a closed pipe is no error).
        Err(e) => {
            let _ = e.print();
            e.exit_code()
        }
    }
}

/// `version`: the version (which `--version` prints alone), the shim and
/// the formats.
fn version_text() -> String {
    let mut s = format!("cudnn-trace {}\n", env!("CARGO_PKG_VERSION"));
    match launch::shim::embedded() {
        Some(b) => {
            s += &format!(
                "shim: embedded, {} bytes, hash {}\n",
                b.len(),
                launch::shim::content_hash(b)
            );
        }
        None => s += "shim: NOT embedded (the build could not produce it)\n",
    }
    if let Some(p) = std::env::var_os(launch::shim::SHIM_PATH_ENV) {
        s += &format!("{}={}\n", launch::shim::SHIM_PATH_ENV, p.to_string_lossy());
    }
    s += &format!(
        "trace schema: {}, report JSON: {}\n",
        cudnn_trace_format::SCHEMA_VERSION,
        render::json::REPORT_VERSION
    );
    s
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
pub fn print_stdout(s: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes()).and_then(|()| out.flush());
}

/// A configuration file that cannot be used: the message, and whether it
/// was named with `--config` (a usage error) or found (`discover`).
pub struct ConfigError {
    pub message: String,
    pub named: bool,
    /// The options' settings alone, for a caller that goes on without the
    /// file.
    pub options_only: Policy,
}

/// The per-code policy of a run or a report: the configuration file
/// (`--config FILE`, else the nearest one found from the working
/// directory, none with `--no-config`), then `--severity` and `--ignore`,
/// which win over the file. What the file has that does no harm (unknown
/// codes or settings) is said here, once.
pub fn policy(a: &PolicyArgs) -> Result<Policy, ConfigError> {
    let options_only = with_options(Policy::default(), a);
    let found = if a.no_config {
        Ok(None)
    } else if let Some(p) = &a.config {
        policy::load(p).map(Some)
    } else {
        match std::env::current_dir() {
            Ok(cwd) => policy::discover(&cwd),
            // A working directory that is gone has no configuration.
            Err(_) => Ok(None),
        }
    };
    match found {
        Ok(Some(cfg)) => {
            for w in &cfg.warnings {
                errln!("cudnn-trace: warning: {w}");
            }
            Ok(with_options(cfg.policy, a))
        }
        Ok(None) => Ok(options_only),
        Err(message) => Err(ConfigError {
            message,
            named: a.config.is_some(),
            options_only,
        }),
    }
}

/// `base` with the command line's settings on top.
fn with_options(mut base: Policy, a: &PolicyArgs) -> Policy {
    for (code, level) in &a.severity {
        base.set(code, Action::Severity(*level), Origin::Option("--severity"));
    }
    for code in &a.ignore {
        base.set(code, Action::Ignore, Origin::Option("--ignore"));
    }
    base
}
