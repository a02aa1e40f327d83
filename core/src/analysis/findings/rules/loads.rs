//! Loading: CDT006 (a CUDA-family library failed to load: every place
//! tried, and the copies that exist on the machine) and CDT008 (found
//! through LD_LIBRARY_PATH while the requester's RPATH/RUNPATH held another
//! copy: glibc searches LD_LIBRARY_PATH before the caller's RUNPATH,
//! compat-facts §4.5 [R34]).

use super::copies::symbol_version_error;
use super::{and_list, finding, loaded};
use crate::analysis::files;
use crate::analysis::findings::facts::{basename, dirname, soname_major, Facts, Lib};
use crate::analysis::findings::{Context, Evidence, Finding, Remedy, Severity, Ver};
use crate::machine::{Copy, Fit};
use crate::model::stem;
use crate::model::trace::Failed;
use cudnn_trace_format::read::Tried;
use std::collections::BTreeMap;

/// Most `tried` candidates listed per failure.
const MAX_TRIED: usize = 64;

/// Evidence for a copy found on the machine.
pub(super) fn copy_evidence(c: &Copy) -> Evidence {
    let mut d = format!("found via {}", c.found_via);
    if c.realpath != c.path {
        d.push_str(&format!("; = {}", c.realpath));
    }
    if let Some(p) = &c.package {
        d.push_str(&format!("; pip package {p}"));
    }
    Evidence::new("on disk")
        .path(c.path.clone())
        .version_opt(c.version.clone())
        .detail(d)
}

/// Where to get a missing library (compat-facts §5.1, §6).
fn install_hint(family: Option<&str>, name: &str) -> String {
    let m = soname_major(name);
    let mj = m.map(|m| m.to_string()).unwrap_or_else(|| "N".into());
    match family {
        Some("cudnn") => format!(
            "install cuDNN {} of the CUDA major the program uses (pip: nvidia-cudnn-cu12 or nvidia-cudnn-cu13; Debian: libcudnn{}-cuda-12 / -13)",
            m.map(|m| m.to_string()).unwrap_or_default(),
            m.unwrap_or(9)
        ),
        Some("cudart") => match m {
            Some(13) => "install the CUDA 13 runtime (pip: nvidia-cuda-runtime, into site-packages/nvidia/cu13/lib; or the toolkit's cuda-cudart-13-x)".into(),
            Some(m) => format!("install the CUDA {m} runtime (pip: nvidia-cuda-runtime-cu{m}; or the toolkit's cuda-cudart-{m}-x)"),
            None => "install the CUDA runtime of the major the program was built for".into(),
        },
        Some("cuda") => "libcuda.so.1 comes with the NVIDIA driver, not with the CUDA toolkit: install the driver (in a container: run it with GPU support)".into(),
        Some("cublas" | "cublasLt") => format!(
            "install cuBLAS of CUDA {mj} (pip: nvidia-cublas-cu{mj}, or nvidia-cublas for CUDA 13)"
        ),
        Some("nvrtc") => format!("install NVRTC of CUDA {mj} (the toolkit's cuda-nvrtc package, or its pip wheel)"),
        _ => format!("install the package that provides {name}"),
    }
}

/// Whether the same requester got the same library under another name
/// (cuDNN 9's dispatcher tries `NAME.so.9.MIN.PATCH`, `NAME.so.9.MIN`,
/// `NAME.so.9`, `NAME.so` in turn, §3.3: those misses are its search
/// order). At any time, not only after: the dispatcher repeats the whole
/// sequence on later calls, and the shim records a request served by an
/// already-loaded object once, so later rounds have no load event of their
/// own (seen on the H200: 10 rounds for one graph library).
fn resolved(f: &Facts<'_>, fl: &Failed) -> bool {
    let st = stem(&fl.ev.name);
    let major = soname_major(&fl.ev.name);
    f.img.loads.iter().any(|l| {
        let name = l.name.as_deref().unwrap_or(&l.path);
        l.name.as_deref() != Some(fl.ev.name.as_str())
            && l.lmid == fl.ev.lmid
            && (stem(name) == st || stem(&l.path) == st)
            && (major.is_none()
                || soname_major(&l.path) == major
                || soname_major(name) == major
                || l.realpath.as_deref().and_then(soname_major) == major)
            && (fl.ev.requester.is_none() || l.requester == fl.ev.requester)
    })
}

/// CDT006: a CUDA-family library that failed to load and was not loaded
/// later by another name: every place the loader tried, the error, and the
/// copies of it on the machine.
pub fn failed_loads(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    failure_groups(f)
        .into_iter()
        .map(|((_, requester), fails)| Failure::new(requester, fails).finding(f, ctx))
        .collect()
}

