//! Comparing processes across runs and ranks: what a process *is* (its
//! role: program, arguments, rank, parent) and what CUDA stack it loaded
//! (one [`Lib`] per CUDA-family object, with path, real path, version,
//! CUDA build, build-id, why the loader chose it and who asked), so that
//! `diff` can line up two runs and the fleet view ([`super::fleet`]) can
//! group thousands of processes by their stack.
//!
//! Everything here is computed from one trace image at a time (a
//! [`ProcessPrint`] is small and owns its data), so that a reader can drop
//! the image once its print is taken.

use super::files::ImageFiles;
use super::findings::Severity;
use super::libraries::libraries_with;
use super::tree::{Link, ProcessTree};
use super::Diagnosis;
use crate::model::name_version::NameVersion;
use crate::model::{basename, stem, Image, TraceSet, Ver};
use serde::Serialize;
use std::collections::BTreeMap;

/// Variables that give a process's global rank, first set wins: torchrun
/// and torch.distributed (`RANK`), Slurm (`SLURM_PROCID`), Open MPI, MPICH
/// and PMIx, MVAPICH, JAX.
pub const RANK_VARS: &[&str] = &[
    "RANK",
    "SLURM_PROCID",
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "MV2_COMM_WORLD_RANK",
    "JAX_PROCESS_ID",
];

/// Variables that give a process's rank on its host.
pub const LOCAL_RANK_VARS: &[&str] = &["LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"];

/// Environment variables whose difference can explain a different stack,
/// compared by `diff` (the rank variables legitimately differ and are
/// not among them).
pub const EXPLAINING_ENV: &[&str] = &[
    "LD_LIBRARY_PATH",
    "CUDA_VISIBLE_DEVICES",
    "LD_PRELOAD",
    "CUDA_HOME",
    "CUDA_PATH",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
];

/// A process's rank: the variable that gave it and its value.
pub fn rank(img: &Image) -> Option<(&'static str, String)> {
    first_var(img, RANK_VARS)
}

/// A process's rank on its host.
pub fn local_rank(img: &Image) -> Option<(&'static str, String)> {
    first_var(img, LOCAL_RANK_VARS)
}

fn first_var(img: &Image, vars: &[&'static str]) -> Option<(&'static str, String)> {
    vars.iter()
        .find_map(|v| img.header.env.get(*v).map(|x| (*v, x.clone())))
}

/// The role of a process, the same on every host and rank: the program's
/// file name and its arguments, with paths cut to their file names (a
/// script under another home directory is the same script) and the
/// per-rank arguments torch.distributed's launchers add (`--local-rank=N`,
/// `--local_rank N`) left out.
pub fn role(argv: &[String], exe: Option<&str>) -> String {
    let program = argv
        .first()
        .map(String::as_str)
        .or(exe)
        .map(basename)
        .unwrap_or("?");
    let mut words = vec![program.to_string()];
    let mut skip_next = false;
    for a in argv.iter().skip(1) {
        if skip_next {
            skip_next = false;
            continue;
        }
        let flag = a.split('=').next().unwrap_or(a);
        if flag == "--local-rank" || flag == "--local_rank" {
            skip_next = !a.contains('=');
            continue;
        }
        words.push(if a.starts_with('/') {
            basename(a).to_string()
        } else {
            a.clone()
        });
    }
    words.join(" ")
}

/// One CUDA-family object in a process, as runs are compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Lib {
    pub family: String,
    /// What identifies "the same library" across runs: the file name
    /// before `.so` of its SONAME, else of its path (`libcudnn_graph`).
    pub key: String,
    pub path: String,
    pub realpath: Option<String>,
    /// The version number alone (`9.19.0`, `9.x` when only the soname
    /// major is known, the driver's for libcuda).
    pub version: Option<String>,
    /// The CUDA version a cuDNN core library was built for (`13.0`).
    pub cuda_build: Option<String>,
    pub build_id: Option<String>,
    pub size: Option<u64>,
    pub reason: String,
    pub search_dir: Option<String>,
    /// The search-list entry the directory came from (the `LD_LIBRARY_PATH`
    /// entry to name in an explanation).
    pub search_entry: Option<String>,
    pub requester: Option<String>,
    pub stub: bool,
}

