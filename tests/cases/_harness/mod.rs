//! The real-failure case harness (`tests/cases.rs`; format and index in
//! `tests/cases/README.md`). Each `tests/cases/NN_slug/case.toml` rebuilds one
//! public failure report with the fake stacks, runs its program under the real
//! launcher, reads `cudnn-trace report --json` through [`adapter`] and checks
//! the case's expectations ([`expect`]).

pub mod adapter;
pub mod expect;
pub mod lint;
pub mod spec;
pub mod stage;
pub mod sysroot;

use cudnn_trace_integration::launcher_support::{launcher, run, stderr_copy, Output};
use cudnn_trace_integration::tools;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// `tests/cases`.
pub fn cases_dir() -> PathBuf {
    tools::package_dir().join("cases")
}

/// Every case directory (`NN_slug` with a `case.toml`), sorted by name.
pub fn list() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(cases_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().join("case.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// The cases that fail on purpose until the rules are fixed
/// (`tests/cases/KNOWN_FAILING`, one name per line, `#` comments).
pub fn known_failing() -> Vec<String> {
    std::fs::read_to_string(cases_dir().join("KNOWN_FAILING"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// How one case came out.
pub enum Verdict {
    Pass,
    /// The expectations that failed, in order.
    Fail(Vec<String>),
    /// The case itself is wrong: it did not build, or the program did not
    /// end as the real one does (the situation was not reproduced).
    Broken(String),
    /// It needs a mount namespace that this machine does not give.
    Skipped(String),
}

pub struct Outcome {
    pub name: String,
    pub classes: String,
    pub verdict: Verdict,
    pub secs: f64,
    /// The findings, for `CDT_CASES_VERBOSE=1` and failure messages.
    pub shown: String,
}

/// The work directory of a case: `<target>/cdt-cases/<name>`, fresh.
fn work_dir(name: &str) -> PathBuf {
    let d = tools::target_dir().join("cdt-cases").join(name);
    if d.exists() {
        std::fs::remove_dir_all(&d).unwrap_or_else(|e| panic!("removing {}: {e}", d.display()));
    }
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("creating {}: {e}", d.display()));
    d
}

fn signal_number(name: &str) -> Option<i32> {
    Some(match name {
        "SIGABRT" => libc::SIGABRT,
        "SIGSEGV" => libc::SIGSEGV,
        "SIGBUS" => libc::SIGBUS,
        "SIGKILL" => libc::SIGKILL,
        _ => return None,
    })
}

/// A command run in the case's namespace when it stages system paths.
fn in_case(
    staged: &stage::Staged,
    cmd: std::process::Command,
) -> Result<std::process::Command, String> {
    match &staged.sysroot {
        Some(s) => s.wrap(&cmd),
        None => Ok(cmd),
    }
}

/// How the program ended, in words.
fn ending(out: &Output) -> String {
    match (out.code(), out.signal()) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("signal {s}"),
        _ => "?".into(),
    }
}

/// Runs one case: stage, run under the launcher, report, check.
pub fn run_case(name: &str) -> Outcome {
    let start = Instant::now();
    let dir = cases_dir().join(name);
    let mut outcome = Outcome {
        name: name.to_string(),
        classes: String::new(),
        verdict: Verdict::Pass,
        secs: 0.0,
        shown: String::new(),
    };
    let case = match spec::load(&dir.join("case.toml")) {
        Ok(c) => c,
        Err(e) => {
            outcome.verdict = Verdict::Broken(e);
            return outcome;
        }
    };
    outcome.classes = if case.clean {
        "clean".into()
    } else {
        case.classes
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    outcome.verdict = match evaluate(name, &dir, &case, &mut outcome.shown) {
        Ok(v) => v,
        Err(e) => Verdict::Broken(e),
    };
    outcome.secs = start.elapsed().as_secs_f64();
    outcome
}

fn evaluate(
    name: &str,
    dir: &Path,
    case: &spec::Case,
    shown: &mut String,
) -> Result<Verdict, String> {
    let work = work_dir(name);
    let staged = std::panic::catch_unwind(|| stage::stage(dir, case, &work)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "staging panicked".into())
    })??;
    if staged.sysroot.is_some() {
        if let Err(why) = sysroot::mode() {
            return Ok(Verdict::Skipped(format!(
                "needs a private mount namespace (run as root or allow user namespaces): {why}"
            )));
        }
    }
    let places = stage::Places {
        work: &work,
        sysroot: &sysroot::Sysroot::new(&work),
    };
    let cwd = case
        .run
        .cwd
        .as_deref()
        .map(|c| places.on_disk(c))
        .unwrap_or_else(|| work.clone());
    let trace = work.join("t");
    let mut cmd = launcher(&cwd);
    for (k, v) in &case.run.env {
        cmd.env(k, places.expand(v));
    }
    cmd.arg("-q")
        .arg("--out")
        .arg(&trace)
        .arg("--")
        .arg(&staged.program)
        .args(case.run.args.iter().map(|a| places.expand(a)));
    let out = run(in_case(&staged, cmd)?, None);

    // The program must end as the real one did, with the real message.
    let want = match &case.run.signal {
        Some(s) => format!(
            "signal {}",
            signal_number(s).ok_or_else(|| format!("unknown signal {s}"))?
        ),
        None => format!("exit {}", case.run.exit.unwrap_or(0)),
    };
    let kept = if trace.join("stderr.txt").exists() {
        String::from_utf8_lossy(&stderr_copy(&trace)).into_owned()
    } else {
        out.err()
    };
    if ending(&out) != want {
        return Err(format!(
            "the situation was not reproduced: the program ended with {}, the real one with {want}\n{}",
            ending(&out),
            out.show()
        ));
    }
    for s in &case.run.stderr {
        let s = places.expand(s);
        if !kept.contains(&s) {
            return Err(format!(
                "the situation was not reproduced: stderr lacks {s:?}\n{}",
                out.show()
            ));
        }
    }

    let mut rep = launcher(&work);
    rep.args(["report", "--json"]).arg(&trace);
    let rep = run(in_case(&staged, rep)?, None);
    let doc: serde_json::Value = serde_json::from_slice(&rep.stdout)
        .map_err(|e| format!("report --json: {e}\n{}", rep.show()))?;
    let found = adapter::findings(&doc);
    for f in &found {
        shown.push_str(&f.show());
    }
    for n in adapter::not_asked(&doc) {
        shown.push_str(&format!("  version not asked: {n}\n"));
    }
    let stage_dir = work.join("root");
    let ctx = expect::Ctx {
        work: &work,
        stage: staged.sysroot.as_ref().map(|_| stage_dir.as_path()),
    };
    let fails = expect::check(&ctx, &found, &case.expect, case.clean);
    Ok(if fails.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(fails)
    })
}

/// The selected cases (`CDT_CASES=01,tf1` keeps the cases numbered 01 and
/// those whose name contains "tf1"), run `CDT_CASES_JOBS` (default: the CPU count) at a time.
pub fn run_selected() -> Vec<Outcome> {
    let filter: Vec<String> = std::env::var("CDT_CASES")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_ascii_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let names: Vec<String> = list()
        .into_iter()
        .filter(|n| {
            filter.is_empty()
                || filter.iter().any(|f| {
                    if f.bytes().all(|b| b.is_ascii_digit()) {
                        n.split('_').next() == Some(f.as_str())
                    } else {
                        n.to_ascii_lowercase().contains(f)
                    }
                })
        })
        .collect();
    tools::tools().unwrap_or_else(|e| panic!("{e}"));
    let jobs = std::env::var("CDT_CASES_JOBS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let queue = Mutex::new(names.clone().into_iter());
    let done = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let next = queue.lock().unwrap().next();
                let Some(n) = next else { break };
                let o = run_case(&n);
                done.lock().unwrap().push(o);
            });
        }
    });
    let mut v = done.into_inner().unwrap();
    v.sort_by(|a, b| a.name.cmp(&b.name));
    v
}

/// The status table (Markdown), one row per case.
pub fn table(outcomes: &[Outcome], known: &[String]) -> String {
    let mut t =
        String::from("| case | class | result | first failing expectation |\n|---|---|---|---|\n");
    for o in outcomes {
        let listed = known.contains(&o.name);
        let (res, first) = match &o.verdict {
            Verdict::Pass if listed => ("PASS (listed as known failing)", String::new()),
            Verdict::Pass => ("pass", String::new()),
            Verdict::Fail(f) if listed => ("fail (known)", f[0].clone()),
            Verdict::Fail(f) => ("FAIL", f[0].clone()),
            Verdict::Broken(e) => ("BROKEN", e.lines().next().unwrap_or("").to_string()),
            Verdict::Skipped(e) => ("skipped", e.clone()),
        };
        let first = first.replace('|', "\\|");
        t += &format!("| {} | {} | {res} | {first} |\n", o.name, o.classes);
    }
    t
}
