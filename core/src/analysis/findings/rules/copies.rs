//! CDT001: two or more files of one library in a process; CDT002: cuDNN
//! sub-libraries of different versions ([R17][E6][E7]).

use super::remedies::{self, how_to_avoid};
use super::{entry_of, finding, loaded};
use crate::analysis::findings::facts::{basename, dirname, soname_major, Facts, Lib};
use crate::analysis::findings::{Context, Evidence, Finding, Knowledge, Remedy, Severity, Ver};
use crate::model::stem;
use std::collections::BTreeMap;

/// Whether two loads were in the process at the same time.
fn overlap(a: &Lib<'_>, b: &Lib<'_>) -> bool {
    let end = |l: &Lib<'_>| l.unloaded_at.unwrap_or(u64::MAX);
    a.load.seq < end(b) && b.load.seq < end(a)
}

/// CDT001: two or more distinct files of the same cuDNN library, of cudart
/// or of libcuda in one process at once (different dev/ino or real path).
/// Same soname twice is an error (the second copy's symbols are bound
/// against the first's, or it runs beside it with its own state); two cudart
/// majors (or cuDNN 8 and 9) can coexist through symbol versioning
/// ([R7][R8][E1]: every symbol carries the soname as version tag), so
/// that is a warning.
pub fn duplicates(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let mut groups: BTreeMap<(String, String), Vec<&Lib<'_>>> = BTreeMap::new();
    // A stub (the toolkit's `stubs/libcuda.so`, a `libcudart_stub.so`)
    // stands in for the library at link time: never a copy of it (CDT011
    // says when one is loaded).
    for lib in f.libs.iter().filter(|l| !l.is_stub()) {
        let key = match lib.family.as_str() {
            "cudnn" => ("cudnn".to_string(), lib.stem.clone()),
            "cudart" => ("cudart".to_string(), "libcudart".to_string()),
            "cuda" => ("cuda".to_string(), "libcuda".to_string()),
            _ => continue,
        };
        groups.entry(key).or_default().push(lib);
    }
    let mut out = Vec::new();
    for ((fam, stem), libs) in groups {
        // Distinct files, in load order, that overlapped some other one.
        let mut distinct: Vec<&Lib<'_>> = Vec::new();
        for l in &libs {
            if !distinct.iter().any(|d| d.identity() == l.identity()) {
                distinct.push(l);
            }
        }
        let live: Vec<&Lib<'_>> = distinct
            .iter()
            .copied()
            .filter(|a| {
                distinct
                    .iter()
                    .any(|b| b.identity() != a.identity() && overlap(a, b))
            })
            .collect();
        if live.len() < 2 {
            continue;
        }
        let majors: Vec<Option<u32>> = {
            let mut m: Vec<Option<u32>> = live.iter().map(|l| l.major).collect();
            m.sort();
            m.dedup();
            m
        };
        let mixed_majors = majors.len() > 1 && majors.iter().all(|m| m.is_some());
        let what = match fam.as_str() {
            "cudnn" => format!("{stem} (cuDNN)"),
            "cudart" => "libcudart (CUDA runtime)".to_string(),
            _ => "libcuda (CUDA driver)".to_string(),
        };
        let versions: Vec<String> = live
            .iter()
            .map(|l| l.version_text().unwrap_or_else(|| "version unknown".into()))
            .collect();
        let (severity, title) = if mixed_majors {
            let ms: Vec<String> = majors.iter().flatten().map(u32::to_string).collect();
            (
                Severity::Warning,
                format!(
                    "{} files of {what} of different majors ({}) in one process",
                    live.len(),
                    ms.join(", ")
                ),
            )
        } else {
            (
                Severity::Error,
                format!(
                    "{} different files of {what} in one process: {}",
                    live.len(),
                    versions.join(", ")
                ),
            )
        };
        let evidence: Vec<Evidence> = live.iter().map(|l| loaded(l)).collect();
        let keep = live[0];
        let fixes: Vec<String> = live[1..]
            .iter()
            .map(|l| {
                if let Some(fix) = runtime_brought_by_library(keep, l) {
                    return fix;
                }
                let e = entry_of(f, ctx, l);
                format!(
                    "{}: {}",
                    l.path(),
                    how_to_avoid(f, ctx, l, &e, Some(keep.dir()))
                )
            })
            .collect();
        let remedy = if mixed_majors {
            format!(
                "two majors usually mean two stacks in one process (e.g. a framework built for CUDA {} and a library built for another): use packages built for one CUDA major, or keep them in separate processes. {}",
                majors.iter().flatten().next().map(u32::to_string).unwrap_or_default(),
                fixes.join("; ")
            )
        } else {
            format!(
                "keep one copy, the first one loaded ({}); the others: {}",
                keep.path(),
                fixes.join("; ")
            )
        };
        out.push(finding(
            ctx,
            "CDT001",
            severity,
            title,
            evidence,
            remedy,
            &["R34", "E11", "E1"],
        ));
    }
    out
}

