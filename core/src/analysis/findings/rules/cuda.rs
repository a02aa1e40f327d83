//! The CUDA runtime, the driver and cuDNN's CUDA build: CDT003 (build vs
//! runtime major), CDT004 (driver too old, minor-version compatibility),
//! CDT005 (forward-compatibility libcuda, 803/804), CDT007 (cudnnCreate /
//! cuInit failed) and CDT011 (stub libcuda). Facts: [R7][R8][E1][R10][R11][R11b].

use super::remedies::how_to_avoid;
use super::{entry_of, finding, loaded};
use crate::analysis::findings::facts::{basename, soname_major, Facts, Lib, Observed};
use crate::analysis::findings::knowledge::Knowledge;
use crate::analysis::findings::{Context, Evidence, Finding, Remedy, Severity, Ver};
use std::collections::BTreeMap;

/// Evidence for a CUDA error code seen in a call or in stderr.
fn observed(o: &Observed, k: &Knowledge) -> Evidence {
    let name = k
        .cuda_error(o.value)
        .map(|e| {
            let names: Vec<&str> = e
                .runtime
                .iter()
                .chain(e.driver.iter())
                .map(String::as_str)
                .collect();
            format!("{} ({})", o.value, names.join(" / "))
        })
        .unwrap_or_else(|| o.value.to_string());
    match (&o.func, &o.text) {
        (Some(func), _) => {
            let mut e = Evidence::new("call").detail(format!("{func}() returned {name}"));
            if let Some(l) = &o.lib {
                e = e.path(l.clone());
            }
            if let Some(s) = o.seq {
                e = e.seq(s);
            }
            e
        }
        (None, Some(t)) => Evidence::new("message").detail(format!("stderr: {t:?} = {name}")),
        _ => Evidence::new("fact").detail(name),
    }
}

/// The CUDA major cuDNN was built for, with the evidence: its own
/// `cudnnGetCudartVersion()` ([R2][E3]), or failing that
/// the major of the cuBLAS(Lt)/NVRTC it loads or asks for (rule 8: "tell
/// them apart by … the libcublasLt.so.12/.13 string").
fn cudnn_build(f: &Facts<'_>) -> Option<(Ver, Vec<Evidence>, bool)> {
    for l in f.family("cudnn") {
        if let Some(b) = l.cuda_build() {
            let ev = Evidence::new("version")
                .path(l.path())
                .version(b.to_string())
                .detail(match l.cuda_build_raw() {
                    Some((v, "reported by the library")) | Some((v, "")) => {
                        format!("cudnnGetCudartVersion() = {v} (cuDNN built with CUDA {b})")
                    }
                    Some((v, how)) => {
                        format!("cudnnGetCudartVersion() = {v} (cuDNN built with CUDA {b}; {how})")
                    }
                    None => format!("cuDNN built with CUDA {b}"),
                });
            return Some((b, vec![ev], true));
        }
    }
    if let Some(c) = f
        .calls_of("cudnnGetCudartVersion")
        .find(|c| c.int_value().is_some_and(|v| v > 0))
    {
        let v = c.int_value()? as u64;
        let b = Ver::from_cuda_int(v);
        let ev = Evidence::new("call")
            .path(c.lib.clone().unwrap_or_default())
            .version(b.to_string())
            .seq(c.seq)
            .detail(format!("the program's cudnnGetCudartVersion() = {v}"));
        return Some((b, vec![ev], true));
    }
    // Libraries of a CUDA major that cuDNN itself loaded or asked for.
    let is_cudnn = |p: Option<&str>| {
        p.is_some_and(|p| cudnn_trace_format::cuda_family(p.as_bytes()) == Some("cudnn"))
    };
    let mut votes: BTreeMap<u32, Vec<Evidence>> = BTreeMap::new();
    for l in &f.libs {
        if matches!(l.family.as_str(), "cublasLt" | "cublas" | "nvrtc")
            && is_cudnn(l.load.requester.as_deref())
        {
            if let Some(m) = l.major {
                votes.entry(m).or_default().push(loaded(l));
            }
        }
    }
    for fl in &f.failed {
        let fam = fl.ev.family.as_deref();
        if matches!(fam, Some("cublasLt" | "cublas" | "nvrtc"))
            && is_cudnn(fl.ev.requester.as_deref())
        {
            if let Some(m) = soname_major(&fl.ev.name) {
                votes.entry(m).or_default().push(
                    Evidence::new("failed")
                        .path(fl.ev.name.clone())
                        .requester_opt(fl.ev.requester.as_deref())
                        .seq(fl.ev.seq)
                        .detail("cuDNN asked for it: a library of its own CUDA major"),
                );
            }
        }
    }
    let (m, ev) = votes.into_iter().max_by_key(|(_, v)| v.len())?;
    Some((Ver(vec![m]), ev, false))
}

/// CDT003: cuDNN built for CUDA major X while the process loaded the CUDA
/// runtime of major Y. cuDNN links cudart statically ([R2][E3][R14]), so it
/// does not use the process's cudart; but the cuBLAS(Lt) and NVRTC it loads
/// are of its own major, and pip's cu12 and cu13 cuDNN wheels install the
/// same file names in the same place (rule 8), so a mismatch usually means
/// the wrong flavour was installed.
pub fn build_vs_runtime(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let mut runtimes: BTreeMap<u32, Vec<&Lib<'_>>> = BTreeMap::new();
    for l in f.family("cudart") {
        if let Some(m) = l.major {
            runtimes.entry(m).or_default().push(l);
        }
    }
    if runtimes.is_empty() {
        return Vec::new();
    }
    let Some((build, mut evidence, exact)) = cudnn_build(f) else {
        return Vec::new();
    };
    if runtimes.contains_key(&build.major()) {
        return Vec::new();
    }
    let rt: Vec<String> = runtimes.keys().map(u32::to_string).collect();
    for libs in runtimes.values() {
        evidence.extend(libs.iter().map(|l| loaded(l)));
    }
    let want = runtimes.keys().next_back().copied().unwrap_or(0);
    let how = if exact {
        ""
    } else {
        " (judged from the cuBLAS/NVRTC it loads)"
    };
    let title = format!(
        "cuDNN built for CUDA {}{how}, but the process loaded the CUDA {} runtime",
        if build.0.len() > 1 {
            build.to_string()
        } else {
            format!("{}.x", build.major())
        },
        rt.join(" and ")
    );
    let remedy = format!(
        "install the cuDNN build for CUDA {want} (pip: nvidia-cudnn-cu{want}; Debian: libcudnn9-cuda-{want}) so that cuDNN and the cuBLAS/NVRTC it loads match the runtime's major. pip's cu12 and cu13 cuDNN wheels install the same files under site-packages/nvidia/cudnn/lib, so check which one is installed (`pip list | grep nvidia-cudnn`) and remove the other"
    );
    vec![finding(
        ctx,
        "CDT003",
        Severity::Warning,
        title,
        evidence,
        remedy,
        &["R14", "E3", "E7", "E8", "R35"],
    )]
}

