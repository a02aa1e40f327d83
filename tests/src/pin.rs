//! Pin scenarios (`pin DIR` in `scenario.env`; the feature is `docs/pin.md`).
//!
//! A pin scenario is run three times: bare (checked by [`crate::check`] like
//! every scenario: termination and `expected.stdout`, which show the
//! *unpinned* behaviour), then pinned through the launcher
//! (`cudnn-trace --pin DIR [--pin-mode M]`) and pinned through the
//! environment alone (`LD_AUDIT` + `CUDNN_TRACE_PIN` + `CUDNN_TRACE_PIN_MODE`,
//! as production sets it). The pin changes what loads by design, so the
//! bare-versus-traced transparency comparisons do not apply; each pinned run
//! is checked on its own ([`check_pinned_run`]).

use crate::check::{
    abs, check_nothing_pulled_in, check_trace, diff_lines, fmt_term, lines, shim_run_oracle, show,
    Outcome,
};
use crate::run::{self, Built, Driver, Run};
use crate::spec::{PinExpect, PinSpec, Termination};
use crate::trace::{PinEvent, ProcessTrace};
use cudnn_trace_format::read::{Event, LoadFailed};
use std::collections::BTreeSet;
use std::path::Path;

/// Exit status of the launcher when it refuses the pin directory.
pub const REFUSED_EXIT: i32 = 125;

/// Whether a file name (the part after the last `/`) is a cuDNN name in the
/// sense of `docs/pin.md`: `libcudnn.so` or `libcudnn_<word>.so`, optionally
/// followed by `.<digits>` groups.
pub fn is_cudnn_name(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    let Some(rest) = base.strip_prefix("libcudnn") else {
        return false;
    };
    let rest = match rest.strip_prefix('_') {
        Some(r) => {
            let Some((word, tail)) = r.split_once(".so") else {
                return false;
            };
            if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return false;
            }
            tail
        }
        None => match rest.strip_prefix(".so") {
            Some(t) => t,
            None => return false,
        },
    };
    // rest: zero or more ".<digits>" groups
    rest.is_empty()
        || rest.strip_prefix('.').is_some_and(|r| {
            r.split('.')
                .all(|g| !g.is_empty() && g.bytes().all(|c| c.is_ascii_digit()))
        })
}

/// `p` (relative to `cwd` if relative) with symlinks resolved; when the file
/// does not exist, its directory is resolved and the name kept.
pub fn canon(p: &str, cwd: &Path) -> String {
    let a = abs(p, cwd);
    if let Ok(r) = std::fs::canonicalize(&a) {
        return r.display().to_string();
    }
    let path = Path::new(&a);
    if let (Some(dir), Some(name)) = (path.parent(), path.file_name()) {
        if let Ok(d) = std::fs::canonicalize(dir) {
            return d.join(name).display().to_string();
        }
    }
    a
}

/// Whether canonical path `p` is inside canonical directory `dir`.
fn inside(p: &str, dir: &str) -> bool {
    p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

fn base(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// What a pinned run is checked against, resolved once.
struct Ctx<'a> {
    built: &'a Built,
    pin: &'a PinSpec,
    /// realpath of the pin directory (as given when it does not exist).
    dir: String,
    dir_exists: bool,
    mode: &'a str,
}

impl Ctx<'_> {
    fn b(&self) -> &Path {
        &self.built.build
    }
    fn canon(&self, p: &str) -> String {
        canon(p, self.b())
    }
    /// Shows a path relative to `{B}` (the build dir or its realpath).
    fn show(&self, p: &str) -> String {
        let s = show(p, self.b());
        if s != p {
            return s;
        }
        match std::fs::canonicalize(self.b()) {
            Ok(rb) => show(p, &rb),
            Err(_) => s,
        }
    }
    /// Whether the requested `name` matches a directive's NAME: paths are
    /// compared absolute (as requested, not resolved), bare names as is.
    fn same_name(&self, directive: &str, requested: &str) -> bool {
        if directive.contains('/') || requested.contains('/') {
            abs(directive, self.b()) == abs(requested, self.b())
        } else {
            directive == requested
        }
    }
}

/// stdout with the build dir (and its realpath) written `{B}`.
fn with_b(stdout: &[u8], b: &Path) -> String {
    let mut s = String::from_utf8_lossy(stdout).to_string();
    if let Ok(rb) = std::fs::canonicalize(b) {
        s = s.replace(&rb.display().to_string(), "{B}");
    }
    s.replace(&b.display().to_string(), "{B}")
}

