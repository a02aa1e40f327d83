//! Loading: CDT006 (a CUDA-family library failed to load: every place
//! tried, and the copies that exist on the machine) and CDT008 (found
//! through LD_LIBRARY_PATH while the requester's RPATH/RUNPATH held another
//! copy: glibc searches LD_LIBRARY_PATH before the caller's RUNPATH,
//! [E-probe] [R34]).

use super::copies::symbol_version_error;
use super::{and_list, finding, loaded, remedies};
use crate::analysis::files;
use crate::analysis::findings::facts::{basename, dirname, soname_major, Facts, Lib};
use crate::analysis::findings::knowledge::CudnnPackage;
use crate::analysis::findings::{Context, Evidence, Finding, Knowledge, Remedy, Severity, Ver};
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

/// Where to get cuDNN `major` for the CUDA majors the process uses (all
/// the builds there are when it has no CUDA runtime yet).
/// The packages are `cudnn-packages.toml`'s: only ones that exist.
fn cudnn_install_hint(k: &Knowledge, major: Option<u32>, cuda: &[u32]) -> String {
    let Some(m) = major else {
        return "install cuDNN of the CUDA major the program uses".into();
    };
    let rows: Vec<&CudnnPackage> = k
        .packages
        .iter()
        .filter(|r| r.cudnn == m && (cuda.is_empty() || cuda.contains(&r.cuda)))
        .collect();
    if rows.is_empty() {
        return format!(
            "install cuDNN {m} built for the program's CUDA {} (no package of it is known here; NVIDIA's cuDNN archive has the tarballs)",
            cuda.iter().map(u32::to_string).collect::<Vec<_>>().join("/")
        );
    }
    let ways: Vec<String> = rows
        .iter()
        .map(|r| {
            let pip = r
                .pip
                .as_deref()
                .map(|p| format!("pip install '{p}' or "))
                .unwrap_or_default();
            format!("for CUDA {}: {pip}sudo apt-get install {}", r.cuda, r.apt)
        })
        .collect();
    format!("install cuDNN {m} ({})", ways.join("; "))
}

/// Where to get a missing library ([R30][R32][R35][R31]).
fn install_hint(k: &Knowledge, family: Option<&str>, name: &str, cuda: &[u32]) -> String {
    let m = soname_major(name);
    let mj = m.map(|m| m.to_string()).unwrap_or_else(|| "N".into());
    match family {
        Some("cudnn") => cudnn_install_hint(k, m, cuda),
        Some("cudart") => match m {
            Some(13) => "install the CUDA 13 runtime (pip: nvidia-cuda-runtime, into site-packages/nvidia/cu13/lib; or the toolkit's cuda-cudart-13-x)".into(),
            Some(m) => format!("install the CUDA {m} runtime (pip: nvidia-cuda-runtime-cu{m}; or the toolkit's cuda-cudart-{m}-x)"),
            None => "install the CUDA runtime of the major the program was built for".into(),
        },
        Some("cuda") => "libcuda.so.1 comes with the NVIDIA driver, not with the CUDA toolkit: install the driver; in a container, start it with the NVIDIA container runtime (docker run --gpus all, or --runtime=nvidia), which mounts the host driver's libraries into it".into(),
        Some("cublas" | "cublasLt") => format!(
            "install cuBLAS of CUDA {mj} (pip: nvidia-cublas-cu{mj}, or nvidia-cublas for CUDA 13)"
        ),
        Some("nvrtc") => format!("install NVRTC of CUDA {mj} (the toolkit's cuda-nvrtc package, or its pip wheel)"),
        _ => format!("install the package that provides {name}"),
    }
}