/// The CUDA-family failures worth a finding, grouped: the name variants of
/// one library asked by one requester (cuDNN 9's NAME.so.9.MIN.PATCH,
/// NAME.so.9.MIN, …) are one failure.
fn failure_groups<'a>(f: &Facts<'a>) -> BTreeMap<(String, Option<String>), Vec<&'a Failed>> {
    let mut groups: BTreeMap<(String, Option<String>), Vec<&Failed>> = BTreeMap::new();
    for (i, fl) in f.failed.iter().enumerate() {
        let fam = fl
            .ev
            .family
            .as_deref()
            .or_else(|| cudnn_trace_format::cuda_family(fl.ev.name.as_bytes()));
        if fam.is_none() || symbol_version_error(fl).is_some() || resolved(f, fl) {
            continue;
        }
        // A request that failed for a missing dependency: the dependency's
        // own failure (just before it, same thread) is the one to report.
        if fl.ev.dependency_failed && i > 0 && f.failed[i - 1].ev.tid == fl.ev.tid {
            continue;
        }
        groups
            .entry((stem(&fl.ev.name).to_string(), fl.ev.requester.clone()))
            .or_default()
            .push(fl);
    }
    groups
}

/// One library that could not be loaded, by one requester: every failed
/// request for it (its name variants, its repeats).
struct Failure<'a> {
    requester: Option<String>,
    fails: Vec<&'a Failed>,
    /// The first name asked for.
    name: String,
    /// The other names asked for, in order.
    variants: Vec<&'a str>,
    /// Every candidate the loader tried, without repeats.
    tried: Vec<&'a Tried>,
}

impl<'a> Failure<'a> {
    fn new(requester: Option<String>, fails: Vec<&'a Failed>) -> Self {
        let name = fails[0].ev.name.clone();
        let mut variants: Vec<&str> = Vec::new();
        for x in &fails {
            if x.ev.name != name && !variants.contains(&x.ev.name.as_str()) {
                variants.push(&x.ev.name);
            }
        }
        let mut tried: Vec<&Tried> = Vec::new();
        for x in &fails {
            for t in &x.ev.tried {
                if !tried
                    .iter()
                    .any(|y| y.path == t.path && y.reason == t.reason)
                {
                    tried.push(t);
                }
            }
        }
        Failure {
            requester,
            fails,
            name,
            variants,
            tried,
        }
    }