/// A CUDA runtime of another major than the process's first one, brought
/// by a library that asked for it (an NCCL net plugin, a kernel package):
/// that library is a build for the other CUDA major, and what fixes it is
/// its build for the process's major, not hiding its directory (it would
/// then fail to load at all). cudnn-frontend refuses the mix ("Multiple
/// libcudart libraries found", NVIDIA/cudnn-frontend#267, [F-fe-267]).
fn runtime_brought_by_library(keep: &Lib<'_>, l: &Lib<'_>) -> Option<String> {
    let (mine, other) = (keep.major?, l.major?);
    if l.family != "cudart" || mine == other {
        return None;
    }
    let by = l.load.requester.as_deref().filter(|r| !r.is_empty())?;
    Some(format!(
        "{} is a CUDA {other} build: it brought {} ({}) into a process whose CUDA runtime is CUDA {mine} ({}); it needs a CUDA {mine} build (of {by} or of the package that ships it), or the program a CUDA {other} stack; a library that picks its runtime by name can be told which one to use (cudnn-frontend: CUDNN_FRONTEND_CUDART_LIB_NAME=libcudart.so.{mine})",
        basename(by),
        basename(l.path()),
        l.path(),
        keep.path()
    ))
}

/// One reason to think a sub-library does not belong with the reference.
struct Odd<'l, 'a> {
    lib: Option<&'l Lib<'a>>,
    evidence: Evidence,
    /// A dispatcher whose version differs: works (E5) but is a sign.
    dispatcher_only: bool,
}

/// CDT002: within one cuDNN major, a sub-library whose version differs from
/// the reference (v9 `libcudnn_graph`, v8 `libcudnn_ops_infer`; the one that
/// answers the version queries, [R2][E3]), known from the libraries' own
/// answers, the file names, a `*VersionCheck` result (1002 in v9, 14 in v8;
/// rule 7) or a loader error `undefined symbol: …, version libcudnn_X.so.8`
/// ([R17][E6][E7], [R46]); also cuDNN files of one major from several directories.
pub fn sublibrary_versions(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    cudnn_by_major(f)
        .into_iter()
        .filter_map(|(major, libs)| Install::new(ctx, major, libs).finding(f, ctx))
        .collect()
}

/// The cuDNN files of a process by major; also the majors that only show
/// up in failures (symbol-version errors), with no file.
fn cudnn_by_major<'l, 'a>(f: &'l Facts<'a>) -> BTreeMap<u32, Vec<&'l Lib<'a>>> {
    let mut by_major: BTreeMap<u32, Vec<&Lib<'_>>> = BTreeMap::new();
    for l in f.family("cudnn") {
        if let Some(m) = l.major {
            by_major.entry(m).or_default().push(l);
        }
    }
    for fl in &f.failed {
        if let Some(m) = symbol_version_error(fl).and_then(|(_, tag)| soname_major(&tag)) {
            by_major.entry(m).or_default();
        }
    }
    by_major
}

/// The cuDNN files of one major in a process, and its layout's names.
struct Install<'l, 'a> {
    major: u32,
    libs: Vec<&'l Lib<'a>>,
    /// The dispatcher's stem (`libcudnn`).
    disp_stem: String,
    /// The library that answers the version queries (v9 graph, v8
    /// ops_infer), when loaded.
    reference: Option<&'l Lib<'a>>,
}

impl<'l, 'a> Install<'l, 'a> {
    fn new(ctx: &Context<'_>, major: u32, libs: Vec<&'l Lib<'a>>) -> Self {
        let layout = ctx.knowledge.layout(major);
        let ref_stem = layout
            .map(|l| l.reference.as_str())
            .unwrap_or("libcudnn_graph");
        let disp_stem = layout.map(|l| l.dispatcher.as_str()).unwrap_or("libcudnn");
        let reference = libs.iter().copied().find(|l| l.stem == ref_stem);
        Install {
            major,
            libs,
            disp_stem: disp_stem.to_string(),
            reference,
        }
    }

