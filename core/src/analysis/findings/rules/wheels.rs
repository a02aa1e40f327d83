//! The pip wheels of the libraries a process loaded (issue 9, classes 6
//! and 7).
//!
//! CDT013: an NVIDIA wheel whose version is a date (`nvidia-cudnn-cu11
//! 2022.5.19`), not its library's release. NVIDIA numbers its CUDA library
//! wheels with the library's own version ([R30][R30e]); the date-numbered
//! releases sort above every real one, so `>=8.8` or `pip install -U`
//! picks them, and what they install is an old packaging of unknown
//! version (jax#16625, [R30d]). The fix pins a real release of the major
//! the loaded file's soname has.
//!
//! CDT014: a pip wheel of a library the process loaded, installed in the
//! same environment (the requester's site-packages, or a directory on the
//! requester's RUNPATH), that the process never loaded because another copy
//! of the same soname came first: torch 1.13.1's bundled cuDNN 8.7 in
//! `torch/lib` before the nvidia-cudnn-cu11 8.8.1 wheel ([R53]). Information
//! only: `pip list` shows a version the process does not run.

use super::remedies::dir_has;
use super::{finding, is_pip, loaded, local};
use crate::analysis::findings::facts::{basename, dirname, soname_major, Facts, Lib};
use crate::analysis::findings::{Context, Evidence, Finding, Remedy, Severity, Ver};
use crate::machine::loader::Request;
use std::collections::BTreeMap;

/// A pip distribution that installed a file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Wheel {
    /// As pip writes it (`nvidia-cudnn-cu11`).
    name: String,
    version: String,
    /// The `*.dist-info` directory.
    dist_info: String,
    /// The CUDA major its name is built for (`-cu11` → 11).
    cuda: Option<u32>,
}

/// The NVIDIA wheel (`nvidia-…`) that installed `path`: the `RECORD` that
/// lists it, else the `*.dist-info` of its `nvidia/<sub>/lib` directory.
fn nvidia_wheel(ctx: &Context<'_>, path: &str) -> Option<Wheel> {
    let m = ctx.machine;
    let (dist, cuda) = match m.package_owner(path) {
        Some(o) => (o.dist.clone(), o.cuda()),
        None => {
            let dist = m.package_of(dirname(path))?;
            (dist, None)
        }
    };
    let (name, version) = dist.split_once('-')?;
    let name = name.to_ascii_lowercase().replace('_', "-");
    if !name.starts_with("nvidia-") {
        return None;
    }
    let cuda = cuda
        .or_else(|| {
            let n = name.rsplit('-').next()?;
            n.strip_prefix("cu").map(|d| format!("{d}.x"))
        })
        .and_then(|c| c.split('.').next()?.parse().ok());
    let site = site_of(path)?;
    Some(Wheel {
        dist_info: format!("{site}/{dist}.dist-info"),
        name,
        version: version.to_string(),
        cuda,
    })
}

/// The `site-packages` (or `dist-packages`) directory a path lies in.
fn site_of(path: &str) -> Option<&str> {
    ["/site-packages/", "/dist-packages/"]
        .iter()
        .find_map(|mk| path.rfind(mk).map(|i| &path[..i + mk.len() - 1]))
}