    fn first(&self) -> &'a Failed {
        self.fails[0]
    }

    /// ` (N times)` when the first name failed more than once.
    fn times(&self) -> String {
        let repeats = self.fails.iter().filter(|x| x.ev.name == self.name).count();
        if repeats > 1 {
            format!(" ({repeats} times)")
        } else {
            String::new()
        }
    }

    fn family(&self) -> Option<String> {
        self.first()
            .ev
            .family
            .clone()
            .or_else(|| cudnn_trace_format::cuda_family(self.name.as_bytes()).map(str::to_string))
    }

    fn finding(&self, f: &Facts<'_>, ctx: &Context<'_>) -> Finding {
        let copies = if super::local(f, ctx) {
            files::copies_with_versions(ctx.machine, f.img, &self.name)
        } else {
            Vec::new()
        };
        let mut ev = self.evidence();
        ev.extend(copies.iter().map(|c| {
            let mut e = copy_evidence(c);
            if c.is_stub() {
                let d = e.detail.take().unwrap_or_default();
                e = e.detail(format!("{d}; a stub, for linking only: not a copy to load"));
            } else if let Fit::OtherMajor(m) = c.fit(&self.name) {
                let d = e.detail.take().unwrap_or_default();
                e = e.detail(format!(
                    "{d}; another major ({m}): it does not fit {}",
                    basename(&self.name)
                ));
            }
            e
        }));
        let looks = self.where_requester_looks(f, ctx);
        let copies: Vec<Copy> = copies.into_iter().filter(|c| !c.is_stub()).collect();
        let remedy = match self.vanished_pin(f, ctx) {
            Some(dir) => {
                ev.push(
                    Evidence::new("pin")
                        .path(dir.to_string())
                        .detail("the pin directory no longer exists on this machine"),
                );
                format!(
                    "the pin directory {dir} no longer exists: it was removed or unmounted while \
                     the program ran, and the strict pin sent {} into it; restore it, or pin \
                     another cuDNN directory (`cudnn-trace env --pin DIR` checks one first)",
                    basename(&self.name)
                )
            }
            None => self.remedy(&copies, looks.as_deref()),
        };
        finding(
            ctx,
            "CDT006",
            self.severity(),
            self.title(),
            ev,
            remedy,
            &["R34", "E6", "E7", "R17"],
        )
    }

    /// The pin directory, when the pin sent this request into it and it is
    /// gone now (the trace was taken here): then no copy elsewhere is the
    /// answer, the directory is.
    fn vanished_pin<'f>(&self, f: &Facts<'f>, ctx: &Context<'_>) -> Option<&'f str> {
        let dir = f.img.header.pin.as_ref()?.dir.as_str();
        let inside = |p: &str| p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'));
        let pinned = self.tried.iter().any(|t| inside(&t.path))
            || self.fails.iter().any(|x| inside(&x.ev.name));
        (pinned && super::local(f, ctx) && ctx.machine.canonical(dir).is_none()).then_some(dir)
    }

    /// Whether ld.so gave up during this search at start-up (and ended the
    /// process before `main`, exit status 127).
    fn fatal(&self) -> bool {
        self.fails.iter().any(|x| x.ev.fatal)
    }

    /// The requester's RPATH/RUNPATH entries as written in its file
    /// (`$ORIGIN/../rt`): where it looks for what it needs.
    fn where_requester_looks(&self, f: &Facts<'_>, ctx: &Context<'_>) -> Option<String> {
        let req = self.requester.as_deref().filter(|r| r.starts_with('/'))?;
        if !super::local(f, ctx) {
            return None;
        }
        let real = f
            .img
            .loads
            .iter()
            .find(|l| l.path == req)
            .and_then(|l| l.realpath.as_deref());
        let (kind, dirs) = ctx.machine.search_dirs(req, real)?;
        let mut entries: Vec<&str> = Vec::new();
        for (_, e) in &dirs {
            if !entries.contains(&e.as_str()) {
                entries.push(e);
            }
        }
        let s = if entries.len() == 1 {
            "entry"
        } else {
            "entries"
        };
        Some(format!("its {kind} {s} {}", entries.join(", ")))
    }

    /// An error for the libraries a process cannot do without, and for
    /// anything cuDNN itself asked for; a warning otherwise.
    fn severity(&self) -> Severity {
        let by_cudnn = self
            .requester
            .as_deref()
            .is_some_and(|r| cudnn_trace_format::cuda_family(r.as_bytes()) == Some("cudnn"));
        if matches!(self.family().as_deref(), Some("cudnn" | "cudart" | "cuda")) || by_cudnn {
            Severity::Error
        } else {
            Severity::Warning
        }
    }

    fn title(&self) -> String {
        let who = self
            .requester
            .as_deref()
            .map(|r| {
                if r.is_empty() {
                    "the main program".to_string()
                } else {
                    basename(r).to_string()
                }
            })
            .unwrap_or_else(|| "the program".into());
        let also = if self.variants.is_empty() {
            String::new()
        } else {
            format!("; also as {}", self.variants.join(", "))
        };
        if self.fatal() {
            return format!(
                "{} was not found at start-up (needed by {who}{also}): the loader ended the program before main, exit status 127",
                self.name
            );
        }
        format!(
            "{} could not be loaded ({} by {who}{also}){}",
            self.name,
            self.first().ev.via,
            self.times()
        )
    }

    /// The failure with the loader's texts, and every place tried.
    fn evidence(&self) -> Vec<Evidence> {
        let fl = self.first();
        let times = self.times();
        let mut e = Evidence::new("failed")
            .path(self.name.clone())
            .requester_opt(self.requester.as_deref())
            .seq(fl.ev.seq)
            .detail(format!("{}{times}", fl.ev.via));
        // The loader's texts for every name variant tried (cuDNN's
        // `libnvrtc.so.12` then `libnvrtc.so`): the last is often the one
        // the user saw.
        let mut errors: Vec<&str> = Vec::new();
        for x in &self.fails {
            for t in x.errors() {
                if !errors.contains(&t) {
                    errors.push(t);
                }
            }
        }
        if !errors.is_empty() {
            e = e.detail(format!("{}{times}: {}", fl.ev.via, errors.join(" / ")));
        } else if self.fatal() {
            e = e.detail(format!(
                "{} at start-up: ld.so found none of the candidates and exited with status 127 before main (\"error while loading shared libraries: {}: cannot open shared object file\")",
                fl.ev.via,
                basename(&self.name)
            ));
        }
        let mut ev = vec![e];
        for t in self.tried.iter().take(MAX_TRIED) {
            ev.push(
                Evidence::new("tried")
                    .path(t.path.clone())
                    .reason(t.reason.clone())
                    .detail(t.result.clone()),
            );
        }
        if self.tried.len() > MAX_TRIED {
            ev.push(
                Evidence::new("tried").detail(format!("… {} more", self.tried.len() - MAX_TRIED)),
            );
        }
        if self.tried.is_empty() {
            ev.push(Evidence::new("tried").detail(
                "no candidate path was recorded (the name was not found in any search directory)",
            ));
        }
        ev
    }

    /// What to do, given the copies of the library on the machine: replace
    /// a rejected file, make a copy findable, or install one. `looks`: where
    /// the requester looks (its RUNPATH entries as written).
    fn remedy(&self, copies: &[Copy], looks: Option<&str>) -> String {
        let rejected: Vec<String> = self
            .tried
            .iter()
            .filter(|t| t.result == "rejected")
            .map(|t| t.path.clone())
            .collect();
        if !rejected.is_empty() {
            return format!(
                "the loader found {} but rejected it (wrong ELF class or machine, or not a shared object): replace it with a {}-bit library for this machine",
                and_list(&rejected),
                if cfg!(target_pointer_width = "64") { 64 } else { 32 }
            );
        }
        // Any of the names asked for will do (cuDNN 9 tries four).
        let asked: Vec<&str> = std::iter::once(self.name.as_str())
            .chain(self.variants.iter().copied())
            .map(basename)
            .collect();
        let exact: Vec<&Copy> = copies
            .iter()
            .filter(|c| asked.contains(&basename(&c.path)))
            .collect();
        let same_major = copies
            .iter()
            .find(|c| !matches!(c.fit(&self.name), Fit::OtherMajor(_)));
        if let Some(c) = exact.first().copied().or(same_major) {
            let mut r = self.findable(c, looks);
            if exact.is_empty() {
                r.push_str(&format!(
                    " (no file is named exactly {}: a link of that name may be missing)",
                    match asked.split_last() {
                        Some((last, rest)) if !rest.is_empty() =>
                            format!("{} or {last}", rest.join(", ")),
                        _ => basename(&self.name).to_string(),
                    }
                ));
            }
            return r;
        }
        let hint = install_hint(self.family().as_deref(), &self.name);
        if copies.is_empty() {
            return format!("no copy was found on this machine: {hint}");
        }
        // Every copy is of another major here: none fits (another ABI).
        let others: Vec<String> = copies
            .iter()
            .map(|c| {
                format!(
                    "{} ({})",
                    c.path,
                    c.version.as_deref().unwrap_or("version unknown")
                )
            })
            .collect();
        format!(
            "only another major is on this machine ({}): {hint}",
            others.join(", ")
        )
    }

    /// A copy `c` of the library exists: it is the wrong file in a
    /// directory that was searched, or it must be made findable.
    fn findable(&self, c: &Copy, looks: Option<&str>) -> String {
        let dir = dirname(&c.path);
        if self.tried.iter().any(|t| dirname(&t.path) == dir) {
            return format!("{} exists in {dir}, which was searched: it is the wrong file (a dangling link, or another name)", c.path);
        }
        let who = self
            .requester
            .as_deref()
            .map(basename)
            .filter(|s| !s.is_empty());
        format!(
            "a copy exists at {}{}: make it findable for {}, e.g. LD_LIBRARY_PATH={dir}:$LD_LIBRARY_PATH, or install the library where {} looks{}",
            c.path,
            c.version.as_deref().map(|v| format!(" ({v})")).unwrap_or_default(),
            who.unwrap_or("the program"),
            who.unwrap_or("it"),
            looks.map(|l| format!(" ({l})")).unwrap_or_default()
        )
    }
}