    /// The CDT002 finding of this install, if anything does not fit.
    fn finding(&self, f: &Facts<'a>, ctx: &Context<'_>) -> Option<Finding> {
        let mut odd: Vec<Odd<'l, 'a>> = Vec::new();
        self.odd_versions(&mut odd);
        self.failed_checks(ctx, &mut odd);
        self.failed_check_calls(f, ctx, &mut odd);
        let symbol_titles = self.symbol_errors(f, &mut odd);
        let mut dirs: Vec<&str> = self.libs.iter().map(|l| l.dir()).collect();
        dirs.sort();
        dirs.dedup();
        if odd.is_empty() && dirs.len() < 2 {
            return None;
        }
        // The install the process meant to use: the dispatcher's directory
        // (what the framework linked), else the reference's.
        let anchor = self
            .libs
            .iter()
            .copied()
            .find(|l| l.stem == self.disp_stem)
            .or(self.reference)
            .or(self.libs.first().copied());
        let anchor_dir = anchor.map(|a| a.dir().to_string());
        let mut evidence = self.evidence(&odd);
        evidence.extend(self.directory_facts(&dirs));
        Some(finding(
            ctx,
            "CDT002",
            self.severity(&odd),
            self.title(&odd, &dirs, &symbol_titles),
            evidence,
            self.remedy(f, ctx, anchor_dir.as_deref()),
            &["R4", "R5", "E5", "E11", "R46", "R16"],
        ))
    }

    /// Files whose version differs from the reference's.
    fn odd_versions(&self, odd: &mut Vec<Odd<'l, 'a>>) {
        let (Some(r), Some((rv, _))) = (self.reference, self.reference.and_then(|r| r.version()))
        else {
            return;
        };
        for l in &self.libs {
            if l.identity() == r.identity() {
                continue;
            }
            let Some((v, _)) = l.version() else { continue };
            let n = v.0.len().min(rv.0.len()).min(3);
            if v.prefix(n) != rv.prefix(n) {
                odd.push(Odd {
                    lib: Some(l),
                    evidence: loaded(l),
                    dispatcher_only: l.stem == self.disp_stem,
                });
            }
        }
    }

    /// `*VersionCheck` results from the shim's version events.
    fn failed_checks(&self, ctx: &Context<'_>, odd: &mut Vec<Odd<'l, 'a>>) {
        for l in &self.libs {
            let Some(c) = l.query.as_ref().and_then(|q| q.check).filter(|&c| c != 0) else {
                continue;
            };
            if !odd
                .iter()
                .any(|o| o.lib.is_some_and(|x| x.identity() == l.identity()))
            {
                odd.push(Odd {
                    lib: Some(l),
                    evidence: loaded(l),
                    dispatcher_only: false,
                });
            }
            let name = self.status_name(ctx, c);
            odd.push(Odd {
                lib: None,
                evidence: Evidence::new("version check")
                    .path(l.path())
                    .detail(format!(
                        "its *VersionCheck returned {c} ({name}){}",
                        l.query
                            .as_ref()
                            .and_then(|q| q.core.as_deref())
                            .map(|core| format!(", checked against {core}"))
                            .unwrap_or_default()
                    )),
                dispatcher_only: false,
            });
        }
    }

    /// `*VersionCheck` results from the program's own calls.
    fn failed_check_calls(&self, f: &Facts<'a>, ctx: &Context<'_>, odd: &mut Vec<Odd<'l, 'a>>) {
        let k = ctx.knowledge;
        for c in f.calls.iter().filter(|c| c.func.ends_with("VersionCheck")) {
            let Some(st) = c.status.filter(|&s| s != 0) else {
                continue;
            };
            let stem = k.version_check_stem(&c.func).map(|(_, s)| s);
            let lib = self
                .libs
                .iter()
                .copied()
                .find(|l| Some(l.stem.as_str()) == stem)
                .or_else(|| {
                    c.lib
                        .as_deref()
                        .and_then(|p| self.libs.iter().copied().find(|l| l.is(p)))
                });
            if stem.is_none() && lib.is_none() {
                continue;
            }
            if lib.is_some_and(|l| l.major != Some(self.major)) {
                continue;
            }
            let name = self.status_name(ctx, st);
            odd.push(Odd {
                lib: None,
                evidence: Evidence::new("call")
                    .path(c.lib.clone().unwrap_or_default())
                    .seq(c.seq)
                    .detail(format!("{}() returned {st} ({name})", c.func)),
                dispatcher_only: false,
            });
        }
    }

