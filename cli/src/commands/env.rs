//! `cudnn-trace env --pin DIR [--pin-mode M] [--shim PATH] [--out TRACE_DIR]`:
//! the pin without the launcher.
//!
//! Production services do not run under `cudnn-trace`; they get the pin from
//! their environment (`docs/pin.md`, "Environment"). This command validates
//! DIR exactly as the launcher does (findings on stderr) and prints the
//! variables to set, in three syntaxes: a shell, a Dockerfile and a systemd
//! unit, each quoted for its own rules.

use super::print_stdout;
use crate::args::EnvArgs;
use cudnn_trace_core::launch::shim::{self, install_shim};
use cudnn_trace_core::machine::pin;
use cudnn_trace_core::model::io_msg;
use cudnn_trace_core::render::env::{describe, render};
use std::path::{Path, PathBuf};

/// Exit statuses of `env`.
const VALID: i32 = 0;
const REFUSED: i32 = 1;
const USAGE: i32 = 2;

/// Runs `cudnn-trace env`; returns the exit status.
pub fn run(a: EnvArgs) -> i32 {
    // A shim path the loader cannot take is a wrong argument: say so before
    // the (slower) validation.
    let shim_dest = match &a.shim {
        Some(p) => match absolute(p) {
            Ok(abs) if shim::loader_safe(&abs) => Some(abs),
            Ok(abs) => {
                errln!(
                    "cudnn-trace: env: --shim {}: LD_AUDIT cannot take a path with a space, colon or '$'",
                    abs.display()
                );
                return USAGE;
            }
            Err(e) => {
                errln!("cudnn-trace: env: --shim {}: {e}", p.display());
                return USAGE;
            }
        },
        None => None,
    };
    let out = match a.out.as_deref().map(absolute).transpose() {
        Ok(o) => o,
        Err(e) => {
            errln!("cudnn-trace: env: --out: {e}");
            return USAGE;
        }
    };
    let info = match pin::validate(&a.pin, a.pin_mode) {
        Ok(i) => i,
        Err(refusal) => {
            errln!("cudnn-trace: {refusal}");
            return REFUSED;
        }
    };
    for w in &info.warnings {
        errln!("cudnn-trace: warning: {w}");
    }
    errln!("cudnn-trace: {}", describe(&info));

    let (shim_path, per_user) = match &shim_dest {
        Some(dest) => match install_shim(dest) {
            Ok(()) => (dest.clone(), false),
            Err(e) => {
                errln!("cudnn-trace: env: cannot install the shim: {e}");
                return REFUSED;
            }
        },
        None => match shim::locate() {
            // CUDNN_TRACE_SHIM_PATH names a copy the user chose.
            Ok(p) => (p, std::env::var_os(shim::SHIM_PATH_ENV).is_none()),
            Err(e) => {
                errln!("cudnn-trace: env: {e}; give --shim PATH to install it there");
                return REFUSED;
            }
        },
    };
    let preload_path = shim::preload_path(&shim_path);
    match render(&info, &shim_path, &preload_path, per_user, out.as_deref()) {
        Ok(text) => {
            print_stdout(&text);
            VALID
        }
        Err(e) => {
            errln!("cudnn-trace: env: {e}");
            REFUSED
        }
    }
}

/// `p` made absolute against the working directory (not resolved: the
/// caller's symlinks are the caller's choice of a stable path).
fn absolute(p: &Path) -> Result<PathBuf, String> {
    std::path::absolute(p).map_err(|e| io_msg(&e))
}