/// Runs and checks the pinned halves of a pin scenario (the bare run was
/// checked by the caller). Failures are prefixed with the run's label.
pub fn check_pin_scenario(built: &Built, bare: &Run, o: &mut Outcome) {
    let Some(pin) = built.spec.pin.as_ref() else {
        return;
    };
    let b = &built.build;
    let pin_dir = built.pin_dir().unwrap_or_default();
    // A pin directory that does not exist is a scenario of its own (the
    // shim cannot resolve it either, and uses it as given).
    let dir_exists = pin_dir.is_dir();
    let dir = std::fs::canonicalize(&pin_dir)
        .unwrap_or_else(|_| pin_dir.clone())
        .display()
        .to_string();
    let golden = built.src.join("expected-pinned.stdout");
    let want = std::fs::read_to_string(&golden).ok();
    // A pin scenario must be able to show the pin: its pinned output differs
    // from the unpinned one.
    match &want {
        None if !bless() => o.failures.push(format!(
            "scenario broken: a pin scenario needs {}",
            golden.display()
        )),
        // (except where the pin is ignored by design: warn mode, no DIR)
        Some(w) if *w == with_b(&bare.stdout, b) && (pin.strict() || dir_exists) => o.failures.push(
            "scenario broken: expected-pinned.stdout equals the bare run's stdout, so stdout cannot show whether the pin worked"
                .into(),
        ),
        _ => {}
    }
    let ctx = Ctx {
        built,
        pin,
        dir,
        dir_exists,
        mode: pin.mode(),
    };
    o.info.push(format!(
        "pin directory {} (realpath {}), mode {}",
        pin_dir.display(),
        ctx.dir,
        ctx.mode
    ));
    for driver in [Driver::Cli, Driver::Shim] {
        let run = match run::run_pinned(built, driver) {
            Ok(r) => r,
            Err(e) => {
                o.failures.push(format!("pinned run ({driver:?}): {e}"));
                continue;
            }
        };
        let mut sub = Outcome::default();
        if driver == Driver::Cli && pin.launcher_refuses {
            check_refusal(&ctx, &run, &mut sub);
        } else {
            check_pinned_run(&ctx, &run, want.as_deref(), &mut sub);
            if driver == Driver::Shim && bless() {
                let actual = with_b(&run.stdout, b);
                let _ = std::fs::write(&golden, &actual);
                sub.info.push(format!("blessed {}", golden.display()));
            }
        }
        let label = run.label;
        o.failures
            .extend(sub.failures.into_iter().map(|f| format!("[{label}] {f}")));
        o.info
            .extend(sub.info.into_iter().map(|f| format!("[{label}] {f}")));
    }
}

fn bless() -> bool {
    std::env::var("CDT_BLESS").is_ok_and(|v| v == "1")
}

/// `pin-launcher refuses`: the launcher must refuse the directory before
/// anything runs: exit 125, a message naming DIR, no program output, no
/// program process, no trace.
fn check_refusal(ctx: &Ctx, run: &Run, o: &mut Outcome) {
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    o.info.push(format!("launcher stderr:\n{stderr}"));
    if run.termination != Some(Termination::Exit(REFUSED_EXIT)) {
        o.failures.push(format!(
            "the launcher should refuse the pin directory (exit {REFUSED_EXIT}), but ended with {}\nstdout:\n{}stderr:\n{stderr}",
            fmt_term(run.termination),
            String::from_utf8_lossy(&run.stdout)
        ));
    }
    let given = ctx
        .built
        .pin_dir()
        .unwrap_or_default()
        .display()
        .to_string();
    if !stderr.contains(&ctx.dir) && !stderr.contains(&given) {
        o.failures.push(format!(
            "the launcher's refusal does not name the pin directory ({}):\n{stderr}",
            ctx.dir
        ));
    }
    if !run.stdout.is_empty() {
        o.failures.push(format!(
            "the program ran although the launcher refused the pin (stdout: {:?})",
            String::from_utf8_lossy(&run.stdout)
        ));
    }
    if let Ok(oracle) = shim_run_oracle(run, ctx.b()) {
        let launcher = &oracle.launcher;
        for p in oracle.all.values().filter(|p| !launcher.contains(&p.pid)) {
            if !p.loaded.is_empty() {
                o.failures.push(format!(
                    "process {} ran (programs {:?}) although the launcher refused the pin",
                    p.pid, p.programs
                ));
            }
        }
    }
    if let Ok(traces) = run.traces() {
        for t in traces {
            o.failures.push(format!(
                "{}: a trace was written although the launcher refused the pin",
                t.file.display()
            ));
        }
    }
}