    /// A cuDNN status's name in this major, else `status N`.
    fn status_name(&self, ctx: &Context<'_>, status: i64) -> String {
        ctx.knowledge
            .cudnn_status(self.major, status)
            .map(|s| Knowledge::cudnn_status_name(s, self.major).to_string())
            .unwrap_or_else(|| format!("status {status}"))
    }

    /// Loader errors naming another build's library of this major
    /// (`undefined symbol: …, version libcudnn_X.so.8`); returns the titles
    /// they suggest.
    fn symbol_errors(&self, f: &Facts<'a>, odd: &mut Vec<Odd<'l, 'a>>) -> Vec<String> {
        let major = self.major;
        let mut titles: Vec<String> = Vec::new();
        for fl in &f.failed {
            let Some((file, tag)) = symbol_version_error(fl) else {
                continue;
            };
            if soname_major(&tag) != Some(major) {
                continue;
            }
            let tag_stem = stem(&tag);
            let tag_lib = self.libs.iter().copied().find(|l| l.stem == tag_stem);
            let mut ev = Evidence::new("failed")
                .path(file.clone())
                .requester_opt(fl.ev.requester.as_deref())
                .seq(fl.ev.seq)
                .detail(format!("undefined symbol with version {tag}"));
            if let Some(t) = tag_lib {
                if dirname(&file) != t.dir() {
                    ev = ev.detail(format!(
                        "undefined symbol with version {tag}: {tag} was loaded from {}, another directory",
                        t.dir()
                    ));
                }
                let is_ref = self.reference.is_some_and(|r| r.identity() == t.identity());
                if !is_ref
                    && !odd
                        .iter()
                        .any(|o| o.lib.is_some_and(|x| x.identity() == t.identity()))
                {
                    odd.push(Odd {
                        lib: Some(t),
                        evidence: loaded(t),
                        dispatcher_only: false,
                    });
                }
                titles.push(format!(
                    "cuDNN {major} sub-libraries from two installs: {} does not fit the {tag} loaded from {}",
                    basename(&file),
                    t.dir()
                ));
            }
            odd.push(Odd {
                lib: None,
                evidence: ev,
                dispatcher_only: false,
            });
        }
        titles
    }

    fn severity(&self, odd: &[Odd<'_, '_>]) -> Severity {
        if odd.iter().any(|o| !o.dispatcher_only) {
            Severity::Error
        } else if !odd.is_empty() {
            Severity::Warning
        } else {
            // Several directories: a mix unless every version is known and equal.
            let vs: Vec<Option<Ver>> = self
                .libs
                .iter()
                .map(|l| l.version().map(|v| v.0.prefix(3)))
                .collect();
            if vs.iter().all(|v| v.is_some()) && vs.windows(2).all(|w| w[0] == w[1]) {
                Severity::Info
            } else {
                Severity::Warning
            }
        }
    }

    /// One fact per directory when the files come from several: which
    /// files, of which versions.
    fn directory_facts(&self, dirs: &[&str]) -> Vec<Evidence> {
        if dirs.len() < 2 {
            return Vec::new();
        }
        dirs.iter()
            .map(|d| {
                let stems: Vec<String> = self
                    .libs
                    .iter()
                    .filter(|l| l.dir() == *d)
                    .map(|l| match l.version() {
                        Some((v, _)) => format!("{} {v}", l.stem),
                        None => l.stem.clone(),
                    })
                    .collect();
                Evidence::new("directory").path(*d).detail(stems.join(", "))
            })
            .collect()
    }

