//! CDT010: a framework's (or cuDNN's, or glibc's) own message in the
//! program's stderr, quoted and explained from the trace: which file was
//! loaded, why, and where a copy of the expected version is (the
//! messages, their rules and their examples are data, `frameworks.toml`).
//! This file explains the version messages and the missing-library ones;
//! `message_kinds.rs` the others.

use super::loads::copy_evidence;
use super::message_kinds::{self as kinds, cudnn_files, Explained};
use super::{and_list, finding, is_pip, loaded, remedies};
use crate::analysis::files::{self, Source};
use crate::analysis::findings::facts::{basename, dirname, soname_major, Facts, Lib, MessageMatch};
use crate::analysis::findings::knowledge::{
    cudnn_int, cudnn_int_threshold, message_version, MessageRule,
};
use crate::analysis::findings::{Context, Evidence, Finding, Remedy, Severity, Ver};
use crate::machine::Copy;
use crate::model::stem;

/// Whether `v` is the version `want` names (as many components as both have, at most 3).
fn same(v: &Ver, want: &Ver) -> bool {
    let n = v.0.len().min(want.0.len()).min(3);
    n >= 2 && v.prefix(n) == want.prefix(n)
}

/// The version a pip distribution name carries (`nvidia_cudnn_cu13-9.19.0.56`).
fn package_version(c: &Copy) -> Option<Ver> {
    let p = c.package.as_deref()?;
    Ver::parse(p.rsplit_once('-')?.1)
}

/// The version of a copy on disk: from its name, else from its pip package.
fn copy_version(c: &Copy) -> Option<Ver> {
    c.version
        .as_deref()
        .and_then(|v| Ver::parse(v.split_whitespace().next().unwrap_or("")))
        .filter(|v| v.0.len() >= 2)
        .or_else(|| package_version(c))
}

/// The cuDNN file that tells an install's version, per major ([R2][E3]).
fn reference_name(major: u32) -> String {
    match major {
        8 => "libcudnn_ops_infer.so.8".into(),
        m if m >= 9 => format!("libcudnn_graph.so.{m}"),
        m => format!("libcudnn.so.{m}"),
    }
}

pub fn framework_messages(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    if f.messages.is_empty() {
        return Vec::new();
    }
    f.messages
        .iter()
        .filter_map(|m| {
            let rule = ctx.knowledge.messages.get(m.rule)?;
            Some(explain(f, ctx, rule, m))
        })
        .collect()
}

fn explain(f: &Facts<'_>, ctx: &Context<'_>, rule: &MessageRule, m: &MessageMatch) -> Finding {
    let spec = &rule.spec;
    let mut quoted = Evidence::new("message").detail(format!("{}: {:?}", spec.framework, m.lines));
    if m.count > 1 {
        quoted = quoted.detail(format!(
            "{}: {:?} (printed {} times)",
            spec.framework, m.lines, m.count
        ));
    }
    let mut x = explain_kind(f, ctx, rule, m);
    x.ev.insert(0, quoted);
    if x.own_remedy {
        x.fixes.push(spec.remedy.clone());
    }
    if let Some(b) = &spec.bypass {
        x.fixes.push(format!(
            "skip the framework's own check with {b} (at your own risk)"
        ));
    }
    // The first way is the fix; the others are its alternatives.
    let mut ways = x.fixes.into_iter();
    let remedy = ways.by_ref().next().map(Remedy::new).unwrap_or_default();
    let remedy = ways.fold(remedy, Remedy::or);
    let mut sources: Vec<&str> = spec.source.iter().map(String::as_str).collect();
    sources.push("R34");
    let title = match m.count {
        n if n > 1 => format!("{} ({n} times)", x.title),
        _ => x.title,
    };
    let mut out = finding(
        ctx,
        "CDT010",
        Severity::Error,
        title,
        x.ev,
        remedy,
        &sources,
    );
    out.count = (m.count > 1).then_some(m.count);
    if let Some(code) = restated(f, ctx, spec.restates.as_deref(), m) {
        // The trace's own finding explains this failure; the message is
        // how the program worded it.
        out.severity = Severity::Info;
        out.consequence_of.push(code);
    }
    out
}

/// The finding that explains, from the trace, the failure a message only
/// words (`restates` in `frameworks.toml`), when the trace has it: a failed
/// load of the missing name (CDT006), a cuDNN call that returned the
/// status (CDT007).
fn restated(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    restates: Option<&str>,
    m: &MessageMatch,
) -> Option<&'static str> {
    match restates? {
        "failed-load" => {
            let listed = m.groups.get("names").map(String::as_str).unwrap_or("");
            let names = listed.split(',').map(str::trim).filter(|n| !n.is_empty());
            let missing = m.groups.get("missing").map(String::as_str);
            let named = |n: &str| missing == Some(n) || names.clone().any(|x| x == n);
            f.failed
                .iter()
                .any(|fl| named(basename(&fl.ev.name)))
                .then_some("CDT006")
        }
        "failed-call" => {
            let name = m.groups.get("status")?;
            f.calls
                .iter()
                .any(|c| call_returned(f, ctx, c, name))
                .then_some("CDT007")
        }
        _ => None,
    }
}

/// Whether a cuDNN call returned the status `name`, decoded in the
/// numbering of the cuDNN that served it (v9's differs from v7/v8's).
fn call_returned(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    c: &crate::model::events::CallEvent,
    name: &str,
) -> bool {
    let Some(v) = c.status.filter(|&v| v != 0 && c.func.starts_with("cudnn")) else {
        return false;
    };
    let major = c
        .lib
        .as_deref()
        .and_then(|p| f.lib_at(p))
        .and_then(|l| l.major)
        .unwrap_or(9);
    ctx.knowledge
        .cudnn_status(major, v)
        .is_some_and(|s| s.name == name || s.v9_name.as_deref() == Some(name))
}