impl Lib {
    /// Whether `self` and `other` are the same file contents: the same
    /// build-id when both have one, else the same real path, size and
    /// version.
    pub fn same_bits(&self, other: &Lib) -> bool {
        match (&self.build_id, &other.build_id) {
            (Some(a), Some(b)) => a == b,
            _ => {
                self.realpath.as_ref().unwrap_or(&self.path)
                    == other.realpath.as_ref().unwrap_or(&other.path)
                    && self.size == other.size
                    && versions_agree(self.version.as_deref(), other.version.as_deref())
            }
        }
    }
}

/// Whether two versions can be the same: equal, or one known only by its
/// major (`9.x`, a wheel's `libcudnn_ops.so.9` whose version was not
/// asked) and the other of that major. One process asking a library for
/// its version and another not is no difference of the library.
pub fn versions_agree(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) if a != b => {
            let fits = |major_only: &str, full: &str| {
                major_only
                    .strip_suffix('x')
                    .is_some_and(|m| full.starts_with(m))
            };
            fits(a, b) || fits(b, a)
        }
        _ => true,
    }
}

/// A CUDA-family load that failed and was not loaded later by another
/// request of the same library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FailedLib {
    pub family: Option<String>,
    pub key: String,
    pub name: String,
    pub requester: Option<String>,
    pub error: Option<String>,
}