    fn title(&self, odd: &[Odd<'_, '_>], dirs: &[&str], symbol_titles: &[String]) -> String {
        let major = self.major;
        // The directories and their files are in the evidence.
        let directories = || format!("cuDNN {major} files come from {} directories", dirs.len());
        // A dispatcher of another version works (E5): it is named in the
        // title only when nothing else is odd.
        let primary: Vec<&Odd<'_, '_>> = if odd.iter().any(|o| !o.dispatcher_only) {
            odd.iter().filter(|o| !o.dispatcher_only).collect()
        } else {
            odd.iter().collect()
        };
        // The odd ones by name, for titles that cannot give their versions
        // (a failed check leaves a sub-library's own version unknown).
        let odd_names = {
            let mut stems: Vec<&str> = Vec::new();
            for l in primary.iter().filter_map(|o| o.lib) {
                if !stems.contains(&l.stem.as_str()) {
                    stems.push(&l.stem);
                }
            }
            if stems.is_empty() {
                String::new()
            } else {
                format!(": {}", stems.join(", "))
            }
        };
        let reference = self
            .reference
            .and_then(|r| r.version().map(|(v, _)| (r, v)));
        // Only the dispatcher differs, the rest from another directory: the
        // directories (with the dispatcher's version) tell the story best.
        let dispatcher_only = !odd.is_empty() && odd.iter().all(|o| o.dispatcher_only);
        if let Some(t) = symbol_titles.first() {
            t.clone()
        } else if dispatcher_only && dirs.len() >= 2 {
            directories()
        } else if let Some((r, rv)) = reference {
            let others: Vec<String> = primary
                .iter()
                .filter_map(|o| o.lib)
                .filter_map(|l| l.version().map(|(v, _)| format!("{} {v}", l.stem)))
                .collect();
            if !others.is_empty() {
                format!(
                    "cuDNN {major} sub-libraries of different versions: {} {rv}, {}",
                    r.stem,
                    others.join(", ")
                )
            } else if odd.is_empty() {
                directories()
            } else {
                format!(
                    "cuDNN {major} sub-libraries do not match {} {rv}{odd_names}",
                    r.stem
                )
            }
        } else if odd.is_empty() {
            directories()
        } else {
            format!("cuDNN {major} sub-libraries from two builds{odd_names}")
        }
    }

    /// The reference, the odd ones, and when nothing is odd every file.
    fn evidence(&self, odd: &[Odd<'_, '_>]) -> Vec<Evidence> {
        let mut evidence: Vec<Evidence> = Vec::new();
        if let Some(r) = self.reference {
            let mut e = loaded(r);
            e.what = format!("reference ({})", r.stem);
            evidence.push(e);
        }
        for o in odd {
            if !evidence.iter().any(|e| e == &o.evidence) {
                evidence.push(o.evidence.clone());
            }
        }
        if odd.iter().all(|o| o.dispatcher_only) {
            for l in &self.libs {
                let e = loaded(l);
                if !evidence.iter().any(|x| x.seq == e.seq) {
                    evidence.push(e);
                }
            }
        }
        evidence
    }

    /// What to change: every file not from the anchor directory, each
    /// through [`remedies::stray_fix`] (its package, its search entry;
    /// whether the anchor holds that file at all).
    fn remedy(&self, f: &Facts<'_>, ctx: &Context<'_>, anchor_dir: Option<&str>) -> Remedy {
        let major = self.major;
        let mut fixes: Vec<String> = Vec::new();
        let mut alternatives: Vec<String> = Vec::new();
        let mut through_llp = false;
        for l in self.libs.iter().filter(|l| Some(l.dir()) != anchor_dir) {
            through_llp |= l.load.reason == "LD_LIBRARY_PATH";
            let r = remedies::stray_fix(f, ctx, l, anchor_dir);
            if !fixes.contains(&r.fix) {
                fixes.push(r.fix);
            }
            alternatives.extend(r.alternatives);
        }
        let r = match anchor_dir {
            Some(a) if !fixes.is_empty() => {
                let r = Remedy::new(format!(
                    "{}, so that every cuDNN {major} file comes from one install, {a}",
                    fixes.join("; ")
                ));
                if through_llp {
                    r.or(format!("put {a} first on LD_LIBRARY_PATH"))
                } else {
                    r
                }
            }
            Some(a) => Remedy::new(format!(
                "load every cuDNN {major} file from one install ({a}); reinstall it if its own files differ in version (a partial upgrade)"
            )),
            None => Remedy::new(format!(
                "load every cuDNN {major} file from one install: reinstall cuDNN so that its sub-libraries are of one version, and remove other copies from LD_LIBRARY_PATH"
            )),
        };
        alternatives.into_iter().fold(r, Remedy::or)
    }
}