/// The explanation of one match, by the kind of its message.
fn explain_kind(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    rule: &MessageRule,
    m: &MessageMatch,
) -> Explained {
    let spec = &rule.spec;
    let fw = spec.framework.as_str();
    match kinds::effective_kind(&spec.kind, m) {
        "cudnn-version" => version_message(f, ctx, rule, m),
        "cudnn-gpu" => {
            let fmt = spec.version_format.as_deref();
            let runtime = m
                .groups
                .get("runtime")
                .and_then(|t| message_version(fmt, t));
            let mut x = Explained {
                title: format!(
                    "{fw}: cuDNN {} refuses this GPU",
                    runtime.map(|r| r.to_string()).unwrap_or_default()
                ),
                ev: cudnn_files(f).iter().map(|l| loaded(l)).collect(),
                fixes: Vec::new(),
                own_remedy: true,
            };
            x.ev.push(Evidence::new("fact").detail(spec.rule.clone()));
            x
        }
        "cudnn-missing" => {
            let mut x = Explained::new(String::new());
            let what = missing(f, ctx, m, &mut x.ev, &mut x.fixes);
            // A copy of it on disk: it was not findable, not missing; the
            // message's "install it" does not apply.
            x.own_remedy = x.fixes.is_empty();
            x.title = format!("{fw}: {what} could not be loaded");
            x
        }
        "requirement" => {
            let mut x = Explained::new(requirement_title(fw, m));
            requirement(f, ctx, m, &mut x.ev, &mut x.fixes);
            if !m.groups.contains_key("cudnn_major") {
                // The old wording names no library: the failed loads do.
                x.ev.extend(other_failed_loads(f));
            }
            x
        }
        "sublibrary" => kinds::sublibrary(f, fw),
        "symbol-version" => kinds::symbol_version(f, fw, m),
        "cudnn-symbol" => {
            let mut x = kinds::cudnn_symbol(f, fw, m);
            if let Some(name) =
                x.ev.iter()
                    .find(|e| e.what == "failed")
                    .and_then(|e| e.path.clone())
            {
                if kinds::copies_of_major(f, ctx, &name, &mut x.ev).is_none() {
                    x.ev.push(Evidence::new("fact").detail(format!(
                        "no {name} is on this machine (a copy of another major does not fit: its symbols are versioned by major)"
                    )));
                }
            }
            x
        }
        "cudnn-status" => kinds::cudnn_status(f, ctx.knowledge, fw, m),
        "runtime-multiple" => kinds::runtime_multiple(f, fw, m),
        "library-version" => {
            let fmt = spec.version_format.as_deref();
            kinds::library_version(f, fw, m, |t| message_version(fmt, t))
        }
        _ => kinds::driver(f, fw, m, &short(&m.text)),
    }
}

/// Failed loads of CUDA libraries other than cuDNN and the runtime (the
/// provider's cuBLAS, cuFFT …), which `requirement` does not list.
fn other_failed_loads(f: &Facts<'_>) -> Vec<Evidence> {
    f.failed
        .iter()
        .filter(|fl| !matches!(fl.ev.family.as_deref(), None | Some("cudnn" | "cudart")))
        .map(|fl| {
            Evidence::new("failed")
                .path(fl.ev.name.clone())
                .requester_opt(fl.ev.requester.as_deref())
                .seq(fl.ev.seq)
                .detail(
                    fl.errors()
                        .first()
                        .map(|e| e.to_string())
                        .unwrap_or_default(),
                )
        })
        .collect()
}

fn requirement_title(fw: &str, m: &MessageMatch) -> String {
    match (m.groups.get("cudnn_major"), m.groups.get("cuda_major")) {
        (Some(d), Some(c)) => format!("{fw}: requires cuDNN {d}.x and CUDA {c}.x"),
        _ => format!("{fw}: the CUDA execution provider could not be created"),
    }
}

fn short(s: &str) -> String {
    let one = s.lines().next().unwrap_or("");
    if one.chars().count() > 120 {
        let mut t: String = one.chars().take(120).collect();
        t.push('…');
        t
    } else {
        one.to_string()
    }
}

/// A framework's cuDNN version message: what it was built with, what it
/// found at run time, the minimum it states (JAX), and its rule for them.
struct VersionMessage<'m> {
    /// The framework's rule (`frameworks.toml`'s `check`).
    check: Option<&'m str>,
    /// The rule in words (`frameworks.toml`).
    rule_text: &'m str,
    build: Option<&'m Ver>,
    runtime: Option<&'m Ver>,
    /// JAX's "Minimum supported", as printed.
    minimum: Option<u64>,
}