/// What a process is and what CUDA stack it loaded: everything `diff` and
/// the fleet view need of one trace image, owned, small.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessPrint {
    pub file: String,
    pub host: String,
    pub pid: u32,
    pub ppid: u32,
    pub role: String,
    /// The rank and the variable that gave it.
    pub rank: Option<(&'static str, String)>,
    pub local_rank: Option<(&'static str, String)>,
    /// The parent's role, when the parent was traced (set by the caller
    /// that knows the tree).
    pub parent_role: Option<String>,
    pub libs: Vec<Lib>,
    pub failed: Vec<FailedLib>,
    /// The NVIDIA driver's version (libcuda's), when it was loaded.
    pub driver: Option<String>,
    pub glibc: Option<String>,
    /// The explaining variables that are set ([`EXPLAINING_ENV`]).
    pub env: BTreeMap<String, String>,
    /// Start of the process (its header), monotonic ns: the order of
    /// processes of one role.
    pub t_ns: u64,
}

impl ProcessPrint {
    /// The print of one image; `files`: what the machine found about its
    /// files (versions asked at report time), when the caller has it.
    pub fn of(img: &Image, files: Option<&ImageFiles>) -> ProcessPrint {
        let libs = libs_of(img, files);
        let driver = libs
            .iter()
            .find(|l| l.family == "cuda" && !l.stub)
            .and_then(|l| l.version.clone());
        let env = EXPLAINING_ENV
            .iter()
            .filter_map(|k| img.header.env.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect();
        ProcessPrint {
            file: img.file.display().to_string(),
            host: img.host().to_string(),
            pid: img.header.pid,
            ppid: img.header.ppid,
            role: role(&img.header.argv, img.header.exe.as_deref()),
            rank: rank(img),
            local_rank: local_rank(img),
            parent_role: None,
            failed: failed_of(img, &libs),
            libs,
            driver,
            glibc: img.header.glibc.clone(),
            env,
            t_ns: img.header.t_ns,
        }
    }

    /// Whether the process loaded (or failed to load) anything of the CUDA
    /// family: a process without is not part of any stack.
    pub fn uses_cuda(&self) -> bool {
        !self.libs.is_empty() || !self.failed.is_empty()
    }

    /// The rank's value, when known.
    pub fn rank_value(&self) -> Option<&str> {
        self.rank.as_ref().map(|(_, v)| v.as_str())
    }

    /// The stack's fingerprint: a stable 64-bit hash of each library's
    /// family, key, real path, build-id, version and CUDA build, the
    /// driver, and the failed loads, in a canonical order (load order
    /// varies with threads, so it is left out; so are pids, hosts, times).
    pub fn fingerprint(&self) -> u64 {
        let mut h = Fnv::new();
        let mut rows: Vec<String> = self
            .libs
            .iter()
            .map(|l| {
                format!(
                    "L|{}|{}|{}|{}|{}|{}",
                    l.family,
                    l.key,
                    l.realpath.as_deref().unwrap_or(&l.path),
                    l.build_id.as_deref().unwrap_or(""),
                    l.version.as_deref().unwrap_or(""),
                    l.cuda_build.as_deref().unwrap_or("")
                )
            })
            .chain(self.failed.iter().map(|f| format!("F|{}", f.key)))
            .collect();
        rows.sort();
        rows.dedup();
        for r in &rows {
            h.write(r.as_bytes());
            h.write(b"\n");
        }
        h.finish()
    }
}

/// FNV-1a, 64 bits: a hash that is the same in every build and on every
/// machine (std's `DefaultHasher` promises neither), for group ids that
/// can be quoted from one report to the next.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The fingerprint as a group id: 12 hex digits.
pub fn group_id(fp: u64) -> String {
    format!("{:012x}", fp >> 16)
}

/// The identity key of a library: its SONAME's (else its file name's)
/// part before `.so`.
pub fn lib_key(soname: Option<&str>, path: &str) -> String {
    stem(soname.unwrap_or_else(|| basename(path))).to_string()
}

/// The version as a bare number for comparing (`9.19.0`, `9.x`, the
/// driver's `580.159.04`).
fn version_number(v: &NameVersion) -> String {
    match v {
        NameVersion::MajorOnly(m) => format!("{m}.x"),
        NameVersion::Driver(d) => d.split(", CUDA ").next().unwrap_or(d).to_string(),
        NameVersion::Full(x)
        | NameVersion::Reported(x)
        | NameVersion::Asked(x)
        | NameVersion::Requested(x)
        | NameVersion::Package(x)
        | NameVersion::Install(x) => x.clone(),
    }
}

/// The CUDA-family objects that entered the process (`new` loads).
fn libs_of(img: &Image, files: Option<&ImageFiles>) -> Vec<Lib> {
    libraries_with(img, false, files)
        .into_iter()
        .filter(|v| v.new)
        .filter_map(|v| {
            let family = v.family.clone()?;
            let cuda_build = img
                .versions
                .iter()
                .filter(|q| q.path == v.path || Some(&q.path) == v.realpath.as_ref())
                .find_map(|q| q.cuda_build)
                .filter(|&c| c > 0)
                .map(|c| Ver::from_cuda_int(c as u64).to_string());
            Some(Lib {
                key: lib_key(v.soname.as_deref(), &v.path),
                family,
                version: v.version.as_ref().map(version_number),
                cuda_build,
                build_id: v.build_id,
                size: v.size,
                reason: v.reason,
                search_dir: v.search_dir,
                search_entry: v.search_entry,
                requester: v.requester,
                stub: v.stub,
                realpath: v.realpath,
                path: v.path,
            })
        })
        .collect()
}

/// The CUDA-family loads that failed for good: no object of the same key
/// entered the process (before or after; cuDNN 9 tries
/// `libcudnn_graph.so.9.19.0` before `libcudnn_graph.so.9`).
fn failed_of(img: &Image, libs: &[Lib]) -> Vec<FailedLib> {
    let mut out: Vec<FailedLib> = Vec::new();
    for f in &img.failed {
        if f.ev.family.is_none() {
            continue;
        }
        let key = lib_key(None, &f.ev.name);
        if libs.iter().any(|l| l.key == key) || out.iter().any(|o| o.key == key) {
            continue;
        }
        out.push(FailedLib {
            family: f.ev.family.clone(),
            key,
            name: f.ev.name.clone(),
            requester: f.ev.requester.clone(),
            error: f.errors().first().map(|e| e.to_string()),
        });
    }
    out
}

// ---------------------------------------------------------------------------
// diff: two runs, processes lined up by role

/// A finding as `diff` compares it: by code and title (the title names the
/// library and the versions; the evidence's paths may differ between
/// machines and are left out).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingRef {
    pub code: &'static str,
    pub severity: Severity,
    pub title: String,
}

/// One run of a `diff`: its processes and each one's findings (same
/// order).
pub struct Side {
    pub paths: Vec<String>,
    pub procs: Vec<ProcessPrint>,
    pub findings: Vec<Vec<FindingRef>>,
}

impl Side {
    /// The prints of a trace set (parents' roles from its tree) and its
    /// findings. The machine's own view of the files is not used: the two
    /// runs may come from different machines, and a version found on this
    /// disk for one side only would be a difference of the report, not of
    /// the runs.
    pub fn of(
        set: &TraceSet,
        tree: &ProcessTree,
        diagnosis: &Diagnosis,
        paths: Vec<String>,
    ) -> Side {
        let mut procs: Vec<ProcessPrint> = set
            .images
            .iter()
            .map(|i| ProcessPrint::of(i, None))
            .collect();
        for (i, link) in tree.link.iter().enumerate() {
            if let Link::Child(p) | Link::Exec(p) = *link {
                procs[i].parent_role = Some(procs[p].role.clone());
            }
        }
        let findings = diagnosis
            .images
            .iter()
            .map(|f| {
                f.findings
                    .iter()
                    .map(|f| FindingRef {
                        code: f.code,
                        severity: f.severity,
                        title: f.title.clone(),
                    })
                    .collect()
            })
            .collect();
        Side {
            paths,
            procs,
            findings,
        }
    }
}

/// Who a process is in one run.
#[derive(Debug, Clone, Serialize)]
pub struct Who {
    pub host: String,
    pub pid: u32,
    pub file: String,
}

/// One field of a library that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub field: &'static str,
    pub good: Option<String>,
    pub bad: Option<String>,
}