/// The assertions of one pinned run (see tests/README.md, "Pin scenarios").
fn check_pinned_run(ctx: &Ctx, run: &Run, want: Option<&str>, o: &mut Outcome) {
    let built = ctx.built;
    let b = ctx.b();
    let stderr = String::from_utf8_lossy(&run.stderr).to_string();
    if !stderr.is_empty() {
        o.info.push(format!("stderr:\n{stderr}"));
    }
    // ---- termination, stdout, stderr
    if run.termination != Some(ctx.pin.termination) {
        o.failures.push(format!(
            "pinned run ended with {}, scenario.env expects {}\nstdout:\n{}stderr:\n{stderr}",
            fmt_term(run.termination),
            ctx.pin.termination,
            String::from_utf8_lossy(&run.stdout),
        ));
    }
    let actual = with_b(&run.stdout, b);
    if let Some(want) = want {
        if want != actual && !bless() {
            o.failures.push(format!(
                "stdout differs from expected-pinned.stdout (- expected, + pinned):\n{}",
                diff_lines(&lines(want.as_bytes()), &lines(actual.as_bytes()))
            ));
        }
    }
    let stderr_b = with_b(&run.stderr, b);
    for s in &ctx.pin.stderr {
        let s_b = with_b(s.as_bytes(), b);
        if !stderr.contains(s.as_str()) && !stderr_b.contains(&s_b) {
            o.failures.push(format!(
                "`pinned-stderr {s}`: not in the pinned run's stderr"
            ));
        }
    }

    // ---- the oracle: what the loader really mapped
    let oracle = match shim_run_oracle(run, b) {
        Ok(m) => m,
        Err(e) => {
            o.failures.push(format!("LD_DEBUG oracle: {e}"));
            return;
        }
    };
    check_nothing_pulled_in(&oracle, b, o);
    let mut in_dir = 0usize;
    for f in &oracle.filtered {
        o.info.push(format!(
            "oracle, process {} (loaded objects in order):\n{}",
            f.pid,
            f.objects
                .iter()
                .map(|(ns, p)| format!("[{ns}] {}", ctx.show(p)))
                .collect::<Vec<_>>()
                .join("\n")
        ));
        let mut outside = vec![];
        for (_, p) in f.objects.iter().filter(|(_, p)| is_cudnn_name(base(p))) {
            let r = ctx.canon(p);
            if inside(&r, &ctx.dir) {
                in_dir += 1;
            } else {
                outside.push(format!("{} (realpath {})", ctx.show(p), ctx.show(&r)));
            }
        }
        if ctx.pin.strict() && !outside.is_empty() {
            o.failures.push(format!(
                "LD_DEBUG: process {} mapped cuDNN libraries from outside the pin directory {}:\n{}",
                f.pid,
                ctx.show(&ctx.dir),
                outside.join("\n")
            ));
        }
    }
    if ctx.pin.strict() && ctx.dir_exists && in_dir == 0 {
        o.failures.push(format!(
            "LD_DEBUG: no process mapped a cuDNN library from the pin directory {}",
            ctx.show(&ctx.dir)
        ));
    }

    // ---- the trace
    let traces = match run.traces() {
        Ok(t) => t,
        Err(e) => {
            o.failures.push(format!("reading the trace: {e}"));
            return;
        }
    };
    check_trace(built, run, &traces, &oracle, Some((&ctx.dir, ctx.mode)), o);
    let texts: Vec<String> = traces
        .iter()
        .flat_map(|t| t.events.iter())
        .filter_map(|e| match e {
            Event::DlError(d) => Some(d.error.clone()),
            Event::LoadFailed(f) => f.error.clone(),
            _ => None,
        })
        .collect();
    for want in &ctx.pin.dlerrors {
        let want_b = with_b(want.as_bytes(), b);
        if !texts
            .iter()
            .any(|t| t == want || with_b(t.as_bytes(), b) == want_b)
        {
            o.failures.push(format!(
                "`pinned-dlerror {want}`: no such loader error text in the trace (texts: {:?})",
                texts
                    .iter()
                    .map(|t| with_b(t.as_bytes(), b))
                    .collect::<Vec<_>>()
            ));
        }
    }
    let main_names = main_names(ctx, &traces);
    for t in &traces {
        check_pin_events(ctx, t, o);
        check_cudnn_loads(ctx, t, o);
    }
    for e in &ctx.pin.events {
        check_pin_directive(ctx, e, &traces, &main_names, o);
    }
    let n: usize = traces.iter().map(|t| t.pin_events().len()).sum();
    o.info.push(format!(
        "pin events:\n{}",
        traces
            .iter()
            .flat_map(|t| t.pin_events())
            .map(|e| format!(
                "pid {} seq {} {} {} to={:?} rule={} requester={:?}",
                e.pid,
                e.seq,
                e.action,
                ctx.show(&e.name),
                e.to.as_deref().map(|p| ctx.show(p)),
                e.rule,
                e.requester.as_deref().map(|p| ctx.show(p))
            ))
            .collect::<Vec<_>>()
            .join("\n")
    ));
    if n == 0 {
        o.failures
            .push("the trace holds no `pin` event at all".to_string());
    }
}