/// What the process knows about the driver.
struct Driver {
    /// The CUDA version the driver supports (`cuDriverGetVersion`).
    cuda: Option<(Ver, Evidence)>,
    /// The driver's own version (`libcuda.so.580.159.04`).
    file: Option<(Ver, Evidence)>,
    /// `cudaDriverGetVersion` said 0: no driver ([R7][R8][E1][E2]).
    none: Option<Evidence>,
}

fn driver(f: &Facts<'_>) -> Driver {
    let mut d = Driver {
        cuda: None,
        file: None,
        none: None,
    };
    for v in f
        .versions
        .iter()
        .filter(|v| v.family.as_deref() == Some("cuda"))
    {
        if d.cuda.is_none() && v.source.as_deref() == Some("query") {
            if let Some(x) = v.version.as_deref().and_then(Ver::parse) {
                let who = match v.asked_by.as_deref() {
                    Some("program") => "cuDriverGetVersion(), as the program called it",
                    _ => "cuDriverGetVersion(), read by the shim",
                };
                d.cuda = Some((
                    x.clone(),
                    Evidence::new("driver")
                        .path(v.path.clone())
                        .version(x.to_string())
                        .detail(who),
                ));
            }
        }
        if d.file.is_none() {
            if let Some(x) = v.driver_file.as_deref().and_then(Ver::parse) {
                d.file = Some((
                    x.clone(),
                    Evidence::new("driver")
                        .path(v.path.clone())
                        .version(x.driver_text())
                        .detail("from the file name"),
                ));
            }
        }
    }
    for c in f.calls.iter().filter(|c| c.ok()) {
        let is_drv = matches!(
            c.func.as_str(),
            "cuDriverGetVersion" | "cudaDriverGetVersion"
        );
        if !is_drv {
            continue;
        }
        match c.int_value() {
            Some(0) if c.func == "cudaDriverGetVersion" => {
                d.none = Some(
                    Evidence::new("call")
                        .path(c.lib.clone().unwrap_or_default())
                        .seq(c.seq)
                        .detail("cudaDriverGetVersion() = 0: no NVIDIA driver is installed"),
                );
            }
            Some(v) if v > 0 && d.cuda.is_none() => {
                let x = Ver::from_cuda_int(v as u64);
                d.cuda = Some((
                    x.clone(),
                    Evidence::new("call")
                        .path(c.lib.clone().unwrap_or_default())
                        .version(x.to_string())
                        .seq(c.seq)
                        .detail(format!("the program's {}() = {v}", c.func)),
                ));
            }
            _ => {}
        }
    }
    if d.cuda.is_none() {
        // Asked in a probe process at report time (the shim does not ask
        // the driver inside the program).
        d.cuda = f.family("cuda").find_map(|l| {
            let found = l.found.as_ref()?;
            let x = found.version.as_deref().and_then(Ver::parse)?;
            let e = Evidence::new("driver")
                .path(l.path())
                .version(x.to_string())
                .detail(format!("{}, {}", found.detail, found.source.words()));
            Some((x, e))
        });
    }
    if d.file.is_none() {
        d.file = f
            .family("cuda")
            .find_map(|l| l.driver_file.clone().map(|v| (v, loaded(l))));
    }
    d
}

/// Something that needs a driver: the runtime, or cuDNN's CUDA build.
struct Needer {
    what: String,
    need: Ver,
    evidence: Evidence,
}

fn needers(f: &Facts<'_>) -> Vec<Needer> {
    let mut out = Vec::new();
    for l in f.family("cudart") {
        let call = f.calls_of("cudaRuntimeGetVersion").find(|c| {
            c.ok()
                && c.int_value().is_some_and(|v| v > 0)
                && c.lib.as_deref().is_none_or(|p| l.is(p))
        });
        let v = match (l.version(), call) {
            (Some((v, _)), _) => Some(v),
            (None, Some(c)) => c.int_value().map(|v| Ver::from_cuda_int(v as u64)),
            (None, None) => l.major.map(|m| Ver(vec![m])),
        };
        if let Some(v) = v {
            if !out.iter().any(|n: &Needer| n.need == v) {
                out.push(Needer {
                    what: format!("the CUDA {v} runtime"),
                    need: v,
                    evidence: loaded(l),
                });
            }
        }
    }
    // A runtime linked into another object (CuPy's, an nvcc-built
    // program's) needs a driver as much as the shared one.
    for r in f.static_runtimes.iter().filter(|r| !r.nvidia) {
        let Some(v) = r
            .version
            .as_deref()
            .and_then(|v| Ver::parse(v.trim_end_matches(".x")))
        else {
            continue;
        };
        if !out.iter().any(|n: &Needer| n.need == v) {
            out.push(Needer {
                what: format!(
                    "the static CUDA {} runtime in {}",
                    r.version.as_deref().unwrap_or(""),
                    basename(&r.path)
                ),
                need: v,
                evidence: Evidence::new("static runtime")
                    .path(r.path.clone())
                    .version_opt(r.version.clone())
                    .detail(format!(
                        "carries a static CUDA runtime; version from {}",
                        r.version_from.as_deref().unwrap_or("?")
                    )),
            });
        }
    }
    if let Some((b, ev, true)) = cudnn_build(f) {
        out.push(Needer {
            what: format!("cuDNN (built with CUDA {b})"),
            need: b,
            evidence: ev
                .into_iter()
                .next()
                .unwrap_or_else(|| Evidence::new("version")),
        });
    }
    out
}

