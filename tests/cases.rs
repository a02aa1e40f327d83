//! Issue 9's specification: real public failure reports rebuilt as cases
//! (`tests/cases/NN_slug/`, format and index in `tests/cases/README.md`).
//! Each case stages the fake libraries the report's machine had (at system
//! paths too, in a private mount namespace), runs a C program that loads
//! cuDNN/CUDA as the framework does and prints its exact message, under the
//! real launcher, and checks `cudnn-trace report --json`: the finding that
//! names the cause (file, reason, severity, rank), the fix's wording where it
//! matters, the framework message explained, nothing misleading. Clean
//! stacks must give no error or warning.
//!
//! ```sh
//! cargo test -p cudnn-trace-integration --test cases -- --nocapture   # table of every case
//! CDT_CASES=01,c13 cargo test -p cudnn-trace-integration --test cases  # some cases
//! CDT_CASES_VERBOSE=1 …                                                  # and their findings
//! ```
//!
//! Cases listed in `tests/cases/KNOWN_FAILING` fail on purpose until the
//! rules are fixed: they print a note; one that passes fails the test
//! (remove it from the list). Any other failing case fails the test.

#[path = "cases/_harness/mod.rs"]
mod harness;

use harness::{known_failing, table, Verdict};

#[test]
fn case_files_are_complete() {
    harness::lint::lint();
}

#[test]
fn real_failure_cases() {
    // The cases' findings rest on what the shim records on glibc 2.35 and
    // later (the program's calls, the libraries' own versions: docs/glibc.md).
    let v = cudnn_trace_integration::spec::glibc_version();
    if v < (2, 35) {
        eprintln!(
            "real_failure_cases skipped: glibc {}.{} records no calls nor in-library versions (needs 2.35), which the cases' findings rest on",
            v.0, v.1
        );
        return;
    }
    let outcomes = harness::run_selected();
    let known = known_failing();
    let tbl = table(&outcomes, &known);
    let status = cudnn_trace_integration::tools::target_dir().join("cdt-cases/STATUS.md");
    let _ = std::fs::write(&status, &tbl);
    println!("{tbl}");
    let verbose = std::env::var_os("CDT_CASES_VERBOSE").is_some();
    let require_ns = std::env::var_os("CDT_CASES_REQUIRE_SYSROOT").is_some();
    let mut wrong = Vec::new();
    for o in &outcomes {
        let listed = known.contains(&o.name);
        if verbose {
            println!("== {} ({:.1} s)\n{}", o.name, o.secs, o.shown);
        }
        match &o.verdict {
            Verdict::Pass if listed => wrong.push(format!(
                "{} passes now: remove it from tests/cases/KNOWN_FAILING",
                o.name
            )),
            Verdict::Pass => {}
            Verdict::Fail(f) if listed => {
                println!(
                    "note: {} fails as listed in KNOWN_FAILING: {}",
                    o.name, f[0]
                );
            }
            Verdict::Fail(f) => wrong.push(format!(
                "{} fails:\n    {}\n  findings:\n{}",
                o.name,
                f.join("\n    "),
                o.shown
            )),
            Verdict::Broken(e) => wrong.push(format!("{} is broken: {e}", o.name)),
            Verdict::Skipped(why) if require_ns => wrong.push(format!("{} skipped: {why}", o.name)),
            Verdict::Skipped(why) => println!("note: {} skipped: {why}", o.name),
        }
    }
    let secs: f64 = outcomes.iter().map(|o| o.secs).sum();
    println!("{} cases, {secs:.0} s of case time", outcomes.len());
    assert!(wrong.is_empty(), "{}\n\n{tbl}", wrong.join("\n\n"));
}