impl VersionMessage<'_> {
    /// Whether `v` passes the framework's rule for build `b`.
    fn fits(&self, v: &Ver, b: &Ver) -> bool {
        let (vi, bi) = (cudnn_int(v), cudnn_int(b));
        match self.check {
            Some("compat-version-eq") => v.prefix(2) == b.prefix(2),
            Some("equal") => v.prefix(3) == b.prefix(3),
            // JAX before 0.4.30: `build // 100 > installed // 100` fails.
            Some("major-minor-ge") => vi / 100 >= bi / 100,
            Some("jax-minimum") => self.passes_minimum(v, b),
            // Caffe2: version_match || backwards_compatible_7 || patch_compatible.
            Some("equal-or-newer-from-7") => {
                vi == bi || (bi >= 7000 && (vi >= bi || vi / 100 == bi / 100))
            }
            // PyTorch, TF/XLA: same major; the minor at least the build's
            // from cuDNN 7 on, equal before.
            _ => {
                let (vm, bm) = (v.minor().unwrap_or(0), b.minor().unwrap_or(0));
                v.major() == b.major() && if b.major() >= 7 { vm >= bm } else { vm == bm }
            }
        }
    }

    /// The versions that pass, in words: "7.0.x" where the minor must be
    /// the build's (TF 1.x's compatibility version: a newer 7.1 fails as
    /// well), "7.0.5" where the version must be equal, else "7.0+".
    fn wanted_words(&self, b: &Ver) -> String {
        let mm = format!("{}.{}", b.major(), b.minor().unwrap_or(0));
        match self.check {
            Some("compat-version-eq") => format!("{mm}.x"),
            Some("equal") => b.prefix(3).to_string(),
            _ => format!("{mm}+"),
        }
    }

    /// JAX 0.4.30+: `minimum <= installed`. A minimum that is the build's
    /// `// 100` compares major.minor; an absolute one (9100) is compared
    /// with the installed integer as it is.
    fn passes_minimum(&self, v: &Ver, b: &Ver) -> bool {
        let Some(min) = self.minimum else {
            return cudnn_int(v) / 100 >= cudnn_int(b) / 100;
        };
        if self.minimum_is_scaled(b) {
            cudnn_int(v) / 100 >= min
        } else {
            cudnn_int(v) >= min
        }
    }

    fn minimum_is_scaled(&self, b: &Ver) -> bool {
        self.minimum == Some(cudnn_int(b) / 100)
    }

    /// The oldest version an absolute minimum admits (9100: cuDNN 9.0.0),
    /// when the minimum is absolute.
    fn minimum_version(&self, b: &Ver) -> Option<Ver> {
        let min = self.minimum?;
        (!self.minimum_is_scaled(b)).then(|| cudnn_int_threshold(min))
    }

    /// The framework's rule, re-checked on the versions of the message.
    fn rule_fact(&self) -> Option<Evidence> {
        let (b, r) = (self.build?, self.runtime?);
        let ok = self.fits(r, b);
        let min = match (self.minimum, self.minimum_version(b)) {
            (Some(raw), Some(v)) => format!(", minimum {raw} (cuDNN {v} or newer)"),
            _ => String::new(),
        };
        Some(Evidence::new("fact").detail(format!(
            "rule: {}; build {b}, run time {r}{min}: {}",
            self.rule_text,
            if ok {
                "compatible by that rule (the message comes from elsewhere?)"
            } else {
                "incompatible"
            }
        )))
    }

    /// The loaded cuDNN files of the run-time version (the wrong ones).
    fn runtime_files<'l, 'a>(&self, files: &[&'l Lib<'a>]) -> Vec<&'l Lib<'a>> {
        match self.runtime {
            Some(r) => files
                .iter()
                .copied()
                .filter(|l| l.version().is_some_and(|(v, _)| same(&v, r)))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Copies that fit build `b`, other than those of the run-time version
    /// (offering the copy already loaded would send the user in a circle):
    /// loaded files, then copies on disk, as (path, version, how found).
    fn fitting(
        &self,
        b: &Ver,
        files: &[&Lib<'_>],
        wrong: &[&Lib<'_>],
        copies: &[Copy],
    ) -> Vec<(String, String, String)> {
        let wrong_dir = |p: &str| wrong.iter().any(|w| w.dir() == dirname(p));
        let mut good: Vec<(String, String, String)> = Vec::new();
        for l in files {
            if let Some((v, origin)) = l.version() {
                // A dispatcher's own version (from the names it asked for)
                // says nothing about the libraries that do the work.
                if origin == Source::Requests.words() {
                    continue;
                }
                if self.fits(&v, b) && l.major == Some(v.major()) && !wrong_dir(l.real()) {
                    good.push((
                        l.path().to_string(),
                        v.to_string(),
                        "loaded in this process".into(),
                    ));
                }
            }
        }
        for c in copies {
            if let Some(v) = copy_version(c) {
                let known = good.iter().any(|(p, _, _)| p == &c.path);
                if self.fits(&v, b) && !known && !wrong_dir(&c.realpath) && !wrong_dir(&c.path) {
                    good.push((
                        c.path.clone(),
                        v.to_string(),
                        format!("on disk, found via {}", c.found_via),
                    ));
                }
            }
        }
        good
    }
}

/// A cuDNN version message: decode it, re-check the framework's rule, say
/// which loaded files have the run-time version and how they came, and
/// where a copy that fits is.
fn version_message(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    rule: &MessageRule,
    m: &MessageMatch,
) -> Explained {
    let spec = &rule.spec;
    let fmt = spec.version_format.as_deref();
    let build = m.groups.get("build").and_then(|t| message_version(fmt, t));
    let runtime = m
        .groups
        .get("runtime")
        .and_then(|t| message_version(fmt, t));
    let message = VersionMessage {
        check: spec.check.as_deref(),
        rule_text: &spec.rule,
        build: build.as_ref(),
        runtime: runtime.as_ref(),
        minimum: m.groups.get("minimum").and_then(|t| t.parse().ok()),
    };
    let fw = &spec.framework;
    let mut x = Explained {
        title: match (&build, &runtime) {
            (Some(b), Some(r)) => {
                format!("{fw} was built with cuDNN {b} but loaded {r} at run time")
            }
            _ => format!("{fw}: cuDNN version mismatch"),
        },
        ev: Vec::new(),
        fixes: Vec::new(),
        own_remedy: true,
    };
    // JAX's absolute minimum: what fails is the minimum, not the build.
    let below_minimum = match (&build, &runtime) {
        (Some(b), Some(r)) => message.minimum_version(b).filter(|_| !message.fits(r, b)),
        _ => None,
    };
    cudnn_version(f, ctx, &message, &mut x.ev, &mut x.fixes);
    if let (Some(min), Some(r)) = (&below_minimum, &runtime) {
        x.title = format!(
            "{fw} requires cuDNN {} or newer (its minimum {}), but cuDNN {r} was loaded",
            min.major(),
            message.minimum.unwrap_or_default()
        );
        // The minimum's remedy comes first; the message's own ("as new as
        // its build") does not apply: the build is not what fails.
        if let Some(text) = &spec.minimum_remedy {
            x.fixes
                .insert(0, text.replace("{minimum}", &min.major().to_string()));
            x.own_remedy = false;
        }
    }
    x
}

fn cudnn_version(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    m: &VersionMessage<'_>,
    ev: &mut Vec<Evidence>,
    fixes: &mut Vec<String>,
) {
    ev.extend(m.rule_fact());
    // Which loaded file has the run-time version, and why it was chosen.
    let files = cudnn_files(f);
    let wrong = m.runtime_files(&files);
    runtime_evidence(&files, &wrong, ev);
    if let Some((v, lib)) = f.cudnn_runtime_seen() {
        ev.push(
            Evidence::new("call")
                .path(lib.unwrap_or_default())
                .version(v.to_string())
                .detail("the version the program read (cudnnGetVersion / cudnnGetProperty)"),
        );
    }
    // Where a copy of the build version is: one that passes the
    // framework's rule.
    let Some(b) = m.build else { return };
    let copies = files::copies_with_versions(ctx.machine, f.img, &reference_name(b.major()));
    let good = m.fitting(b, &files, &wrong, &copies);
    for c in copies
        .iter()
        .filter(|c| copy_version(c).is_some_and(|v| m.fits(&v, b)))
    {
        ev.push(copy_evidence(c));
    }
    how_they_came(f, ctx, &wrong, m.runtime, ev, fixes);
    let want = m.minimum_version(b).unwrap_or_else(|| b.clone());
    match good.first() {
        Some((p, v, how)) => {
            fixes.extend(use_fitting_dir(f, ctx, dirname(p), v, b.major()));
            ev.push(Evidence::new("fact").detail(format!(
                "a cuDNN that fits the build ({b}): {p} [{v}], {how}"
            )));
        }
        None => {
            fixes.extend(owner_reinstall(f, ctx, m, &want, &wrong));
            fixes.push(no_fitting_copy(f, ctx, m, &want, &wrong, &copies));
        }
    }
}

/// How to make the process load its cuDNN `major` from `dir` (which holds
/// a copy that fits the build, version `v`), checked against how each file
/// came in: LD_LIBRARY_PATH is searched after a requester's DT_RPATH and
/// never for a file loaded by its path, so when a file of another directory
/// came that way, putting `dir` on it would change nothing (or mix the
/// installs: torch 1.13's RPATH-loaded dispatcher with the other
/// directory's sub-libraries; jax#19004, torch's copy resident first). Then
/// the pin, which rewrites every request, where `dir` holds every cuDNN
/// file the process loaded.
fn use_fitting_dir(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    dir: &str,
    v: &str,
    major: u32,
) -> Option<String> {
    let mine: Vec<&Lib<'_>> = f
        .family("cudnn")
        .filter(|l| l.major == Some(major))
        .collect();
    let before_llp = |l: &&&Lib<'_>| {
        l.dir() != dir
            && dirname(l.path()) != dir
            && matches!(l.load.reason.as_str(), "RPATH" | "path" | "pin")
    };
    let Some(blocked) = mine.iter().find(before_llp) else {
        return Some(format!(
            "put {dir} first on LD_LIBRARY_PATH (its cuDNN {v} fits the build)"
        ));
    };
    let how = match blocked.load.reason.as_str() {
        "path" => "was loaded by its path".to_string(),
        r => format!("came through {r}, which the loader searches before LD_LIBRARY_PATH"),
    };
    let complete = super::local(f, ctx)
        && mine
            .iter()
            .all(|l| remedies::dir_has(ctx, dir, l) == Some(true));
    complete.then(|| {
        format!(
            "pin cuDNN to {dir} (its cuDNN {v} fits the build): cudnn-trace --pin {dir}; LD_LIBRARY_PATH would not do it: {} {how}",
            blocked.path()
        )
    })
}

/// No copy that fits is on the machine: the package that installed the
/// loaded one can install the version the build needs.
fn owner_reinstall(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    m: &VersionMessage<'_>,
    want: &Ver,
    wrong: &[&Lib<'_>],
) -> Option<String> {
    if !super::local(f, ctx) {
        return None;
    }
    let rule = match m.check {
        Some("compat-version-eq") => remedies::Want::SameMinor,
        _ => remedies::Want::AtLeast,
    };
    wrong
        .iter()
        .find_map(|l| remedies::reinstall_owner(ctx, l.real(), want, rule, m.runtime))
}

fn runtime_evidence(files: &[&Lib<'_>], wrong: &[&Lib<'_>], ev: &mut Vec<Evidence>) {
    let Some((first, rest)) = wrong.split_first() else {
        ev.extend(files.iter().take(6).map(|l| loaded(l)));
        return;
    };
    let mut e = loaded(first);
    e.what = "runtime version from".into();
    let same_dir = rest.iter().filter(|l| l.dir() == first.dir()).count();
    if same_dir > 0 {
        let more =
            format!("and {same_dir} more cuDNN files of that version from the same directory");
        e.detail = Some(match e.detail.take() {
            Some(d) => format!("{d}; {more}"),
            None => more,
        });
    }
    ev.push(e);
    for l in rest.iter().filter(|l| l.dir() != first.dir()) {
        let mut e = loaded(l);
        e.what = "runtime version from".into();
        ev.push(e);
    }
}

/// How the files of the wrong version got in: one fact per (search step,
/// directory), naming its files, and a fix for those that came through
/// LD_LIBRARY_PATH (the entry as written).
fn how_they_came(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    wrong: &[&Lib<'_>],
    runtime: Option<&Ver>,
    ev: &mut Vec<Evidence>,
    fixes: &mut Vec<String>,
) {
    let mut ways: Vec<(String, String, Vec<String>)> = Vec::new();
    for l in wrong {
        let d = super::entry_of(f, ctx, l).shown().to_string();
        let name = basename(l.path()).to_string();
        match ways
            .iter_mut()
            .find(|(r, x, _)| *r == l.load.reason && *x == d)
        {
            Some((_, _, names)) => names.push(name),
            None => ways.push((l.load.reason.clone(), d, vec![name])),
        }
    }
    let rv = runtime.map(|r| format!(" ({r})")).unwrap_or_default();
    for (reason, d, names) in ways {
        let what = and_list(&names);
        ev.push(Evidence::new("fact").detail(match reason.as_str() {
            "ld.so.cache" | "default-dir" => format!(
                "{what}{rv} came from the {reason} ({d}) because nothing searched earlier had it"
            ),
            r => format!("{what}{rv} came through {r} from {d}"),
        }));
        if reason == "LD_LIBRARY_PATH" {
            fixes.push(format!("remove {d} from LD_LIBRARY_PATH"));
        }
    }
}

/// The fix when no copy that fits build `b` is known by its version: the
/// dispatcher's own directory when it holds the reference library, else
/// install one.
fn no_fitting_copy(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    m: &VersionMessage<'_>,
    b: &Ver,
    wrong: &[&Lib<'_>],
    copies: &[Copy],
) -> String {
    if let Some((dir, disp)) = likely_own(f, ctx, b, wrong) {
        return format!(
            "{dir}, the directory of the dispatcher the program linked ({}, found through {}), holds {} too: most likely the cuDNN it was built with (its version is not in the file names); make that one load",
            basename(disp.path()),
            disp.load.reason,
            reference_name(b.major())
        );
    }
    let pip_dirs: Vec<String> = copies
        .iter()
        .filter(|c| is_pip(&c.path) && copy_version(c).is_none())
        .map(|c| dirname(&c.path).to_string())
        .collect();
    let hint = if pip_dirs.is_empty() {
        String::new()
    } else {
        format!(
            " (the version of {} could not be told from the file names)",
            pip_dirs.join(", ")
        )
    };
    format!(
        "no cuDNN {} was found on this machine{hint}: install one",
        m.wanted_words(b)
    )
}

/// The directory of a loaded dispatcher of the build's major, other than
/// the directories of the files with the wrong version, that holds the
/// major's reference library on disk: the install the program meant.
fn likely_own<'l, 'a>(
    f: &'l Facts<'a>,
    ctx: &Context<'_>,
    b: &Ver,
    wrong: &[&Lib<'a>],
) -> Option<(String, &'l Lib<'a>)> {
    if !super::local(f, ctx) {
        return None;
    }
    f.family("cudnn")
        .filter(|l| l.stem == "libcudnn" && l.major == Some(b.major()))
        .filter(|l| !wrong.iter().any(|w| w.dir() == l.dir()))
        .find(|l| {
            ctx.machine
                .exists(&format!("{}/{}", l.dir(), reference_name(b.major())))
        })
        .map(|l| (l.dir().to_string(), l))
}

fn missing(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    m: &MessageMatch,
    ev: &mut Vec<Evidence>,
    fixes: &mut Vec<String>,
) -> String {
    let mut names: Vec<String> = Vec::new();
    // What the error names as missing; else the library whose load failed.
    if let Some(x) = m.groups.get("missing").or_else(|| m.groups.get("library")) {
        names.push(x.clone());
    }
    if let Some(list) = m.groups.get("names") {
        names.extend(
            list.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty()),
        );
    }
    if names.is_empty() {
        names.push("libcudnn.so".into());
    }
    let stems: Vec<&str> = names.iter().map(|n| stem(n)).collect();
    for fl in &f.failed {
        if stems.contains(&stem(&fl.ev.name)) {
            let errs = fl.errors();
            ev.push(
                Evidence::new("failed")
                    .path(fl.ev.name.clone())
                    .requester_opt(fl.ev.requester.as_deref())
                    .seq(fl.ev.seq)
                    .detail(format!(
                        "{} places tried{}",
                        fl.ev.tried.len(),
                        errs.first().map(|e| format!("; {e}")).unwrap_or_default()
                    )),
            );
        }
    }
    let mut was_loaded = false;
    for l in f.libs.iter().filter(|l| stems.contains(&l.stem.as_str())) {
        ev.push(loaded(l));
        was_loaded = true;
    }
    if was_loaded {
        // The library itself came in: what failed is something it needs
        // (a pending dlerror() of its own dlopen, pytorch#98644), which
        // the load-failure finding names.
        fixes.push(format!(
            "{} was found: the error is about a library it needs; see the load failure (CDT006) for what is missing and where it is",
            names[0]
        ));
        return names.swap_remove(0);
    }
    let copies = ctx.machine.copies(f.img, &names[0]);
    ev.extend(copies.iter().map(copy_evidence));
    let want = soname_major(&names[0]);
    match copies.iter().find(|c| {
        want.is_none() || soname_major(&c.path) == want || soname_major(&c.realpath) == want
    }) {
        Some(c) => fixes.push(format!(
            "a copy is at {}: add {} to LD_LIBRARY_PATH (or install it where the requester looks)",
            c.path,
            dirname(&c.path)
        )),
        None => ev.push(
            Evidence::new("fact")
                .detail(format!("no copy of {} was found on this machine", names[0])),
        ),
    }
    names.swap_remove(0)
}

fn requirement(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    m: &MessageMatch,
    ev: &mut Vec<Evidence>,
    fixes: &mut Vec<String>,
) {
    let want_cudnn: Option<u32> = m.groups.get("cudnn_major").and_then(|s| s.parse().ok());
    let want_cuda: Option<u32> = m.groups.get("cuda_major").and_then(|s| s.parse().ok());
    for (fam, want, probe) in [
        (
            "cudnn",
            want_cudnn,
            want_cudnn.map(|m| format!("libcudnn.so.{m}")),
        ),
        (
            "cudart",
            want_cuda,
            want_cuda.map(|m| format!("libcudart.so.{m}")),
        ),
    ] {
        let libs: Vec<&Lib<'_>> = f.family(fam).collect();
        let right = libs.iter().any(|l| want.is_none() || l.major == want);
        for l in &libs {
            let mut e = loaded(l);
            if want.is_some() && l.major != want {
                e.what = "loaded, other major".into();
            }
            ev.push(e);
        }
        for fl in f
            .failed
            .iter()
            .filter(|x| x.ev.family.as_deref() == Some(fam))
        {
            ev.push(
                Evidence::new("failed")
                    .path(fl.ev.name.clone())
                    .requester_opt(fl.ev.requester.as_deref())
                    .seq(fl.ev.seq)
                    .detail(
                        fl.errors()
                            .first()
                            .map(|e| e.to_string())
                            .unwrap_or_default(),
                    ),
            );
        }
        if !right {
            if let Some(p) = &probe {
                let copies = ctx.machine.copies(f.img, p);
                let fit: Vec<&Copy> = copies
                    .iter()
                    .filter(|c| soname_major(&c.path) == want || soname_major(&c.realpath) == want)
                    .collect();
                ev.extend(fit.iter().map(|c| copy_evidence(c)));
                match fit.first() {
                    Some(c) => fixes.push(format!(
                        "{p} is at {}: add {} to LD_LIBRARY_PATH",
                        c.path,
                        dirname(&c.path)
                    )),
                    None => ev.push(
                        Evidence::new("fact").detail(format!("no {p} was found on this machine")),
                    ),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use crate::model::elf::DynInfo;

    const SP: &str = "/opt/torch/.venv/lib/python3.12/site-packages";

    /// The PyTorch situation of the GPU probe: pip 9.19 bundled, the system
    /// 9.14 on LD_LIBRARY_PATH wins for graph [E-probe].
    fn pytorch_mixup() -> Trace {
        let pip = format!("{SP}/nvidia/cudnn/lib");
        let disp = format!("{pip}/libcudnn.so.9");
        let sys = "/usr/lib/x86_64-linux-gnu";
        Trace::new()
            .exe("/opt/torch/.venv/bin/python3.12")
            .env("LD_LIBRARY_PATH", &format!("{sys}:/usr/local/nvidia/lib64"))
            .load(&disp, "RPATH", &format!("{SP}/torch/lib/libtorch_cuda.so"))
            .load_named(
                "libcudnn_graph.so.9",
                &format!("{sys}/libcudnn_graph.so.9.14.0"),
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .machine(move |m| {
                m.elf(
                    &disp,
                    DynInfo {
                        runpath: vec!["$ORIGIN".into()],
                        ..Default::default()
                    },
                );
                m.file(&format!("{pip}/libcudnn_graph.so.9"));
                m.dir(&format!("{SP}/nvidia_cudnn_cu13-9.19.0.56.dist-info"));
                m.file("/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0");
            })
    }

    #[test]
    fn pytorch_message_explained() {
        let t = pytorch_mixup().stderr(
            "Traceback (most recent call last):\n  File \"t.py\", line 3\nRuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find the bundled cuDNN. one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.\n",
        );
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "PyTorch was built with cuDNN 9.19.0 but loaded 9.14.0 at run time"
        );
        assert!(f.evidence[0]
            .detail
            .as_deref()
            .unwrap()
            .starts_with("PyTorch: \"RuntimeError: cuDNN version incompatibility"));
        let from = f
            .evidence
            .iter()
            .find(|e| e.what == "runtime version from")
            .unwrap();
        assert_eq!(
            from.path.as_deref(),
            Some("/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0")
        );
        assert_eq!(from.reason.as_deref(), Some("LD_LIBRARY_PATH"));
        assert!(from
            .requester
            .as_deref()
            .unwrap()
            .ends_with("nvidia/cudnn/lib/libcudnn.so.9"));
        assert_eq!(
            f.fix,
            "remove /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH"
        );
        assert_eq!(
            f.alternatives[0],
            format!(
                "put {SP}/nvidia/cudnn/lib first on LD_LIBRARY_PATH (its cuDNN 9.19.0.56 fits the build)"
            )
        );
        assert!(f.evidence.iter().any(|e| e.detail.as_deref()
            == Some(&*format!("a cuDNN that fits the build (9.19.0): {SP}/nvidia/cudnn/lib/libcudnn_graph.so.9 [9.19.0.56], on disk, found via pip"))), "{:#?}", f.evidence);
        assert!(f
            .alternatives
            .iter()
            .any(|a| a.contains("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1")));
        // The same process also gets the structural findings.
        assert_eq!(only(&fs, "CDT008").severity, Severity::Error);
        assert!(all(&fs, "CDT002").len() == 1);
    }

    /// jax#19004: torch's cuDNN 9.1.0 (its dispatcher through libtorch_cuda.so's
    /// DT_RPATH) is resident when XLA, built with 9.8.0, checks it. A
    /// cuDNN that fits is in the wheel's directory, but LD_LIBRARY_PATH is
    /// searched after DT_RPATH: putting the wheel there would change nothing
    /// for the dispatcher and mix the sub-libraries. The pin can do it.
    #[test]
    fn ld_library_path_is_not_offered_where_rpath_comes_first() {
        let torch = format!("{SP}/torch/lib");
        let wheel = format!("{SP}/nvidia/cudnn/lib");
        let disp = format!("{torch}/libcudnn.so.9.1.0");
        let graph = format!("{torch}/libcudnn_graph.so.9.1.0");
        let t = Trace::new()
            .exe("/opt/torch/.venv/bin/python3.12")
            .load(&disp, "RPATH", &format!("{torch}/libtorch_cuda.so"))
            .load(&graph, "RUNPATH", &disp)
            .machine(|m| {
                m.file(&disp)
                    .file(&graph)
                    .file(&format!("{wheel}/libcudnn.so.9"))
                    .file(&format!("{wheel}/libcudnn_graph.so.9.8.0"))
                    .link(
                        &format!("{wheel}/libcudnn_graph.so.9"),
                        &format!("{wheel}/libcudnn_graph.so.9.8.0"),
                    );
            })
            .stderr("E0000 00:00:1702678321.123456 2801 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0.  CuDNN library needs to have matching major version and equal or higher minor version.\n");
        let fs = t.findings();
        let f = all(&fs, "CDT010")
            .into_iter()
            .find(|f| f.title.contains("built with cuDNN 9.8.0"))
            .unwrap_or_else(|| panic!("{fs:#?}"));
        let fixes: Vec<&String> = std::iter::once(&f.fix).chain(&f.alternatives).collect();
        assert!(
            !fixes
                .iter()
                .any(|x| x.contains(&format!("put {wheel} first on LD_LIBRARY_PATH"))),
            "{fixes:#?}"
        );
        assert!(
            fixes
                .iter()
                .any(|x| x.contains(&format!("cudnn-trace --pin {wheel}"))
                    && x.contains("came through RPATH")),
            "{fixes:#?}"
        );
    }

    /// XLA's current message [R21], cuDNN 9.1.0 from a CUDA
    /// toolkit directory on LD_LIBRARY_PATH.
    #[test]
    fn xla_message_explained() {
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda/lib64")
            .load("/usr/local/cuda/lib64/libcudnn.so.9.1.0", "LD_LIBRARY_PATH", "/v/jaxlib/xla_extension.so")
            .load("/usr/local/cuda/lib64/libcudnn_graph.so.9.1.0", "LD_LIBRARY_PATH", "/usr/local/cuda/lib64/libcudnn.so.9.1.0")
            .call("cudnnGetProperty", "/usr/local/cuda/lib64/libcudnn.so.9.1.0", Some(0), Some(serde_json::json!(9)))
            .stderr("E0000 cuda_dnn.cc:522] Loaded runtime CuDNN library: 9.1.0 but source was compiled with: 9.8.0.  CuDNN library needs to have matching major version and equal or higher minor version. If using a binary install, upgrade your CuDNN library.  If building from sources, make sure the library loaded at runtime is compatible with the version specified during compile configuration.\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "TensorFlow/XLA was built with cuDNN 9.8.0 but loaded 9.1.0 at run time"
        );
        assert!(f.evidence.iter().any(|e| e.detail.as_deref() == Some("rule: majors must be equal and the runtime minor >= the build minor (equal below cuDNN 7); the patch is ignored; build 9.8.0, run time 9.1.0: incompatible")), "{:#?}", f.evidence);
        assert_eq!(f.fix, "remove /usr/local/cuda/lib64 from LD_LIBRARY_PATH");
        assert!(
            f.alternatives[0].starts_with("no cuDNN 9.8+ was found on this machine"),
            "{:?}",
            f.alternatives
        );
    }

    /// TensorFlow 1.x's "compatibility version" message ([R19][R21][R23]).
    #[test]
    fn tensorflow_old_message_explained() {
        let t = Trace::new()
            .load("/usr/local/cuda/lib64/libcudnn.so.7.1.1", "LD_LIBRARY_PATH", "/v/tensorflow/libtensorflow_framework.so")
            .stderr("2018-03-12 E tensorflow/stream_executor/cuda/cuda_dnn.cc:396] Loaded runtime CuDNN library: 7101 (compatibility version 7100) but source was compiled with 7004 (compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match.  If building from sources, make sure the library loaded at runtime matches a compatible version specified during compile configuration.\n")
            .machine(|m| {
                m.file("/opt/cudnn-7.0/lib64/libcudnn.so.7.0.4");
                m.cache.push(("libcudnn.so.7".into(), "/opt/cudnn-7.0/lib64/libcudnn.so.7.0.4".into()));
            });
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "TensorFlow 1.x was built with cuDNN 7.0.4 but loaded 7.1.1 at run time"
        );
        assert!(f.evidence.iter().any(|e| e
            .detail
            .as_deref()
            .is_some_and(|d| d.ends_with("build 7.0.4, run time 7.1.1: incompatible"))));
        assert_eq!(f.fix, "remove /usr/local/cuda/lib64 from LD_LIBRARY_PATH");
        assert_eq!(
            f.alternatives[0],
            "put /opt/cudnn-7.0/lib64 first on LD_LIBRARY_PATH (its cuDNN 7.0.4 fits the build)"
        );
        assert!(f.evidence.iter().any(|e| e.detail.as_deref()
            == Some("a cuDNN that fits the build (7.0.4): /opt/cudnn-7.0/lib64/libcudnn.so.7.0.4 [7.0.4], on disk, found via ld.so.cache")), "{:#?}", f.evidence);
    }

    /// TF 1.x wants the build's major.minor: with only a newer minor on
    /// the machine, "no cuDNN 7.0+ was found" would be false (7.1.3 is
    /// loaded) and point the wrong way (qianguih/voxelnet#50).
    #[test]
    fn tensorflow_old_message_without_a_fitting_copy_wants_the_same_minor() {
        let t = Trace::new()
            .load("/env/lib/libcudnn.so.7.1.3", "RUNPATH", "/env/lib/python3.6/site-packages/tensorflow/python/_pywrap_tensorflow_internal.so")
            .stderr("E tensorflow/stream_executor/cuda/cuda_dnn.cc:378] Loaded runtime CuDNN library: 7103 (compatibility version 7100) but source was compiled with 7005 (compatibility version 7000).  If using a binary install, upgrade your CuDNN library to match.\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        let fixes: Vec<&String> = std::iter::once(&f.fix).chain(&f.alternatives).collect();
        assert!(
            fixes
                .iter()
                .any(|a| a.starts_with("no cuDNN 7.0.x was found on this machine")),
            "{fixes:?}"
        );
        assert!(!fixes.iter().any(|a| a.contains("7.0+")), "{fixes:?}");
    }

    /// JAX's "Outdated cuDNN installation" ([R27]).
    #[test]
    fn jax_message_explained() {
        let t = Trace::new()
            .load("/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.1.0", "ld.so.cache", "/v/site-packages/jax_plugins/xla_cuda12/xla_cuda_plugin.so")
            .stderr("RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\nOutdated cuDNN installation found.\nVersion JAX was built against: 90800\nMinimum supported: 908\nInstalled version: 90100\nThe local installation version must be no lower than 908.\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "JAX was built with cuDNN 9.8.0 but loaded 9.1.0 at run time"
        );
        assert!(
            f.evidence.iter().any(|e| e
                .detail
                .as_deref()
                .is_some_and(|d| d.contains("came from the ld.so.cache"))),
            "{:#?}",
            f.evidence
        );
        assert!(f
            .remedies()
            .any(|r| r.contains("JAX_SKIP_CUDA_CONSTRAINTS_CHECK")));
    }

    /// ONNX Runtime: "Require cuDNN 9.* and CUDA 12.*" with its "Failed to load library" line ([R28]).
    #[test]
    fn onnxruntime_messages_explained() {
        let t = Trace::new()
            .load("/v/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12", "RUNPATH", "/v/onnxruntime/capi/libonnxruntime_providers_cuda.so")
            .failed("libcudnn.so.9", "/v/onnxruntime/capi/libonnxruntime_providers_cuda.so", &[("/v/onnxruntime/capi/libcudnn.so.9", "RUNPATH", "missing")], Some("libcudnn.so.9: cannot open shared object file: No such file or directory"))
            .stderr("2025-01-01 [E:onnxruntime:Default, provider_bridge_ort.cc:1862 TryGetProviderInfo_CUDA] /onnxruntime_src/onnxruntime/core/session/provider_bridge_ort.cc:1539 onnxruntime::Provider& onnxruntime::ProviderLibrary::Get() [ONNXRuntimeError] : 1 : FAIL : Failed to load library libonnxruntime_providers_cuda.so with error: libcudnn.so.9: cannot open shared object file: No such file or directory\n2025-01-01 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:993 CreateExecutionProviderInstance] Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*. Please install all dependencies as mentioned in the GPU requirements page (https://onnxruntime.ai/docs/execution-providers/CUDA-ExecutionProvider.html#requirements), make sure they're in the PATH, and that your GPU is supported.\n")
            .machine(|m| {
                m.file("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0");
                m.link("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0");
            });
        let fs = t.findings();
        let v = all(&fs, "CDT010");
        assert_eq!(v.len(), 2, "{v:#?}");
        let load = v
            .iter()
            .find(|f| f.title == "ONNX Runtime: libcudnn.so.9 could not be loaded")
            .unwrap();
        assert!(
            load.evidence
                .iter()
                .any(|e| e.what == "failed"
                    && e.detail.as_deref().unwrap().contains("1 places tried"))
        );
        assert!(
            load.fix
                .contains("a copy is at /usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
            "{}",
            load.fix
        );
        let req = v
            .iter()
            .find(|f| f.title == "ONNX Runtime: requires cuDNN 9.x and CUDA 12.x")
            .unwrap();
        assert!(
            req.fix
                .contains("libcudnn.so.9 is at /usr/lib/x86_64-linux-gnu/libcudnn.so.9"),
            "{}",
            req.fix
        );
        // The failed load itself is CDT006.
        assert_eq!(only(&fs, "CDT006").severity, Severity::Error);
    }

    /// PyTorch 0.4's wording with cuDNN 7 integers (jwyang/faster-rcnn.pytorch#662):
    /// decoded, the 0.x rule (major.minor equal: a newer 7.6 fails too),
    /// the LD_LIBRARY_PATH entry removed, the conda copy offered.
    #[test]
    fn pytorch_0x_cudnn7_message_explained() {
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda/lib64")
            .load("/usr/local/cuda/lib64/libcudnn.so.7.6.0", "LD_LIBRARY_PATH", "/env/lib/python3.6/site-packages/torch/_C.so")
            .stderr("RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7102 but linked against 7600\n")
            .machine(|m| {
                m.file("/env/lib/libcudnn.so.7.1.2");
                m.cache.push(("libcudnn.so.7".into(), "/env/lib/libcudnn.so.7.1.2".into()));
            });
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "PyTorch 0.x was built with cuDNN 7.1.2 but loaded 7.6.0 at run time"
        );
        assert!(f.evidence.iter().any(|e| e
            .detail
            .as_deref()
            .is_some_and(|d| d.ends_with("build 7.1.2, run time 7.6.0: incompatible"))));
        assert_eq!(f.fix, "remove /usr/local/cuda/lib64 from LD_LIBRARY_PATH");
        assert!(
            f.alternatives[0].starts_with("put /env/lib first"),
            "{:?}",
            f.alternatives
        );
    }

    /// Caffe2's rule: from a cuDNN 7 build on, a newer runtime passes, an
    /// older one fails (facebookresearch/Detectron#574).
    #[test]
    fn caffe2_rule_rechecked() {
        let fact = |stderr: &str| {
            let t = Trace::new()
                .load(
                    "/usr/local/cuda/lib64/libcudnn.so.7.0.5",
                    "LD_LIBRARY_PATH",
                    "/env/caffe2/libcaffe2_gpu.so",
                )
                .stderr(stderr);
            let fs = t.findings();
            let f = only(&fs, "CDT010");
            f.evidence
                .iter()
                .find_map(|e| e.detail.clone().filter(|d| d.starts_with("rule:")))
                .unwrap()
        };
        assert!(fact("RuntimeError: [enforce fail at common_cudnn.h:108] version_match || backwards_compatible_7 || patch_compatible. cuDNN compiled (7102) and runtime (7005) versions mismatch").ends_with("build 7.1.2, run time 7.0.5: incompatible"));
        assert!(
            fact("cuDNN compiled (7102) and runtime (7600) versions mismatch")
                .contains("compatible by that rule")
        );
        // The early form demands equality: a newer runtime fails it.
        assert!(fact("[enforce fail at common_cudnn.h:102] version_match. cuDNN compiled (7102) and runtime (7600) versions mismatch").ends_with(": incompatible"));
    }

    /// JAX 0.4.30's absolute minimum 9100 (conda-forge/jaxlib-feedstock#277):
    /// built with and loaded 8.9.7, what fails is the minimum (every cuDNN
    /// 9): never "8.9.7 does not fit 8.9.7", never the loaded copy offered.
    #[test]
    fn jax_minimum_is_the_point() {
        let t = Trace::new()
            .load("/env/lib/libcudnn.so.8.9.7", "RUNPATH", "/env/lib/python3.11/site-packages/jaxlib/xla_extension.so")
            .load("/env/lib/libcudnn_ops_infer.so.8.9.7", "RUNPATH", "/env/lib/libcudnn.so.8.9.7")
            .stderr("CUDA backend failed to initialize: Unable to use CUDA because of the following issues with CUDA components:\nOutdated cuDNN installation found.\nVersion JAX was built against: 8907\nMinimum supported: 9100\nInstalled version: 8907\nThe local installation version must be no lower than 9100..(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
            .machine(|m| {
                m.file("/env/lib/libcudnn_ops_infer.so.8.9.7");
                m.file("/opt/other/libcudnn_ops_infer.so.8.9.7");
            });
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "JAX requires cuDNN 9 or newer (its minimum 9100), but cuDNN 8.9.7 was loaded"
        );
        assert!(f.fix.contains("jax<=0.4.29"), "{}", f.fix);
        assert!(
            f.remedies()
                .all(|r| !r.contains("/env/lib first") && !r.contains("/opt/other")),
            "{:?}",
            f.alternatives
        );
        assert!(f.remedies().any(|r| r.contains("no cuDNN 9.0+ was found")));
        assert!(!f
            .remedies()
            .any(|r| r.contains("at least as new as its build")));
    }

    /// PyTorch's driver message: 11040 is CUDA 11.4 (lllyasviel/Fooocus#1313).
    #[test]
    fn driver_message_decoded() {
        let t = Trace::new()
            .load("/lib/x86_64-linux-gnu/libcuda.so.1", "ld.so.cache", "/v/torch/lib/libc10_cuda.so")
            .load("/v/nvidia/cuda_runtime/lib/libcudart.so.12", "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .stderr("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.\n");
        let fs = t.findings();
        let f = all(&fs, "CDT010")[0];
        assert_eq!(
            f.title,
            "PyTorch: the NVIDIA driver is too old (it supports CUDA 11.4)"
        );
        assert!(f.evidence.iter().any(|e| e.detail.as_deref()
            == Some("libcudart.so.12 is CUDA 12: newer than the CUDA 11.4 the driver supports")));
    }

    /// cuDNN 8's "Could not load library": what the error names is missing
    /// (pytorch/pytorch#97041); a symbol-version error is a mix of builds,
    /// not a missing file (pytorch/pytorch#104591).
    #[test]
    fn cudnn8_could_not_load_reads_its_error() {
        let t = Trace::new()
            .load("/v/nvidia/cudnn/lib/libcudnn.so.8", "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .failed("libnvrtc.so", "/v/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8", &[("/v/nvidia/cudnn/lib/libnvrtc.so", "RUNPATH", "missing")], Some("libnvrtc.so: cannot open shared object file: No such file or directory"))
            .stderr("Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory\nPlease make sure libcudnn_cnn_infer.so.8 is in your library path!\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "cuDNN 8 (libcudnn.so.8): libnvrtc.so could not be loaded"
        );
        assert!(f
            .evidence
            .iter()
            .any(|e| e.what == "failed" && e.path.as_deref() == Some("libnvrtc.so")));
        let t = Trace::new()
            .load("/v/nvidia/cudnn/lib/libcudnn.so.8", "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .load("/usr/local/cuda/lib64/libcudnn_ops_infer.so.8.3.2", "LD_LIBRARY_PATH", "/v/nvidia/cudnn/lib/libcudnn.so.8")
            .stderr("Could not load library libcudnn_cnn_infer.so.8. Error: /v/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: _ZN5cudnn3ops18GetInternalStreamsEP12cudnnContextiPP11CUstream_st, version libcudnn_ops_infer.so.8\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(f.title, "cuDNN 8 (libcudnn.so.8): libcudnn_cnn_infer.so.8 and libcudnn_ops_infer.so.8 come from different cuDNN builds");
        assert!(!f.remedies().any(|r| r.contains("install the missing")));
    }

    /// glibc before 2.30 words the same miss as a relocation error
    /// (opendatalab/PDF-Extract-Kit#57): the same finding as the newer
    /// "undefined symbol: …, version …".
    #[test]
    fn both_glibc_wordings_give_the_same_finding() {
        let base = || {
            Trace::new()
                .load(
                    "/v/nvidia/cudnn/lib/libcudnn.so.8",
                    "RPATH",
                    "/v/torch/lib/libtorch_cuda.so",
                )
                .load(
                    "/usr/local/cuda/lib64/libcudnn_ops_infer.so.8.3.2",
                    "LD_LIBRARY_PATH",
                    "/v/nvidia/cudnn/lib/libcudnn.so.8",
                )
        };
        let old = base().stderr("python3: relocation error: /v/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: symbol _Z20traceback_iretf_implPKcRKN5cudnn16InternalStatus_tEb, version libcudnn_ops_infer.so.8 not defined in file libcudnn_ops_infer.so.8 with link time reference.\n");
        let new = base().stderr("python3: symbol lookup error: /v/nvidia/cudnn/lib/libcudnn_cnn_infer.so.8: undefined symbol: _Z20traceback_iretf_implPKcRKN5cudnn16InternalStatus_tEb, version libcudnn_ops_infer.so.8\n");
        let (a, b) = (old.findings(), new.findings());
        let (fa, fb) = (only(&a, "CDT010"), only(&b, "CDT010"));
        assert!(fa.title.ends_with("libcudnn_cnn_infer.so.8 and libcudnn_ops_infer.so.8 come from different cuDNN builds"), "{}", fa.title);
        assert_eq!(
            fa.title.split_once(": ").unwrap().1,
            fb.title.split_once(": ").unwrap().1
        );
        assert_eq!(fa.fix, fb.fix);
    }

    /// cuDNN 9's "Invalid handle. Cannot load symbol cublasLtGetVersion"
    /// (terrapkg/packages#11766): a CUDA 12 build of cuDNN whose
    /// libcublasLt.so.12 did not load; the .so.13 on disk is not offered.
    #[test]
    fn invalid_handle_names_the_cublaslt_of_cudnns_cuda() {
        let t = Trace::new()
            .load(
                "/usr/lib64/libcudnn_graph.so.9.21.1",
                "ld.so.cache",
                "/usr/lib64/libcudnn.so.9",
            )
            .version_query(
                "/usr/lib64/libcudnn_graph.so.9.21.1",
                "cudnn",
                "9.21.1",
                Some(12090),
                None,
                None,
            )
            .failed(
                "libcublasLt.so.12",
                "/usr/lib64/libcudnn_graph.so.9.21.1",
                &[],
                Some(
                    "libcublasLt.so.12: cannot open shared object file: No such file or directory",
                ),
            )
            .stderr("Invalid handle. Cannot load symbol cublasLtGetVersion\n")
            .machine(|m| {
                m.file("/usr/local/cuda-13.0/lib64/libcublasLt.so.13.0.0");
            });
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "cuDNN 9: cannot call cublasLtGetVersion: libcublasLt.so.12 could not be loaded"
        );
        assert!(
            f.evidence.iter().any(|e| e
                .detail
                .as_deref()
                .is_some_and(|d| d.starts_with("this cuDNN is a CUDA 12 build"))),
            "{:#?}",
            f.evidence
        );
        assert!(!f.remedies().any(|r| r.contains("libcublasLt.so.13")));
    }

    /// XLA logs its check once per attempt (conda-forge/jaxlib-feedstock#329):
    /// one finding, with the count.
    #[test]
    fn repeated_message_is_one_finding_with_a_count() {
        let line = "E1027 15:11:27.184481 3266602 cuda_dnn.cc:456] Loaded runtime CuDNN library: 9.10.1 but source was compiled with: 9.13.1.  CuDNN library needs to have matching major version and equal or higher minor version.\n";
        let t = Trace::new()
            .load(
                "/env/lib/libcudnn_graph.so.9.10.1",
                "RUNPATH",
                "/env/lib/python3.12/site-packages/jaxlib/xla_extension.so",
            )
            .stderr(&line.repeat(4));
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(f.count, Some(4));
        assert!(f.title.ends_with("(4 times)"), "{}", f.title);
    }

    /// JAX's cuBLAS check (jax-ml/jax#33561): the integers decoded, the
    /// copy in use and who asked for it named; no bypass offered (skipping
    /// the check segfaults later, trueagi-io/FabricPC#45).
    #[test]
    fn jax_cublas_check_names_the_copy_in_use() {
        let sys = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcublas.so.13";
        let t = Trace::new()
            .load(sys, "ld.so.cache", "/v/tensorflow/libtensorflow_framework.so.2")
            .stderr("RuntimeError: Outdated cuBLAS installation found.\nVersion JAX was built against: 130100\nMinimum supported: 130100\nInstalled version: 130000\n");
        let fs = t.findings();
        let f = only(&fs, "CDT010");
        assert_eq!(
            f.title,
            "JAX: the cuBLAS in use is 13.0.0, older than its minimum 13.1.0"
        );
        assert!(f.evidence.iter().any(|e| e.path.as_deref() == Some(sys)
            && e.requester.as_deref() == Some("/v/tensorflow/libtensorflow_framework.so.2")));
        assert!(!f
            .remedies()
            .any(|r| r.contains("JAX_SKIP_CUDA_CONSTRAINTS_CHECK")));
    }

    #[test]
    fn no_stderr_or_no_message_no_finding() {
        assert!(none(&pytorch_mixup().findings(), "CDT010"));
        let t = pytorch_mixup().stderr("Epoch 1: loss 0.3\nall good\n");
        assert!(none(&t.findings(), "CDT010"));
    }
}