/// `…/libcudnn_cnn_infer.so.8: undefined symbol: _ZN…, version libcudnn_ops_infer.so.8`
/// in a failure's error texts: (the failing file, the version tag).
pub(super) fn symbol_version_error(fl: &crate::model::trace::Failed) -> Option<(String, String)> {
    for e in fl.errors() {
        let Some(i) = e.find(": undefined symbol: ") else {
            continue;
        };
        let Some(j) = e.rfind(", version ") else {
            continue;
        };
        let tag = e[j + ", version ".len()..].trim().to_string();
        if !tag.starts_with("libcudnn") {
            continue;
        }
        let file = e[..i].trim().to_string();
        return Some((file, tag));
    }
    None
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use crate::model::elf::DynInfo;

    #[test]
    fn two_copies_of_one_cudnn_library() {
        let t = Trace::new()
            .load(
                "/pip/nvidia/cudnn/lib/libcudnn_graph.so.9",
                "RUNPATH",
                "/pip/nvidia/cudnn/lib/libcudnn.so.9",
            )
            .load(
                "/usr/lib/x86_64-linux-gnu/libcudnn_graph.so.9.14.0",
                "LD_LIBRARY_PATH",
                "/x/libother.so",
            );
        let fs = t.findings();
        let f = only(&fs, "CDT001");
        assert_eq!(f.severity, Severity::Error);
        assert!(
            f.title.contains("2 different files of libcudnn_graph"),
            "{}",
            f.title
        );
        assert_eq!(f.evidence.len(), 2);
        assert!(
            f.fix
                .contains("remove /usr/lib/x86_64-linux-gnu from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
    }

    #[test]
    fn same_file_twice_or_after_unload_is_not_a_duplicate() {
        // The same file through a symlink (same dev/ino).
        let t = Trace::new()
            .load_id(
                "/a/libcudart.so.12",
                "/a/libcudart.so.12.4.1",
                7,
                "RUNPATH",
                "/a/x.so",
            )
            .load_id(
                "/b/libcudart.so.12",
                "/a/libcudart.so.12.4.1",
                7,
                "LD_LIBRARY_PATH",
                "/b/y.so",
            );
        assert!(none(&t.findings(), "CDT001"));
        // One unloaded before the other was loaded.
        let t = Trace::new()
            .load("/a/libcuda.so.1", "ld.so.cache", "/a/x.so")
            .unload("/a/libcuda.so.1")
            .load("/b/libcuda.so.1", "LD_LIBRARY_PATH", "/b/y.so");
        assert!(none(&t.findings(), "CDT001"));
    }

    #[test]
    fn two_cudart_majors_is_a_warning() {
        let t = Trace::new()
            .load(
                "/v/nvidia/cu13/lib/libcudart.so.13",
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(
                "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127",
                "LD_LIBRARY_PATH",
                "/v/other/libfoo.so",
            );
        let fs = t.findings();
        let f = only(&fs, "CDT001");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("different majors (12, 13)"), "{}", f.title);
    }

    /// A plugin that brings a CUDA runtime of another major than the
    /// process's is answered by purpose: it needs a build for the
    /// process's major (cudnn-frontend#267: GKE's NCCL plugin, CUDA 12, in
    /// a CUDA 13 container); hiding its directory would only make it fail.
    #[test]
    fn a_plugin_of_another_cuda_major_needs_a_build_for_the_process() {
        let plugin = "/usr/local/tcpxo/lib64/libnccl-net.so";
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/usr/local/tcpxo/lib64")
            .load(
                "/v/nvidia/cu13/lib/libcudart.so.13",
                "RPATH",
                "/v/bin/python3",
            )
            .load(
                "/usr/local/tcpxo/lib64/libcudart.so.12",
                "LD_LIBRARY_PATH",
                plugin,
            );
        let f = only(&t.findings(), "CDT001").clone();
        assert!(
            f.fix.contains("libnccl-net.so is a CUDA 12 build")
                && f.fix.contains("it needs a CUDA 13 build")
                && !f.fix.contains("remove /usr/local/tcpxo/lib64"),
            "{}",
            f.fix
        );
    }

    /// A RUNPATH entry is named as its owner's file has it (`$ORIGIN/…`),
    /// and an LD_LIBRARY_PATH entry as the variable has it.
    #[test]
    fn remedies_name_entries_as_written() {
        let plugin = "/v/site-packages/plugin/libplugin.so";
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/opt/cuda-13/lib64/:/x")
            .load(
                "/v/site-packages/nvidia/cu13/lib/libcudart.so.13",
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(
                "/v/site-packages/nvidia/cuda_runtime/lib/libcudart.so.13",
                "RUNPATH",
                plugin,
            )
            .machine(|m| {
                m.elf(
                    plugin,
                    DynInfo {
                        runpath: vec!["$ORIGIN/../nvidia/cuda_runtime/lib".into()],
                        ..Default::default()
                    },
                );
            });
        let f = only(&t.findings(), "CDT001").clone();
        assert!(
            f.fix.ends_with(&format!(
                "the RUNPATH of {plugin} points at /v/site-packages/nvidia/cuda_runtime/lib (its entry $ORIGIN/../nvidia/cuda_runtime/lib)"
            )),
            "{}",
            f.fix
        );
        // Found in the x86_64 subdirectory of an LD_LIBRARY_PATH entry
        // written with a trailing slash.
        let t = Trace::new()
            .env("LD_LIBRARY_PATH", "/opt/cuda-13/lib64/:/x")
            .load("/a/libcuda.so.1", "path", "/v/libnvidia-ml.so")
            .raw(serde_json::json!({
                "ev": "load", "name": "libcuda.so.1",
                "path": "/opt/cuda-13/lib64/x86_64/libcuda.so.1",
                "realpath": "/opt/cuda-13/lib64/x86_64/libcuda.so.1",
                "reason": "LD_LIBRARY_PATH", "reason_owner": null,
                "search_dir": "/opt/cuda-13/lib64/x86_64",
                "search_entry": "/opt/cuda-13/lib64",
                "requester": "/v/libcudart.so.13", "via": "dlopen", "mode": 2, "lmid": 0,
                "soname": "libcuda.so.1", "dev": 1, "ino": 77, "size": 1, "build_id": null,
                "family": "cuda", "tried": [], "new": true
            }));
        let f = only(&t.findings(), "CDT001").clone();
        assert!(
            f.fix
                .ends_with("remove /opt/cuda-13/lib64/ from LD_LIBRARY_PATH (or put /a before it)"),
            "{}",
            f.fix
        );
    }

    #[test]
    fn two_libcuda_files() {
        let t = Trace::new()
            .load(
                "/usr/local/cuda-13.0/compat/libcuda.so.1",
                "LD_LIBRARY_PATH",
                "/v/libcudart.so.13",
            )
            .load(
                "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                "path",
                "/v/libnvidia-ml.so",
            );
        let f = only(&t.findings(), "CDT001").clone();
        assert_eq!(f.severity, Severity::Error);
        assert!(f.title.contains("libcuda (CUDA driver)"));
    }

    /// cuDNN 9 sub-libraries from two installs; the version check fails
    /// ([E5][E11]: graph 9.19 + ops 9.14 → cudnnOpsVersionCheck 1002).
    #[test]
    fn cudnn9_sublibrary_version_mismatch() {
        let pip = "/v/site-packages/nvidia/cudnn/lib";
        let sys = "/usr/lib/x86_64-linux-gnu";
        let t = Trace::new()
            .load(
                &format!("{pip}/libcudnn.so.9"),
                "RPATH",
                "/v/site-packages/torch/lib/libtorch_cuda.so",
            )
            .load(
                &format!("{pip}/libcudnn_graph.so.9"),
                "RUNPATH",
                &format!("{pip}/libcudnn.so.9"),
            )
            .load(
                &format!("{sys}/libcudnn_ops.so.9.14.0"),
                "LD_LIBRARY_PATH",
                &format!("{pip}/libcudnn.so.9"),
            )
            .version_query(
                &format!("{pip}/libcudnn_graph.so.9"),
                "cudnn",
                "9.19.0",
                Some(13000),
                Some(1210),
                Some(0),
            )
            .call(
                "cudnnOpsVersionCheck",
                &format!("{pip}/libcudnn.so.9"),
                Some(1002),
                None,
            );
        let fs = t.findings();
        let f = only(&fs, "CDT002");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.title,
            "cuDNN 9 sub-libraries of different versions: libcudnn_graph 9.19.0, libcudnn_ops 9.14.0"
        );
        assert!(
            f.evidence.iter().any(|e| e.detail.as_deref().is_some_and(
                |d| d.contains("returned 1002 (CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH)")
            )),
            "{:#?}",
            f.evidence
        );
        assert!(
            f.fix.ends_with(&format!(
                "so that every cuDNN 9 file comes from one install, {pip}"
            )),
            "{}",
            f.fix
        );
        assert!(
            f.fix
                .contains(&format!("remove {sys} from LD_LIBRARY_PATH")),
            "{}",
            f.fix
        );
        // The stderr message of PyTorch for it is explained too.
        let t = t.stderr("RuntimeError: cuDNN error: CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH\n");
        let fs = t.findings();
        assert_eq!(only(&fs, "CDT010").evidence[0].what, "message");
    }

    #[test]
    fn version_events_check_field_counts() {
        let d = "/d";
        let t = Trace::new()
            .load(
                &format!("{d}/libcudnn_graph.so.9"),
                "RUNPATH",
                "/d/libcudnn.so.9",
            )
            .load(
                &format!("{d}/libcudnn_cnn.so.9"),
                "RUNPATH",
                "/d/libcudnn.so.9",
            )
            .version_query(
                &format!("{d}/libcudnn_cnn.so.9"),
                "cudnn",
                "9.13.0",
                None,
                None,
                Some(1002),
            );
        let f = only(&t.findings(), "CDT002").clone();
        assert_eq!(f.severity, Severity::Error);
        assert!(f.evidence.iter().any(|e| e.what == "version check"));
        assert_eq!(
            f.title,
            "cuDNN 9 sub-libraries from two builds: libcudnn_cnn"
        );
    }

    /// cuDNN 8 from two installs: the loader's symbol-version error ([R17][E6][E7], R46).
    #[test]
    fn cudnn8_two_installs_undefined_symbol() {
        let pip = "/venv/lib/python3.10/site-packages/nvidia/cudnn/lib";
        let sys = "/usr/local/cuda/lib64";
        let err = format!("{pip}/libcudnn_cnn_infer.so.8: undefined symbol: _ZN11nvrtcHelper4loadEb, version libcudnn_ops_infer.so.8");
        let t = Trace::new()
            .load(
                &format!("{pip}/libcudnn.so.8"),
                "RUNPATH",
                "/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so",
            )
            .load(
                &format!("{sys}/libcudnn_ops_infer.so.8.2.4"),
                "LD_LIBRARY_PATH",
                &format!("{pip}/libcudnn.so.8"),
            )
            .failed(
                "libcudnn_cnn_infer.so.8",
                &format!("{pip}/libcudnn.so.8"),
                &[],
                Some(&err),
            );
        let fs = t.findings();
        let f = only(&fs, "CDT002");
        assert_eq!(f.severity, Severity::Error);
        assert!(f.evidence.iter().any(|e| e.detail.as_deref().is_some_and(|d| d.contains("libcudnn_ops_infer.so.8 was loaded from /usr/local/cuda/lib64, another directory"))), "{:#?}", f.evidence);
        assert!(
            f.fix
                .contains("remove /usr/local/cuda/lib64 from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
        // Not also reported as a plain missing library.
        assert!(none(&fs, "CDT006"));
    }

    #[test]
    fn dispatcher_only_mismatch_is_a_warning_and_one_install_is_quiet() {
        // Shim 9.12 with graph 9.13: every check succeeds (E5).
        let d = "/usr/lib/x86_64-linux-gnu";
        let t = Trace::new()
            .load(&format!("{d}/libcudnn.so.9.12.0"), "ld.so.cache", "/x/app")
            .load(
                &format!("{d}/libcudnn_graph.so.9.13.0"),
                "ld.so.cache",
                &format!("{d}/libcudnn.so.9.12.0"),
            );
        assert_eq!(only(&t.findings(), "CDT002").severity, Severity::Warning);
        let t = Trace::new()
            .load(&format!("{d}/libcudnn.so.9.14.0"), "ld.so.cache", "/x/app")
            .load(
                &format!("{d}/libcudnn_graph.so.9.14.0"),
                "ld.so.cache",
                &format!("{d}/libcudnn.so.9.14.0"),
            )
            .load(
                &format!("{d}/libcudnn_engines_precompiled.so.9.14.0"),
                "ld.so.cache",
                &format!("{d}/libcudnn_graph.so.9.14.0"),
            );
        assert!(none(&t.findings(), "CDT002"));
    }

    /// The README's example: the dispatcher from pip (name says only "9"),
    /// graph and engines 9.14.0 from the system through LD_LIBRARY_PATH.
    #[test]
    fn two_directories_without_versions_is_a_warning() {
        let pip = "/v/nvidia/cudnn/lib";
        let t = Trace::new()
            .load(
                &format!("{pip}/libcudnn.so.9"),
                "RPATH",
                "/v/torch/lib/libtorch_cuda.so",
            )
            .load(
                "/sys/libcudnn_graph.so.9.14.0",
                "LD_LIBRARY_PATH",
                &format!("{pip}/libcudnn.so.9"),
            );
        let f = only(&t.findings(), "CDT002").clone();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("come from 2 directories"), "{}", f.title);
        assert!(
            f.fix.contains("remove /sys from LD_LIBRARY_PATH"),
            "{}",
            f.fix
        );
    }
}
