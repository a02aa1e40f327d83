//! The commands: thin glue between the command line and the layers below.
//! Each reads its arguments, calls the library (`pipeline` for `report` and
//! the end of a run, `launch` to run a program, `render` for the texts) and
//! prints; none holds logic of its own beyond exit statuses.

pub mod env;
pub mod explain;
pub mod probe;
pub mod report;
pub mod run;

use crate::args::{self, Command};
use cudnn_trace_core::launch::{self, eprint};
use cudnn_trace_core::render;
use std::ffi::OsString;

/// Runs the command `argv` (the arguments after the program name) asks for;
/// returns the exit status.
pub fn main(argv: &[OsString]) -> i32 {
    match args::parse(argv) {
        Ok(Command::Help) => {
            print_stdout(args::USAGE);
            0
        }
        Ok(Command::Version) => {
            let long = argv.first().is_some_and(|a| a == "version");
            print_stdout(&version_text(long));
            0
        }
        Ok(Command::Report(r)) => report::run(r),
        Ok(Command::Explain(code)) => explain::run(code.as_deref()),
        Ok(Command::Run(r)) => run::run(r),
        Ok(Command::Env(e)) => env::run(e),
        Ok(Command::Probe(a)) => probe::run(&a),
        Err(e) => {
            eprint(&format!(
                "cudnn-trace: {e}\nusage: cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...] | report [--format text|json|markdown] DIR|FILE... | explain [CODE] | env --pin DIR ... | help\n"
            ));
            2
        }
    }
}

/// `--version` (`version`: `long`, with the shim and the formats).
fn version_text(long: bool) -> String {
    let mut s = format!("cudnn-trace {}\n", env!("CARGO_PKG_VERSION"));
    if long {
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
    }
    s
}

/// Writes to stdout; a closed pipe (`| head`) ends the output quietly.
pub fn print_stdout(s: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(s.as_bytes()).and_then(|()| out.flush());
}
