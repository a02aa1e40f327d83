//! `cudnn-trace report [--format text|json|markdown] DIR|FILE...`: the
//! traces read again, through the same pipeline as the launcher's summary.

use super::print_stdout;
use crate::args::ReportArgs;
use cudnn_trace_core::launch::eprint;
use cudnn_trace_core::model::trace;
use cudnn_trace_core::pipeline::Report;
use cudnn_trace_core::render::style::{detect, Stream};
use cudnn_trace_core::render::text::esc;
use cudnn_trace_core::render::{Format, TextOptions};

/// Runs `report`; returns the exit status.
pub fn run(args: ReportArgs) -> i32 {
    let mut paths = args.paths.clone();
    if paths.is_empty() {
        match trace::newest_run() {
            Some(p) => {
                if args.format == Format::Text {
                    errln!(
                        "cudnn-trace: reading the newest run, {}",
                        esc(&p.display().to_string())
                    );
                }
                paths.push(p);
            }
            None => {
                errln!(
                    "cudnn-trace: report: no DIR or FILE given and no run found in ./{}\n\
                     usage: cudnn-trace report [--format text|json|markdown] [--all] DIR|FILE...",
                    trace::DEFAULT_OUT
                );
                return 2;
            }
        }
    }
    let report = Report::read(&paths);
    eprint(&report.problems_text());
    match args.format {
        Format::Json => match report.json(args.all) {
            Ok(s) => print_stdout(&(s + "\n")),
            Err(e) => {
                errln!("cudnn-trace: cannot write JSON: {e}");
                return 1;
            }
        },
        Format::Markdown if !report.set.images.is_empty() => print_stdout(&report.markdown()),
        Format::Markdown => {}
        Format::Text => {
            let (color, width) = detect(Stream::Stdout, args.color);
            let opts = TextOptions {
                all: args.all,
                location: paths.iter().map(|p| p.display().to_string()).collect(),
                prefix: None,
                color,
                width,
            };
            if report.set.images.is_empty() {
                print_stdout(&report.summary_text(&opts));
            } else {
                print_stdout(&report.text(&opts));
            }
        }
    }
    match exit_status(&report) {
        0 if report.trips(args.fail_on) => 3,
        s => s,
    }
}

/// 1, after saying why, when no trace file was read; else 0.
fn exit_status(report: &Report) -> i32 {
    match report.nothing_read() {
        Some(why) => {
            errln!("cudnn-trace: {why}");
            1
        }
        None => 0,
    }
}
