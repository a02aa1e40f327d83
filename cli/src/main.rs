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

#![cfg_attr(not(test), no_main)]

/// eprintln! that never panics (a closed stderr is ignored).
macro_rules! errln {
    ($($t:tt)*) => {
        cudnn_trace_core::launch::eprint(&format!("{}\n", format_args!($($t)*)))
    };
}

mod args;
mod commands;
mod progress;

/// The process's entry, called by the C library: the binary has no Rust
/// `main` (`no_main`), because Rust's runtime start cost every traced run
/// about 0.1 ms for things the launcher does not need; [`launch::entry`]
/// says which and does the two it does need.
///
/// [`launch::entry`]: cudnn_trace_core::launch::entry
#[cfg_attr(not(test), no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    cudnn_trace_core::launch::entry::start();
    // glibc hands the arguments to Rust's standard library before `main`.
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // A panic ends the launcher as one in a Rust `main` would (its message,
    // then status 101), instead of unwinding into the C library.
    let code = std::panic::catch_unwind(|| commands::main(&argv)).unwrap_or(101);
    // Flushes stdout, as returning from a Rust `main` would.
    std::process::exit(code);
}
