//! The transparency check of one scenario: bare run vs traced run vs trace.

use crate::lddebug::{self, LdObject, LdProcess};
use crate::run::{self, Built, Run};
use crate::spec::{Expect, Termination};
use crate::trace::ProcessTrace;
use cudnn_trace_format::read::{Event, Load};
use cudnn_trace_format::{cuda_family, reason};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// Substring identifying the shim's file name (`libcdtrace.so`, wherever the
/// launcher puts it).
pub const SHIM_MARK: &str = "cdtrace";

/// Result of checking one scenario.
#[derive(Debug, Default)]
pub struct Outcome {
    pub name: String,
    /// Each failed assertion, self-contained.
    pub failures: Vec<String>,
    /// Context: oracle lists, notes.
    pub info: Vec<String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// Human-readable report.
    pub fn report(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {}: {}",
            self.name,
            if self.passed() {
                "ok".to_string()
            } else {
                format!("{} failure(s)", self.failures.len())
            }
        );
        for (i, f) in self.failures.iter().enumerate() {
            let _ = writeln!(s, "--- failure {}: {}", i + 1, f.trim_end());
        }
        if !self.passed() || verbose() {
            for i in &self.info {
                let _ = writeln!(s, "--- {}", i.trim_end());
            }
        }
        s
    }
}

fn verbose() -> bool {
    std::env::var("CDT_VERBOSE").is_ok_and(|v| v == "1")
}

/// Line diff (LCS), `-` for `a` only (expected/bare), `+` for `b` only.
pub fn diff_lines(a: &[String], b: &[String]) -> String {
    let (n, m) = (a.len(), b.len());
    let mut l = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            l[i][j] = if a[i] == b[j] {
                l[i + 1][j + 1] + 1
            } else {
                l[i + 1][j].max(l[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            let _ = writeln!(out, "  {}", a[i]);
            i += 1;
            j += 1;
        } else if j < m && (i == n || l[i][j + 1] >= l[i + 1][j]) {
            let _ = writeln!(out, "+ {}", b[j]);
            j += 1;
        } else {
            let _ = writeln!(out, "- {}", a[i]);
            i += 1;
        }
    }
    out
}

pub(crate) fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(String::from)
        .collect()
}

/// `p` as an absolute path string: relative paths are taken from `cwd`
/// (a leading `./` dropped); nothing else is normalised.
pub fn abs(p: &str, cwd: &Path) -> String {
    if p.starts_with('/') || p.is_empty() {
        return p.to_string();
    }
    let p = p.strip_prefix("./").unwrap_or(p);
    format!("{}/{}", cwd.display(), p)
}

/// Shows `p` relative to the build dir as `{B}/…`.
pub(crate) fn show(p: &str, b: &Path) -> String {
    let bs = b.display().to_string();
    match p.strip_prefix(&bs) {
        Some(rest) => format!("{{B}}{rest}"),
        None => p.to_string(),
    }
}

pub(crate) fn is_shim(p: &str) -> bool {
    Path::new(p)
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains(SHIM_MARK))
}

/// An oracle process with the shim and what only it pulled in removed, and
/// namespaces renumbered by first appearance.
#[derive(Debug, Clone, Default)]
pub struct Filtered {
    pub pid: u32,
    /// (namespace, absolute path)
    pub objects: Vec<(u64, String)>,
    /// Objects removed as the shim or its dependencies (absolute paths).
    pub shim_objects: Vec<String>,
    /// Of those, what the shim pulled into the program's namespace besides
    /// its own files (its DT_NEEDED, transitively): there must be none
    /// (issue 14: the shim adds nothing to the program's link map but itself).
    pub pulled_in: Vec<String>,
}

/// Filters one oracle process (see [`Filtered`]). `cuda_only` keeps only
/// CUDA-family objects.
pub fn filter_oracle(p: &LdProcess, cwd: &Path, cuda_only: bool) -> Filtered {
    // namespaces holding the shim other than the base one: the audit namespace
    let audit_ns: BTreeSet<u64> = p
        .loaded
        .iter()
        .filter(|o| o.ns != 0 && is_shim(&o.path))
        .map(|o| o.ns)
        .collect();
    let mut dropped: BTreeSet<String> = BTreeSet::new();
    let mut shim_objects = vec![];
    let mut pulled_in = vec![];
    let mut kept: Vec<&LdObject> = vec![];
    for o in &p.loaded {
        if audit_ns.contains(&o.ns) {
            continue;
        }
        let by_shim = o
            .requester
            .as_deref()
            .is_some_and(|r| is_shim(r) || dropped.contains(r));
        if is_shim(&o.path) || (o.ns == 0 && by_shim) {
            dropped.insert(o.path.clone());
            shim_objects.push(abs(&o.path, cwd));
            if !is_shim(&o.path) {
                pulled_in.push(abs(&o.path, cwd));
            }
            continue;
        }
        kept.push(o);
    }
    let mut renum: BTreeMap<u64, u64> = BTreeMap::from([(0, 0)]);
    let mut objects = vec![];
    for o in kept {
        if cuda_only && cuda_family(o.path.as_bytes()).is_none() {
            continue;
        }
        let next = renum.len() as u64;
        let ns = *renum.entry(o.ns).or_insert(next);
        objects.push((ns, abs(&o.path, cwd)));
    }
    Filtered {
        pid: p.pid,
        objects,
        shim_objects,
        pulled_in,
    }
}

