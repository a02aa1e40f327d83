//! CDT010's explanations of the messages that are not about a cuDNN
//! version (`messages.rs` has those): a driver too old, cuDNN statuses, a
//! symbol cuDNN could not load, glibc's symbol-version misses, two CUDA
//! runtimes in one process. Each reads the message's groups
//! (`frameworks.toml`) and says what the trace shows about them; the fix
//! starts with what the trace points at, the message's own remedy follows.

use super::loaded;
use super::loads::copy_evidence;
use crate::analysis::findings::facts::{basename, soname_major, Facts, Lib, MessageMatch};
use crate::analysis::findings::knowledge::{driver_cuda_version, Knowledge};
use crate::analysis::findings::{Context, Evidence, Ver};
use crate::model::stem;
use crate::model::trace::Failed;

/// What an explanation adds to the finding: evidence, fixes (the first
/// is the fix), and its title.
pub(super) struct Explained {
    pub title: String,
    pub ev: Vec<Evidence>,
    pub fixes: Vec<String>,
    /// Whether the message's own remedy (`frameworks.toml`) applies.
    pub own_remedy: bool,
}

impl Explained {
    pub fn new(title: String) -> Self {
        Explained {
            title,
            ev: Vec::new(),
            fixes: Vec::new(),
            own_remedy: true,
        }
    }
}

/// The kind a match is explained as: a `cudnn-missing` message whose error
/// is a symbol-version miss is a mix of builds, not a missing file; a
/// version-mismatch status is a sub-library mix.
pub(super) fn effective_kind<'k>(kind: &'k str, m: &MessageMatch) -> &'k str {
    match kind {
        "cudnn-missing" if m.groups.contains_key("tag") => "symbol-version",
        "cudnn-status"
            if m.groups
                .get("status")
                .is_some_and(|s| s.ends_with("VERSION_MISMATCH")) =>
        {
            "sublibrary"
        }
        k => k,
    }
}

/// The loaded cuDNN files, the version-telling one first.
pub(super) fn cudnn_files<'l, 'a>(f: &'l Facts<'a>) -> Vec<&'l Lib<'a>> {
    let mut v: Vec<&Lib<'a>> = f.family("cudnn").collect();
    v.sort_by_key(|l| {
        let rank = match l.stem.as_str() {
            "libcudnn_graph" | "libcudnn_ops_infer" => 0,
            "libcudnn" => 1,
            _ => 2,
        };
        (rank, l.load.seq)
    });
    v
}

/// cuDNN files of more than one directory: a sub-library mix.
pub(super) fn sublibrary(f: &Facts<'_>, framework: &str) -> Explained {
    let files = cudnn_files(f);
    let mut dirs: Vec<&str> = files.iter().map(|l| l.dir()).collect();
    dirs.sort();
    dirs.dedup();
    let mut x = Explained::new(format!(
        "{framework}: cuDNN sub-libraries of different builds"
    ));
    x.ev.extend(files.iter().map(|l| loaded(l)));
    if dirs.len() > 1 {
        x.ev.push(Evidence::new("fact").detail(format!(
            "the cuDNN files of this process come from {} directories: {}",
            dirs.len(),
            dirs.join(", ")
        )));
    }
    x
}

/// Evidence for a failed load: the name asked for, by whom, the error.
fn failed_evidence(fl: &Failed) -> Evidence {
    let error = fl
        .errors()
        .first()
        .map(|e| e.to_string())
        .unwrap_or_default();
    Evidence::new("failed")
        .path(fl.ev.name.clone())
        .requester_opt(fl.ev.requester.as_deref())
        .seq(fl.ev.seq)
        .detail(error)
}

/// The loaded library a symbol-version tag names (`libcudnn_ops_infer.so.8`).
fn lib_named<'l, 'a>(f: &'l Facts<'a>, soname: &str) -> Option<&'l Lib<'a>> {
    f.libs.iter().find(|l| {
        let asked = l.load.name.as_deref().map(basename);
        asked == Some(soname) || basename(l.path()) == soname
    })
}