/// CDT004: the driver is too old for the runtime or for cuDNN's CUDA
/// build. From CUDA 11 on, a driver at or above the major's minimum runs
/// every minor of that major (minor-version compatibility, [R10][R9]): below it
/// is an error; above it but below the toolkit's own driver is MVC (info:
/// APIs of the newer minor fail with 36, newer PTX with 222). CUDA 10.x
/// needs its own toolkit driver. Also: `cudaDriverGetVersion` = 0 (no
/// driver) and error 35 seen in a call or in stderr.
pub fn driver_too_old(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let k = ctx.knowledge;
    let d = driver(f);
    let insufficient: Vec<&Observed> = f.observed.iter().filter(|o| o.value == 35).collect();
    if let Some(none) = &d.none {
        let mut ev = vec![none.clone()];
        ev.extend(insufficient.iter().map(|o| observed(o, k)));
        return vec![finding(
            ctx,
            "CDT004",
            Severity::Error,
            "no NVIDIA driver: cudaDriverGetVersion() returned 0".into(),
            ev,
            "install the NVIDIA driver (on a container: run it with GPU support, e.g. `--gpus all`), then check that libcuda.so.1 is found".to_string(),
            &["R7", "E2"],
        )];
    }
    let mut v = DriverVerdicts::default();
    for n in needers(f) {
        v.judge(&n, &d, k);
    }
    if !v.titles.is_empty() || !insufficient.is_empty() {
        let mut ev = v.errors.clone();
        d.evidence(&mut ev);
        ev.extend(insufficient.iter().map(|o| observed(o, k)));
        let title = if v.titles.is_empty() {
            "the CUDA runtime reported cudaErrorInsufficientDriver (35): the driver is older than the runtime needs".to_string()
        } else {
            v.titles.join("; ")
        };
        let upgrade = upgrade_remedy(k, &d, &v.error_needs);
        let remedy = match flavour_fix(f, ctx, &d, &v.errors) {
            Some(fix) => Remedy::new(fix).or(upgrade),
            None => Remedy::new(upgrade),
        };
        return vec![finding(
            ctx,
            "CDT004",
            Severity::Error,
            title,
            ev,
            remedy,
            &["R9", "R10", "R12", "R8", "E2", "E10", "R-xla53"],
        )];
    }
    if v.mvc_titles.is_empty() {
        return Vec::new();
    }
    let mut ev = v.mvc;
    d.evidence(&mut ev);
    vec![finding(
        ctx,
        "CDT004",
        Severity::Info,
        format!("minor-version compatibility: {}", v.mvc_titles.join("; ")),
        ev,
        "this works with a limited feature set: APIs that need a newer driver fail with cudaErrorCallRequiresNewerDriver (36) and PTX from the newer toolkit cannot be JIT-compiled (222); upgrade the driver to the toolkit's own driver if you hit either".to_string(),
        &["R9", "R10", "R12"],
    )]
}

impl Driver {
    /// The evidence for the driver's versions, as known.
    fn evidence(&self, v: &mut Vec<Evidence>) {
        if let Some((_, e)) = &self.cuda {
            v.push(e.clone());
        }
        if let Some((_, e)) = &self.file {
            v.push(e.clone());
        }
    }
}

/// What the driver means for each library that needs a CUDA version: too
/// old (an error), or enough only through minor-version compatibility.
#[derive(Default)]
struct DriverVerdicts {
    titles: Vec<String>,
    errors: Vec<Evidence>,
    /// The versions the driver is too old for.
    error_needs: Vec<Ver>,
    mvc_titles: Vec<String>,
    mvc: Vec<Evidence>,
}

impl DriverVerdicts {
    fn too_old(&mut self, n: &Needer, title: String) {
        self.titles.push(title);
        self.errors.push(n.evidence.clone());
        self.error_needs.push(n.need.clone());
    }

    fn mvc(&mut self, n: &Needer, title: String) {
        self.mvc_titles.push(title);
        self.mvc.push(n.evidence.clone());
    }

    /// Judges one library's need against the driver: by the CUDA version
    /// the driver reports when known, else by the driver's own version.
    fn judge(&mut self, n: &Needer, d: &Driver, k: &Knowledge) {
        let need = &n.need;
        let fam = k.family(need.major());
        let tk = (need.0.len() >= 2).then(|| k.toolkit(need)).flatten();
        let tk_driver = tk
            .and_then(|t| t.drivers.first())
            .and_then(|v| Ver::parse(v));
        if let Some((dc, _)) = &d.cuda {
            if dc.major() < need.major()
                || (fam.is_some_and(|x| !x.mvc)
                    && need.0.len() >= 2
                    && dc.prefix(2) < need.prefix(2))
            {
                let title = format!(
                    "the driver supports CUDA {dc}, {} needs CUDA {}",
                    n.what,
                    fmt_need(need, fam.is_none_or(|x| x.mvc))
                );
                self.too_old(n, title);
            } else if dc.major() == need.major()
                && need.minor().is_some_and(|m| Some(m) > dc.minor())
            {
                self.mvc(n, format!("{} on a driver for CUDA {dc}", n.what));
            }
            return;
        }
        let Some((df, _)) = &d.file else { return };
        match fam {
            Some(x) if x.mvc => {
                let min = x.mvc_min_driver.as_deref().and_then(Ver::parse);
                if min.as_ref().is_some_and(|m| df < m) {
                    let title = format!(
                        "driver {} is older than {} for CUDA {}.x, which {} needs",
                        df.driver_text(),
                        x.mvc_min_driver.as_deref().unwrap_or("?"),
                        need.major(),
                        n.what
                    );
                    self.too_old(n, title);
                } else if tk_driver.as_ref().is_some_and(|t| df < t) {
                    let title = format!(
                        "{} on driver {} (its toolkit driver is {})",
                        n.what,
                        df.driver_text(),
                        tk_driver.as_ref().map(Ver::driver_text).unwrap_or_default()
                    );
                    self.mvc(n, title);
                }
            }
            Some(_) => {
                if let Some(t) = tk_driver.as_ref().filter(|t| df < *t) {
                    let title = format!("driver {} is older than {}, which {} needs (no minor-version compatibility before CUDA 11)", df.driver_text(), t.driver_text(), n.what);
                    self.too_old(n, title);
                }
            }
            None => {}
        }
    }
}