/// How a library differs between the two runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LibChange {
    /// Loaded in GOOD only.
    OnlyGood,
    /// Loaded in BAD only.
    OnlyBad,
    /// Another file (another version, CUDA build or build-id).
    OtherFile,
    /// The same file contents, found elsewhere or by another route (path,
    /// reason, requester).
    Layout,
}

/// A library of one process that differs.
#[derive(Debug, Clone, Serialize)]
pub struct LibDiff {
    pub key: String,
    pub family: String,
    pub change: LibChange,
    pub matters: bool,
    pub fields: Vec<FieldChange>,
    pub good: Option<Lib>,
    pub bad: Option<Lib>,
    /// The environment differences that explain it, in words.
    pub because: Vec<String>,
}

/// A CUDA-family load that failed in one run only.
#[derive(Debug, Clone, Serialize)]
pub struct FailedDiff {
    /// `good` or `bad`: the run where it failed.
    pub failed_in: &'static str,
    pub lib: FailedLib,
}

/// An environment difference (a variable, the driver, the glibc). For a
/// path list, the entries of one run that the other lacks.
#[derive(Debug, Clone, Serialize)]
pub struct EnvDiff {
    pub name: String,
    pub good: Option<String>,
    pub bad: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub only_good: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub only_bad: Vec<String>,
}

/// A process (or a pair of processes with the same role) that differs.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessDiff {
    pub role: String,
    pub rank: Option<String>,
    pub good: Option<Who>,
    pub bad: Option<Who>,
    pub matters: bool,
    pub libraries: Vec<LibDiff>,
    pub failed: Vec<FailedDiff>,
    pub environment: Vec<EnvDiff>,
    pub findings_only_good: Vec<FindingRef>,
    pub findings_only_bad: Vec<FindingRef>,
}

/// What `diff GOOD BAD` found.
#[derive(Debug, Clone, Serialize)]
pub struct Diff {
    pub good: Vec<String>,
    pub bad: Vec<String>,
    /// Whether something that matters differs (the exit status 1): see
    /// `docs/compare.md`.
    pub matters: bool,
    /// Processes lined up with one of the other run and found the same.
    pub same: usize,
    /// Processes that differ, most important first.
    pub processes: Vec<ProcessDiff>,
    /// Processes of either run without CUDA-family loads and without a
    /// counterpart (a shell, a tool the program ran): counted only.
    pub unmatched_without_cuda: usize,
}

/// Compares two runs.
pub fn diff(good: &Side, bad: &Side) -> Diff {
    let pairs = align(&good.procs, &bad.procs);
    let mut processes = Vec::new();
    let (mut same, mut quiet) = (0, 0);
    for (g, b) in pairs {
        let gp = g.map(|i| {
            (
                &good.procs[i],
                good.findings.get(i).map(Vec::as_slice).unwrap_or(&[]),
            )
        });
        let bp = b.map(|i| {
            (
                &bad.procs[i],
                bad.findings.get(i).map(Vec::as_slice).unwrap_or(&[]),
            )
        });
        let uses = gp.is_some_and(|p| p.0.uses_cuda()) || bp.is_some_and(|p| p.0.uses_cuda());
        if (gp.is_none() || bp.is_none()) && !uses {
            quiet += 1;
            continue;
        }
        let d = process_diff(gp, bp);
        if d.libraries.is_empty()
            && d.failed.is_empty()
            && d.findings_only_good.is_empty()
            && d.findings_only_bad.is_empty()
            && (d.environment.is_empty() || !uses)
            && d.good.is_some()
            && d.bad.is_some()
        {
            same += 1;
            continue;
        }
        processes.push(d);
    }
    processes.sort_by(|a, b| {
        b.matters
            .cmp(&a.matters)
            .then_with(|| rank_order(a.rank.as_deref()).cmp(&rank_order(b.rank.as_deref())))
            .then_with(|| a.role.cmp(&b.role))
    });
    Diff {
        good: good.paths.clone(),
        bad: bad.paths.clone(),
        matters: processes.iter().any(|p| p.matters),
        same,
        processes,
        unmatched_without_cuda: quiet,
    }
}