/// What `@main` may stand for: the program, and every traced image's main
/// program (canonical).
fn main_names(ctx: &Ctx, traces: &[ProcessTrace]) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    s.insert(ctx.canon(&ctx.built.program().display().to_string()));
    for t in traces {
        if let Some(m) = t.main_program() {
            s.insert(ctx.canon(&m.path));
            if let Some(r) = &m.realpath {
                s.insert(r.clone());
            }
        }
    }
    s
}

/// Every `pin` record of one trace file is consistent with the pin in force
/// and with `docs/pin.md`.
fn check_pin_events(ctx: &Ctx, t: &ProcessTrace, o: &mut Outcome) {
    let f = t.file.display();
    for e in t.pin_events() {
        let what = format!("{f}: pin event seq {} ({} {})", e.seq, e.action, e.name);
        for p in &e.problems {
            o.failures.push(format!("{what}: {p}"));
        }
        if e.dir != ctx.dir {
            o.failures.push(format!(
                "{what}: dir is {:?}, the pin directory is {:?}",
                e.dir, ctx.dir
            ));
        }
        if e.mode != ctx.mode {
            o.failures.push(format!(
                "{what}: mode is {:?}, the run's mode is {:?}",
                e.mode, ctx.mode
            ));
        }
        if !is_cudnn_name(base(&e.name)) {
            o.failures.push(format!(
                "{what}: a pin decision about a name that is not cuDNN's"
            ));
        }
        match e.action.as_str() {
            "rerouted" => {
                if !["same-name", "same-major"].contains(&e.rule.as_str()) {
                    o.failures
                        .push(format!("{what}: rule {:?} for a reroute", e.rule));
                }
                match &e.to {
                    None => o.failures.push(format!("{what}: no `to`")),
                    Some(to) => {
                        let r = ctx.canon(to);
                        if !inside(&r, &ctx.dir) || !Path::new(to).exists() {
                            o.failures.push(format!(
                                "{what}: `to` {to} is not an existing file in the pin directory"
                            ));
                        }
                        if e.name.contains('/') && ctx.canon(&e.name) == r {
                            // docs/pin.md: no event for a request that already
                            // names the file it would be rerouted to.
                            o.failures.push(format!(
                                "{what}: the request already named {to}, which gets no event"
                            ));
                        }
                        let stem = |n: &str| n.split(".so").next().unwrap_or_default().to_string();
                        if stem(base(to)) != stem(base(&e.name)) {
                            o.failures
                                .push(format!("{what}: rerouted to another library ({to})"));
                        }
                        if e.rule == "same-name" && base(to) != base(&e.name) {
                            o.failures
                                .push(format!("{what}: rule same-name but `to` is {to}"));
                        }
                    }
                }
            }
            "blocked" => {
                if ctx.mode != "strict" {
                    o.failures
                        .push(format!("{what}: blocked in {} mode", ctx.mode));
                }
                if e.rule != "not-in-pin-dir" {
                    o.failures
                        .push(format!("{what}: rule {:?} for a block", e.rule));
                }
                let want = format!("{}/{}", ctx.dir, base(&e.name));
                if e.to.as_deref() != Some(want.as_str()) {
                    o.failures.push(format!(
                        "{what}: `to` is {:?}, expected {want:?} (DIR/NAME, so that the loader's message names both)",
                        e.to
                    ));
                }
                if Path::new(&want).exists() {
                    o.failures
                        .push(format!("{what}: blocked, but {want} exists"));
                }
                // docs/pin.md: a blocked request gives a load_failed whose
                // tried holds DIR/B with reason pin and result missing.
                let fails: Vec<&LoadFailed> = failures_named(t, &e.name);
                if fails.is_empty() {
                    o.failures.push(format!(
                        "{what}: no load_failed event for this name in the same process"
                    ));
                }
                for lf in fails {
                    let tried_ok = lf
                        .tried
                        .iter()
                        .any(|x| x.path == want && x.reason == "pin" && x.result == "missing");
                    if !tried_ok {
                        o.failures.push(format!(
                            "{what}: its load_failed (seq {}) has no tried entry {{path {want}, reason pin, result missing}}: {:?}",
                            lf.seq,
                            lf.tried
                                .iter()
                                .map(|x| format!("{} {} {}", x.path, x.reason, x.result))
                                .collect::<Vec<_>>()
                        ));
                    }
                    // The loader's message, where the trace has it (the
                    // load_failed's `error`, or the `dlerror` event of the
                    // program reading it), names DIR/NAME.
                    let msg = format!("{want}: cannot open shared object file");
                    let texts = lf.error.iter().chain(dlerrors_for(t, lf.seq));
                    for err in texts {
                        if !err.contains(&msg) {
                            o.failures.push(format!(
                                "{what}: the loader's error text for it (load_failed seq {}) is {err:?}, which does not name the pinned path ({msg:?})",
                                lf.seq
                            ));
                        }
                    }
                }
            }
            "unpinned" => {
                if ctx.mode != "warn" {
                    o.failures
                        .push(format!("{what}: unpinned in {} mode", ctx.mode));
                }
                if e.rule != "not-in-pin-dir" {
                    o.failures
                        .push(format!("{what}: rule {:?} for an unpinned name", e.rule));
                }
                if e.to.is_some() {
                    o.failures
                        .push(format!("{what}: `to` is {:?}, expected null", e.to));
                }
            }
            other => o.failures.push(format!("{what}: unknown action {other:?}")),
        }
    }
}