/// CDT008: a CUDA-family library found through LD_LIBRARY_PATH while the
/// RPATH/RUNPATH of the object that asked for it holds another copy: the
/// "conflicting cuDNN in LD_LIBRARY_PATH" (PyTorch's words, §4.2). The
/// requester's dynamic section is read from disk.
pub fn shadowed_runpath(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    if !super::local(f, ctx) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for lib in f.libs.iter().filter(|l| l.load.reason == "LD_LIBRARY_PATH") {
        let Some(req) = lib.load.requester.as_deref().filter(|r| r.starts_with('/')) else {
            continue;
        };
        let name = lib.load.name.as_deref().unwrap_or("");
        if name.is_empty() || name.contains('/') {
            continue;
        }
        let req_real = f
            .img
            .loads
            .iter()
            .find(|l| l.path == req)
            .and_then(|l| l.realpath.as_deref());
        let Some((kind, dirs)) = ctx.machine.search_dirs(req, req_real) else {
            continue;
        };
        let loaded_id = match (lib.load.dev, lib.load.ino) {
            (Some(d), Some(i)) => Some((d, i)),
            _ => None,
        };
        let other = dirs.iter().find_map(|(d, entry)| {
            let cand = format!("{d}/{name}");
            if !ctx.machine.exists(&cand) {
                return None;
            }
            let same_id = loaded_id.is_some() && ctx.machine.identity(&cand) == loaded_id;
            let same_real = ctx.machine.canonical(&cand).as_deref() == Some(lib.real());
            (!same_id && !same_real).then(|| (cand, entry.clone()))
        });
        let Some((cand, entry)) = other else { continue };
        let cand_real = ctx.machine.canonical(&cand).unwrap_or_else(|| cand.clone());
        // The version of the other copy: its file name, else its pip package
        // (`*.dist-info`, compat-facts §5.2).
        let package = ctx.machine.package_of(dirname(&cand));
        // Else what the file says when asked (in a probe process).
        let asked = || {
            files::ask_file(ctx.machine, &cand)
                .and_then(|f| Ver::parse(f.version.as_deref()?))
                .filter(|v| v.0.len() >= 2)
        };
        let cand_ver = match crate::model::name_version::of_library(&cand, Some(&cand_real)) {
            Some(crate::model::name_version::NameVersion::Full(v)) => Ver::parse(&v),
            _ => asked().or_else(|| {
                package
                    .as_deref()
                    .and_then(|p| p.rsplit_once('-'))
                    .and_then(|(_, v)| Ver::parse(v))
            }),
        };
        let cand_version = match (&cand_ver, &package) {
            (Some(v), Some(p)) => Some(format!("{v}, pip {}", p.split('-').next().unwrap_or(p))),
            (Some(v), None) => Some(v.to_string()),
            (None, _) => {
                crate::model::name_version::of_library(&cand, Some(&cand_real)).map(|v| v.text())
            }
        };
        let severity = shadow_severity(lib, cand_ver.as_ref());
        // The LD_LIBRARY_PATH entry itself (a hardware-capability
        // subdirectory searched below it is not one), as written.
        let search = super::entry_of(f, ctx, lib).shown().to_string();
        let title = format!(
            "{name}{} came from LD_LIBRARY_PATH although the {kind} of {} holds {}",
            lib.version_text()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            basename(req),
            cand_ver
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "another copy".into())
        );
        let mut ev = vec![loaded(lib)];
        ev.push(
            Evidence::new("on disk")
                .path(cand.clone())
                .version_opt(cand_version)
                .detail(format!("{kind} entry {entry} of {req}")),
        );
        if let Some(v) = f.img.header.env.get("LD_LIBRARY_PATH") {
            ev.push(Evidence::new("environment").detail(format!("LD_LIBRARY_PATH={v}")));
        }
        ev.push(Evidence::new("fact").detail(format!(
            "glibc searches LD_LIBRARY_PATH before a caller's RUNPATH: without {search} on it, {} finds {cand} through its {kind}",
            basename(req)
        )));
        let mut remedy = Remedy::new(format!("remove {search} from LD_LIBRARY_PATH")).or(format!(
            "if other libraries need {search}: put {} before it",
            dirname(&cand)
        ));
        if lib.family == "cudnn" {
            remedy = remedy.or(format!(
                "pin cuDNN to that directory: cudnn-trace --pin {}",
                dirname(&cand)
            ));
        }
        out.push(finding(
            ctx,
            "CDT008",
            severity,
            title,
            ev,
            remedy,
            &["R34", "R24", "E-probe"],
        ));
    }
    out
}