/// A cuDNN too new for the driver that its package can replace with the
/// build for the driver's CUDA major (the same cuDNN version: nothing else
/// changes for the program).
fn flavour_fix(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    d: &Driver,
    errors: &[Evidence],
) -> Option<String> {
    let (dc, _) = d.cuda.as_ref()?;
    if !super::local(f, ctx) {
        return None;
    }
    errors
        .iter()
        .filter_map(|e| e.path.as_deref())
        .find_map(|p| {
            let lib = f.family("cudnn").find(|l| l.is(p))?;
            let (v, _) = lib.version()?;
            super::remedies::other_flavour(ctx, lib.real(), &v, dc.major())
        })
}

/// Which driver to install for the highest CUDA major it is too old for.
fn upgrade_remedy(k: &Knowledge, d: &Driver, error_needs: &[Ver]) -> String {
    let top = error_needs.iter().map(Ver::major).max();
    match top.and_then(|m| k.family(m).map(|x| (m, x))) {
        Some((m, x)) if x.mvc => format!(
            "upgrade the NVIDIA driver to {} or newer (the minimum for CUDA {m}.x in NVIDIA's CUDA compatibility guide){}; or use builds for the CUDA major the driver supports{}; on data-center GPUs the forward-compatibility package cuda-compat-{m}-<minor> is another way ([R11])",
            x.mvc_min_driver.as_deref().unwrap_or("?"),
            error_needs
                .iter()
                .filter(|n| n.0.len() >= 2)
                .filter_map(|n| k.toolkit(n).and_then(|t| t.drivers.first()).map(|dv| format!(", {dv} for every feature of CUDA {}", n.prefix(2))))
                .next()
                .unwrap_or_default(),
            d.cuda.as_ref().map(|(v, _)| format!(" (CUDA {}.x)", v.major())).unwrap_or_default()
        ),
        Some((m, _)) => format!(
            "upgrade the NVIDIA driver to the one CUDA {m} needs, or use builds for the CUDA version the driver supports"
        ),
        None => "upgrade the NVIDIA driver to one that supports the runtime's CUDA major (13.x: >= 580, 12.x: >= 525.60.13, 11.x: >= 450.80.02, NVIDIA's CUDA compatibility guide), or use builds for the CUDA major the driver supports (nvidia-smi shows it as \"CUDA Version\")".to_string(),
    }
}

fn fmt_need(v: &Ver, mvc: bool) -> String {
    if mvc {
        format!("{}.x", v.major())
    } else {
        v.prefix(2).to_string()
    }
}

/// Whether a libcuda is a forward-compatibility copy (`cuda-compat`
/// installs into `/usr/local/cuda-X.Y/compat/`, [R11]).
fn is_compat(l: &Lib<'_>) -> bool {
    l.path().contains("/compat/") || l.real().contains("/compat/")
}

/// The package that installed a compat libcuda (`cuda-compat-11-3`), as
/// a fix: removing it takes the compat copy away for good.
fn compat_owner(f: &Facts<'_>, ctx: &Context<'_>, l: &Lib<'_>) -> Option<String> {
    if !super::local(f, ctx) {
        return None;
    }
    super::remedies::owner_action(ctx, l.real(), "remove")
}

/// The kernel module's version, when the report runs on the host the
/// trace was taken on.
fn kernel(f: &Facts<'_>, ctx: &Context<'_>) -> Option<Ver> {
    let here = ctx.machine.hostname()?;
    if f.host().is_some_and(|h| h != here) {
        return None;
    }
    ctx.machine.kernel_driver().and_then(Ver::parse)
}