/// glibc could not bind `symbol` of version `tag` for `path`: the copy
/// loaded under the tag's name is of another build. A cuDNN 8/9 tag is a
/// sub-library mix; other tags (cuDNN 7's one library, cuBLAS) name the
/// copy that lacks the symbol and how it came in.
pub(super) fn symbol_version(f: &Facts<'_>, framework: &str, m: &MessageMatch) -> Explained {
    let g = |k: &str| m.groups.get(k).map(String::as_str).unwrap_or("");
    let (tag, symbol) = (g("tag"), g("symbol"));
    let needer = basename(g("path").trim_matches('"'));
    let fact = format!(
        "{needer} was linked against a {tag} that defines {symbol}; the {tag} loaded in this process does not: the two come from different builds"
    );
    let is_cudnn_sub =
        stem(tag).starts_with("libcudnn") && soname_major(tag).is_some_and(|v| v >= 8);
    let mut x = if is_cudnn_sub {
        let mut x = sublibrary(f, framework);
        x.title = format!("{framework}: {needer} and {tag} come from different cuDNN builds");
        x
    } else {
        Explained::new(format!(
            "{framework}: {needer} needs {symbol} of another build of {tag}"
        ))
    };
    x.ev.push(Evidence::new("fact").detail(fact));
    if let Some(l) = lib_named(f, tag).filter(|_| !is_cudnn_sub) {
        let mut e = loaded(l);
        e.what = "lacks the symbol".into();
        x.ev.push(e);
        if l.load.reason == "LD_LIBRARY_PATH" {
            x.fixes.push(format!(
                "remove {} from LD_LIBRARY_PATH, so that {needer} gets the {tag} of its own install",
                l.dir()
            ));
        }
    }
    x
}

/// The library a symbol belongs to, by its prefix (`cublasLtGetVersion` →
/// `libcublasLt`); None for cuDNN's own (a sub-library).
fn symbol_library(symbol: &str) -> Option<&'static str> {
    if symbol.starts_with("cublasLt") {
        Some("libcublasLt")
    } else if symbol.starts_with("cublas") {
        Some("libcublas")
    } else {
        None
    }
}

/// cuDNN's "Invalid handle. Cannot load symbol X": the dlopen before it
/// failed. The failed loads cuDNN asked for, and the CUDA build of the
/// cuDNN that asked (its cuBLASLt must be of that major).
pub(super) fn cudnn_symbol(f: &Facts<'_>, framework: &str, m: &MessageMatch) -> Explained {
    let symbol = m.groups.get("symbol").map(String::as_str).unwrap_or("");
    let want = symbol_library(symbol);
    // The loads cuDNN asked for that failed: of the symbol's library, or
    // of its own sub-libraries for a cudnn* symbol.
    let by_cudnn = |fl: &Failed| {
        let asker = fl.ev.requester.as_deref().map(basename).unwrap_or("");
        let of = stem(basename(&fl.ev.name));
        asker.starts_with("libcudnn") && want.map_or(of.starts_with("libcudnn"), |w| of == w)
    };
    let failed: Vec<&Failed> = f.failed.iter().copied().filter(|fl| by_cudnn(fl)).collect();
    let what = failed
        .first()
        .map(|fl| basename(&fl.ev.name).to_string())
        .or_else(|| want.map(|w| format!("{w}.so")))
        .unwrap_or_else(|| "a cuDNN sub-library".into());
    let mut x = Explained::new(format!(
        "{framework}: cannot call {symbol}: {what} could not be loaded"
    ));
    x.ev.extend(failed.iter().map(|fl| failed_evidence(fl)));
    let build = cudnn_files(f)
        .into_iter()
        .find_map(|l| l.cuda_build().map(|v| (l, v)));
    if let Some((l, cuda)) = &build {
        let mut e = loaded(l);
        e.what = "asked by".into();
        x.ev.push(e);
        if want.is_some() {
            let major = cuda.major();
            x.ev.push(Evidence::new("fact").detail(format!(
                "this cuDNN is a CUDA {major} build (cudnnGetCudartVersion {cuda}): it loads the cuBLASLt of CUDA {major}, {}.so.{major}",
                want.unwrap_or_default()
            )));
        }
    }
    x
}