fn rank_order(r: Option<&str>) -> (u64, String) {
    match r {
        Some(r) => (r.parse().unwrap_or(u64::MAX - 1), r.to_string()),
        None => (u64::MAX, String::new()),
    }
}

/// Lines up the processes of two runs: first by role, rank and parent's
/// role, then by role and rank, then by role, then (for processes that
/// loaded CUDA libraries) by program; within one key in start order.
/// Returns pairs of indexes, an unmatched process paired with None.
pub fn align(good: &[ProcessPrint], bad: &[ProcessPrint]) -> Vec<(Option<usize>, Option<usize>)> {
    type KeyFn = fn(&ProcessPrint) -> Option<String>;
    let keys: [KeyFn; 4] = [
        |p| {
            Some(format!(
                "{}\0{:?}\0{:?}",
                p.role,
                p.rank_value(),
                p.parent_role
            ))
        },
        |p| Some(format!("{}\0{:?}", p.role, p.rank_value())),
        |p| Some(p.role.clone()),
        |p| {
            p.uses_cuda()
                .then(|| p.role.split(' ').next().unwrap_or("").to_string())
        },
    ];
    let order = |v: &[ProcessPrint]| {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by_key(|&i| (v[i].t_ns, i));
        idx
    };
    let (mut left_g, mut left_b) = (order(good), order(bad));
    let mut pairs = Vec::new();
    for key in keys {
        let mut by_key: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for &i in &left_b {
            if let Some(k) = key(&bad[i]) {
                by_key.entry(k).or_default().push(i);
            }
        }
        let mut used_b = Vec::new();
        left_g.retain(|&g| {
            let Some(k) = key(&good[g]) else { return true };
            match by_key.get_mut(&k).filter(|v| !v.is_empty()) {
                Some(v) => {
                    let b = v.remove(0);
                    used_b.push(b);
                    pairs.push((Some(g), Some(b)));
                    false
                }
                None => true,
            }
        });
        left_b.retain(|b| !used_b.contains(b));
    }
    pairs.extend(left_g.into_iter().map(|g| (Some(g), None)));
    pairs.extend(left_b.into_iter().map(|b| (None, Some(b))));
    pairs
}

type SideRef<'a> = (&'a ProcessPrint, &'a [FindingRef]);

fn process_diff(good: Option<SideRef>, bad: Option<SideRef>) -> ProcessDiff {
    let pg = good.map(|g| g.0);
    let pb = bad.map(|b| b.0);
    let any = pg.or(pb).expect("one side at least");
    let empty: &[Lib] = &[];
    let libs_g = pg.map_or(empty, |p| &p.libs);
    let libs_b = pb.map_or(empty, |p| &p.libs);
    let environment = env_diff(pg, pb);
    let mut libraries = lib_diffs(libs_g, libs_b, pg, pb);
    sort_libs(&mut libraries);
    let failed = failed_diffs(pg, pb);
    let fg = good.map_or(&[][..], |g| g.1);
    let fb = bad.map_or(&[][..], |b| b.1);
    let only = |a: &[FindingRef], b: &[FindingRef]| -> Vec<FindingRef> {
        a.iter()
            .filter(|f| !b.iter().any(|o| o.code == f.code && o.title == f.title))
            .cloned()
            .collect()
    };
    let (findings_only_good, findings_only_bad) = (only(fg, fb), only(fb, fg));
    let serious = |v: &[FindingRef]| v.iter().any(|f| f.severity >= Severity::Warning);
    let matters = libraries.iter().any(|l| l.matters)
        || !failed.is_empty()
        || serious(&findings_only_good)
        || serious(&findings_only_bad)
        || ((pg.is_none() || pb.is_none()) && any.uses_cuda());
    let who = |p: &ProcessPrint| Who {
        host: p.host.clone(),
        pid: p.pid,
        file: p.file.clone(),
    };
    ProcessDiff {
        role: any.role.clone(),
        rank: any.rank_value().map(str::to_string),
        good: pg.map(who),
        bad: pb.map(who),
        matters,
        libraries,
        failed,
        environment,
        findings_only_good,
        findings_only_bad,
    }
}

