//! `cudnn-trace report [--format text|json|markdown] [PATH...]`: the
//! traces read again, through the same pipeline as the launcher's summary.

use super::{print_stdout, USAGE};
use crate::args::{Format, ReportArgs};
use cudnn_trace_core::launch::eprint;
use cudnn_trace_core::model;
use cudnn_trace_core::model::trace;
use cudnn_trace_core::pipeline::{self, Report};
use cudnn_trace_core::render::style::{detect, Stream};
use cudnn_trace_core::render::text::esc;
use cudnn_trace_core::render::TextOptions;
use cudnn_trace_core::render::{
    self,
    chrome::{self, ChromeOptions},
};
use std::path::PathBuf;

/// Nothing was read: the paths name no readable trace.
const NOTHING_READ: i32 = 1;

/// Runs `report`; returns the exit status.
pub fn run(args: ReportArgs) -> i32 {
    let format = args.format();
    let policy = match super::policy(&args.policy) {
        Ok(p) => p,
        Err(e) => {
            errln!("cudnn-trace: {}", e.message);
            return USAGE;
        }
    };
    let Some(paths) = paths(&args, format) else {
        return USAGE;
    };
    if args.fleet {
        return fleet(&args, format, &paths);
    }
    let chrome = match chrome_options(&args, format) {
        Ok(c) => c,
        Err(()) => return USAGE,
    };
    let mut bar = crate::progress::Bar::new();
    let report = if format == Format::Chrome {
        Report::read_timed_with(&paths, &mut bar)
    } else {
        Report::read_with(&paths, &mut bar)
    };
    let report = report.with_policy(&policy);
    bar.finish();
    eprint(&report.problems_text());
    // An error path prints why, and no empty summary; a launcher record
    // alone still says how the run went (a static program, say).
    let nothing = report.nothing_read();
    if nothing.is_none() || !report.set.launchers.is_empty() {
        if format == Format::Chrome {
            print_stdout(&report.chrome(&chrome));
        } else if let Err(status) = print(&report, &args, format, &paths) {
            return status;
        }
    }
    if let Some(why) = nothing {
        if !every_path_unreadable(&report, &paths) {
            errln!("cudnn-trace: {why} in {}", shown(&paths));
        }
        return NOTHING_READ;
    }
    if report.trips(args.fail_on) {
        super::run::EXIT_FINDINGS
    } else {
        0
    }
}

/// Prints the report in `format`. Err: the exit status when it cannot.
fn print(report: &Report, args: &ReportArgs, format: Format, paths: &[PathBuf]) -> Result<(), i32> {
    match format {
        Format::Json => {
            // Written as it is made: a report of ten thousand processes is
            // never held whole. A closed pipe (`| head`) ends it quietly.
            let out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            match report.write_json(out, args.all) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => {
                    errln!(
                        "cudnn-trace: cannot write JSON: {}",
                        cudnn_trace_core::model::io_msg(&e)
                    );
                    return Err(1);
                }
            }
        }
        Format::Markdown => print_stdout(&report.markdown()),
        Format::Chrome => print_stdout(&report.chrome(&ChromeOptions::default())),
        Format::Text => {
            let (color, width) = detect(Stream::Stdout, args.color.into());
            let opts = TextOptions {
                all: args.all,
                location: paths.iter().map(|p| p.display().to_string()).collect(),
                prefix: None,
                color,
                width,
                each: args.each,
            };
            // A launcher record alone has no findings to give a verdict on.
            if report.set.images.is_empty() {
                print_stdout(&report.summary_text(&opts));
            } else {
                print_stdout(&report.text(&opts));
            }
        }
    }
    Ok(())
}

/// `--format chrome`'s options: `--align-to TRACE`'s base. Err (after
/// saying why) when TRACE has none, or `--align-to` comes without chrome.
fn chrome_options(args: &ReportArgs, format: Format) -> Result<ChromeOptions, ()> {
    let Some(trace) = &args.align_to else {
        return Ok(ChromeOptions::default());
    };
    if format != Format::Chrome {
        errln!("cudnn-trace: report: --align-to needs --format chrome");
        return Err(());
    }
    match chrome::base_of(trace) {
        Ok(base) => Ok(ChromeOptions {
            base_ns: Some(base),
        }),
        Err(why) => {
            errln!(
                "cudnn-trace: report: --align-to {}: {why}",
                esc(&trace.display().to_string())
            );
            Err(())
        }
    }
}

/// `report --fleet`: the runs grouped by CUDA stack. Exit 0, or 1 when
/// nothing was read (`--format json`'s `odd_processes` is the count to
/// gate on).
fn fleet(args: &ReportArgs, format: Format, paths: &[PathBuf]) -> i32 {
    let read = pipeline::fleet(paths);
    for p in &read.problems {
        errln!("cudnn-trace: {}", esc(&p.to_string()));
    }
    if read.problems_total > read.problems.len() {
        errln!(
            "cudnn-trace: … and {} more problems reading the runs",
            read.problems_total - read.problems.len()
        );
    }
    let v = &read.view;
    match format {
        Format::Json => match model::json::to_pretty(v) {
            Ok(b) => print_stdout(&(String::from_utf8_lossy(&b).into_owned() + "\n")),
            Err(e) => {
                errln!("cudnn-trace: cannot write JSON: {e}");
                return 1;
            }
        },
        Format::Markdown => print_stdout(&render::fleet::markdown(v)),
        Format::Chrome => {
            errln!("cudnn-trace: report: --fleet prints text, json or markdown (for a timeline of many runs: --format chrome without --fleet)");
            return USAGE;
        }
        Format::Text => {
            let (color, width) = detect(Stream::Stdout, args.color.into());
            let opts = TextOptions {
                color,
                width,
                ..Default::default()
            };
            print_stdout(&render::fleet::text(v, &opts));
        }
    }
    if v.images == 0 {
        errln!("cudnn-trace: no readable trace found in {}", shown(paths));
        NOTHING_READ
    } else {
        0
    }
}

/// The paths to read: those given, else the newest run (None, after
/// saying why, when there is none).
fn paths(args: &ReportArgs, format: Format) -> Option<Vec<PathBuf>> {
    if !args.paths.is_empty() {
        return Some(args.paths.clone());
    }
    match trace::newest_run() {
        Some(p) => {
            if format == Format::Text {
                errln!(
                    "cudnn-trace: reading the newest run, {}",
                    esc(&p.display().to_string())
                );
            }
            Some(vec![p])
        }
        None => {
            errln!(
                "cudnn-trace: report: no PATH given and no run found in ./{} \
                 (`cudnn-trace report --help` says more)",
                trace::DEFAULT_OUT
            );
            None
        }
    }
}

/// Whether each path given could not be read at all: the problems printed
/// already say all there is to say (`report /nonexistent`).
fn every_path_unreadable(report: &Report, paths: &[PathBuf]) -> bool {
    paths.iter().all(|p| {
        let label = p.display().to_string();
        report
            .set
            .problems
            .iter()
            .any(|pr| pr.file == label && pr.line.is_none())
    })
}

/// The paths, as a message shows them.
fn shown(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths
        .iter()
        .map(|p| esc(&p.display().to_string()).into_owned())
        .collect();
    names.join(", ")
}
