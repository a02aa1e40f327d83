//! `cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]`: the launcher runs the
//! program traced; then the run is read back and summarized like `report`
//! would, and `--fail-on` gates the exit status.

use crate::args::RunArgs;
use cudnn_trace_core::launch::{self, eprint, Outcome, Traced};
use cudnn_trace_core::model;
use cudnn_trace_core::pipeline::Report;
use cudnn_trace_core::render::style::{detect, Stream};
use cudnn_trace_core::render::text::display_path;
use cudnn_trace_core::render::TextOptions;
use std::fs;
use std::io::Write;
use std::path::Path;

/// `--fail-on LEVEL`: the program exited 0 but a finding reached LEVEL.
pub const EXIT_FINDINGS: i32 = 3;

/// Runs the launcher; returns the exit status.
pub fn run(args: RunArgs) -> i32 {
    let opts = launch::Options {
        out: args.out.clone(),
        all: args.all,
        no_capture_stderr: args.no_capture_stderr,
        pin: args.pin.clone(),
        pin_mode: args.pin_mode,
        program: args.program.clone(),
        args: args.args.clone(),
    };
    let mut run = match launch::run(&opts) {
        Outcome::Done(code) => return code,
        Outcome::Traced(t) => t,
    };
    let status = summarize(&args, &mut run);
    if let Some(sig) = run.record.signal {
        launch::die_of(sig);
    }
    status
}

/// The end of a traced run: the findings counted into `launcher.json`, the
/// `--fail-on` gate, the summary on stderr and the JSON summary. Returns the
/// exit status.
fn summarize(args: &RunArgs, run: &mut Traced) -> i32 {
    let mut status = run.status;
    if args.quiet && args.json_summary.is_none() && args.fail_on.is_none() {
        return status;
    }
    let report = Report::read(std::slice::from_ref(&run.out_dir));
    let rec = &mut run.record;
    rec.findings = Some(report.findings_record(args.fail_on));
    // The gate never hides the program's own failure: it only turns a
    // clean exit into EXIT_FINDINGS.
    if report.trips(args.fail_on) && status == 0 && rec.signal.is_none() {
        status = EXIT_FINDINGS;
        rec.status = Some(status);
    }
    launch::write_record(&run.out_dir, rec);
    if !args.quiet {
        eprint(&report.problems_text());
        let (color, width) = detect(Stream::Stderr, args.color);
        let opts = TextOptions {
            all: false,
            location: vec![display_path(&run.out_dir)],
            prefix: None,
            color,
            width,
        };
        eprint(&format!("\n{}", report.text(&opts)));
    }
    if let Some(dest) = &args.json_summary {
        write_json_summary(&report, dest, args.all);
    }
    status
}

fn write_json_summary(report: &Report, dest: &Path, all: bool) {
    let text = match report.json(all) {
        Ok(t) => t + "\n",
        Err(e) => {
            eprint(&format!(
                "cudnn-trace: cannot write the JSON summary: {e}\n"
            ));
            return;
        }
    };
    let res = if dest == Path::new("-") {
        std::io::stdout()
            .write_all(text.as_bytes())
            .and_then(|()| std::io::stdout().flush())
    } else {
        fs::write(dest, text)
    };
    if let Err(e) = res {
        eprint(&format!(
            "cudnn-trace: cannot write the JSON summary to {}: {}\n",
            dest.display(),
            model::io_msg(&e)
        ));
    }
}