/// A `CUDNN_STATUS_*` name in a message, decoded with the status table.
pub(super) fn cudnn_status(
    f: &Facts<'_>,
    k: &Knowledge,
    framework: &str,
    m: &MessageMatch,
) -> Explained {
    let name = m.groups.get("status").map(String::as_str).unwrap_or("");
    let mut x = Explained::new(format!("{framework}: a cuDNN call failed with {name}"));
    let known = k
        .statuses
        .iter()
        .find(|s| s.name == name || s.v9_name.as_deref() == Some(name));
    if let Some(s) = known {
        x.ev.push(Evidence::new("fact").detail(format!("{name}: {}", s.meaning)));
        for c in &s.create_causes {
            x.ev.push(Evidence::new("fact").detail(format!("a usual cause: {c}")));
        }
    }
    x.ev.extend(cudnn_files(f).iter().map(|l| loaded(l)));
    // cuDNN 9 reports a sub-library it could not load only when a call
    // needs it (NOT_INITIALIZED, SUBLIBRARY_LOADING_FAILED): the failed
    // loads before the message are its cause.
    let failed: Vec<&Failed> = f
        .failed
        .iter()
        .copied()
        .filter(|fl| fl.ev.family.as_deref() == Some("cudnn"))
        .collect();
    x.ev.extend(failed.iter().map(|fl| failed_evidence(fl)));
    if !failed.is_empty() {
        x.ev.push(Evidence::new("fact").detail(format!(
            "{} cuDNN sub-librar{} could not be loaded before this call failed",
            failed.len(),
            if failed.len() == 1 { "y" } else { "ies" }
        )));
    }
    x
}

/// A driver message: the loaded libcuda and CUDA runtimes, and the CUDA
/// version the message says the driver supports (`found version 11040`).
pub(super) fn driver(f: &Facts<'_>, framework: &str, m: &MessageMatch, text: &str) -> Explained {
    let supports = m
        .groups
        .get("driver_cuda")
        .and_then(|t| driver_cuda_version(t));
    let mut x = Explained::new(match &supports {
        Some(v) => format!("{framework}: the NVIDIA driver is too old (it supports CUDA {v})"),
        None => format!("{framework}: {text}"),
    });
    x.ev.extend(f.family("cuda").map(loaded));
    if let (Some(v), Some(raw)) = (&supports, m.groups.get("driver_cuda")) {
        x.ev.push(Evidence::new("fact").detail(format!(
            "found version {raw} is cudaDriverGetVersion(): the driver supports CUDA {v} (major*1000 + minor*10)"
        )));
        for rt in f.family("cudart").filter(|l| l.major.is_some()) {
            let mut e = loaded(rt);
            e.what = "CUDA runtime".into();
            x.ev.push(e);
            if rt.major.is_some_and(|maj| maj > v.major()) {
                x.ev.push(Evidence::new("fact").detail(format!(
                    "{} is CUDA {}: newer than the CUDA {v} the driver supports",
                    basename(rt.path()),
                    rt.major.unwrap_or_default()
                )));
            }
        }
    }
    if let Some(d) = m.groups.get("driver") {
        x.ev.push(
            Evidence::new("driver")
                .version(d.clone())
                .detail("from the message"),
        );
    }
    x
}