/// The objects a trace file says entered the process, comparable to
/// [`Filtered::objects`]: `new` loads in `seq` order, without the main
/// program, ld.so, the vdso and the shim (and `skip` paths), namespaces
/// renumbered by first appearance.
pub fn trace_objects(t: &ProcessTrace, cwd: &Path, skip: &BTreeSet<String>) -> Vec<(u64, String)> {
    let mut renum: BTreeMap<i64, u64> = BTreeMap::from([(0, 0)]);
    let mut out = vec![];
    for l in t.new_loads() {
        if [reason::MAIN_PROGRAM, reason::DYNAMIC_LINKER, reason::VDSO].contains(&l.reason.as_str())
        {
            continue;
        }
        let p = abs(&l.path, cwd);
        if is_shim(&p) || skip.contains(&p) {
            continue;
        }
        let next = renum.len() as u64;
        let ns = *renum.entry(l.lmid).or_insert(next);
        out.push((ns, p));
    }
    out
}

pub(crate) fn fmt_objects(v: &[(u64, String)], b: &Path) -> Vec<String> {
    v.iter()
        .map(|(ns, p)| format!("[{ns}] {}", show(p, b)))
        .collect()
}

pub(crate) fn sorted(v: &[(u64, String)]) -> Vec<(u64, String)> {
    let mut v = v.to_vec();
    v.sort();
    v
}

/// Whether object `path` (absolute) counts as CUDA-family in `cuda` mode:
/// its file name says so, or the trace recorded it with a family.
fn is_cuda(path: &str, by_identity: &BTreeSet<String>) -> bool {
    cuda_family(path.as_bytes()).is_some() || by_identity.contains(path)
}