/// Texts of the `dlerror` events that read the error of `load_failed` `seq`.
fn dlerrors_for(t: &ProcessTrace, seq: u64) -> impl Iterator<Item = &String> {
    t.events.iter().filter_map(move |e| match e {
        Event::DlError(d) if d.req == seq => Some(&d.error),
        _ => None,
    })
}

fn failures_named<'a>(t: &'a ProcessTrace, name: &str) -> Vec<&'a LoadFailed> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::LoadFailed(f) if f.name == name => Some(f),
            _ => None,
        })
        .collect()
}

/// Every `load` of a cuDNN file in a pinned process: inside DIR (strict);
/// a new one was rerouted (`reason: pin`, `search_dir` DIR, a `tried` entry
/// pin/used), or named a file in DIR itself, or (warn) was unpinned.
fn check_cudnn_loads(ctx: &Ctx, t: &ProcessTrace, o: &mut Outcome) {
    let f = t.file.display();
    let events = t.pin_events();
    let decided = |name: &str, action: &str| -> Option<&PinEvent> {
        events.iter().find(|e| e.action == action && e.name == name)
    };
    for l in t.loads() {
        if !is_cudnn_name(base(&l.path)) {
            continue;
        }
        let what = format!(
            "{f}: load seq {} (name {:?}, path {}, reason {}, new {})",
            l.seq,
            l.name,
            ctx.show(&l.path),
            l.reason,
            l.new
        );
        let real = l.realpath.clone().unwrap_or_else(|| ctx.canon(&l.path));
        if ctx.pin.strict() && !inside(&real, &ctx.dir) {
            o.failures.push(format!(
                "{what}: a cuDNN library from outside the pin directory (realpath {})",
                ctx.show(&real)
            ));
        }
        if !l.new {
            continue;
        }
        let Some(name) = l.name.as_deref() else {
            o.failures.push(format!("{what}: no requested name"));
            continue;
        };
        if let Some(e) = decided(name, "rerouted") {
            let mut bad = vec![];
            if l.reason != "pin" {
                bad.push(format!("reason is {:?}, not \"pin\"", l.reason));
            }
            if l.search_dir.as_deref().map(|d| ctx.canon(d)) != Some(ctx.dir.clone()) {
                bad.push(format!(
                    "search_dir is {:?}, not the pin directory",
                    l.search_dir
                ));
            }
            let to = e.to.as_deref().map(|p| ctx.canon(p)).unwrap_or_default();
            if !l
                .tried
                .iter()
                .any(|x| x.reason == "pin" && x.result == "used" && ctx.canon(&x.path) == to)
            {
                bad.push(format!(
                    "no tried entry {{path {}, reason pin, result used}}",
                    ctx.show(&to)
                ));
            }
            if !bad.is_empty() {
                o.failures.push(format!(
                    "{what}: rerouted (pin event seq {}) but {}",
                    e.seq,
                    bad.join(", ")
                ));
            }
        } else if name.contains('/') && inside(&ctx.canon(name), &ctx.dir) {
            // asked for a file in DIR by path: nothing to reroute
        } else if decided(name, "unpinned").is_some() {
            // warn mode: the normal search ran
        } else {
            o.failures.push(format!(
                "{what}: a cuDNN library entered the process with no pin decision about {name:?}"
            ));
        }
    }
}