/// cudnn-frontend found more than one CUDA runtime resident: each one,
/// who asked for it, and which one cuDNN's own CUDA build wants.
pub(super) fn runtime_multiple(f: &Facts<'_>, framework: &str, m: &MessageMatch) -> Explained {
    let names = m.groups.get("names").cloned().unwrap_or_default();
    let runtimes: Vec<&Lib<'_>> = f.family("cudart").filter(|l| !l.is_stub()).collect();
    let mut x = Explained::new(format!(
        "{framework}: more than one CUDA runtime is resident ({names})"
    ));
    let cudnn_cuda: Option<Ver> = cudnn_files(f).into_iter().find_map(|l| l.cuda_build());
    for l in &runtimes {
        let mut e = loaded(l);
        e.what = "CUDA runtime".into();
        x.ev.push(e);
        let by = l.load.requester.as_deref().unwrap_or("the program");
        x.ev.push(Evidence::new("fact").detail(format!(
            "{} (CUDA {}) came in for {by} ({})",
            basename(l.path()),
            l.major.map(|m| m.to_string()).unwrap_or_else(|| "?".into()),
            l.load.reason
        )));
        let odd = matches!((&cudnn_cuda, l.major), (Some(c), Some(maj)) if c.major() != maj);
        if odd {
            x.fixes.push(format!(
                "{by} brought {} although cuDNN here is a CUDA {} build: use a CUDA {} build of {}",
                basename(l.path()),
                cudnn_cuda.as_ref().map(Ver::major).unwrap_or_default(),
                cudnn_cuda.as_ref().map(Ver::major).unwrap_or_default(),
                basename(by)
            ));
        }
    }
    x
}

/// Copies on disk of a library a message says is missing, of its major.
pub(super) fn copies_of_major(
    f: &Facts<'_>,
    ctx: &Context<'_>,
    name: &str,
    ev: &mut Vec<Evidence>,
) -> Option<String> {
    let copies = ctx.machine.copies(f.img, name);
    ev.extend(copies.iter().map(copy_evidence));
    let want = soname_major(name);
    copies
        .iter()
        .find(|c| {
            want.is_none() || soname_major(&c.path) == want || soname_major(&c.realpath) == want
        })
        .map(|c| c.path.clone())
}

/// The family of a CUDA library as JAX names it in its checks.
fn component_family(component: &str) -> Option<&'static str> {
    match component {
        "cuBLAS" => Some("cublas"),
        "cuSPARSE" => Some("cusparse"),
        _ => None,
    }
}

/// JAX's "Outdated cuBLAS installation": the copies of that library in the
/// process, who asked for each and how it was found (the one served first
/// may have been made resident by another library asking by name).
pub(super) fn library_version(
    f: &Facts<'_>,
    framework: &str,
    m: &MessageMatch,
    decode: impl Fn(&str) -> Option<Ver>,
) -> Explained {
    let g = |k: &str| m.groups.get(k).map(String::as_str).unwrap_or("");
    let component = g("component");
    let (build, runtime, minimum) = (
        decode(g("build")),
        decode(g("runtime")),
        decode(g("minimum")),
    );
    let text = |v: &Option<Ver>, raw: &str| {
        v.as_ref()
            .map(Ver::to_string)
            .unwrap_or_else(|| raw.to_string())
    };
    let mut x = Explained::new(format!(
        "{framework}: the {component} in use is {}, older than its minimum {}",
        text(&runtime, g("runtime")),
        text(&minimum, g("minimum"))
    ));
    x.ev.push(Evidence::new("fact").detail(format!(
        "built against {component} {}, minimum {} ({}), installed {} ({})",
        text(&build, g("build")),
        text(&minimum, g("minimum")),
        g("minimum"),
        text(&runtime, g("runtime")),
        g("runtime")
    )));
    let family = component_family(component).unwrap_or_default();
    for l in f.family(family) {
        let mut e = loaded(l);
        e.what = format!("{component} in the process");
        x.ev.push(e);
    }
    x
}