/// CDT005: a forward-compatibility libcuda (`…/compat/libcuda.so.*`) in
/// the process ([R11]): worth knowing; an error with 803 (its version does
/// not match the kernel module's, e.g. compat 580.95.05 on kernel
/// 580.159.04 [E10]) or 804 (a GPU outside forward compatibility's scope
/// [R11]). 803/804 without a compat copy are reported here too.
pub fn forward_compat(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let k = ctx.knowledge;
    let compat: Vec<&Lib<'_>> = f.family("cuda").filter(|l| is_compat(l)).collect();
    let e803: Vec<&Observed> = f.observed.iter().filter(|o| o.value == 803).collect();
    let e804: Vec<&Observed> = f.observed.iter().filter(|o| o.value == 804).collect();
    if compat.is_empty() && e803.is_empty() && e804.is_empty() {
        return Vec::new();
    }
    let kern = kernel(f, ctx);
    let mut ev: Vec<Evidence> = compat.iter().map(|l| loaded(l)).collect();
    if compat.is_empty() {
        ev.extend(f.family("cuda").map(loaded));
    }
    ev.extend(e803.iter().chain(e804.iter()).map(|o| observed(o, k)));
    if let Some(kv) = &kern {
        ev.push(Evidence::new("driver").version(kv.driver_text()).detail(
            "the NVIDIA kernel module loaded on this machine now (/proc/driver/nvidia/version)",
        ));
    }
    let c = compat.first().copied();
    let cver = c.and_then(|l| l.driver_file.clone());
    let centry = c.map(|l| entry_of(f, ctx, l));
    let cdir = centry.as_ref().map(|e| e.shown().to_string());
    let leave = match (c, &centry) {
        (Some(l), Some(e)) => how_to_avoid(f, ctx, l, e, None),
        _ => "remove the forward-compatibility directory (…/compat) from LD_LIBRARY_PATH and /etc/ld.so.conf.d".into(),
    };
    let (severity, title, remedy) = if !e804.is_empty() {
        (
            Severity::Error,
            format!(
                "forward compatibility on a GPU that does not support it (804){}",
                cver.as_ref().map(|v| format!(": libcuda {} from {}", v.driver_text(), cdir.clone().unwrap_or_default())).unwrap_or_default()
            ),
            format!(
                "forward compatibility works only on data-center GPUs (and select RTX / Jetson boards): {}; the host's own driver runs every runtime of the CUDA major it supports (minor-version compatibility), and a newer CUDA major needs a newer host driver, not a compat package",
                match c.and_then(|l| compat_owner(f, ctx, l)) {
                    Some(o) => format!("{o}, or {leave}"),
                    None => leave.clone(),
                }
            ),
        )
    } else if !e803.is_empty() {
        let newer = matches!((&kern, &cver), (Some(kv), Some(cv)) if kv >= cv);
        let t = match (&cver, &kern) {
            (Some(cv), Some(kv)) => format!(
                "the forward-compatibility libcuda {} does not match the kernel module {} (803)",
                cv.driver_text(),
                kv.driver_text()
            ),
            (Some(cv), None) => format!(
                "the forward-compatibility libcuda {} does not match the kernel module (803)",
                cv.driver_text()
            ),
            (None, _) => {
                "the user-mode driver (libcuda) and the kernel module disagree (803)".to_string()
            }
        };
        let r = if c.is_none() {
            "after a driver upgrade, reboot (or reload the nvidia kernel module) so that the kernel module matches libcuda; or remove a stray libcuda.so.1 from LD_LIBRARY_PATH".to_string()
        } else if newer {
            format!("the kernel driver is already at least as new as the compat package, so it is not needed: {leave}")
        } else {
            format!("install the cuda-compat package built for the kernel driver's branch (intra-branch kernel upgrades may need a new compat package), or {leave}")
        };
        (Severity::Error, t, r)
    } else {
        match (&kern, &cver) {
            (Some(kv), Some(cv)) if kv > cv => (
                Severity::Warning,
                format!("forward-compatibility libcuda {} is older than the kernel module {}: cuInit will fail with 803", cv.driver_text(), kv.driver_text()),
                format!("the kernel driver is newer than the compat package, which is then not needed: {leave}"),
            ),
            _ => (
                Severity::Info,
                format!(
                    "forward-compatibility libcuda{} in use, from {}",
                    cver.as_ref().map(|v| format!(" {}", v.driver_text())).unwrap_or_default(),
                    cdir.clone().unwrap_or_default()
                ),
                "fine on a data-center GPU whose kernel driver is older than the compat package; when the kernel driver is as new or newer, remove the compat directory from the search path (an older compat libcuda on a newer kernel module gives 803, on other GPUs 804)".to_string(),
            ),
        }
    };
    vec![finding(
        ctx,
        "CDT005",
        severity,
        title,
        ev,
        remedy,
        &["R11", "R11b", "R11c", "R12", "R8", "E10"],
    )]
}

/// CDT007: `cudnnCreate` or `cuInit` returned an error. A cuDNN status is
/// decoded with the numbering of the major of the copy that returned it
/// (v7/v8 count 0, 1, 2…, v9 uses categories: 1001 is v9's
/// NOT_INITIALIZED, 1 is v8's; [R4][R5][R42]), with the likely causes of the table
/// and what the trace shows (cuInit's result, CUDA_VISIBLE_DEVICES, whether
/// a libcuda was loaded at all). 803/804/34 from cuInit are left to CDT005
/// and CDT011.
pub fn init_failed(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let k = ctx.knowledge;
    let mut out = Vec::new();
    let visible = f.img.header.env.get("CUDA_VISIBLE_DEVICES").cloned();
    let no_libcuda = f.family("cuda").next().is_none();
    // Group identical failures: (fn, lib, status) → calls.
    let mut groups: BTreeMap<(String, String, i64), Vec<u64>> = BTreeMap::new();
    for c in f
        .calls
        .iter()
        .filter(|c| c.func == "cudnnCreate" || c.func == "cuInit")
    {
        if let Some(s) = c.status.filter(|&s| s != 0) {
            if c.func == "cuInit" && matches!(s, 803 | 804 | 34) {
                continue;
            }
            groups
                .entry((c.func.clone(), c.lib.clone().unwrap_or_default(), s))
                .or_default()
                .push(c.seq);
        }
    }
    let cuinit_failed: Vec<(i64, String)> = groups
        .keys()
        .filter(|(func, _, _)| func == "cuInit")
        .map(|(_, _, s)| {
            (
                *s,
                k.cuda_error(*s)
                    .and_then(|e| e.driver.clone())
                    .unwrap_or_default(),
            )
        })
        .collect();
    for ((func, lib, status), seqs) in groups {
        let times = if seqs.len() > 1 {
            format!(" ({} calls)", seqs.len())
        } else {
            String::new()
        };
        let mut ev = vec![Evidence::new("call")
            .path(lib.clone())
            .seq(seqs[0])
            .detail(format!("{func}() returned {status}{times}"))];
        let mut causes: Vec<String> = Vec::new();
        let title;
        if func == "cudnnCreate" {
            let copy = f.lib_at(&lib);
            let major = copy
                .and_then(|l| l.major.or_else(|| l.version().map(|(v, _)| v.major())))
                .unwrap_or(if status >= 1000 { 9 } else { 8 });
            let guessed = copy.and_then(|l| l.major).is_none();
            if let Some(l) = copy {
                ev.push(loaded(l));
            }
            let st = k.cudnn_status(major, status);
            let name = st
                .map(|s| Knowledge::cudnn_status_name(s, major).to_string())
                .unwrap_or_else(|| "an unknown status".into());
            // CUDNN_STATUS_CATEGORY decodes a v9 status the table lacks
            // (one from a newer release).
            let cat = if major >= 9 && st.is_none() {
                k.cudnn_category(status)
                    .map(|c| format!(", category {} ({})", c.base, c.name))
                    .unwrap_or_default()
            } else {
                String::new()
            };
            let numbering = if guessed {
                format!("cuDNN {major} numbering, guessed from the value")
            } else {
                format!("cuDNN {major} numbering")
            };
            title = format!("cudnnCreate failed: {status} {name} ({numbering}{cat})");
            if let Some(s) = st {
                ev.push(Evidence::new("fact").detail(format!("{name}: {}", s.meaning)));
                causes.extend(s.create_causes.iter().cloned());
            }
        } else {
            let e = k.cuda_error(status);
            let name = e
                .and_then(|e| e.driver.clone().or(e.runtime.clone()))
                .unwrap_or_else(|| "an unknown CUresult".into());
            title = format!("cuInit failed: {status} {name}");
            if let Some(e) = e {
                ev.push(Evidence::new("fact").detail(format!("{name}: {}", e.meaning)));
                causes.extend(e.causes.iter().cloned());
            }
            if let Some(l) = f.lib_at(&lib) {
                ev.push(loaded(l));
            }
        }
        // What the trace itself says.
        let mut fixes: Vec<String> = Vec::new();
        if let Some(v) = &visible {
            ev.push(Evidence::new("environment").detail(format!("CUDA_VISIBLE_DEVICES={v:?}")));
            if v.trim().is_empty() || v.trim() == "-1" {
                fixes.push("CUDA_VISIBLE_DEVICES hides every GPU: unset it or name a GPU".into());
            }
        }
        if func == "cudnnCreate" {
            for (s, n) in &cuinit_failed {
                fixes.push(format!("cuInit itself failed ({s} {n}): fix that first"));
            }
            if no_libcuda {
                fixes.push("no libcuda.so.1 was loaded: install the NVIDIA driver, or run the container with GPU support".into());
            }
            for o in f
                .observed
                .iter()
                .filter(|o| matches!(o.value, 35 | 100 | 803 | 804 | 34))
            {
                ev.push(observed(o, k));
            }
        }
        if fixes.is_empty() {
            fixes.push("check the driver and the GPU in the same environment (nvidia-smi), then the likely causes above".into());
        }
        for c in &causes {
            ev.push(Evidence::new("likely cause").detail(c.clone()));
        }
        out.push(finding(
            ctx,
            "CDT007",
            Severity::Error,
            title,
            ev,
            fixes.join("; "),
            &["R4", "R5", "R42", "R8", "E4", "E10", "R21"],
        ));
    }
    out
}

