//! `cudnn-trace [OPTIONS] [--] PROGRAM [ARGS...]`: the launcher runs the
//! program traced; then the run is read back and summarized like `report`
//! would, and `--fail-on` gates the exit status.

use super::USAGE;
use crate::args::{self, RunArgs};
use cudnn_trace_core::analysis::policy::Policy;
use cudnn_trace_core::launch::{self, eprint, Outcome, Traced};
use cudnn_trace_core::model;
use cudnn_trace_core::pipeline::Report;
use cudnn_trace_core::render::style::{detect, Stream};
use cudnn_trace_core::render::text::display_path;
use cudnn_trace_core::render::TextOptions;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;

/// `--fail-on LEVEL`: the program exited 0 but a finding reached LEVEL.
pub const EXIT_FINDINGS: i32 = 3;

/// "Not found" from the launcher (`launch::target`).
const NOT_FOUND: i32 = 127;

/// The per-code policy of the run. `broken`: the configuration file found
/// could not be used, so `--fail-on` cannot be judged as configured and
/// fails the run (a gate that silently passes is worse than one that
/// trips).
struct RunPolicy {
    policy: Policy,
    broken: bool,
}

/// Runs the launcher; returns the exit status.
pub fn run(args: RunArgs) -> i32 {
    let Some(policy) = run_policy(&args) else {
        return USAGE;
    };
    let opts = launch::Options {
        out: args.out.clone(),
        all: args.all,
        no_capture_stderr: args.no_capture_stderr,
        pin: args.pin.clone(),
        pin_mode: args.pin_mode(),
        program: args.program.clone(),
        args: args.args.clone(),
        meanwhile: summarizes(&args).then_some(before_the_summary as fn()),
    };
    let mut run = match launch::run(&opts) {
        Outcome::Done(NOT_FOUND) => {
            suggest_command(&args.program);
            return NOT_FOUND;
        }
        Outcome::Done(code) => return code,
        Outcome::Traced(t) => t,
    };
    let status = summarize(&args, &policy, &mut run);
    let signal = run.record.signal;
    // Whatever it holds goes now: dying of the program's signal runs no
    // destructor.
    drop(run);
    if let Some(sig) = signal {
        launch::die_of(sig);
    }
    status
}

/// What the summary will need whatever the run, done while the program
/// starts. The CPU's features: memchr asks std which SIMD it may use the
/// first time it searches, and std reads them with `cpuid`, seven of them,
/// each a trap to the hypervisor on a virtual machine (8 µs apiece on the
/// 2-core development VM).
fn before_the_summary() {
    #[cfg(target_arch = "x86_64")]
    let _ = std::arch::is_x86_feature_detected!("avx2");
}

/// The policy, before the program runs. A configuration file named with
/// `--config` that cannot be used is a usage error (None: the program is
/// not run); one that was found is a warning, and the program runs.
fn run_policy(args: &RunArgs) -> Option<RunPolicy> {
    match super::policy(&args.policy) {
        Ok(policy) => Some(RunPolicy {
            policy,
            broken: false,
        }),
        Err(e) if e.named => {
            errln!("cudnn-trace: {}", e.message);
            None
        }
        Err(e) => {
            let gate = match args.fail_on {
                Some(_) => ", and --fail-on fails the run",
                None => "",
            };
            errln!(
                "cudnn-trace: warning: {}; its settings are not used{gate} (--no-config: read none)",
                e.message
            );
            Some(RunPolicy {
                policy: e.options_only,
                broken: true,
            })
        }
    }
}

/// After "command not found": a program named like a command of
/// cudnn-trace (`cudnn-trace reprot`) was probably meant as one.
fn suggest_command(program: &OsStr) {
    let Some(word) = program.to_str() else { return };
    if word.contains('/') {
        return;
    }
    let commands = args::definition();
    let best = commands
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name())
        .map(|name| (strsim::jaro(word, name), name))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    // clap's own threshold for "did you mean".
    if let Some((score, name)) = best {
        if score > 0.7 {
            errln!("cudnn-trace: did you mean the command `cudnn-trace {name}`?");
        }
    }
}

/// Whether the run ends with a report (a summary, a JSON summary or a
/// `--fail-on` gate), whose findings counts go into `launcher.json`.
fn summarizes(args: &RunArgs) -> bool {
    !(args.quiet && args.json_summary.is_none() && args.fail_on.is_none())
}

/// The end of a traced run: the findings counted into `launcher.json`, the
/// `--fail-on` gate, the summary on stderr and the JSON summary. Returns the
/// exit status.
fn summarize(args: &RunArgs, policy: &RunPolicy, run: &mut Traced) -> i32 {
    let mut status = run.status;
    if !summarizes(args) {
        return status;
    }
    let mut bar = crate::progress::Bar::new();
    let report =
        Report::read_with(std::slice::from_ref(&run.out_dir), &mut bar).with_policy(&policy.policy);
    bar.finish();
    let rec = &mut run.record;
    let mut findings = report.findings_record(args.fail_on);
    findings.tripped |= policy.broken && args.fail_on.is_some();
    // The gate never hides the program's own failure: it only turns a
    // clean exit into EXIT_FINDINGS.
    if findings.tripped && status == 0 && rec.signal.is_none() {
        status = EXIT_FINDINGS;
        rec.status = Some(status);
    }
    rec.findings = Some(findings);
    run.records.write(rec);
    if !args.quiet {
        eprint(&report.problems_text());
        let (color, width) = detect(Stream::Stderr, args.color.into());
        let opts = TextOptions {
            all: false,
            location: vec![display_path(&run.out_dir)],
            prefix: None,
            color,
            width,
            each: false,
        };
        eprint(&format!("\n{}", report.text(&opts)));
    }
    if let Some(dest) = &args.json_summary {
        write_json_summary(&report, dest, args.all);
    }
    status
}

fn write_json_summary(report: &Report, dest: &Path, all: bool) {
    // Written as it is made, through a buffer: never held whole.
    let res = if dest == Path::new("-") {
        report.write_json(std::io::BufWriter::new(std::io::stdout().lock()), all)
    } else {
        fs::File::create(dest).and_then(|f| report.write_json(std::io::BufWriter::new(f), all))
    };
    if let Err(e) = res {
        eprint(&format!(
            "cudnn-trace: cannot write the JSON summary to {}: {}\n",
            dest.display(),
            model::io_msg(&e)
        ));
    }
}