/// Whether the same requester got the same library under another name
/// (cuDNN 9's dispatcher tries `NAME.so.9.MIN.PATCH`, `NAME.so.9.MIN`,
/// `NAME.so.9`, `NAME.so` in turn, [R17][E6][E7]: those misses are its search
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
    let mut out: Vec<Finding> = Vec::new();
    // Requester → the index of its "beside it, but no RUNPATH" finding:
    // one cause, one finding, however many libraries it could not find.
    let mut beside: BTreeMap<String, usize> = BTreeMap::new();
    for ((_, requester), fails) in failure_groups(f) {
        let failure = Failure::new(requester, fails);
        let mut finding = failure.finding(f, ctx);
        let Some(dir) = failure.beside_requester(f, ctx) else {
            out.push(finding);
            continue;
        };
        let req = failure.requester.clone().unwrap_or_default();
        match beside.get(&req) {
            Some(&i) => {
                let first = &mut out[i];
                first.title = format!("{}, {}", first.title, failure.name);
                first.evidence.extend(finding.evidence.drain(..).take(1));
            }
            None => {
                finding.title = format!(
                    "{} could not be loaded by {} although it is right beside it in {dir}: {} has no RUNPATH",
                    failure.name,
                    basename(&req),
                    basename(&req)
                );
                beside.insert(req, out.len());
                out.push(finding);
            }
        }
    }
    out
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
            .entry((stem(&fl.ev.name).to_string(), effective_requester(f, fl)))
            .or_default()
            .push(fl);
    }
    groups
}

