//! cudnn-trace: shows which cuDNN/CUDA shared libraries a program really
//! loaded, why, and from where.
//!
//! `cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]` runs PROGRAM with the shim
//! (`libcdtrace.so`, embedded in this binary) injected through LD_AUDIT and
//! LD_PRELOAD; `cudnn-trace report DIR|FILE...` summarizes traces;
//! `cudnn-trace env --pin DIR` prints the settings that pin cuDNN to DIR
//! without the launcher.

/// eprintln! that never panics (a closed stderr is ignored).
macro_rules! errln {
    ($($t:tt)*) => {
        $crate::launch::eprint(&format!("{}\n", format_args!($($t)*)))
    };
}

mod analysis;
mod args;
mod commands;
mod envcmd;
mod launch;
mod machine;
mod model;
mod render;
mod report;

#[cfg(test)]
mod testutil;

use args::Command;

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

fn main() {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let code = match args::parse(&argv) {
        Ok(Command::Help) => {
            report::print_stdout(args::USAGE);
            0
        }
        Ok(Command::Version) => {
            let long = argv.first().is_some_and(|a| a == "version");
            report::print_stdout(&version_text(long));
            0
        }
        Ok(Command::Report(r)) => report::run(r),
        Ok(Command::Explain(code)) => report::explain(code.as_deref()),
        Ok(Command::Run(r)) => commands::run::run(r),
        Ok(Command::Env(e)) => envcmd::run(e),
        Ok(Command::Probe(a)) => machine::probe::child_main(&a),
        Err(e) => {
            launch::eprint(&format!(
                "cudnn-trace: {e}\nusage: cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...] | report [--json] DIR|FILE... | explain [CODE] | env --pin DIR ... | help\n"
            ));
            2
        }
    };
    std::process::exit(code);
}