/// One `rerouted` / `blocked` / `unpinned` directive.
fn check_pin_directive(
    ctx: &Ctx,
    d: &PinExpect,
    traces: &[ProcessTrace],
    main_names: &BTreeSet<String>,
    o: &mut Outcome,
) {
    let all: Vec<PinEvent> = traces.iter().flat_map(|t| t.pin_events()).collect();
    let matching: Vec<&PinEvent> = all
        .iter()
        .filter(|e| ctx.same_name(&d.name, &e.name))
        .collect();
    if matching.is_empty() {
        o.failures.push(format!(
            "`{}`: no pin event for this name (pin events: {:?})",
            d.line,
            all.iter()
                .map(|e| format!("{} {}", e.action, ctx.show(&e.name)))
                .collect::<Vec<_>>()
        ));
        return;
    }
    for e in matching {
        let mut bad = vec![];
        if e.action != d.action {
            bad.push(format!("action is {}", e.action));
        }
        if let Some(to) = d.get("to") {
            let want = ctx.canon(to);
            if e.to.as_deref().map(|p| ctx.canon(p)) != Some(want) {
                bad.push(format!("to is {:?}", e.to.as_deref().map(|p| ctx.show(p))));
            }
        }
        if let Some(rule) = d.get("rule") {
            if e.rule != rule {
                bad.push(format!("rule is {}", e.rule));
            }
        }
        if let Some(req) = d.get("requester") {
            let ok = match (&e.requester, req) {
                (Some(r), "@main") => main_names.contains(&ctx.canon(r)),
                (Some(r), v) => ctx.canon(r) == ctx.canon(v),
                (None, _) => false,
            };
            if !ok {
                bad.push(format!(
                    "requester is {:?}",
                    e.requester.as_deref().map(|p| ctx.show(p))
                ));
            }
        }
        if !bad.is_empty() {
            o.failures.push(format!(
                "`{}`: {} in pid {} seq {}",
                d.line,
                bad.join(", "),
                e.pid,
                e.seq
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cudnn_names() {
        for n in [
            "libcudnn.so",
            "libcudnn.so.9",
            "libcudnn_graph.so.9.19.0",
            "libcudnn_ops_infer.so.8",
            "/x/y/libcudnn_engines_precompiled.so.9",
            "libcudnn_adv.so",
        ] {
            assert!(is_cudnn_name(n), "{n}");
        }
        for n in [
            "libcudnn.so.9.x",
            "libcudnn_.so.9",
            "libcudnnx.so.9",
            "libcudnn.so.",
            "libcudnn_graph.so.9.",
            "libcudnn_frontend.a",
            "libcudart.so.13",
            "libcudnn.so.9.bak",
        ] {
            assert!(!is_cudnn_name(n), "{n}");
        }
    }

    #[test]
    fn inside_dir() {
        assert!(inside("/a/pin/libcudnn.so.9", "/a/pin"));
        assert!(!inside("/a/pin2/libcudnn.so.9", "/a/pin"));
        assert!(!inside("/a/pin", "/a/pin"));
    }
}