/// Who asked: the trace's requester, except when that is the dynamic
/// loader itself (`via: loader`): a dlopen from a library's constructor
/// runs inside ld.so's initialisation of that library, so the library
/// loaded last on the same thread before the request is the one that
/// asked (cuDNN 8's cnn_infer dlopening `libcuda.so` while it starts).
fn effective_requester(f: &Facts<'_>, fl: &Failed) -> Option<String> {
    let r = fl.ev.requester.as_deref()?;
    if fl.ev.via != "loader" || !basename(r).starts_with("ld-linux") {
        return Some(r.to_string());
    }
    f.img
        .loads
        .iter()
        .filter(|l| l.new && l.seq < fl.ev.seq && l.tid == fl.ev.tid && l.lmid == fl.ev.lmid)
        .max_by_key(|l| l.seq)
        .map(|l| l.path.clone())
        .or_else(|| Some(r.to_string()))
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
        let repeats: u64 = self
            .fails
            .iter()
            .filter(|x| x.ev.name == self.name)
            .map(|x| x.count) // repeats the reader folded
            .sum();
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
        if super::local(f, ctx) {
            ev.extend(absent_search_dirs(f, ctx));
        }
        let set_late = self.set_after_start(f);
        if let Some(late) = &set_late {
            ev.extend(late.evidence());
        }
        let looks = self.where_requester_looks(f, ctx);
        let copies: Vec<Copy> = copies.into_iter().filter(|c| !c.is_stub()).collect();
        let late_copy = set_late.as_ref().and_then(|late| {
            let asked: Vec<&str> = std::iter::once(self.name.as_str())
                .chain(self.variants.iter().copied())
                .collect();
            let on_disk = |p: &str| super::local(f, ctx) && ctx.machine.exists(p);
            late.remedy(&asked, &copies, on_disk)
        });
        let remedy = match self.vanished_pin(f, ctx) {
            Some(dir) => {
                ev.push(
                    Evidence::new("pin")
                        .path(dir.to_string())
                        .detail("the pin directory no longer exists on this machine"),
                );
                Remedy::new(format!(
                    "the pin directory {dir} no longer exists: it was removed or unmounted while \
                     the program ran, and the strict pin sent {} into it; restore it, or pin \
                     another cuDNN directory (`cudnn-trace env --pin DIR` checks one first)",
                    basename(&self.name)
                ))
            }
            None => {
                late_copy.unwrap_or_else(|| self.usual_remedy(f, ctx, &copies, looks.as_deref()))
            }
        };
        let mut title = self.title();
        if let Some(late) = &set_late {
            title.push_str(&late.title_part());
        }
        finding(
            ctx,
            "CDT006",
            self.severity(ctx),
            title,
            ev,
            remedy,
            &["R34", "E6", "E7", "R17"],
        )
    }

    /// The directories the program added to `LD_LIBRARY_PATH` after
    /// start-up, as its requests recorded them: glibc searched none of
    /// them (it reads the variable once, as the process starts).
    fn set_after_start(&self, f: &Facts<'_>) -> Option<SetAfterStart> {
        let value = self
            .fails
            .iter()
            .find_map(|x| x.ev.ld_library_path_now.clone().flatten())?;
        let at_start = f.img.ld_library_path();
        let mut added: Vec<String> = Vec::new();
        for d in value.split(':').filter(|d| !d.is_empty()) {
            let d = d.trim_end_matches('/');
            let d = if d.is_empty() { "/" } else { d };
            if !at_start.iter().any(|s| s.trim_end_matches('/') == d)
                && !added.iter().any(|a| a == d)
            {
                added.push(d.to_string());
            }
        }
        (!added.is_empty()).then_some(SetAfterStart { value, added })
    }

    /// The requester's own directory, when a copy of the library lies
    /// there and the requester has no RPATH/RUNPATH that searches it: glibc
    /// never searches a library's own directory by itself, and RUNPATH is
    /// not inherited from whoever loaded the requester (cuDNN 8 tarballs'
    /// sub-libraries, the aarch64 cuDNN 9.1 wheel's graph,
    /// [R17][E6][E7]).
    fn beside_requester(&self, f: &Facts<'_>, ctx: &Context<'_>) -> Option<String> {
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
        if ctx.machine.search_dirs(req, real).is_some() {
            return None;
        }
        let dir = dirname(real.unwrap_or(req)).to_string();
        // Searched, and still not found: a name is missing, not a path.
        if self.tried.iter().any(|t| dirname(&t.path) == dir) {
            return None;
        }
        let lib_stem = stem(basename(&self.name));
        let major = soname_major(&self.name);
        let there = ctx
            .machine
            .list_dir(&dir)
            .into_iter()
            .any(|x| stem(&x) == lib_stem && (major.is_none() || soname_major(&x) == major));
        there.then_some(dir)
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

    /// The fix when the pin is not the story: nothing for an optional
    /// engine, the requester's directory for a sibling it cannot see, else
    /// a copy to make findable or to install.
    fn usual_remedy(
        &self,
        f: &Facts<'_>,
        ctx: &Context<'_>,
        copies: &[Copy],
        looks: Option<&str>,
    ) -> Remedy {
        if self.optional_engine(ctx) {
            return Remedy::new(format!(
                "nothing to do: {} is an optional engine that this cuDNN install does not ship, and cuDNN goes on without it; a copy of another install would be a mix (CDT002)",
                basename(&self.name)
            ));
        }
        if let Some(dir) = self.beside_requester(f, ctx) {
            return beside_remedy(self.requester.as_deref().unwrap_or(""), &dir);
        }
        if let Some(r) = self.missing_link(f, ctx) {
            return r;
        }
        // The CUDA majors of the process's runtimes: cuDNN must be built
        // for one of them.
        let mut cuda: Vec<u32> = f.family("cudart").filter_map(|l| l.major).collect();
        cuda.sort();
        cuda.dedup();
        Remedy::new(self.remedy(ctx.knowledge, copies, looks, &cuda))
    }

    /// A directory the loader searched holds the library under another
    /// name only (`libcudart.so.12.0` without its soname link
    /// `libcudart.so.12`; the driver's `libcuda.so.1` without the
    /// development link `libcuda.so` that cuDNN 8 dlopens): the fix is the
    /// link, not another install. The target is the shortest such name of
    /// the same major (the soname when there).
    fn missing_link(&self, f: &Facts<'_>, ctx: &Context<'_>) -> Option<Remedy> {
        if !super::local(f, ctx) {
            return None;
        }
        let want = basename(&self.name);
        let major = soname_major(want);
        let mut dirs: Vec<&str> = self.tried.iter().map(|t| dirname(&t.path)).collect();
        dirs.dedup();
        dirs.into_iter().find_map(|dir| {
            let mut names: Vec<String> = ctx
                .machine
                .list_dir(dir)
                .into_iter()
                .filter(|n| n != want && stem(n) == stem(want) && n.starts_with(want))
                .filter(|n| major.is_none() || soname_major(n) == major)
                .collect();
            names.sort_by_key(|n| (n.len(), n.clone()));
            let target = names.into_iter().next()?;
            let mut r = Remedy::new(format!(
                "{dir} holds {target} but no {want}: create the link, `ln -s {target} {dir}/{want}`"
            ));
            if major.is_some() {
                r = r.or(format!(
                    "let ldconfig create the soname links there: `ldconfig -n {dir}`"
                ));
            }
            Some(r)
        })
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

    /// An optional engine that cuDNN 9's graph library looked for and went
    /// on without (the tensor-IR engine a wheel does not ship: graph
    /// dlopens it by name and silently falls back, pytorch#188892): info.
    /// Required engines and the v8 sub-libraries (the dispatcher aborts
    /// without them) stay errors.
    fn optional_engine(&self, ctx: &Context<'_>) -> bool {
        let by_graph = self
            .requester
            .as_deref()
            .is_some_and(|r| stem(basename(r)) == "libcudnn_graph");
        by_graph && remedies::optional(ctx, stem(&self.name), soname_major(&self.name))
    }

    /// An error for the libraries a process cannot do without, and for
    /// anything cuDNN itself asked for; a warning otherwise.
    fn severity(&self, ctx: &Context<'_>) -> Severity {
        if self.optional_engine(ctx) {
            return Severity::Info;
        }
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
            self.via(),
            self.times()
        )
    }

    /// How it was asked for; a request the trace puts on the dynamic
    /// loader but [`effective_requester`] gave to a starting library came
    /// from that library's constructor.
    fn via(&self) -> &str {
        let ev = &self.first().ev;
        if ev.via == "loader" && ev.requester != self.requester {
            "dlopen from the constructor"
        } else {
            &ev.via
        }
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
        let rows = fold_hwcaps(&self.tried);
        for (t, folded) in rows.iter().take(MAX_TRIED) {
            let more = match folded {
                0 => String::new(),
                n => format!(" (and in {n} platform subdirectories of it: glibc-hwcaps, tls, …)"),
            };
            ev.push(
                Evidence::new("tried")
                    .path(t.path.clone())
                    .reason(t.reason.clone())
                    .detail(format!("{}{more}", t.result)),
            );
        }
        if rows.len() > MAX_TRIED {
            ev.push(Evidence::new("tried").detail(format!("… {} more", rows.len() - MAX_TRIED)));
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
    fn remedy(&self, k: &Knowledge, copies: &[Copy], looks: Option<&str>, cuda: &[u32]) -> String {
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
        let hint = install_hint(k, self.family().as_deref(), &self.name, cuda);
        if copies.is_empty() {
            return format!("no copy was found on this machine: {hint}");
        }
        // Every copy is of another major here: none fits (another ABI,
        // no promise across majors). They are in the evidence; the fix
        // never offers one (nor a link to one).
        format!(
            "only another major of it is on this machine (listed below; it does not fit {}, and a link to it would not either): {hint}",
            basename(&self.name)
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
            "a copy exists at {}{}: make it findable for {}, e.g. LD_LIBRARY_PATH={dir}:$LD_LIBRARY_PATH set before the program starts (glibc reads it once at start-up: os.environ or setenv inside the program changes nothing for the loader), or load it first by its absolute path (ctypes.CDLL), or install the library where {} looks{}",
            c.path,
            c.version.as_deref().map(|v| format!(" ({v})")).unwrap_or_default(),
            who.unwrap_or("the program"),
            who.unwrap_or("it"),
            looks.map(|l| format!(" ({l})")).unwrap_or_default()
        )
    }
}

/// `LD_LIBRARY_PATH` as the program set it after start-up (issue 9, class
/// 5): the value its request recorded, and the directories in it that the
/// start-up value, the one glibc searches, does not have.
struct SetAfterStart {
    value: String,
    added: Vec<String>,
}

impl SetAfterStart {
    fn dirs(&self) -> String {
        and_list(&self.added)
    }

    fn title_part(&self) -> String {
        format!(
            "; the program added {} to LD_LIBRARY_PATH after start-up, which glibc never searches",
            self.dirs()
        )
    }

    fn evidence(&self) -> Vec<Evidence> {
        self.added
            .iter()
            .map(|d| {
                Evidence::new("environment")
                    .path(d.clone())
                    .reason("LD_LIBRARY_PATH")
                    .detail(format!(
                        "added by the program after start-up (LD_LIBRARY_PATH={} at the request): glibc reads LD_LIBRARY_PATH once, as the process starts, so it did not search this directory",
                        self.value
                    ))
            })
            .collect()
    }

    /// When a directory the program added holds the library (a copy found
    /// on the machine, or a file of a name asked for, `on_disk`): the
    /// variable must be set before the program starts, or the file loaded
    /// by its path.
    fn remedy(
        &self,
        asked: &[&str],
        copies: &[Copy],
        on_disk: impl Fn(&str) -> bool,
    ) -> Option<Remedy> {
        let known = copies
            .iter()
            .find(|c| {
                !matches!(c.fit(asked[0]), Fit::OtherMajor(_))
                    && self.added.iter().any(|d| dirname(&c.path) == d)
            })
            .map(|c| c.path.clone());
        let path = known.or_else(|| {
            self.added.iter().find_map(|d| {
                asked
                    .iter()
                    .map(|n| format!("{}/{}", d.trim_end_matches('/'), basename(n)))
                    .find(|p| on_disk(p))
            })
        })?;
        let dir = dirname(&path);
        Some(
            Remedy::new(format!(
                "set LD_LIBRARY_PATH={dir}:$LD_LIBRARY_PATH before the program starts (in the shell, the job script or the container's environment): the program set it to {} after start-up, inside the process (os.environ or setenv), and glibc reads LD_LIBRARY_PATH only once, as the process starts",
                self.value
            ))
            .or(format!(
                "load {path} first by its absolute path inside the program (ctypes.CDLL(\"{path}\") in Python), before the library that needs it"
            )),
        )
    }
}

/// `LD_LIBRARY_PATH` entries that do not exist on this machine. glibc marks
/// such a directory nonexistent at its first search and never tries it
/// again, so no later request lists it among its candidates; yet it is
/// often the very place the library was meant to come from (a container
/// image's `/usr/local/nvidia/lib64`, where the NVIDIA container runtime
/// mounts the host's driver libraries).
fn absent_search_dirs(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Evidence> {
    f.img
        .ld_library_path()
        .into_iter()
        // A directory the process loaded from existed then, whatever the
        // disk says now.
        .filter(|d| d.starts_with('/') && !ctx.machine.exists(d))
        .filter(|d| !f.libs.iter().any(|l| l.dir() == d.trim_end_matches('/')))
        .map(|d| {
            Evidence::new("tried")
                .path(d)
                .reason("LD_LIBRARY_PATH")
                .detail("does not exist on this machine (glibc skips it): whatever was meant to be installed or mounted there is not")
        })
        .collect()
}

/// What makes a library find its sibling: the directory on the search
/// path, or a RUNPATH of `$ORIGIN` in the requester (what Compute Canada,
/// Nix and Spack patch into NVIDIA's cuDNN 8 tarballs).
fn beside_remedy(requester: &str, dir: &str) -> Remedy {
    Remedy::new(format!(
        "add {dir} to LD_LIBRARY_PATH before starting the program: glibc does not search a library's own directory, and RUNPATH is not inherited"
    ))
    .or(format!(
        "give {} a RUNPATH of its own directory: patchelf --set-rpath '$ORIGIN' {requester}",
        basename(requester)
    ))
}

/// Directories glibc tries below each search directory: `glibc-hwcaps/<level>`
/// (2.33+) and the legacy platform and `tls` subdirectories.
const PLATFORM_DIRS: &[&str] = &[
    "glibc-hwcaps",
    "tls",
    "x86_64",
    "haswell",
    "xeon_phi",
    "avx512_1",
    "i686",
    "sse2",
    "aarch64",
    "atomics",
    "power8",
    "power9",
    "power10",
    "z13",
    "z14",
    "z15",
    "z16",
    "x86-64-v2",
    "x86-64-v3",
    "x86-64-v4",
];

/// The search-directory candidate a platform-subdirectory candidate was
/// tried for: `D/glibc-hwcaps/x86-64-v3/F` and `D/tls/x86_64/F` → `D/F`.
fn platform_parent(path: &str) -> Option<String> {
    let (dir, file) = path.rsplit_once('/')?;
    let mut d = dir;
    while let Some((up, last)) = d.rsplit_once('/') {
        if !PLATFORM_DIRS.contains(&last) {
            break;
        }
        d = up;
    }
    (d != dir).then(|| format!("{d}/{file}"))
}

/// The candidates tried, with the platform subdirectories that glibc tries
/// below each search directory (about 45 lines for one request on x86-64,
/// issue 9 class 8) folded into that directory's own line: (candidate, how
/// many were folded into it). A subdirectory whose directory was not tried
/// itself with the same outcome stays.
fn fold_hwcaps<'t>(tried: &[&'t Tried]) -> Vec<(&'t Tried, usize)> {
    let mut out: Vec<(&Tried, usize)> = Vec::new();
    for t in tried {
        if let Some(p) = platform_parent(&t.path) {
            if tried.iter().any(|u| u.path == p && u.result == t.result) {
                continue;
            }
        }
        let folded = tried
            .iter()
            .filter(|u| {
                platform_parent(&u.path).as_deref() == Some(t.path.as_str()) && u.result == t.result
            })
            .count();
        out.push((t, folded));
    }
    out
}

/// CDT008: a CUDA-family library found through LD_LIBRARY_PATH while the
/// RPATH/RUNPATH of the object that asked for it holds another copy: the
/// "conflicting cuDNN in LD_LIBRARY_PATH" (PyTorch's words, [R24]). The
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
        // (`*.dist-info`, [R30]).
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
        // Same version, another CUDA build: not harmless (jax#17553).
        let builds = cuda_builds(f, ctx, lib, &cand);
        let other_build = matches!(&builds, (Some(a), Some(b)) if a.prefix(2) != b.prefix(2));
        let severity = match shadow_severity(lib, cand_ver.as_ref()) {
            Severity::Info if other_build => Severity::Error,
            s => s,
        };
        let build = |b: &Option<Ver>| {
            b.as_ref()
                .filter(|_| other_build)
                .map(|b| format!(", a CUDA {} build,", b.prefix(2)))
                .unwrap_or_default()
        };
        // The LD_LIBRARY_PATH entry itself (a hardware-capability
        // subdirectory searched below it is not one), as written.
        let search = super::entry_of(f, ctx, lib).shown().to_string();
        let title = format!(
            "{name}{}{} came from LD_LIBRARY_PATH although the {kind} of {} holds {}{}",
            lib.version_text()
                .map(|v| format!(" {v}"))
                .unwrap_or_default(),
            build(&builds.0),
            basename(req),
            cand_ver
                .as_ref()
                .map(|v| v.to_string())
                .unwrap_or_else(|| "another copy".into()),
            build(&builds.1).trim_end_matches(',')
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
/// The CUDA builds (`cudnnGetCudartVersion`) of the cuDNN install of the
/// loaded `lib` and of the install holding `cand`: the loaded install's
/// answer in the process or at report time, the other's asked at report
/// time of its version-telling file. (None, None) outside cuDNN.
fn cuda_builds(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    lib: &Lib<'_>,
    cand: &str,
) -> (Option<Ver>, Option<Ver>) {
    if lib.family != "cudnn" {
        return (None, None);
    }
    let mine = f
        .family("cudnn")
        .filter(|l| l.dir() == lib.dir())
        .find_map(|l| l.cuda_build());
    let refs = [
        "libcudnn_graph.so.9",
        "libcudnn_ops_infer.so.8",
        "libcudnn.so.7",
    ];
    let dir = dirname(cand);
    let other = std::iter::once(cand.to_string())
        .chain(refs.iter().map(|r| format!("{dir}/{r}")))
        .filter(|p| ctx.machine.exists(p))
        .find_map(|p| files::ask_file(ctx.machine, &p)?.cuda_build)
        .filter(|&v| v > 0)
        .map(|v| Ver::from_cuda_int(v as u64));
    (mine, other)
}

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
mod package_tests {
    use super::cudnn_install_hint;
    use crate::analysis::findings::Knowledge;

    /// Only packages that exist: no cuDNN 8 for CUDA 13, no pip cuDNN 7,
    /// cuDNN 8's Debian package is libcudnn8 (a +cudaX.Y version).
    #[test]
    fn cudnn_packages_exist_for_the_cuda_major() {
        let k = Knowledge::embedded().unwrap();
        let cudnn_install_hint = |m, c: &[u32]| cudnn_install_hint(&k, m, c);
        let h = cudnn_install_hint(Some(8), &[11]);
        assert!(h.contains("pip install 'nvidia-cudnn-cu11==8.*'"), "{h}");
        assert!(
            h.contains("libcudnn8='8.*+cuda11.8'") && !h.contains("cu12"),
            "{h}"
        );
        let h = cudnn_install_hint(Some(8), &[13]);
        assert!(
            !h.contains("nvidia-cudnn-cu13") && h.contains("no package of it is known"),
            "{h}"
        );
        let h = cudnn_install_hint(Some(9), &[]);
        assert!(
            h.contains("libcudnn9-cuda-13") && !h.contains("libcudnn8"),
            "{h}"
        );
        assert!(!cudnn_install_hint(Some(7), &[10]).contains("pip"));
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
        // pip cuDNN: .so.9.19.0 and .so.9.19 fail, .so.9 loads ([R17][E6][E7]).
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