/// Most important first: what matters before layout; within that, by
/// family (cuDNN first), a library present on one side only or whose
/// version differs before one that differs otherwise (the engines graph
/// loaded from the same wrong directory follow graph).
fn sort_libs(libs: &mut [LibDiff]) {
    libs.sort_by_key(|l| {
        let version = l.fields.iter().any(|f| f.field == "version") || l.fields.is_empty();
        (!l.matters, family_order(&l.family), !version, l.key.clone())
    });
}

/// The family's place in the CUDA family list (cuDNN first).
fn family_order(f: &str) -> usize {
    cudnn_trace_format::CUDA_FAMILY
        .iter()
        .position(|(_, fam)| *fam == f)
        .unwrap_or(usize::MAX)
}

fn lib_diffs(
    good: &[Lib],
    bad: &[Lib],
    pg: Option<&ProcessPrint>,
    pb: Option<&ProcessPrint>,
) -> Vec<LibDiff> {
    let mut keys: Vec<(&str, &str)> = good
        .iter()
        .chain(bad)
        .map(|l| (l.family.as_str(), l.key.as_str()))
        .collect();
    keys.sort();
    keys.dedup();
    let mut out = Vec::new();
    for (family, key) in keys {
        let g: Vec<&Lib> = good
            .iter()
            .filter(|l| l.key == key && l.family == family)
            .collect();
        let b: Vec<&Lib> = bad
            .iter()
            .filter(|l| l.key == key && l.family == family)
            .collect();
        // Copies beyond the first of each side are compared in order.
        for i in 0..g.len().max(b.len()) {
            if let Some(d) = lib_diff(family, key, g.get(i).copied(), b.get(i).copied(), pg, pb) {
                out.push(d);
            }
        }
    }
    out
}

/// One field of a [`Lib`], read for comparing.
type LibField = fn(&Lib) -> Option<String>;

fn lib_diff(
    family: &str,
    key: &str,
    g: Option<&Lib>,
    b: Option<&Lib>,
    pg: Option<&ProcessPrint>,
    pb: Option<&ProcessPrint>,
) -> Option<LibDiff> {
    let mut fields = Vec::new();
    let change = match (g, b) {
        (Some(g), Some(b)) => {
            let cmp: [(&'static str, LibField); 8] = [
                ("version", |l| l.version.clone()),
                ("cuda_build", |l| l.cuda_build.clone()),
                ("build_id", |l| l.build_id.clone()),
                ("realpath", |l| l.realpath.clone()),
                ("path", |l| Some(l.path.clone())),
                ("reason", |l| Some(l.reason.clone())),
                ("search_dir", |l| l.search_dir.clone()),
                ("requester", |l| l.requester.clone()),
            ];
            for (field, get) in cmp {
                let (x, y) = (get(g), get(b));
                let agree = match field {
                    "version" => versions_agree(x.as_deref(), y.as_deref()),
                    _ => x == y,
                };
                if !agree {
                    fields.push(FieldChange {
                        field,
                        good: x,
                        bad: y,
                    });
                }
            }
            if fields.is_empty() {
                return None;
            }
            if g.same_bits(b) {
                LibChange::Layout
            } else {
                LibChange::OtherFile
            }
        }
        (Some(_), None) => LibChange::OnlyGood,
        (None, Some(_)) => LibChange::OnlyBad,
        (None, None) => return None,
    };
    let because = explain(g, b, pg, pb);
    Some(LibDiff {
        key: key.to_string(),
        family: family.to_string(),
        change,
        matters: change != LibChange::Layout,
        fields,
        good: g.cloned(),
        bad: b.cloned(),
        because,
    })
}

/// The environment differences behind a library difference: an
/// `LD_LIBRARY_PATH` entry the library was found through that the other
/// run does not have, a preload, another virtual environment or conda
/// prefix holding it, another driver.
fn explain(
    g: Option<&Lib>,
    b: Option<&Lib>,
    pg: Option<&ProcessPrint>,
    pb: Option<&ProcessPrint>,
) -> Vec<String> {
    let mut out = Vec::new();
    for (lib, this, other, name, other_name) in
        [(g, pg, pb, "GOOD", "BAD"), (b, pb, pg, "BAD", "GOOD")]
    {
        let (Some(lib), Some(this)) = (lib, this) else {
            continue;
        };
        if lib.reason == "LD_LIBRARY_PATH" {
            let entry = lib.search_entry.as_ref().or(lib.search_dir.as_ref());
            let theirs = other
                .map(|o| path_list(o.env.get("LD_LIBRARY_PATH")))
                .unwrap_or_default();
            if let Some(e) = entry.filter(|e| !theirs.contains(e)) {
                out.push(format!(
                    "{name} found it through LD_LIBRARY_PATH entry {e}, which {other_name}'s LD_LIBRARY_PATH does not have"
                ));
            }
        }
        for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
            let mine = this.env.get(var);
            let theirs = other.and_then(|o| o.env.get(var));
            if let Some(m) = mine.filter(|m| lib.path.starts_with(m.as_str()) && Some(*m) != theirs)
            {
                out.push(format!("{name} took it from its {var} {m}"));
            }
        }
    }
    if g.is_some_and(|l| l.family == "cuda") || b.is_some_and(|l| l.family == "cuda") {
        let (dg, db) = (
            pg.and_then(|p| p.driver.clone()),
            pb.and_then(|p| p.driver.clone()),
        );
        if dg != db {
            out.push(format!(
                "the NVIDIA driver differs: {} in GOOD, {} in BAD",
                dg.as_deref().unwrap_or("none"),
                db.as_deref().unwrap_or("none")
            ));
        }
    }
    out
}

