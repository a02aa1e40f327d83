//! `cudnn-trace explain [CODE]`: what a finding code means.

use super::print_stdout;
use cudnn_trace_core::analysis::Knowledge;
use cudnn_trace_core::render::explain::{codes_text, explain_with};

/// `cudnn-trace explain [CODE]`.
pub fn run(code: Option<&str>) -> i32 {
    let (k, warnings) = Knowledge::load();
    for w in &warnings {
        errln!("cudnn-trace: knowledge: {w}");
    }
    match code {
        None => {
            print_stdout(&codes_text(&k));
            0
        }
        Some(c) => {
            match explain_with(&k, c) {
                Some(t) => {
                    print_stdout(&t);
                    if !t.ends_with('\n') {
                        print_stdout("\n");
                    }
                    0
                }
                None => {
                    errln!("cudnn-trace: no finding has the code {c:?}; `cudnn-trace explain` lists them");
                    2
                }
            }
        }
    }
}