/// CDT011: the CUDA toolkit's stub `libcuda.so` (`…/stubs/`, for linking
/// only) was loaded instead of the driver's, or error 34 was seen ([R7][R8][E1]).
pub fn stub_driver(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let stubs: Vec<&Lib<'_>> = f.family("cuda").filter(|l| l.is_stub()).collect();
    let seen: Vec<&Observed> = f.observed.iter().filter(|o| o.value == 34).collect();
    if stubs.is_empty() && seen.is_empty() {
        return Vec::new();
    }
    let mut ev: Vec<Evidence> = stubs.iter().map(|l| loaded(l)).collect();
    ev.extend(seen.iter().map(|o| observed(o, ctx.knowledge)));
    let fix = stubs
        .first()
        .map(|l| how_to_avoid(f, ctx, l, &entry_of(f, ctx, l), None))
        .unwrap_or_else(|| "remove the toolkit's …/lib64/stubs directory from LD_LIBRARY_PATH and /etc/ld.so.conf.d".into());
    vec![finding(
        ctx,
        "CDT011",
        Severity::Error,
        match stubs.first() {
            Some(l) => format!("the CUDA toolkit's stub libcuda was loaded: {}", l.path()),
            None => "CUDA reported CUDA_ERROR_STUB_LIBRARY (34): a stub libcuda was loaded".into(),
        },
        ev,
        format!(
            "the stubs are for linking only: {fix}, so that the driver's libcuda.so.1 is found"
        ),
        &["R8"],
    )]
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use serde_json::json;

    const PIP: &str = "/v/site-packages/nvidia";

    #[test]
    fn cudnn_for_cuda12_in_a_cuda13_process() {
        let t = Trace::new()
            .load(
                &format!("{PIP}/cu13/lib/libcudart.so.13"),
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(
                &format!("{PIP}/cudnn/lib/libcudnn_graph.so.9"),
                "RUNPATH",
                &format!("{PIP}/cudnn/lib/libcudnn.so.9"),
            )
            .version_query(
                &format!("{PIP}/cudnn/lib/libcudnn_graph.so.9"),
                "cudnn",
                "9.28.0",
                Some(12090),
                Some(1210),
                Some(0),
            );
        let fs = t.findings();
        let f = only(&fs, "CDT003");
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.title,
            "cuDNN built for CUDA 12.9, but the process loaded the CUDA 13 runtime"
        );
        assert!(f.fix.contains("nvidia-cudnn-cu13"));
        // Same major: nothing.
        let t = Trace::new()
            .load(
                &format!("{PIP}/cu13/lib/libcudart.so.13"),
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(
                &format!("{PIP}/cudnn/lib/libcudnn_graph.so.9"),
                "RUNPATH",
                "/x",
            )
            .version_query(
                &format!("{PIP}/cudnn/lib/libcudnn_graph.so.9"),
                "cudnn",
                "9.19.0",
                Some(13000),
                None,
                None,
            );
        assert!(none(&t.findings(), "CDT003"));
    }

    #[test]
    fn cudnn_flavour_from_the_cublaslt_it_asks_for() {
        let g = format!("{PIP}/cudnn/lib/libcudnn_engines_precompiled.so.9");
        let t = Trace::new()
            .load(
                &format!("{PIP}/cu13/lib/libcudart.so.13"),
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(&g, "RUNPATH", "/x")
            .failed(
                "libcublasLt.so.12",
                &g,
                &[(
                    "/v/site-packages/nvidia/cublas/lib/libcublasLt.so.12",
                    "RUNPATH",
                    "missing",
                )],
                Some(
                    "libcublasLt.so.12: cannot open shared object file: No such file or directory",
                ),
            );
        let fs = t.findings();
        let f = only(&fs, "CDT003");
        assert!(
            f.title
                .contains("CUDA 12.x (judged from the cuBLAS/NVRTC it loads)"),
            "{}",
            f.title
        );
    }

    /// "CUDA driver version is insufficient for CUDA runtime version".
    #[test]
    fn driver_older_than_the_runtime() {
        let t = Trace::new()
            .load("/usr/local/cuda-13.0/lib64/libcudart.so.13.0.96", "LD_LIBRARY_PATH", "/x/app")
            .load("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "ld.so.cache", "/usr/local/cuda-13.0/lib64/libcudart.so.13.0.96")
            .driver_version("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "12.4", Some("550.54.14"))
            .stderr("RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n");
        let fs = t.findings();
        let f = only(&fs, "CDT004");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.title,
            "the driver supports CUDA 12.4, the CUDA 13.0.96 runtime needs CUDA 13.x"
        );
        assert!(
            f.fix.contains("upgrade the NVIDIA driver to 580 or newer"),
            "{}",
            f.fix
        );
        assert!(
            f.fix.contains("580.65.06 for every feature of CUDA 13.0"),
            "{}",
            f.fix
        );
        assert!(f.evidence.iter().any(|e| e.what == "message"
            && e.detail
                .as_deref()
                .unwrap()
                .contains("35 (cudaErrorInsufficientDriver)")));
    }

    #[test]
    fn insufficient_driver_from_stderr_alone_and_from_driver_file() {
        let t = Trace::new()
            .load("/x/libcudart.so.12", "RUNPATH", "/x/app")
            .stderr("cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version\n");
        let f = only(&t.findings(), "CDT004").clone();
        assert!(
            f.title.contains("cudaErrorInsufficientDriver (35)"),
            "{}",
            f.title
        );
        // Driver version from the file name only: 470 < 525.60.13 for CUDA 12.
        let t = Trace::new()
            .load("/x/libcudart.so.12", "RUNPATH", "/x/app")
            .load_id(
                "/usr/lib/libcuda.so.1",
                "/usr/lib/libcuda.so.470.82.01",
                5,
                "ld.so.cache",
                "/x/libcudart.so.12",
            );
        let f = only(&t.findings(), "CDT004").clone();
        assert_eq!(f.title, "driver 470.82.01 is older than 525.60.13 for CUDA 12.x, which the CUDA 12 runtime needs");
    }

    #[test]
    fn minor_version_compatibility_is_info_and_new_drivers_are_quiet() {
        let t = Trace::new()
            .load("/x/libcudart.so.13.1.80", "RUNPATH", "/x/app")
            .load_id(
                "/usr/lib/libcuda.so.1",
                "/usr/lib/libcuda.so.580.159.04",
                5,
                "ld.so.cache",
                "/x/libcudart.so.13.1.80",
            );
        let f = only(&t.findings(), "CDT004").clone();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.title.contains("toolkit driver is 590.44.01"),
            "{}",
            f.title
        );
        let t = Trace::new()
            .load("/x/libcudart.so.13.0.96", "RUNPATH", "/x/app")
            .driver_version("/usr/lib/libcuda.so.1", "13.0", Some("580.159.04"));
        assert!(none(&t.findings(), "CDT004"));
        // The program's own cuDriverGetVersion.
        let t = Trace::new()
            .load("/x/libcudart.so.12", "RUNPATH", "/x/app")
            .call(
                "cuDriverGetVersion",
                "/usr/lib/libcuda.so.1",
                Some(0),
                Some(json!(11080)),
            );
        assert_eq!(
            only(&t.findings(), "CDT004").title,
            "the driver supports CUDA 11.8, the CUDA 12 runtime needs CUDA 12.x"
        );
    }

    #[test]
    fn cudnn_build_needs_the_driver_too_and_no_driver_at_all() {
        let g = "/p/libcudnn_graph.so.9";
        let t = Trace::new()
            .load(g, "RUNPATH", "/p/libcudnn.so.9")
            .version_query(g, "cudnn", "9.19.0", Some(13000), None, None)
            .call(
                "cuDriverGetVersion",
                "/usr/lib/libcuda.so.1",
                Some(0),
                Some(json!(12080)),
            );
        assert!(only(&t.findings(), "CDT004")
            .title
            .contains("cuDNN (built with CUDA 13.0) needs CUDA 13.x"));
        let t = Trace::new()
            .load("/x/libcudart.so.12", "RUNPATH", "/x/app")
            .call(
                "cudaDriverGetVersion",
                "/x/libcudart.so.12",
                Some(0),
                Some(json!(0)),
            );
        let f = only(&t.findings(), "CDT004").clone();
        assert!(f.title.contains("no NVIDIA driver"));
    }

    /// Error 804: forward compatibility on unsupported hardware.
    #[test]
    fn compat_libcuda_with_804() {
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/usr/local/cuda-13.0/compat:/usr/local/nvidia/lib64")
            .load_id("/usr/local/cuda-13.0/compat/libcuda.so.1", "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05", 9, "LD_LIBRARY_PATH", "/v/libcudart.so.13")
            .call("cuInit", "/usr/local/cuda-13.0/compat/libcuda.so.1", Some(804), None)
            .stderr("RuntimeError: CUDA error: forward compatibility was attempted on non supported HW\n");
        let fs = t.findings();
        let f = only(&fs, "CDT005");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(f.title, "forward compatibility on a GPU that does not support it (804): libcuda 580.95.05 from /usr/local/cuda-13.0/compat");
        assert!(
            f.fix
                .contains("remove /usr/local/cuda-13.0/compat from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
        // Not repeated as a cuInit failure.
        assert!(none(&fs, "CDT007"));
    }

    /// compat 580.95.05 on kernel 580.159.04 → 803 (E10).
    #[test]
    fn compat_libcuda_with_803_and_a_newer_kernel_module() {
        let t = Trace::new()
            .load_id(
                "/usr/local/cuda-13.0/compat/libcuda.so.1",
                "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05",
                9,
                "LD_LIBRARY_PATH",
                "/v/libcudart.so.13",
            )
            .call(
                "cuInit",
                "/usr/local/cuda-13.0/compat/libcuda.so.1",
                Some(803),
                None,
            )
            .machine(|m| {
                m.kernel = Some("580.159.04".into());
                m.host = Some("node1".into());
            });
        let fs = t.findings();
        let f = only(&fs, "CDT005");
        assert_eq!(f.title, "the forward-compatibility libcuda 580.95.05 does not match the kernel module 580.159.04 (803)");
        assert!(
            f.fix
                .contains("not needed: remove /usr/local/cuda-13.0/compat from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
        // The same without an error, seen from the same host: a warning.
        let t = Trace::new()
            .load_id(
                "/usr/local/cuda-13.0/compat/libcuda.so.1",
                "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05",
                9,
                "LD_LIBRARY_PATH",
                "/v/libcudart.so.13",
            )
            .machine(|m| {
                m.kernel = Some("580.159.04".into());
                m.host = Some("node1".into());
            });
        assert_eq!(only(&t.findings(), "CDT005").severity, Severity::Warning);
        // From another host the kernel module is unknown: info.
        let t = Trace::new()
            .load_id(
                "/usr/local/cuda-13.0/compat/libcuda.so.1",
                "/usr/local/cuda-13.0/compat/libcuda.so.580.95.05",
                9,
                "LD_LIBRARY_PATH",
                "/v/libcudart.so.13",
            )
            .machine(|m| {
                m.kernel = Some("580.159.04".into());
                m.host = Some("laptop".into());
            });
        assert_eq!(only(&t.findings(), "CDT005").severity, Severity::Info);
        // An ordinary libcuda: nothing.
        let t = Trace::new().load(
            "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
            "ld.so.cache",
            "/v/libcudart.so.13",
        );
        assert!(none(&t.findings(), "CDT005"));
    }

    #[test]
    fn cudnn_create_failure_decoded_by_major() {
        // v9: 1001 NOT_INITIALIZED with a hidden GPU (E10).
        let t = Trace::new()
            .env("CUDA_VISIBLE_DEVICES", "")
            .load("/p/libcudnn.so.9", "RPATH", "/v/torch/lib/libtorch_cuda.so")
            .call("cudnnCreate", "/p/libcudnn.so.9", Some(1001), None)
            .call("cudnnCreate", "/p/libcudnn.so.9", Some(1001), None);
        let fs = t.findings();
        let f = only(&fs, "CDT007");
        assert_eq!(
            f.title,
            "cudnnCreate failed: 1001 CUDNN_STATUS_NOT_INITIALIZED (cuDNN 9 numbering)"
        );
        assert!(f.evidence[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("(2 calls)"));
        assert!(
            f.fix.contains("CUDA_VISIBLE_DEVICES hides every GPU"),
            "{}",
            f.fix
        );
        assert!(f.fix.contains("no libcuda.so.1 was loaded"), "{}", f.fix);
        assert!(f.evidence.iter().any(|e| e.what == "likely cause"));
        // v8: 1 is NOT_INITIALIZED; 6 is ARCH_MISMATCH.
        let t = Trace::new().load("/p/libcudnn.so.8", "RPATH", "/x").call(
            "cudnnCreate",
            "/p/libcudnn.so.8",
            Some(6),
            None,
        );
        assert_eq!(
            only(&t.findings(), "CDT007").title,
            "cudnnCreate failed: 6 CUDNN_STATUS_ARCH_MISMATCH (cuDNN 8 numbering)"
        );
        // v9 3007 with its category.
        let t = Trace::new()
            .load("/p/libcudnn.so.9.1.0", "RPATH", "/x")
            .call("cudnnCreate", "/p/libcudnn.so.9.1.0", Some(3007), None);
        assert_eq!(
            only(&t.findings(), "CDT007").title,
            "cudnnCreate failed: 3007 CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (cuDNN 9 numbering)"
        );
        // A v9 status the table does not know: its category.
        let t = Trace::new().load("/p/libcudnn.so.9", "RPATH", "/x").call(
            "cudnnCreate",
            "/p/libcudnn.so.9",
            Some(3099),
            None,
        );
        assert_eq!(
            only(&t.findings(), "CDT007").title,
            "cudnnCreate failed: 3099 an unknown status (cuDNN 9 numbering, category 3000 (CUDNN_STATUS_NOT_SUPPORTED))"
        );
        // Success: nothing.
        let t = Trace::new().load("/p/libcudnn.so.9", "RPATH", "/x").call(
            "cudnnCreate",
            "/p/libcudnn.so.9",
            Some(0),
            None,
        );
        assert!(none(&t.findings(), "CDT007"));
    }

    #[test]
    fn cuinit_failure_with_no_device() {
        let t = Trace::new()
            .env("CUDA_VISIBLE_DEVICES", "")
            .load("/usr/lib/libcuda.so.1", "ld.so.cache", "/x/libcudart.so.13")
            .call("cuInit", "/usr/lib/libcuda.so.1", Some(100), None)
            .load("/p/libcudnn.so.9", "RPATH", "/x")
            .call("cudnnCreate", "/p/libcudnn.so.9", Some(1001), None);
        let fs = t.findings();
        let v = all(&fs, "CDT007");
        assert_eq!(v.len(), 2);
        let init = v.iter().find(|f| f.title.starts_with("cuInit")).unwrap();
        assert_eq!(init.title, "cuInit failed: 100 CUDA_ERROR_NO_DEVICE");
        let create = v
            .iter()
            .find(|f| f.title.starts_with("cudnnCreate"))
            .unwrap();
        assert!(
            create
                .fix
                .contains("cuInit itself failed (100 CUDA_ERROR_NO_DEVICE)"),
            "{}",
            create.fix
        );
    }

    #[test]
    fn stub_libcuda() {
        let t = Trace::new().load(
            "/usr/local/cuda-12.4/lib64/stubs/libcuda.so",
            "LD_LIBRARY_PATH",
            "/x/libcudart.so.12",
        );
        let fs = t.findings();
        let f = only(&fs, "CDT011");
        assert!(
            f.fix
                .contains("remove /usr/local/cuda-12.4/lib64/stubs from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
        let t = Trace::new().load("/usr/lib/libcuda.so.1", "ld.so.cache", "/x");
        assert!(none(&t.findings(), "CDT011"));
    }
}
