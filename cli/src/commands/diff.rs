//! `cudnn-trace diff GOOD BAD`: two runs read through the report pipeline,
//! lined up and compared (`cudnn_trace_core::analysis::compare`).

use super::{print_stdout, USAGE};
use crate::args::{DiffArgs, Format};
use cudnn_trace_core::launch::eprint;
use cudnn_trace_core::model;
use cudnn_trace_core::pipeline::{self, Report};
use cudnn_trace_core::render::diff::{self, DiffDocument, DIFF_VERSION};
use cudnn_trace_core::render::style::{detect, Stream};
use cudnn_trace_core::render::text::esc;
use cudnn_trace_core::render::TextOptions;
use std::path::PathBuf;

/// Something that matters differs.
const DIFFERENT: i32 = 1;

/// Runs `diff`; returns the exit status: 0 the same, 1 different, 2 usage
/// or read errors.
pub fn run(args: DiffArgs) -> i32 {
    let format = args.format();
    if format == Format::Chrome {
        errln!("cudnn-trace: diff: --format chrome is for `report` (diff prints text, json or markdown)");
        return USAGE;
    }
    let policy = match super::policy(&args.policy) {
        Ok(p) => p,
        Err(e) => {
            errln!("cudnn-trace: {}", e.message);
            return USAGE;
        }
    };
    let good_paths = vec![args.good.clone()];
    let bad_paths = vec![args.bad.clone()];
    let Some(good) = read_side("GOOD", &good_paths) else {
        return USAGE;
    };
    let Some(bad) = read_side("BAD", &bad_paths) else {
        return USAGE;
    };
    let (good, bad) = (good.with_policy(&policy), bad.with_policy(&policy));
    let d = pipeline::diff(&good, &good_paths, &bad, &bad_paths);
    match format {
        Format::Json => {
            let doc = DiffDocument {
                diff_version: DIFF_VERSION,
                diff: &d,
            };
            match model::json::to_pretty(&doc) {
                Ok(b) => print_stdout(&(String::from_utf8_lossy(&b).into_owned() + "\n")),
                Err(e) => {
                    errln!("cudnn-trace: cannot write JSON: {e}");
                    return USAGE;
                }
            }
        }
        Format::Markdown => print_stdout(&diff::markdown(&d)),
        _ => {
            let (color, width) = detect(Stream::Stdout, args.color.into());
            let opts = TextOptions {
                color,
                width,
                ..Default::default()
            };
            print_stdout(&diff::text(&d, &opts));
        }
    }
    if d.matters {
        DIFFERENT
    } else {
        0
    }
}

/// One run read and analysed; None (after saying why) when nothing in it
/// could be read.
fn read_side(label: &str, paths: &[PathBuf]) -> Option<Report> {
    let report = Report::read(paths);
    eprint(&report.problems_text());
    if report.set.images.is_empty() {
        errln!(
            "cudnn-trace: diff: {label} ({}): {}",
            esc(&paths[0].display().to_string()),
            report.nothing_read().unwrap_or("no readable trace found")
        );
        return None;
    }
    Some(report)
}
