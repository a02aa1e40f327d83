//! The rules. Each file holds the rules of one theme; each rule looks at the
//! [`Facts`] of one process and returns findings with a stable code.
//!
//! | code | rule | file |
//! |---|---|---|
//! | CDT001 | two or more files of one cuDNN library / cudart / libcuda | `copies.rs` |
//! | CDT002 | cuDNN sub-library version differs from graph's / ops_infer's | `copies.rs` |
//! | CDT003 | cuDNN built for CUDA X, cudart of major Y loaded | `cuda.rs` |
//! | CDT004 | driver too old for the runtime or cuDNN's CUDA build (MVC) | `cuda.rs` |
//! | CDT005 | forward-compatibility libcuda (`compat/`), 803 / 804 | `cuda.rs` |
//! | CDT006 | a CUDA-family library failed to load | `loads.rs` |
//! | CDT007 | `cudnnCreate` / `cuInit` failed: decoded status | `cuda.rs` |
//! | CDT008 | LD_LIBRARY_PATH chose a copy while RPATH/RUNPATH held another | `loads.rs` |
//! | CDT009 | GPU older (or newer) than the loaded cuDNN supports | `gpu.rs` |
//! | CDT010 | a framework's mismatch message, explained from the trace | `messages.rs` |
//! | CDT011 | the toolkit's stub libcuda was loaded | `cuda.rs` |
//! | CDT012 | a request served by a copy another object made resident first | `resident.rs` |
//! | CDT013 | an NVIDIA wheel whose version is a date, not its library's release | `wheels.rs` |
//! | CDT014 | an installed pip wheel of a loaded library that the process never used | `wheels.rs` |

mod copies;
mod cuda;
mod gpu;
mod loads;
mod message_kinds;
mod messages;
pub mod remedies;
mod resident;
mod wheels;

use super::facts::{Facts, Lib};
use super::{Context, Evidence, Finding, Remedy, Severity};

/// Every rule, in code order.
pub fn run_all(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(copies::duplicates(f, ctx));
    out.extend(copies::sublibrary_versions(f, ctx));
    out.extend(cuda::build_vs_runtime(f, ctx));
    out.extend(cuda::driver_too_old(f, ctx));
    out.extend(cuda::forward_compat(f, ctx));
    out.extend(loads::failed_loads(f, ctx));
    out.extend(cuda::init_failed(f, ctx));
    out.extend(loads::shadowed_runpath(f, ctx));
    out.extend(gpu::gpu_support(f, ctx));
    out.extend(messages::framework_messages(f, ctx));
    out.extend(cuda::stub_driver(f, ctx));
    out.extend(resident::resident_first(f, ctx));
    out.extend(wheels::date_versioned(f, ctx));
    out.extend(wheels::unused_wheels(f, ctx));
    out
}

/// Builds a finding, resolving source ids.
fn finding(
    ctx: &Context<'_>,
    code: &'static str,
    severity: Severity,
    title: String,
    evidence: Vec<Evidence>,
    remedy: impl Into<Remedy>,
    sources: &[&str],
) -> Finding {
    let Remedy { fix, alternatives } = remedy.into();
    Finding {
        code,
        severity,
        title,
        fix,
        alternatives,
        evidence,
        consequence_of: Vec::new(),
        count: None,
        sources: ctx.knowledge.source_refs(sources),
        policy: None,
    }
}

/// Evidence for a loaded library: path, version, reason, requester.
fn loaded(lib: &Lib<'_>) -> Evidence {
    let l = lib.load;
    let mut e = Evidence::new("loaded")
        .path(l.path.clone())
        .version_opt(lib.version_text())
        .reason(l.reason.clone())
        .search_dir_opt(l.search_dir.as_deref())
        .requester_opt(l.requester.as_deref())
        .seq(l.seq);
    let mut detail = Vec::new();
    if let Some(r) = &l.realpath {
        if r != &l.path {
            // A link to a file of the same directory: its name says it.
            let (dir, file) = r.rsplit_once('/').unwrap_or(("", r));
            if l.path.rsplit_once('/').map(|(d, _)| d) == Some(dir) {
                detail.push(format!("= {file}"));
            } else {
                detail.push(format!("= {r}"));
            }
        }
    }
    if let Some(owner) = &l.reason_owner {
        if l.requester.as_deref() != Some(owner.as_str()) {
            detail.push(format!("{} of {owner}", l.reason));
        }
    }
    if let Some((_, origin)) = lib.version() {
        if origin != "from the file name" {
            detail.push(format!("version {origin}"));
        }
    }
    if l.lmid != 0 {
        detail.push(format!("namespace {}", l.lmid));
    }
    if !detail.is_empty() {
        e = e.detail(detail.join("; "));
    }
    e
}

/// Where a library was found, as the user can change it.
pub(super) struct Entry {
    /// The search-list entry (`search_entry`: the LD_LIBRARY_PATH entry,
    /// the RPATH/RUNPATH entry after `$ORIGIN` expansion, the cache or
    /// default directory), else the directory searched, else the library's
    /// directory.
    pub dir: String,
    /// The entry as written where that differs: as it is in the process's
    /// LD_LIBRARY_PATH (`/opt/x/lib/`), in its owner's RUNPATH
    /// (`$ORIGIN/../lib`).
    pub written: Option<String>,
}

impl Entry {
    /// The entry as the user wrote it.
    pub fn shown(&self) -> &str {
        self.written.as_deref().unwrap_or(&self.dir)
    }
}

/// The search-list entry `lib` came through ([`Entry`]).
pub(super) fn entry_of(f: &Facts<'_>, ctx: &Context<'_>, lib: &Lib<'_>) -> Entry {
    let l = lib.load;
    let dir = l
        .search_entry
        .clone()
        .or_else(|| l.search_dir.clone())
        .unwrap_or_else(|| lib.dir().to_string());
    let bare = |s: &str| s.trim_end_matches('/').to_string();
    let written = match l.reason.as_str() {
        "LD_LIBRARY_PATH" => f
            .img
            .ld_library_path()
            .into_iter()
            .find(|e| bare(e) == bare(&dir) && *e != dir),
        "RPATH" | "RUNPATH" | "RPATH/RUNPATH" if local(f, ctx) => {
            let owner = l.reason_owner.as_deref().or(l.requester.as_deref());
            owner.filter(|o| o.starts_with('/')).and_then(|o| {
                let real = f
                    .img
                    .loads
                    .iter()
                    .find(|x| x.path == o)
                    .and_then(|x| x.realpath.as_deref());
                let (_, dirs) = ctx.machine.search_dirs(o, real)?;
                dirs.into_iter()
                    .find(|(d, _)| bare(d) == bare(&dir))
                    .map(|(_, e)| e)
                    .filter(|e| *e != dir)
            })
        }
        _ => None,
    };
    Entry { dir, written }
}

/// Whether the report runs on the host the trace was taken on: only then
/// do the machine's files (copies on disk, a requester's RUNPATH) say
/// anything about the traced process. Unknown host names count as local.
fn local(f: &Facts<'_>, ctx: &Context<'_>) -> bool {
    ctx.machine.is_local(f.host())
}

/// Whether a library lives in a pip wheel's `site-packages/nvidia/…`.
fn is_pip(path: &str) -> bool {
    path.contains("/site-packages/") || path.contains("/dist-packages/")
}

/// "a, b and c".
fn and_list(items: &[String]) -> String {
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    }
}
