//! `cudnn-trace man [--dir DIR]`: the man page, generated from the same
//! definitions as the parser and the help (`args::definition`), so that it
//! always describes the binary that prints it (a build step would not
//! reach a `cargo install`).

use crate::args::{self, ManArgs};
use cudnn_trace_core::model::io_err;

/// Prints the main page, or writes every page into `--dir`; returns the
/// exit status.
pub fn run(a: ManArgs) -> i32 {
    let cmd = args::man_definition();
    match &a.dir {
        None => {
            let mut out = Vec::new();
            if let Err(e) = clap_mangen::Man::new(cmd).render(&mut out) {
                errln!("cudnn-trace: man: {}", cudnn_trace_core::model::io_msg(&e));
                return 1;
            }
            super::print_stdout(&String::from_utf8_lossy(&out));
            0
        }
        Some(dir) => {
            match std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(cmd, dir)) {
                Ok(()) => 0,
                Err(e) => {
                    errln!("cudnn-trace: man: {}", io_err(dir, &e));
                    1
                }
            }
        }
    }
}