fn path_list(v: Option<&String>) -> Vec<String> {
    v.map(|s| {
        s.split(':')
            .filter(|d| !d.is_empty())
            .map(str::to_string)
            .collect()
    })
    .unwrap_or_default()
}

/// The libraries and failed loads of `other` that differ from `reference`
/// (`good` is the reference's side): what makes an odd group odd.
pub fn differences(
    reference: &ProcessPrint,
    other: &ProcessPrint,
) -> (Vec<LibDiff>, Vec<FailedDiff>) {
    let mut libs = lib_diffs(&reference.libs, &other.libs, Some(reference), Some(other));
    sort_libs(&mut libs);
    (libs, failed_diffs(Some(reference), Some(other)))
}

fn failed_diffs(pg: Option<&ProcessPrint>, pb: Option<&ProcessPrint>) -> Vec<FailedDiff> {
    let empty: &[FailedLib] = &[];
    let fg = pg.map_or(empty, |p| &p.failed);
    let fb = pb.map_or(empty, |p| &p.failed);
    let mut out = Vec::new();
    for (mine, theirs, failed_in) in [(fg, fb, "good"), (fb, fg, "bad")] {
        for f in mine {
            if !theirs.iter().any(|o| o.key == f.key) {
                out.push(FailedDiff {
                    failed_in,
                    lib: f.clone(),
                });
            }
        }
    }
    out
}