/// Builds, runs bare and traced, and checks scenario `name`.
pub fn check_scenario(name: &str) -> Outcome {
    let mut o = Outcome {
        name: name.to_string(),
        ..Default::default()
    };
    let built = match run::build_scenario(name) {
        Ok(b) => b,
        Err(e) => {
            o.failures.push(e);
            return o;
        }
    };
    let b = &built.build;
    o.info.push(format!("build dir {{B}} = {}", b.display()));
    if let Some(why) = &built.spec.skip {
        eprintln!("scenario {name} skipped: {why}");
        o.info.push(format!("skipped: {why}"));
        return o;
    }

    // ---- bare run: the scenario must do what it is meant to do
    let bare = match run::run_bare(&built) {
        Ok(r) => r,
        Err(e) => {
            o.failures.push(format!("bare run: {e}"));
            return o;
        }
    };
    check_bare(&built, &bare, &mut o);
    let bare_oracle = match lddebug::parse_dir(&bare.ld_dir) {
        Ok(m) => m,
        Err(e) => {
            o.failures.push(format!("bare LD_DEBUG oracle: {e}"));
            return o;
        }
    };
    let bare_f: Vec<Filtered> = bare_oracle
        .values()
        .map(|p| filter_oracle(p, b, false))
        .filter(|f| !f.objects.is_empty())
        .collect();
    for f in &bare_f {
        o.info.push(format!(
            "bare oracle, process {} (loaded objects in order):\n{}",
            f.pid,
            fmt_objects(&f.objects, b).join("\n")
        ));
    }

    // ---- a pin scenario: pinned runs instead of the transparency checks
    if built.spec.pin.is_some() {
        crate::pin::check_pin_scenario(&built, &bare, &mut o);
        return o;
    }

    // ---- traced run
    let driver = if built.spec.direct_shim {
        run::Driver::Shim
    } else {
        run::driver_from_env()
    };
    let traced = match run::run_traced(&built, driver) {
        Ok(r) => r,
        Err(e) => {
            o.failures.push(format!("traced run ({driver:?}): {e}"));
            return o;
        }
    };
    let traced_stderr = String::from_utf8_lossy(&traced.stderr).to_string();
    if !traced_stderr.is_empty() {
        o.info.push(format!("traced stderr:\n{traced_stderr}"));
    }
    if bare.stdout != traced.stdout {
        o.failures.push(format!(
            "stdout differs (- bare, + traced):\n{}",
            diff_lines(&lines(&bare.stdout), &lines(&traced.stdout))
        ));
    }
    // The launcher ends the way the program did, by the same signal too.
    let expected = bare.termination;
    if expected != traced.termination {
        o.failures.push(format!(
            "termination differs: bare {}, traced {} (expected {} with {driver:?})",
            fmt_term(bare.termination),
            fmt_term(traced.termination),
            fmt_term(expected),
        ));
    }

    // ---- oracle vs oracle
    let oracle = match shim_run_oracle(&traced, b) {
        Ok(m) => m,
        Err(e) => {
            o.failures.push(format!("traced LD_DEBUG oracle: {e}"));
            return o;
        }
    };
    check_nothing_pulled_in(&oracle, b, &mut o);
    if !oracle.shim_objects.is_empty() {
        o.info.push(format!(
            "objects only the shim pulled in (filtered out):\n{}",
            oracle
                .shim_objects
                .iter()
                .map(|p| show(p, b))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    compare_oracles(
        &built,
        &bare_f,
        &oracle.filtered,
        &oracle.shim_objects,
        &mut o,
    );

    // ---- the shim's own trace vs the oracle of the same (traced) run
    match traced.traces() {
        Err(e) => o.failures.push(format!("reading the trace: {e}")),
        Ok(traces) => check_trace(&built, &traced, &traces, &oracle, None, &mut o),
    }
    o
}

/// The `LD_DEBUG` oracle of a run with the shim.
pub(crate) struct ShimRunOracle {
    /// Every process.
    pub all: BTreeMap<u32, LdProcess>,
    /// The launcher's own pids (see [`launcher_pids`]).
    pub launcher: BTreeSet<u32>,
    /// The other processes that loaded something, filtered ([`filter_oracle`]).
    pub filtered: Vec<Filtered>,
    /// What only the shim pulled in, in any of them.
    pub shim_objects: BTreeSet<String>,
}

/// The shim may add its own files to a process and nothing else: an object
/// that entered the program's namespace only because the shim needs it (its
/// DT_NEEDED, `libgcc_s.so.1` before issue 14) is a failure. The audit
/// namespace's objects are the shim's own business.
pub(crate) fn check_nothing_pulled_in(oracle: &ShimRunOracle, b: &Path, o: &mut Outcome) {
    for f in &oracle.filtered {
        for p in &f.pulled_in {
            o.failures.push(format!(
                "process {}: the shim pulled {} into the program's namespace (only the shim's own files may enter it)",
                f.pid,
                show(p, b)
            ));
        }
    }
}

/// Reads the oracle of `run` (traced or pinned).
pub(crate) fn shim_run_oracle(run: &Run, b: &Path) -> Result<ShimRunOracle, String> {
    let all = lddebug::parse_dir(&run.ld_dir)?;
    let launcher = launcher_pids(run, &all);
    let filtered: Vec<Filtered> = all
        .values()
        .filter(|p| !launcher.contains(&p.pid))
        .map(|p| filter_oracle(p, b, false))
        .filter(|f| !f.objects.is_empty())
        .collect();
    let shim_objects = filtered
        .iter()
        .flat_map(|f| f.shim_objects.iter().cloned())
        .collect();
    Ok(ShimRunOracle {
        all,
        launcher,
        filtered,
        shim_objects,
    })
}

/// The trace of a run with the shim: well formed ([`check_trace_files`],
/// `pin` as there), the same objects as the oracle of the same run
/// ([`compare_trace_with_oracle`]), and the scenario's expectations.
pub(crate) fn check_trace(
    built: &Built,
    run: &Run,
    traces: &[ProcessTrace],
    oracle: &ShimRunOracle,
    pin: Option<(&str, &str)>,
    o: &mut Outcome,
) {
    check_trace_files(built, traces, pin, o);
    compare_trace_with_oracle(built, traces, oracle, o);
    compare_tried_with_oracle(built, run, traces, oracle, o);
    check_expectations(built, run, traces, o);
}

/// The `search_dir` of new object `l` must be the directory its file was
/// found in, exactly (issue 14: a hardware-capability subdirectory such as
/// `x86_64` or `glibc-hwcaps/x86-64-v2` included), and, in scenarios with
/// `strict-attribution`, its reason and `reason_owner` what the loader
/// printed for the search step that offered its path (`search`, its search
/// in the oracle): `(RPATH from file X)` is reason `RPATH` with owner X,
/// `(RUNPATH from file X)` `RUNPATH`, `(LD_LIBRARY_PATH)`, `(system search
/// path)` `default-dir`, ` search cache=` `ld.so.cache`.
fn check_attribution(
    built: &Built,
    run: &Run,
    t: &ProcessTrace,
    l: &Load,
    search: &crate::lddebug::LdSearch,
    o: &mut Outcome,
) {
    use crate::lddebug::LdStep;
    let b = &built.build;
    let (Some(step), Some(found)) = (search.from.last(), search.tried.last()) else {
        return;
    };
    let real = |p: &str| {
        let a = abs(p, &run.cwd);
        std::fs::canonicalize(&a)
            .map(|r| r.display().to_string())
            .unwrap_or(a)
    };
    let (reason, owner): (&str, Option<&str>) = match step {
        LdStep::List { kind, owner } => (kind, Some(owner.as_str())),
        LdStep::LibraryPath => (reason::LD_LIBRARY_PATH, None),
        LdStep::System => (reason::DEFAULT_DIR, None),
        LdStep::Cache => (reason::LD_SO_CACHE, None),
        LdStep::Unknown => return,
    };
    let mut bad = vec![];
    // LD_DEBUG names the list a directory was first seen in, even when
    // another list that holds it too is being searched (glibc shares one
    // `r_search_path_elem` per directory string and prints its `what`):
    // reason and owner are compared only where a scenario says its
    // directories are not shared (`strict-attribution`).
    if built.spec.strict_attribution {
        if l.reason != reason {
            bad.push(format!("reason {} (LD_DEBUG: {reason})", l.reason));
        }
        let got_owner = l.reason_owner.as_deref().map(real);
        if got_owner != owner.map(real) {
            bad.push(format!(
                "reason_owner {:?} (LD_DEBUG: {:?})",
                l.reason_owner.as_deref().map(|p| show(p, b)),
                owner
            ));
        }
    }
    // As the loader printed it (a relative LD_LIBRARY_PATH entry gives a
    // relative candidate), then absolute.
    let dir = found.rsplit_once('/').map_or(".", |(d, _)| d);
    let dir = abs(if dir.is_empty() { "/" } else { dir }, &run.cwd);
    let dir = dir.as_str();
    let got_dir = l.search_dir.as_deref().map(|d| abs(d, &run.cwd));
    if got_dir.as_deref() != Some(dir) {
        bad.push(format!(
            "search_dir {:?} (the file was found in {})",
            got_dir.as_deref().map(|d| show(d, b)),
            show(dir, b)
        ));
    }
    if !bad.is_empty() {
        o.failures.push(format!(
            "{}: load of {} (seq {}): {}",
            t.file.display(),
            show(&l.path, b),
            l.seq,
            bad.join("; ")
        ));
    }
}

/// Every `tried` list of the trace (of a `load` or a `load_failed`) must be
/// the candidates of one search of the same name in the oracle of the same
/// process, path for path, in order: the loader's own `trying file=` lines
/// (issue 14: every failed search on disk with every candidate, start-up
/// failures included). The pin's own candidate (reason `pin`, a path handed
/// to the loader, which searches nothing for it) is left out. A new object
/// found by a search must then have the reason, owner and directory of the
/// search step that offered it ([`check_attribution`]).
fn compare_tried_with_oracle(
    built: &Built,
    run: &Run,
    traces: &[ProcessTrace],
    oracle: &ShimRunOracle,
    o: &mut Outcome,
) {
    let b = &built.build;
    let mut by_pid: BTreeMap<u32, Vec<&ProcessTrace>> = BTreeMap::new();
    for t in traces {
        if let Some(pid) = t.pid() {
            by_pid.entry(pid).or_default().push(t);
        }
    }
    for (pid, mut ts) in by_pid {
        ts.sort_by_key(|t| t.image());
        let Some(p) = oracle.all.get(&pid) else {
            continue;
        };
        let mut used = vec![false; p.searches.len()];
        for t in ts {
            for e in &t.events {
                let (kind, name, tried) = match e {
                    Event::Load(l) => ("load", l.name.as_deref(), &l.tried),
                    Event::LoadFailed(f) => ("load_failed", Some(f.name.as_str()), &f.tried),
                    _ => continue,
                };
                let want: Vec<String> = tried
                    .iter()
                    .filter(|c| c.reason != reason::PIN)
                    .map(|c| abs(&c.path, b))
                    .collect();
                let Some(name) = name.filter(|_| !want.is_empty()) else {
                    continue;
                };
                let same_name: Vec<usize> = (0..p.searches.len())
                    .filter(|&i| p.searches[i].name == name)
                    .collect();
                // The oracle's candidates, and the same without the cache's
                // (printed, then dropped for a DF_1_NODEFLIB requester).
                let lists = |i: usize| {
                    let all: Vec<String> = p.searches[i].tried.iter().map(|c| abs(c, b)).collect();
                    let mut no_cache = all.clone();
                    if let Some(c) = p.searches[i].cache_at.filter(|&c| c < no_cache.len()) {
                        no_cache.remove(c);
                    }
                    [all, no_cache]
                };
                let hit = same_name
                    .iter()
                    .copied()
                    .find(|&i| !used[i] && lists(i).contains(&want));
                match hit {
                    Some(i) => {
                        used[i] = true;
                        if let Event::Load(l) = e {
                            if l.new {
                                check_attribution(built, run, t, l, &p.searches[i], o);
                            }
                        }
                    }
                    None => o.failures.push(format!(
                        "{}: the {kind} event for {name:?} lists candidates no search of the LD_DEBUG oracle tried (pid {pid}):\n  trace:  {}\n{}",
                        t.file.display(),
                        want.iter().map(|c| show(c, b)).collect::<Vec<_>>().join(", "),
                        same_name
                            .iter()
                            .map(|&i| format!(
                                "  oracle: {}",
                                p.searches[i]
                                    .tried
                                    .iter()
                                    .map(|c| show(&abs(c, b), b))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                            .collect::<Vec<_>>()
                            .join("\n")
                    )),
                }
            }
        }
    }
}

/// The pids of the launcher in a CLI-driven run: its own, a process that
/// wrote only to the launcher's `ld.<pid>` file (a fork of the launcher that
/// did not exec: the program's own processes exec first, then write to
/// their own file), and one whose images are all the launcher binary.
pub(crate) fn launcher_pids(run: &Run, oracle: &BTreeMap<u32, LdProcess>) -> BTreeSet<u32> {
    let Some(top) = run.launcher_pid() else {
        return BTreeSet::new();
    };
    let own_file = format!("ld.{top}");
    let cli_name = crate::tools::tools()
        .ok()
        .and_then(|t| t.cli.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_else(|| "cudnn-trace".into());
    let mut set = BTreeSet::from([top]);
    for p in oracle.values() {
        let only_launcher_file = p.files.len() == 1 && p.files.contains(&own_file);
        let only_launcher_program = !p.programs.is_empty()
            && p.programs.iter().all(|prog| {
                Path::new(prog)
                    .file_name()
                    .is_some_and(|n| n == cli_name.as_str())
            });
        if only_launcher_file || only_launcher_program {
            set.insert(p.pid);
        }
    }
    set
}

pub(crate) fn fmt_term(t: Option<Termination>) -> String {
    t.map(|t| t.to_string())
        .unwrap_or_else(|| "timed out (killed)".into())
}

pub(crate) fn check_bare(built: &Built, bare: &Run, o: &mut Outcome) {
    let b = &built.build;
    if bare.termination != Some(built.spec.termination) {
        o.failures.push(format!(
            "scenario broken: bare run ended with {}, scenario.env expects {}\nstdout:\n{}stderr:\n{}",
            fmt_term(bare.termination),
            built.spec.termination,
            String::from_utf8_lossy(&bare.stdout),
            String::from_utf8_lossy(&bare.stderr)
        ));
    }
    // A program whose own output differs on this glibc has its own file.
    let per_glibc = built.src.join(format!(
        "expected-glibc-{}.stdout",
        crate::spec::glibc_version_text()
    ));
    let golden = if per_glibc.is_file() {
        per_glibc
    } else {
        built.src.join("expected.stdout")
    };
    let actual = String::from_utf8_lossy(&bare.stdout).replace(&b.display().to_string(), "{B}");
    if std::env::var("CDT_BLESS").is_ok_and(|v| v == "1" || v == "bare") {
        let _ = std::fs::write(&golden, &actual);
        o.info.push(format!("blessed {}", golden.display()));
    } else if let Ok(want) = std::fs::read_to_string(&golden) {
        if want != actual {
            o.failures.push(format!(
                "scenario does not behave as intended on this machine: bare stdout differs from expected.stdout (- expected, + bare):\n{}",
                diff_lines(
                    &want.lines().map(String::from).collect::<Vec<_>>(),
                    &actual.lines().map(String::from).collect::<Vec<_>>()
                )
            ));
        }
    }
}

fn compare_oracles(
    built: &Built,
    bare: &[Filtered],
    traced: &[Filtered],
    shim_objects: &BTreeSet<String>,
    o: &mut Outcome,
) {
    let b = &built.build;
    if bare.len() != traced.len() {
        o.failures.push(format!(
            "LD_DEBUG: {} process(es) loaded something bare, {} traced (pids bare {:?}, traced {:?})",
            bare.len(),
            traced.len(),
            bare.iter().map(|f| f.pid).collect::<Vec<_>>(),
            traced.iter().map(|f| f.pid).collect::<Vec<_>>()
        ));
    }
    // processes are matched in pid order (children get higher pids)
    for (i, (bf, tf)) in bare.iter().zip(traced.iter()).enumerate() {
        let (a, c) = if built.spec.unordered {
            (sorted(&bf.objects), sorted(&tf.objects))
        } else {
            (bf.objects.clone(), tf.objects.clone())
        };
        if a != c {
            let mut msg = format!(
                "LD_DEBUG oracles differ for process #{i} (bare pid {}, traced pid {}) (- bare, + traced):\n{}",
                bf.pid,
                tf.pid,
                diff_lines(&fmt_objects(&a, b), &fmt_objects(&c, b))
            );
            let pre: Vec<_> = a.iter().filter(|(_, p)| shim_objects.contains(p)).collect();
            if !pre.is_empty() {
                let _ = write!(
                    msg,
                    "note: the program loads {:?} itself, which the shim had already pulled in",
                    pre.iter().map(|(_, p)| show(p, b)).collect::<Vec<_>>()
                );
            }
            o.failures.push(msg);
        }
    }
}

/// Well-formedness of every trace file: parsable lines, a `process` header
/// with the right `mode` and, for pinned runs, the right `pin` (`pin`:
/// (realpath of DIR, mode); `None`: the header must have no `pin`), and `seq`
/// numbers `1..=n`.
fn check_trace_files(
    built: &Built,
    traces: &[ProcessTrace],
    pin: Option<(&str, &str)>,
    o: &mut Outcome,
) {
    if traces.is_empty() {
        o.failures
            .push("the trace directory holds no *.jsonl file".into());
        return;
    }
    for t in traces {
        let f = t.file.display();
        for (n, line, e) in &t.bad_lines {
            o.failures
                .push(format!("{f}:{n}: unparsable trace line ({e}): {line}"));
        }
        match &t.header {
            None => o
                .failures
                .push(format!("{f}: first line is not a `process` header")),
            Some(h) => {
                if h.mode != built.spec.mode {
                    o.failures.push(format!(
                        "{f}: header mode {:?}, run with {:?}",
                        h.mode, built.spec.mode
                    ));
                }
                let got = t.header_pin();
                match (pin, &got) {
                    (None, None) => {}
                    (None, Some(g)) => o.failures.push(format!(
                        "{f}: the header has a pin ({g:?}) but none was set"
                    )),
                    (Some((dir, mode)), None) => o.failures.push(format!(
                        "{f}: the header has no `pin` (expected dir {dir:?}, mode {mode:?})"
                    )),
                    (Some((dir, mode)), Some(g)) => {
                        if g.dir.as_deref() != Some(dir) || g.mode.as_deref() != Some(mode) {
                            o.failures.push(format!(
                                "{f}: header pin is dir {:?} mode {:?}, expected dir {dir:?} (realpath of the pin directory) mode {mode:?}",
                                g.dir, g.mode
                            ));
                        }
                    }
                }
            }
        }
        // seq: unique, 1..=n (read from the raw lines: every kind counts)
        let mut seqs: Vec<u64> = t.seqs();
        seqs.sort();
        let want: Vec<u64> = (1..=seqs.len() as u64).collect();
        if seqs != want {
            o.failures.push(format!(
                "{f}: seq numbers are not 1..={} without gaps or repeats: {seqs:?}",
                seqs.len()
            ));
        }
        for e in &t.events {
            if let Event::Note(n) = e {
                o.info.push(format!("{f}: note [{}] {}", n.level, n.msg));
                if n.level == "error" {
                    o.failures
                        .push(format!("{f}: the shim reported an error: {}", n.msg));
                }
            }
        }
    }
}

/// Each pid's trace (its images' `new` loads) must list the objects of its
/// oracle, and every process that loaded something must have a trace.
fn compare_trace_with_oracle(
    built: &Built,
    traces: &[ProcessTrace],
    oracle: &ShimRunOracle,
    o: &mut Outcome,
) {
    let cuda_only = built.spec.mode == "cuda";
    // `cuda` mode records CUDA-family objects: by file name, which the
    // oracle side can tell, and by identity (SONAME, defined symbols,
    // issue 14), which the trace says; scenarios pin those down with
    // `event load … family_by=…` directives.
    let by_identity: BTreeSet<String> = traces
        .iter()
        .flat_map(|t| t.loads())
        .filter(|l| l.family.is_some())
        .map(|l| abs(&l.path, &built.build))
        .collect();
    let launcher = &oracle.launcher;
    let shim_objects = &oracle.shim_objects;
    let b = &built.build;
    let mut seen = BTreeSet::new();
    // One pid may have several trace files, one per image (`<pid>.jsonl`,
    // `<pid>.1.jsonl` after an execve), while its `ld.<pid>` file holds
    // every image: compare the images' objects concatenated, in image order.
    let mut by_pid: BTreeMap<u32, Vec<&ProcessTrace>> = BTreeMap::new();
    for t in traces {
        let Some(pid) = t.pid() else { continue };
        if launcher.contains(&pid) {
            o.failures.push(format!(
                "{}: the launcher itself was traced",
                t.file.display()
            ));
            continue;
        }
        by_pid.entry(pid).or_default().push(t);
    }
    for (pid, mut ts) in by_pid {
        ts.sort_by_key(|t| t.image());
        seen.insert(pid);
        let got: Vec<(u64, String)> = ts
            .iter()
            .flat_map(|t| trace_objects(t, b, shim_objects))
            .collect();
        let files = ts
            .iter()
            .map(|t| t.file.display().to_string())
            .collect::<Vec<_>>()
            .join(" + ");
        let want: Vec<(u64, String)> = match oracle.all.get(&pid) {
            Some(p) => {
                let mut f = filter_oracle(p, b, false);
                if cuda_only {
                    f.objects.retain(|(_, o)| is_cuda(o, &by_identity));
                }
                f.objects
            }
            None => vec![],
        };
        let (w, g) = if built.spec.unordered {
            (sorted(&want), sorted(&got))
        } else {
            (want, got)
        };
        if w != g {
            o.failures.push(format!(
                "trace {files} lists other new objects than the LD_DEBUG oracle of the same run (- oracle, + trace):\n{}",
                diff_lines(&fmt_objects(&w, b), &fmt_objects(&g, b))
            ));
        }
    }
    for f in &oracle.filtered {
        let pid = &f.pid;
        let want = if cuda_only {
            f.objects
                .iter()
                .filter(|(_, p)| is_cuda(p, &by_identity))
                .count()
        } else {
            f.objects.len()
        };
        if !seen.contains(pid) && want > 0 {
            o.failures.push(format!(
                "process {pid} loaded {want} object(s) (LD_DEBUG) but has no trace file:\n{}",
                fmt_objects(&f.objects, b).join("\n")
            ));
        }
    }
}

fn check_expectations(built: &Built, run: &Run, traces: &[ProcessTrace], o: &mut Outcome) {
    let b = &built.build;
    let real_b = std::fs::canonicalize(b).unwrap_or_else(|_| b.clone());
    let loads: Vec<&Load> = traces.iter().flat_map(|t| t.loads()).collect();
    // what "the executable" may be called in reason_owner
    let mut main_names: BTreeSet<String> = BTreeSet::new();
    let prog = built.program();
    main_names.insert(prog.display().to_string());
    if let Ok(r) = std::fs::canonicalize(&prog) {
        main_names.insert(r.display().to_string());
    }
    for t in traces {
        if let Some(m) = t.main_program() {
            main_names.insert(abs(&m.path, &run.cwd));
            if let Some(r) = &m.realpath {
                main_names.insert(r.clone());
            }
        }
    }
    let ev_line = |l: &Load| -> String {
        format!(
            "{{seq {} pid {} name {:?} path {} realpath {:?} reason {} owner {:?} dir {:?} via {} lmid {} new {} family {:?}}}",
            l.seq,
            l.pid,
            l.name,
            show(&l.path, b),
            l.realpath.as_deref().map(|p| show(p, &real_b)),
            l.reason,
            l.reason_owner.as_deref().map(|p| show(p, b)),
            l.search_dir.as_deref().map(|p| show(p, b)),
            l.via,
            l.lmid,
            l.new,
            l.family
        )
    };
    for e in &built.spec.expects {
        let want_new = e.get("new").map(|v| v == "true").unwrap_or(true);
        let path = e.path.as_deref().map(|p| abs(p, b));
        let cands: Vec<&&Load> = loads
            .iter()
            .filter(|l| l.new == want_new)
            .filter(|l| path.as_ref().is_none_or(|p| abs(&l.path, b) == *p))
            .filter(|l| e.get("name").is_none_or(|n| l.name.as_deref() == Some(n)))
            .filter(|l| e.get("lmid").is_none_or(|v| lmid_matches(v, l.lmid)))
            .collect();
        if cands.is_empty() {
            o.failures
                .push(format!("`{}`: no matching load event in the trace", e.line));
            continue;
        }
        for l in cands {
            let bad = expect_mismatches(e, l, b, &real_b, &main_names);
            if !bad.is_empty() {
                o.failures.push(format!(
                    "`{}`: {} in {}",
                    e.line,
                    bad.join(", "),
                    ev_line(l)
                ));
            }
        }
    }
    let fails: Vec<_> = traces
        .iter()
        .flat_map(|t| t.events.iter())
        .filter_map(|e| {
            if let Event::LoadFailed(f) = e {
                Some(f)
            } else {
                None
            }
        })
        .collect();
    for fe in &built.spec.fails {
        let name = fe.path.as_deref().unwrap_or_default();
        let matching: Vec<_> = fails.iter().filter(|f| f.name == name).collect();
        if matching.is_empty() {
            o.failures.push(format!(
                "`{}`: no load_failed event for it (load_failed names: {:?})",
                fe.line,
                fails.iter().map(|f| f.name.as_str()).collect::<Vec<_>>()
            ));
        }
        for f in matching {
            let mut bad = vec![];
            for (k, v) in &fe.keys {
                let ok = match k.as_str() {
                    "via" => f.via == *v,
                    "lmid" => lmid_matches(v, f.lmid),
                    "requester" => match (&f.requester, v.as_str()) {
                        (Some(r), "@main") => main_names.contains(&abs(r, b)),
                        (Some(r), v) => abs(r, b) == abs(v, b),
                        (None, _) => false,
                    },
                    _ => false,
                };
                if !ok {
                    bad.push(format!("{k} is not {v}"));
                }
            }
            if !bad.is_empty() {
                o.failures.push(format!(
                    "`{}`: {} in {{seq {} pid {} via {} lmid {} requester {:?} error {:?}}}",
                    fe.line,
                    bad.join(", "),
                    f.seq,
                    f.pid,
                    f.via,
                    f.lmid,
                    f.requester.as_deref().map(|p| show(p, b)),
                    f.error
                ));
            }
        }
    }
    if built.spec.errors_in_stdout {
        let stdout = String::from_utf8_lossy(&run.stdout);
        for t in traces {
            for e in &t.events {
                let text = match e {
                    Event::DlError(d) => Some(&d.error),
                    Event::LoadFailed(f) => f.error.as_ref(),
                    _ => None,
                };
                if let Some(text) = text {
                    if !stdout.contains(text.as_str()) {
                        o.failures.push(format!(
                            "{}: error text {text:?} is not what the program read from dlerror() (not in its stdout)",
                            t.file.display()
                        ));
                    }
                }
            }
        }
    }
    for p in &built.spec.absent {
        let ap = abs(p, b);
        for l in loads.iter().filter(|l| abs(&l.path, b) == ap) {
            o.failures
                .push(format!("`absent {p}`: but the trace has {}", ev_line(l)));
        }
    }
    let unloads: Vec<String> = traces
        .iter()
        .flat_map(|t| t.events.iter())
        .filter_map(|e| {
            if let Event::Unload(u) = e {
                Some(abs(&u.path, b))
            } else {
                None
            }
        })
        .collect();
    for p in &built.spec.unloads {
        if !unloads.contains(&abs(p, b)) {
            o.failures.push(format!(
                "`unload {p}`: no unload event for it (unloads: {:?})",
                unloads.iter().map(|u| show(u, b)).collect::<Vec<_>>()
            ));
        }
    }
    // And nothing else: objects closed at exit (_dl_fini, every namespace)
    // are not unloads.
    let wanted: Vec<String> = built.spec.unloads.iter().map(|p| abs(p, b)).collect();
    for u in unloads.iter().filter(|u| !wanted.contains(u)) {
        o.failures.push(format!(
            "unload event for {} that scenario.env does not expect (only dlclose unloads)",
            show(u, b)
        ));
    }
    // `call`, `call-count` and `version` directives.
    crate::calls::check(built, traces, o);
}

fn lmid_matches(v: &str, lmid: i64) -> bool {
    match v {
        "new" => lmid != 0,
        n => n.parse::<i64>().is_ok_and(|n| n == lmid),
    }
}

fn expect_mismatches(
    e: &Expect,
    l: &Load,
    b: &Path,
    real_b: &Path,
    main_names: &BTreeSet<String>,
) -> Vec<String> {
    let mut bad = vec![];
    let trim = |s: &str| s.trim_end_matches('/').to_string();
    for (k, v) in &e.keys {
        let ok = match k.as_str() {
            "name" | "new" | "lmid" => true, // selectors
            "reason" => l.reason == *v,
            "via" => l.via == *v,
            "family" => l.family.as_deref() == Some(v.as_str()),
            "owner" => match (&l.reason_owner, v.as_str()) {
                (Some(o), "@main") => main_names.contains(&abs(o, b)),
                (Some(o), v) => abs(o, b) == abs(v, b),
                (None, _) => false,
            },
            "realpath" => l.realpath.as_deref() == Some(abs(v, real_b).as_str()),
            "dir" => l.search_dir.as_deref().map(|d| trim(&abs(d, b))) == Some(trim(&abs(v, b))),
            "entry" => {
                l.search_entry.as_deref().map(|d| trim(&abs(d, b))) == Some(trim(&abs(v, b)))
            }
            "rejected" => {
                let p = abs(v, b);
                l.tried
                    .iter()
                    .any(|t| abs(&t.path, b) == p && t.result == "rejected")
            }
            _ => false,
        };
        if !ok {
            bad.push(format!("{k} is not {v}"));
        }
    }
    bad
}

/// Checks scenario `name` and panics with the report if anything failed
/// (for `#[test]` functions). Prints the report when `CDT_VERBOSE=1`.
pub fn assert_scenario(name: &str) {
    let o = check_scenario(name);
    if !o.passed() {
        panic!("\n{}", o.report());
    }
    if verbose() {
        println!("{}", o.report());
    }
}