/// `(year, month, day)` when a version is a date (`2022.5.19`): no NVIDIA
/// library has a major of four digits.
fn date_version(v: &str) -> Option<(u32, u32, u32)> {
    let parts: Vec<&str> = v.split('.').collect();
    let [y, m, d] = parts.as_slice() else {
        return None;
    };
    if y.len() != 4 {
        return None;
    }
    let (y, m, d): (u32, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
    ((1990..=2099).contains(&y) && (1..=12).contains(&m) && (1..=31).contains(&d))
        .then_some((y, m, d))
}

/// The library's name in words.
fn library_words(family: &str) -> &str {
    match family {
        "cudnn" => "cuDNN",
        "cudart" => "CUDA runtime",
        "cublas" | "cublasLt" => "cuBLAS",
        "nvrtc" => "NVRTC",
        "nvJitLink" => "nvJitLink",
        "cufft" => "cuFFT",
        "curand" => "cuRAND",
        "cusparse" => "cuSPARSE",
        "cusolver" => "cuSOLVER",
        "nccl" => "NCCL",
        other => other,
    }
}

/// A file of a date-numbered wheel that the process loaded or tried.
struct DatedFile {
    evidence: Evidence,
    family: String,
    /// The soname's major (`libcudnn.so.8` → 8).
    major: Option<u32>,
}

/// CDT013: each NVIDIA wheel numbered with a date that installed a library
/// the process loaded (or tried to load and failed on), once.
pub fn date_versioned(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    if !local(f, ctx) {
        return Vec::new();
    }
    let mut by_wheel: BTreeMap<String, (Wheel, Vec<DatedFile>)> = BTreeMap::new();
    let mut add = |path: &str, file: DatedFile| {
        if !is_pip(path) || !ctx.knowledge.wheel_numbered_like_library(&file.family) {
            return;
        }
        let Some(w) = nvidia_wheel(ctx, path).filter(|w| date_version(&w.version).is_some()) else {
            return;
        };
        by_wheel
            .entry(w.dist_info.clone())
            .or_insert_with(|| (w, Vec::new()))
            .1
            .push(file);
    };
    for lib in f.libs.iter().filter(|l| !l.is_stub()) {
        let file = DatedFile {
            evidence: loaded(lib),
            family: lib.family.clone(),
            major: lib.major,
        };
        add(lib.real(), file);
    }
    // A file of the wheel that was found but failed to load (a dependency
    // of its own missing) is the wheel's too.
    for fl in &f.failed {
        for t in fl.ev.tried.iter().filter(|t| t.result != "missing") {
            let Some(family) = cudnn_trace_format::cuda_family(t.path.as_bytes()) else {
                continue;
            };
            let file = DatedFile {
                evidence: Evidence::new("failed")
                    .path(t.path.clone())
                    .reason(t.reason.clone())
                    .requester_opt(fl.ev.requester.as_deref())
                    .seq(fl.ev.seq),
                family: family.to_string(),
                major: soname_major(&t.path),
            };
            add(&t.path, file);
        }
    }
    by_wheel
        .into_values()
        .map(|(w, files)| date_finding(ctx, &w, files))
        .collect()
}

fn date_finding(ctx: &Context<'_>, w: &Wheel, files: Vec<DatedFile>) -> Finding {
    let what = library_words(&files[0].family).to_string();
    let remedy = date_remedy(ctx, w, &files[0]);
    let (y, m, d) = date_version(&w.version).unwrap_or_default();
    let title = format!(
        "{} {} is not a {what} release: its version is a date ({y}-{m:02}-{d:02}), so the {what} it installed is of unknown version",
        w.name, w.version
    );
    let mut evidence: Vec<Evidence> = files.into_iter().map(|x| x.evidence).collect();
    evidence.push(
        Evidence::new("package")
            .path(w.dist_info.clone())
            .detail(format!(
                "pip's dist-info says {} {}: a date, not a {what} version; pip orders it above every real release, so a requirement such as `{}>=N` or `pip install -U` chooses it",
                w.name, w.version, w.name
            )),
    );
    finding(
        ctx,
        "CDT013",
        Severity::Warning,
        title,
        evidence,
        remedy,
        &["R30", "R30d", "R30e"],
    )
}

/// A real release to pin: the same project with the major of the file's
/// soname (for cuDNN, the package table's wheel of that cuDNN and CUDA
/// major, which exists).
fn date_remedy(ctx: &Context<'_>, w: &Wheel, file: &DatedFile) -> Remedy {
    let why = "pin it in requirements files too, so that pip never picks the date again";
    let pin = match (file.family.as_str(), file.major, w.cuda) {
        ("cudnn", Some(m), Some(c)) => ctx.knowledge.cudnn_wheel(m, c).map(str::to_string),
        ("cudnn", _, _) => None,
        (_, Some(m), _) => Some(format!("{}=={m}.*", w.name)),
        _ => None,
    };
    match pin {
        Some(p) => Remedy::new(format!(
            "install a real release instead of the date: pip install '{p}' ({why})"
        )),
        None => Remedy::new(format!(
            "install a release of {} numbered like the library (`pip index versions {}` lists them) instead of {} ({why})",
            w.name, w.name, w.version
        )),
    }
}

/// One loaded library and the unused wheel copy of it.
struct Unused<'l, 'a> {
    lib: &'l Lib<'a>,
    /// The wheel's file of the same name.
    copy: String,
}

/// CDT014: the NVIDIA wheels installed in a requester's environment that
/// hold a library the process loaded from elsewhere and never loaded
/// themselves; one finding per wheel directory.
pub fn unused_wheels(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    if !local(f, ctx) {
        return Vec::new();
    }
    let served = served_instead(f, ctx);
    let mut by_dir: BTreeMap<String, Vec<Unused<'_, '_>>> = BTreeMap::new();
    for lib in f.libs.iter().filter(|l| l.load.new && !l.is_stub()) {
        for (dir, copy) in unused_copies(f, ctx, lib, &served) {
            by_dir.entry(dir).or_default().push(Unused { lib, copy });
        }
    }
    by_dir
        .into_iter()
        .filter_map(|(dir, unused)| {
            let w = nvidia_wheel(ctx, &unused[0].copy)?;
            Some(unused_finding(f, ctx, &dir, &w, &unused))
        })
        .collect()
}

/// The asked-for file name of a library (its soname), else its path's.
fn asked_name<'l>(lib: &'l Lib<'_>) -> &'l str {
    basename(lib.load.name.as_deref().unwrap_or(&lib.load.path))
}

/// The wheel directories in `lib`'s requester's environment with another
/// file of the name `lib` was asked by, that nothing in the process was
/// loaded from, nor left unused by a resident copy (`served`, CDT012's):
/// `(directory, file)`.
fn unused_copies(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    lib: &Lib<'_>,
    served: &[String],
) -> Vec<(String, String)> {
    let m = ctx.machine;
    let Some(req) = lib.load.requester.as_deref().filter(|r| r.starts_with('/')) else {
        return Vec::new();
    };
    let name = asked_name(lib);
    let on_runpath = runpath_dirs(f, ctx, req);
    let mine = m.canonical(lib.real()).unwrap_or_else(|| lib.real().into());
    let mut out = Vec::new();
    for dir in environment_dirs(ctx, req, &on_runpath) {
        let copy = format!("{dir}/{name}");
        let real = m.canonical(&copy);
        if !m.exists(&copy) || real.as_deref().is_none_or(|r| r == mine) {
            continue;
        }
        // LD_LIBRARY_PATH over the requester's RUNPATH is CDT008's.
        if lib.load.reason == "LD_LIBRARY_PATH" && on_runpath.contains(&dir) {
            continue;
        }
        if served.contains(&dir) || loaded_from(f, ctx, &dir, lib) {
            continue;
        }
        out.push((dir, copy));
    }
    out
}

/// The RPATH/RUNPATH directories of `req` on this machine.
fn runpath_dirs(f: &Facts<'_>, ctx: &Context<'_>, req: &str) -> Vec<String> {
    let real = f
        .img
        .loads
        .iter()
        .find(|x| x.path == req)
        .and_then(|x| x.realpath.as_deref());
    ctx.machine
        .search_dirs(req, real)
        .map(|(_, dirs)| dirs.into_iter().map(|(d, _)| d).collect())
        .unwrap_or_default()
}

/// The wheel directories of the requester's environment: its RUNPATH's
/// directories inside a site-packages, and the `nvidia/<sub>/lib`
/// directories of its own site-packages.
fn environment_dirs(ctx: &Context<'_>, req: &str, on_runpath: &[String]) -> Vec<String> {
    let mut dirs: Vec<String> = on_runpath.iter().filter(|d| is_pip(d)).cloned().collect();
    if let Some(site) = site_of(req) {
        let nv = format!("{site}/nvidia");
        let mut subs = ctx.machine.list_dir(&nv);
        subs.sort();
        for s in subs {
            let d = format!("{nv}/{s}/lib");
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    dirs
}

/// Whether the process loaded a library of `lib`'s stem from `dir`.
fn loaded_from(f: &Facts<'_>, ctx: &Context<'_>, dir: &str, lib: &Lib<'_>) -> bool {
    let canon = ctx.machine.canonical(dir).unwrap_or_else(|| dir.into());
    f.libs
        .iter()
        .any(|x| x.stem == lib.stem && (x.dir() == dir || x.dir() == canon))
}

/// The directories where the requests by name that a resident copy
/// served would have been found by their requesters' own search: CDT012
/// says that, and the wheel's other files went unused for the same reason
/// (JAX's plugin asked for `libcudnn.so.9`, torch's was resident, and with
/// it torch's sub-libraries).
fn served_instead(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<String> {
    let llp = f.img.ld_library_path();
    let mut dirs: Vec<String> = Vec::new();
    let mut asked: std::collections::BTreeSet<(&str, Option<&str>)> = Default::default();
    for l in f.img.loads.iter().filter(|l| !l.new && l.family.is_some()) {
        let Some(name) = l.name.as_deref().filter(|n| !n.contains('/')) else {
            continue;
        };
        // A program that dlopens the same name again and again asks once.
        if !asked.insert((name, l.requester.as_deref())) {
            continue;
        }
        let hit = ctx.machine.would_find(&Request {
            name,
            requester: l.requester.as_deref(),
            requester_real: None,
            exe: f.img.header.exe.as_deref(),
            ld_library_path: &llp,
        });
        if let Some(d) = hit.map(|h| dirname(&h.path).to_string()) {
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
    }
    dirs
}

fn unused_finding(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    dir: &str,
    w: &Wheel,
    unused: &[Unused<'_, '_>],
) -> Finding {
    let first = unused[0].lib;
    let shown = |l: &Lib<'_>| {
        l.version_text()
            .map(|v| format!("{} {v}", asked_name(l)))
            .unwrap_or_else(|| asked_name(l).to_string())
    };
    let names: Vec<String> = unused.iter().map(|u| shown(u.lib)).collect();
    let title = format!(
        "the installed {} {} ({dir}) is not used: {} came from {} first",
        w.name,
        w.version,
        super::and_list(&names),
        first.dir()
    );
    let mut evidence: Vec<Evidence> = unused.iter().map(|u| loaded(u.lib)).collect();
    for u in unused {
        evidence.push(
            Evidence::new("on disk")
                .path(u.copy.clone())
                .version_opt(wheel_version_of(w, u.lib))
                .detail(format!(
                    "{} {} installed it; never loaded in this process",
                    w.name, w.version
                )),
        );
    }
    finding(
        ctx,
        "CDT014",
        Severity::Info,
        title,
        evidence,
        unused_remedy(f, ctx, dir, w, first),
        &["R34", "R53"],
    )
}

/// The wheel's version as the library's, when its major is the file's.
fn wheel_version_of(w: &Wheel, lib: &Lib<'_>) -> Option<String> {
    let v = Ver::parse(&w.version)?;
    (Some(v.major()) == lib.major).then(|| w.version.clone())
}

/// Nothing to change if the copy in use is wanted; how to use the wheel's
/// instead, checked against the disk: a cuDNN pin only where the wheel's
/// directory holds every cuDNN file the process loaded.
fn unused_remedy(f: &Facts<'_>, ctx: &Context<'_>, dir: &str, w: &Wheel, lib: &Lib<'_>) -> Remedy {
    let r = Remedy::new(format!(
        "nothing to change if {} is the copy you want: `pip list` shows {} {}, but this process never loads it",
        lib.dir(),
        w.name,
        w.version
    ));
    if lib.family == "cudnn" {
        let complete = f
            .family("cudnn")
            .filter(|l| l.major == lib.major)
            .all(|l| dir_has(ctx, dir, l) == Some(true));
        if complete {
            return r.or(format!(
                "to use the wheel's cuDNN instead: cudnn-trace --pin {dir}"
            ));
        }
        return r;
    }
    if lib.load.reason == "RUNPATH" {
        return r.or(format!(
            "to use the wheel's copy instead: put {dir} first on LD_LIBRARY_PATH (searched before RUNPATH)"
        ));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::date_version;
    use crate::analysis::findings::testkit::*;
    use crate::model::elf::DynInfo;

    const SP: &str = "/v/lib/python3.10/site-packages";

    #[test]
    fn dates_are_not_versions() {
        assert_eq!(date_version("2022.5.19"), Some((2022, 5, 19)));
        assert_eq!(date_version("2021.12.08"), Some((2021, 12, 8)));
        assert_eq!(date_version("8.9.6.50"), None);
        assert_eq!(date_version("11.10.3.66"), None);
        assert_eq!(date_version("2022.13.1"), None);
        assert_eq!(date_version("2022.5"), None);
    }

    /// jax#16625: pip chose nvidia-cudnn-cu11 2022.5.19 for `>=8.8`; the
    /// fix pins a real cuDNN 8 release of that project.
    #[test]
    fn a_date_numbered_wheel_is_named_with_a_real_release_to_pin() {
        let lib = format!("{SP}/nvidia/cudnn/lib");
        let t = Trace::new()
            .load(
                &format!("{lib}/libcudnn.so.8"),
                "RUNPATH",
                &format!("{SP}/jaxlib/xla_extension.so"),
            )
            .machine(|m| {
                m.file(&format!("{lib}/libcudnn.so.8"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu11-2022.5.19.dist-info"));
                m.texts.insert(
                    format!("{SP}/nvidia_cudnn_cu11-2022.5.19.dist-info/RECORD"),
                    "nvidia/cudnn/lib/libcudnn.so.8,,1000\n".into(),
                );
            });
        let fs = t.findings();
        let f = only(&fs, "CDT013");
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title
                .starts_with("nvidia-cudnn-cu11 2022.5.19 is not a cuDNN release"),
            "{}",
            f.title
        );
        assert!(
            f.fix.contains("pip install 'nvidia-cudnn-cu11==8.*'"),
            "{}",
            f.fix
        );
        // A wheel of another library: its soname's major.
        let cublas = format!("{SP}/nvidia/cublas/lib");
        let t = Trace::new()
            .load(
                &format!("{cublas}/libcublas.so.11"),
                "RUNPATH",
                &format!("{SP}/torch/lib/libtorch_cuda.so"),
            )
            .machine(|m| {
                m.file(&format!("{cublas}/libcublas.so.11"))
                    .dir(&format!("{SP}/nvidia_cublas_cu11-2022.4.8.dist-info"));
            });
        let f = only(&t.findings(), "CDT013").clone();
        assert!(
            f.fix.contains("pip install 'nvidia-cublas-cu11==11.*'"),
            "{}",
            f.fix
        );
        // Only a failed load from the wheel: its dispatcher found, its own
        // dependency missing.
        let t = Trace::new()
            .failed(
                "libcudnn.so.8",
                &format!("{SP}/jaxlib/xla_extension.so"),
                &[(&format!("{lib}/libcudnn.so.8"), "RUNPATH", "rejected")],
                Some(
                    "libcublasLt.so.11: cannot open shared object file: No such file or directory",
                ),
            )
            .machine(|m| {
                m.file(&format!("{lib}/libcudnn.so.8"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu11-2022.5.19.dist-info"));
            });
        let f = only(&t.findings(), "CDT013").clone();
        assert!(
            f.fix.contains("pip install 'nvidia-cudnn-cu11==8.*'"),
            "{}",
            f.fix
        );
        // A real release says nothing.
        let t = Trace::new()
            .load(
                &format!("{lib}/libcudnn.so.8"),
                "RUNPATH",
                &format!("{SP}/jaxlib/xla_extension.so"),
            )
            .machine(|m| {
                m.file(&format!("{lib}/libcudnn.so.8"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu11-8.9.6.50.dist-info"));
            });
        assert!(none(&t.findings(), "CDT013"));
    }

    fn torch_1131(wheel_on_runpath: bool) -> Trace {
        let torch = format!("{SP}/torch/lib");
        let wheel = format!("{SP}/nvidia/cudnn/lib");
        let runpath = if wheel_on_runpath {
            vec![
                "$ORIGIN".to_string(),
                "$ORIGIN/../../nvidia/cudnn/lib".into(),
            ]
        } else {
            vec!["$ORIGIN".to_string()]
        };
        Trace::new()
            .load(
                &format!("{torch}/libcudnn.so.8"),
                "RUNPATH",
                &format!("{torch}/libtorch_cuda.so"),
            )
            .load(
                &format!("{torch}/libcudnn_ops_infer.so.8.7.0"),
                "RUNPATH",
                &format!("{torch}/libcudnn.so.8"),
            )
            .machine(move |m| {
                m.elf(
                    &format!("{torch}/libtorch_cuda.so"),
                    DynInfo {
                        runpath,
                        ..Default::default()
                    },
                );
                m.file(&format!("{torch}/libcudnn.so.8"))
                    .file(&format!("{torch}/libcudnn_ops_infer.so.8.7.0"))
                    .file(&format!("{wheel}/libcudnn.so.8"))
                    .file(&format!("{wheel}/libcudnn_ops_infer.so.8"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu11-8.8.1.3.dist-info"));
            })
    }

    /// pytorch#96595: torch 1.13.1's bundled cuDNN 8.7 comes first on
    /// libtorch_cuda.so's RUNPATH; the installed 8.8.1 wheel is not used.
    #[test]
    fn an_installed_wheel_shadowed_by_a_bundled_copy_is_said_at_info() {
        let fs = torch_1131(true).findings();
        let f = only(&fs, "CDT014");
        assert_eq!(f.severity, Severity::Info);
        let wheel = format!("{SP}/nvidia/cudnn/lib");
        assert!(
            f.title.contains(&format!(
                "the installed nvidia-cudnn-cu11 8.8.1.3 ({wheel}) is not used"
            )),
            "{}",
            f.title
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path.as_deref() == Some(&format!("{SP}/torch/lib/libcudnn.so.8"))),
            "{:#?}",
            f.evidence
        );
        assert!(
            f.alternatives
                .iter()
                .any(|a| a.ends_with(&format!("cudnn-trace --pin {wheel}"))),
            "{:?}",
            f.alternatives
        );
        assert!(fs.iter().all(|f| f.severity <= Severity::Info), "{fs:#?}");
        // Not on the requester's RUNPATH, but in its site-packages: the same
        // environment still.
        assert_eq!(all(&torch_1131(false).findings(), "CDT014").len(), 1);
    }

    /// JAX's plugin asked for libcudnn.so.9 after torch made its own copy
    /// resident (jax#19004): CDT012 explains why the wheel went unused,
    /// for its dispatcher and the sub-libraries alike; no second finding.
    #[test]
    fn a_wheel_left_unused_by_a_resident_copy_is_cdt012s() {
        let torch = format!("{SP}/torch/lib");
        let wheel = format!("{SP}/nvidia/cudnn/lib");
        let plugin = format!("{SP}/jax_plugins/xla_cuda12/xla_cuda_plugin.so");
        let disp = format!("{torch}/libcudnn.so.9");
        let t = Trace::new()
            .machine(|m| {
                m.elf(
                    &plugin,
                    DynInfo {
                        runpath: vec!["$ORIGIN/../../nvidia/cudnn/lib".into()],
                        ..Default::default()
                    },
                );
                m.file(&disp)
                    .file(&format!("{torch}/libcudnn_graph.so.9"))
                    .file(&format!("{wheel}/libcudnn.so.9"))
                    .file(&format!("{wheel}/libcudnn_graph.so.9"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu12-9.8.0.87.dist-info"));
            })
            .load(&disp, "RPATH", &format!("{torch}/libtorch_cuda.so"))
            .load(&format!("{torch}/libcudnn_graph.so.9"), "RUNPATH", &disp)
            .load(&plugin, "path", "")
            .raw(serde_json::json!({
                "ev": "load", "name": "libcudnn.so.9", "path": disp, "realpath": disp,
                "reason": "already-loaded", "requester": plugin, "via": "dlopen", "lmid": 0,
                "family": "cudnn", "new": false, "tried": []
            }));
        let fs = t.findings();
        assert!(none(&fs, "CDT014"), "{fs:#?}");
    }

    /// A wheel of another environment, or one the process did load from,
    /// is not reported.
    #[test]
    fn other_environments_and_used_wheels_are_quiet() {
        let other = "/other/lib/python3.10/site-packages/nvidia/cudnn/lib";
        let t = Trace::new()
            .load(
                "/opt/app/lib/libcudnn.so.8",
                "RUNPATH",
                "/opt/app/lib/libapp.so",
            )
            .machine(|m| {
                m.file("/opt/app/lib/libcudnn.so.8")
                    .file(&format!("{other}/libcudnn.so.8"))
                    .dir("/other/lib/python3.10/site-packages/nvidia_cudnn_cu11-8.8.1.3.dist-info");
            });
        assert!(none(&t.findings(), "CDT014"));
        let wheel = format!("{SP}/nvidia/cudnn/lib");
        let t = Trace::new()
            .load(
                &format!("{wheel}/libcudnn.so.8"),
                "RUNPATH",
                &format!("{SP}/torch/lib/libtorch_cuda.so"),
            )
            .machine(|m| {
                m.file(&format!("{wheel}/libcudnn.so.8"))
                    .dir(&format!("{SP}/nvidia_cudnn_cu11-8.8.1.3.dist-info"));
            });
        assert!(none(&t.findings(), "CDT014"));
    }
}
