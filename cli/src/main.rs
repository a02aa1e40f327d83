//! cudnn-trace: shows which cuDNN/CUDA shared libraries a program really
//! loaded, why, and from where.
//!
//! `cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]` runs PROGRAM with the shim
//! (`libcdtrace.so`, embedded in this binary) injected through LD_AUDIT and
//! LD_PRELOAD; `cudnn-trace report DIR|FILE...` summarizes traces;
//! `cudnn-trace env --pin DIR` prints the settings that pin cuDNN to DIR
//! without the launcher.
//!
//! This crate is the command line only (`args`, `commands`); everything
//! below it is the `cudnn_trace_core` library (`core/`).

/// eprintln! that never panics (a closed stderr is ignored).
macro_rules! errln {
    ($($t:tt)*) => {
        cudnn_trace_core::launch::eprint(&format!("{}\n", format_args!($($t)*)))
    };
}

mod args;
mod commands;
mod progress;

/// Runs before Rust's runtime, which ignores SIGPIPE for the launcher: the
/// program must get the signal state the launcher inherited
/// (`launch::inherited`). An `.init_array` entry of the
/// executable, run by the C library before `main`.
#[used]
#[link_section = ".init_array"]
static NOTE_INHERITED_SIGNALS: extern "C" fn() = note_inherited_signals;

extern "C" fn note_inherited_signals() {
    cudnn_trace_core::launch::inherited::note();
}

fn main() {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    std::process::exit(commands::main(&argv));
}