/// Same version on both sides: harmless (info). Otherwise an error for the
/// libraries whose copies must not mix (cuDNN, cudart, libcuda), a warning
/// for the others.
fn shadow_severity(lib: &Lib<'_>, other: Option<&Ver>) -> Severity {
    if let (Some((mine, _)), Some(other)) = (lib.version(), other) {
        if mine.prefix(3) == other.prefix(3) {
            return Severity::Info;
        }
    }
    if matches!(lib.family.as_str(), "cudnn" | "cudart" | "cuda") {
        Severity::Error
    } else {
        Severity::Warning
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use crate::model::elf::DynInfo;

    /// cuDNN 9's dispatcher failing to find graph: "Unable to load any of
    /// {libcudnn_graph.so.9.1.0, libcudnn_graph.so.9.1, libcudnn_graph.so.9,
    /// libcudnn_graph.so}" (E6); a copy exists elsewhere on the machine.
    #[test]
    fn unable_to_load_any_of_graph() {
        let d = "/opt/cudnn/lib";
        let disp = format!("{d}/libcudnn.so.9.1.0");
        let mut t =
            Trace::new()
                .env("LD_LIBRARY_PATH", d)
                .load(&disp, "LD_LIBRARY_PATH", "/app/bin/infer");
        for n in [
            "libcudnn_graph.so.9.1.0",
            "libcudnn_graph.so.9.1",
            "libcudnn_graph.so.9",
            "libcudnn_graph.so",
        ] {
            t = t.failed(
                n,
                &disp,
                &[
                    (&format!("{d}/{n}"), "LD_LIBRARY_PATH", "missing"),
                    (
                        &format!("/usr/lib/x86_64-linux-gnu/{n}"),
                        "default-dir",
                        "missing",
                    ),
                ],
                Some(&format!(
                    "{n}: cannot open shared object file: No such file or directory"
                )),
            );
        }
        let t = t
            .stderr("Unable to load any of {libcudnn_graph.so.9.1.0, libcudnn_graph.so.9.1, libcudnn_graph.so.9, libcudnn_graph.so}\nInvalid handle. Cannot load symbol cudnnGetVersion\n")
            .machine(|m| {
                m.file("/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9.1.0");
                m.dir("/usr/local/cuda-12.4");
            });
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.title,
            "libcudnn_graph.so.9.1.0 could not be loaded (dlopen by libcudnn.so.9.1.0; also as libcudnn_graph.so.9.1, libcudnn_graph.so.9, libcudnn_graph.so)"
        );
        let tried: Vec<&str> = f
            .evidence
            .iter()
            .filter(|e| e.what == "tried")
            .map(|e| e.path.as_deref().unwrap())
            .collect();
        assert_eq!(tried.len(), 8);
        assert_eq!(
            &tried[..2],
            &[
                "/opt/cudnn/lib/libcudnn_graph.so.9.1.0",
                "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.1.0"
            ]
        );
        assert!(f.evidence.iter().any(|e| e.what == "on disk"
            && e.path.as_deref() == Some("/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9.1.0")));
        assert!(
            f.fix.contains(
                "a copy exists at /usr/local/cuda-12.4/lib64/libcudnn_graph.so.9.1.0 (9.1.0)"
            ),
            "{}",
            f.fix
        );
        assert!(
            f.fix
                .contains("LD_LIBRARY_PATH=/usr/local/cuda-12.4/lib64:$LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
        // The dispatcher's message is explained with the failures.
        let m = only(&fs, "CDT010");
        assert!(
            m.evidence.iter().any(|e| e.what == "failed"),
            "{:#?}",
            m.evidence
        );
    }

    /// A copy named like one of the other variants (a wheel's
    /// `libcudnn_graph.so.9`) is as good as one of the first name: no
    /// "a link of that name may be missing".
    #[test]
    fn copy_named_like_another_variant() {
        let disp = "/opt/cudnn/lib/libcudnn.so.9.1.0";
        let mut t = Trace::new().load(disp, "RPATH", "/app/bin/infer");
        for n in [
            "libcudnn_graph.so.9.1.0",
            "libcudnn_graph.so.9.1",
            "libcudnn_graph.so.9",
            "libcudnn_graph.so",
        ] {
            t = t.failed(
                n,
                disp,
                &[(&format!("/opt/cudnn/lib/{n}"), "RUNPATH", "missing")],
                None,
            );
        }
        let t = t.machine(|m| {
            m.file("/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9");
            m.dir("/usr/local/cuda-12.4");
        });
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert!(
            f.fix
                .starts_with("a copy exists at /usr/local/cuda-12.4/lib64/libcudnn_graph.so.9"),
            "{}",
            f.fix
        );
        assert!(!f.fix.contains("no file is named exactly"), "{}", f.fix);
        // A copy of none of the names: all four are listed as missing links.
        let mut t = Trace::new().load(disp, "RPATH", "/app/bin/infer");
        for n in ["libcudnn_graph.so.9.1.0", "libcudnn_graph.so.9"] {
            t = t.failed(n, disp, &[], None);
        }
        let t = t.machine(|m| {
            m.file("/usr/local/cuda-12.4/lib64/libcudnn_graph.so.9.1.2");
            m.dir("/usr/local/cuda-12.4");
        });
        let fs = t.findings();
        assert!(
            only(&fs, "CDT006").fix.ends_with(
                "(no file is named exactly libcudnn_graph.so.9.1.0 or libcudnn_graph.so.9: a link of that name may be missing)"
            ),
            "{}",
            only(&fs, "CDT006").fix
        );
    }

    /// Every variant's loader error is evidence: the last one
    /// (`libnvrtc.so: cannot open shared object file`) is often the text
    /// the user saw.
    #[test]
    fn errors_of_every_name_variant() {
        let g = "/v/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9";
        let t = Trace::new()
            .load(
                g,
                "RUNPATH",
                "/v/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
            )
            .failed(
                "libnvrtc.so.12",
                g,
                &[],
                Some("libnvrtc.so.12: cannot open shared object file: No such file or directory"),
            )
            .failed(
                "libnvrtc.so",
                g,
                &[],
                Some("libnvrtc.so: cannot open shared object file: No such file or directory"),
            );
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert_eq!(f.title, "libnvrtc.so.12 could not be loaded (dlopen by libcudnn_graph.so.9; also as libnvrtc.so)");
        assert_eq!(
            f.evidence[0].detail.as_deref(),
            Some("dlopen: libnvrtc.so.12: cannot open shared object file: No such file or directory / libnvrtc.so: cannot open shared object file: No such file or directory")
        );
    }

    /// cuDNN's dlopen of NVRTC fails (`libnvrtc.so: cannot open shared object file`).
    #[test]
    fn nvrtc_missing_for_cudnn() {
        let g = "/v/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9";
        let t = Trace::new()
            .load(
                g,
                "RUNPATH",
                "/v/site-packages/nvidia/cudnn/lib/libcudnn.so.9",
            )
            .failed(
                "libnvrtc.so",
                g,
                &[
                    (
                        "/v/site-packages/nvidia/cudnn/lib/libnvrtc.so",
                        "RUNPATH",
                        "missing",
                    ),
                    (
                        "/v/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so",
                        "RUNPATH",
                        "missing",
                    ),
                ],
                Some("libnvrtc.so: cannot open shared object file: No such file or directory"),
            );
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert_eq!(f.severity, Severity::Error, "asked for by cuDNN");
        assert!(f.evidence[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("libnvrtc.so: cannot open shared object file"));
        assert!(
            f.fix
                .starts_with("no copy was found on this machine: install NVRTC"),
            "{}",
            f.fix
        );
        // With only another major on disk.
        let t = t.machine(|m| {
            m.file("/usr/local/cuda-12.9/targets/x86_64-linux/lib/libnvrtc.so.12.9.86");
            m.dir("/usr/local/cuda-12.9");
        });
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert!(f.fix.contains("a copy exists at /usr/local/cuda-12.9/targets/x86_64-linux/lib/libnvrtc.so.12.9.86"), "{}", f.fix);
        assert!(
            f.fix.contains("no file is named exactly libnvrtc.so"),
            "{}",
            f.fix
        );
    }

    /// The toolkit's stub libcuda is no copy of the driver to point at.
    #[test]
    fn a_stub_is_no_copy_to_offer() {
        let t = Trace::new()
            .failed(
                "libcuda.so.1",
                "/v/site-packages/nvidia/cu13/lib/libcudart.so.13",
                &[],
                None,
            )
            .machine(|m| {
                m.file("/usr/local/cuda-13.0/lib64/stubs/libcuda.so");
                m.dir("/usr/local/cuda-13.0");
            });
        let fs = t.findings();
        let f = only(&fs, "CDT006");
        assert!(
            f.fix.starts_with(
                "no copy was found on this machine: libcuda.so.1 comes with the NVIDIA driver"
            ),
            "{}",
            f.fix
        );
        assert!(
            f.evidence.iter().any(|e| e.what == "on disk"
                && e.detail
                    .as_deref()
                    .is_some_and(|d| d.ends_with("a stub, for linking only: not a copy to load"))),
            "{:#?}",
            f.evidence
        );
    }

    #[test]
    fn failures_followed_by_a_load_are_not_findings() {
        // pip cuDNN: .so.9.19.0 and .so.9.19 fail, .so.9 loads (§3.3).
        let d = "/v/nvidia/cudnn/lib";
        let disp = format!("{d}/libcudnn.so.9");
        let t = Trace::new()
            .load(&disp, "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .failed("libcudnn_graph.so.9.19.0", &disp, &[], None)
            .failed("libcudnn_graph.so.9.19", &disp, &[], None)
            .load_named(
                "libcudnn_graph.so.9",
                &format!("{d}/libcudnn_graph.so.9"),
                "RUNPATH",
                &disp,
                "dlopen",
            );
        assert!(none(&t.findings(), "CDT006"));
        // Later rounds of the same sequence (the dispatcher repeats it; the
        // reuse of .so.9 is recorded once): still the search order, as the
        // real PyTorch trace on the H200 showed (10 rounds).
        let t = Trace::new()
            .load(&disp, "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .failed("libcudnn_graph.so.9.19.0", &disp, &[], None)
            .load_named(
                "libcudnn_graph.so.9",
                &format!("{d}/libcudnn_graph.so.9"),
                "RUNPATH",
                &disp,
                "dlopen",
            )
            .failed("libcudnn_graph.so.9.19.0", &disp, &[], None)
            .failed("libcudnn_graph.so.9.19", &disp, &[], None);
        assert!(none(&t.findings(), "CDT006"));
        // A libnvrtc.so.13 failure is not resolved by a libnvrtc.so.12 load.
        let t = Trace::new()
            .failed("libnvrtc.so.13", "/d/libcudnn_graph.so.9", &[], None)
            .load_named(
                "libnvrtc.so.12",
                "/x/libnvrtc.so.12",
                "LD_LIBRARY_PATH",
                "/d/libcudnn_graph.so.9",
                "dlopen",
            );
        assert_eq!(all(&t.findings(), "CDT006").len(), 1);
        // Other families: only a warning; non-CUDA names: nothing.
        let t = Trace::new()
            .failed("libcufft.so.11", "/app/x.so", &[], None)
            .failed("libfoo.so", "/app/x.so", &[], None);
        let fs = t.findings();
        assert_eq!(only(&fs, "CDT006").severity, Severity::Warning);
    }

    fn dyn_runpath(r: &str) -> DynInfo {
        DynInfo {
            soname: None,
            needed: vec![],
            rpath: vec![],
            runpath: r.split(':').map(str::to_string).collect(),
        }
    }

    /// The classic: the dispatcher's RUNPATH $ORIGIN holds graph, but
    /// LD_LIBRARY_PATH's system copy wins (PyTorch's "conflicting cuDNN in
    /// LD_LIBRARY_PATH").
    #[test]
    fn ld_library_path_shadows_runpath() {
        let pip = "/v/lib/python3.12/site-packages/nvidia/cudnn/lib";
        let disp = format!("{pip}/libcudnn.so.9");
        let sys = "/usr/lib/x86_64-linux-gnu";
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", sys)
            .load(
                &disp,
                "RPATH",
                "/v/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
            )
            .load_named(
                "libcudnn_graph.so.9",
                &format!("{sys}/libcudnn_graph.so.9.14.0"),
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .machine(|m| {
                m.elf(&disp, dyn_runpath("$ORIGIN"));
                m.file(&format!("{pip}/libcudnn_graph.so.9"));
            });
        let fs = t.findings();
        let f = only(&fs, "CDT008");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.title,
            "libcudnn_graph.so.9 9.14.0 came from LD_LIBRARY_PATH although the RUNPATH of libcudnn.so.9 holds another copy"
        );
        // The paths and versions are in the evidence.
        assert_eq!(f.evidence[0].search_dir.as_deref(), Some(sys));
        assert_eq!(
            f.evidence[1].path.as_deref(),
            Some(format!("{pip}/libcudnn_graph.so.9").as_str())
        );
        assert_eq!(f.evidence[1].version.as_deref(), Some("9.x"));
        // With the pip package's *.dist-info, the other copy's version shows.
        let t = t.machine(|m| {
            m.dir("/v/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.19.0.56.dist-info");
        });
        let fs = t.findings();
        let g = only(&fs, "CDT008");
        assert!(g.title.ends_with("holds 9.19.0.56"), "{}", g.title);
        assert_eq!(
            g.evidence[1].version.as_deref(),
            Some("9.19.0.56, pip nvidia_cudnn_cu13")
        );
        assert_eq!(f.fix, format!("remove {sys} from LD_LIBRARY_PATH"));
        assert!(
            f.alternatives
                .iter()
                .any(|a| a.ends_with(&format!("cudnn-trace --pin {pip}"))),
            "{:?}",
            f.alternatives
        );
        assert!(f
            .evidence
            .iter()
            .any(|e| e.detail.as_deref() == Some(&*format!("RUNPATH entry $ORIGIN of {disp}"))));
    }

    /// A trace from another host: this machine's files say nothing about it.
    #[test]
    fn other_host_means_no_disk_evidence() {
        let pip = "/v/nvidia/cudnn/lib";
        let disp = format!("{pip}/libcudnn.so.9");
        let t = Trace::new()
            .load_named(
                "libcudnn_graph.so.9",
                "/sys/libcudnn_graph.so.9",
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .failed("libnvrtc.so", "/sys/libcudnn_graph.so.9", &[], None)
            .machine(|m| {
                m.elf(&disp, dyn_runpath("$ORIGIN"));
                m.file(&format!("{pip}/libcudnn_graph.so.9"));
                m.file("/usr/lib/x86_64-linux-gnu/libnvrtc.so.13");
                m.host = Some("laptop".into());
            });
        let fs = t.findings();
        assert!(none(&fs, "CDT008"));
        assert!(only(&fs, "CDT006")
            .evidence
            .iter()
            .all(|e| e.what != "on disk"));
        // The same on the traced host ("node1").
        let t = t.machine(|m| m.host = Some("node1".into()));
        let fs = t.findings();
        assert_eq!(all(&fs, "CDT008").len(), 1);
        assert!(only(&fs, "CDT006")
            .evidence
            .iter()
            .any(|e| e.what == "on disk"));
    }

    #[test]
    fn runpath_without_another_copy_or_same_file_is_quiet() {
        let pip = "/v/nvidia/cudnn/lib";
        let disp = format!("{pip}/libcudnn.so.9");
        // RUNPATH dir has no graph.
        let t = Trace::new()
            .load_named(
                "libcudnn_graph.so.9",
                "/sys/libcudnn_graph.so.9",
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .machine(|m| {
                m.elf(&disp, dyn_runpath("$ORIGIN"));
            });
        assert!(none(&t.findings(), "CDT008"));
        // RUNPATH dir's graph is a link to the loaded file.
        let t = Trace::new()
            .load_named(
                "libcudnn_graph.so.9",
                "/sys/libcudnn_graph.so.9",
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .machine(|m| {
                m.elf(&disp, dyn_runpath("$ORIGIN/../../x"));
                m.file("/sys/libcudnn_graph.so.9");
                m.link(
                    "/v/nvidia/x/libcudnn_graph.so.9",
                    "/sys/libcudnn_graph.so.9",
                );
            });
        assert!(none(&t.findings(), "CDT008"));
        // `..` in RUNPATH entries is resolved.
        let t = Trace::new()
            .load_named(
                "libcublasLt.so.13",
                "/sys/libcublasLt.so.13",
                "LD_LIBRARY_PATH",
                &disp,
                "dlopen",
            )
            .machine(|m| {
                m.elf(&disp, dyn_runpath("$ORIGIN:$ORIGIN/../../cublas/lib"));
                m.file("/v/nvidia/cublas/lib/libcublasLt.so.13");
            });
        assert_eq!(only(&t.findings(), "CDT008").severity, Severity::Warning);
    }
}