/// The explaining variables, the driver and the glibc, where they differ.
fn env_diff(pg: Option<&ProcessPrint>, pb: Option<&ProcessPrint>) -> Vec<EnvDiff> {
    let (Some(g), Some(b)) = (pg, pb) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in EXPLAINING_ENV {
        let (x, y) = (g.env.get(*name), b.env.get(*name));
        if x == y {
            continue;
        }
        let (mut only_good, mut only_bad) = (Vec::new(), Vec::new());
        if matches!(*name, "LD_LIBRARY_PATH" | "LD_PRELOAD") {
            let (lx, ly) = (path_list(x), path_list(y));
            only_good = lx.iter().filter(|e| !ly.contains(e)).cloned().collect();
            only_bad = ly.iter().filter(|e| !lx.contains(e)).cloned().collect();
        }
        out.push(EnvDiff {
            name: name.to_string(),
            good: x.cloned(),
            bad: y.cloned(),
            only_good,
            only_bad,
        });
    }
    for (name, x, y) in [
        ("driver", &g.driver, &b.driver),
        ("glibc", &g.glibc, &b.glibc),
    ] {
        if x != y {
            out.push(EnvDiff {
                name: name.to_string(),
                good: x.clone(),
                bad: y.clone(),
                only_good: Vec::new(),
                only_bad: Vec::new(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    #[test]
    fn roles_drop_directories_and_per_rank_arguments() {
        assert_eq!(
            role(&argv("/usr/bin/python3 /home/a/train.py --lr 1"), None),
            "python3 train.py --lr 1"
        );
        assert_eq!(
            role(&argv("python3 -u train.py --local-rank=3 --lr 1"), None),
            "python3 -u train.py --lr 1"
        );
        assert_eq!(
            role(&argv("python3 train.py --local_rank 3 --lr 1"), None),
            "python3 train.py --lr 1"
        );
        assert_eq!(role(&[], Some("/opt/bin/prog")), "prog");
    }

    fn print(
        role: &str,
        rank: Option<&str>,
        t_ns: u64,
        libs: &[(&str, &str, &str)],
    ) -> ProcessPrint {
        ProcessPrint {
            file: format!("{role}-{t_ns}.jsonl"),
            host: "h".into(),
            pid: t_ns as u32,
            ppid: 1,
            role: role.into(),
            rank: rank.map(|r| ("RANK", r.to_string())),
            local_rank: None,
            parent_role: None,
            libs: libs
                .iter()
                .map(|(key, version, build_id)| Lib {
                    family: "cudnn".into(),
                    key: key.to_string(),
                    path: format!("/l/{key}.so.9"),
                    realpath: None,
                    version: Some(version.to_string()),
                    cuda_build: None,
                    build_id: Some(build_id.to_string()),
                    size: Some(1),
                    reason: "RUNPATH".into(),
                    search_dir: Some("/l".into()),
                    search_entry: None,
                    requester: None,
                    stub: false,
                })
                .collect(),
            failed: Vec::new(),
            driver: None,
            glibc: Some("2.36".into()),
            env: BTreeMap::new(),
            t_ns,
        }
    }

    fn side(procs: Vec<ProcessPrint>) -> Side {
        let n = procs.len();
        Side {
            paths: vec!["x".into()],
            procs,
            findings: vec![Vec::new(); n],
        }
    }

    #[test]
    fn versions_known_by_major_agree_with_their_full_version() {
        assert!(versions_agree(Some("9.x"), Some("9.19.0")));
        assert!(versions_agree(Some("9.19.0"), Some("9.x")));
        assert!(!versions_agree(Some("8.x"), Some("9.19.0")));
        assert!(!versions_agree(Some("9.14.0"), Some("9.19.0")));
        assert!(versions_agree(None, Some("9.19.0")));
    }

    #[test]
    fn processes_line_up_by_rank_not_by_start_order() {
        let lib = [("libcudnn_graph", "9.19.0", "aa")];
        let odd = [("libcudnn_graph", "9.14.0", "bb")];
        // GOOD started rank 1 first; BAD rank 0 first, and its rank 1 is odd.
        let good = side(vec![
            print("python train.py", Some("1"), 1, &lib),
            print("python train.py", Some("0"), 2, &lib),
        ]);
        let bad = side(vec![
            print("python train.py", Some("0"), 1, &lib),
            print("python train.py", Some("1"), 2, &odd),
        ]);
        let d = diff(&good, &bad);
        assert!(d.matters);
        assert_eq!(d.same, 1);
        assert_eq!(d.processes.len(), 1);
        let p = &d.processes[0];
        assert_eq!(p.rank.as_deref(), Some("1"));
        assert_eq!(p.libraries[0].change, LibChange::OtherFile);
        assert_eq!(p.libraries[0].fields[0].field, "version");
    }

    #[test]
    fn the_same_bits_elsewhere_is_layout_and_does_not_matter() {
        let good = side(vec![print(
            "prog",
            None,
            1,
            &[("libcudnn", "9.19.0", "aa")],
        )]);
        let mut moved = print("prog", None, 1, &[("libcudnn", "9.x", "aa")]);
        moved.libs[0].path = "/venv2/libcudnn.so.9".into();
        moved.libs[0].reason = "LD_LIBRARY_PATH".into();
        let d = diff(&good, &side(vec![moved]));
        assert!(!d.matters, "{d:?}");
        assert_eq!(d.processes[0].libraries[0].change, LibChange::Layout);
        // A library in one run only matters; so does a process with CUDA
        // libraries that has no counterpart.
        let d = diff(&good, &side(vec![print("prog", None, 1, &[])]));
        assert!(d.matters);
        assert_eq!(d.processes[0].libraries[0].change, LibChange::OnlyGood);
        let d = diff(&good, &side(vec![print("other", None, 1, &[])]));
        assert!(d.matters);
        assert_eq!(d.unmatched_without_cuda, 1);
        assert!(d.processes[0].bad.is_none());
    }

    #[test]
    fn keys_and_group_ids() {
        assert_eq!(
            lib_key(Some("libcudnn_graph.so.9"), "/x/y.so"),
            "libcudnn_graph"
        );
        assert_eq!(
            lib_key(None, "/x/libcudnn_graph.so.9.14.0"),
            "libcudnn_graph"
        );
        assert_eq!(group_id(u64::MAX).len(), 12);
        // The hash is FNV-1a: fixed values, whatever the build.
        let mut h = Fnv::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
