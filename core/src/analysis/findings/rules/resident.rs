//! CDT012: a request by name served by a copy that another object made
//! resident first (issue 9, class 9). The loader answers a `dlopen` or a
//! DT_NEEDED whose name matches the soname of a loaded object with that
//! object, whatever the requester's own RPATH/RUNPATH or LD_LIBRARY_PATH
//! hold (ld.so(8); glibc `_dl_map_object` compares the name with every
//! loaded object's soname before searching). So when two frameworks bring
//! their own copies, the first one imported wins for both: torch's cuDNN
//! for JAX (jax#18032's maintainer: initialise JAX first), TensorFlow's
//! system cuBLAS for JAX, torch's cuDNN 7 for Paddle (Paddle#66947),
//! torch's cuDNN for CTranslate2 (CTranslate2#1897).
//!
//! The shim records such a request as a `load` event with `new: false`
//! (`reason: already-loaded`); the rule asks the machine what the later
//! requester would have found on its own ([`crate::machine::Machine::would_find`])
//! and says so when that is another file.

use super::remedies::owner_fix;
use super::{finding, local};
use crate::analysis::files;
use crate::analysis::findings::facts::{basename, dirname, Facts};
use crate::analysis::findings::knowledge::FrameworkImport;
use crate::analysis::findings::{Context, Evidence, Finding, Knowledge, Remedy, Severity, Ver};
use crate::machine::loader::{Hit, Request};
use crate::model::name_version::{self, NameVersion};
use cudnn_trace_format::read::Load;

/// The framework an object belongs to, by the `site-packages` directory
/// it lives in (`framework-imports.toml`).
fn framework<'k>(k: &'k Knowledge, path: &str) -> Option<&'k FrameworkImport> {
    let rest = path
        .split_once("/site-packages/")
        .or_else(|| path.split_once("/dist-packages/"))?
        .1;
    k.framework_import(rest.split('/').next()?)
}

/// A short name for an object: its framework, else its file name.
fn who(k: &Knowledge, path: &str) -> String {
    match framework(k, path) {
        Some(fw) => format!("{}'s {}", fw.name, basename(path)),
        None if path.is_empty() => "the main program".into(),
        None => basename(path).to_string(),
    }
}

/// The version of a file on disk: its name, else what it says when asked
/// (a probe process), else its pip package.
fn disk_version(ctx: &Context<'_>, path: &str) -> Option<String> {
    let real = ctx.machine.canonical(path);
    if let Some(NameVersion::Full(v)) = name_version::of_library(path, real.as_deref()) {
        return Some(v);
    }
    if let Some(v) = files::ask_file(ctx.machine, path).and_then(|f| f.version) {
        return Some(v);
    }
    let o = ctx.machine.file_owner(real.as_deref().unwrap_or(path))?;
    crate::machine::owners::version_of_owner(&o)
}

/// One request served by a resident copy.
struct Reuse<'a> {
    /// The request (`new: false`).
    req: &'a Load,
    /// The load that made the object resident.
    first: &'a Load,
    /// What the requester would have found by itself.
    own: Option<Hit>,
}

/// CDT012 findings, one per later requester and resident file.
pub fn resident_first(f: &Facts<'_>, ctx: &Context<'_>) -> Vec<Finding> {
    if !local(f, ctx) {
        return Vec::new();
    }
    let llp = f.img.ld_library_path();
    let mut out: Vec<Finding> = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for r in reuses(f, ctx, &llp) {
        let key = (
            r.req.requester.clone().unwrap_or_default(),
            r.first.path.clone(),
        );
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if same_release(f, ctx, &r) {
            continue;
        }
        out.push(explain(f, ctx, &r));
    }
    out
}

/// The requests by bare name of a CUDA-family library that a copy loaded
/// for another requester served, where the requester's own search would
/// have found another file (or nothing).
fn reuses<'a>(f: &Facts<'a>, ctx: &Context<'_>, llp: &[String]) -> Vec<Reuse<'a>> {
    let exe = f.img.header.exe.as_deref();
    let mut out = Vec::new();
    for l in f.img.loads.iter().filter(|l| !l.new && l.family.is_some()) {
        let Some(name) = l.name.as_deref().filter(|n| !n.contains('/')) else {
            continue;
        };
        let Some(req) = l.requester.as_deref().filter(|r| r.starts_with('/')) else {
            continue;
        };
        let same = |x: &Load| {
            x.new
                && x.lmid == l.lmid
                && (x.path == l.path || (x.dev.is_some() && x.dev == l.dev && x.ino == l.ino))
        };
        let Some(first) = f.img.loads.iter().find(|x| same(x)) else {
            continue;
        };
        if first.requester.as_deref() == Some(req) || first.seq > l.seq {
            continue;
        }
        let req_real = f
            .img
            .loads
            .iter()
            .find(|x| x.path == req)
            .and_then(|x| x.realpath.as_deref());
        let own = ctx.machine.would_find(&Request {
            name,
            requester: Some(req),
            requester_real: req_real,
            exe,
            ld_library_path: llp,
        });
        let resident = first.realpath.as_deref().unwrap_or(&first.path);
        let same_file = own.as_ref().is_some_and(|h| {
            h.path == first.path || ctx.machine.canonical(&h.path).as_deref() == Some(resident)
        });
        if !same_file {
            out.push(Reuse { req: l, first, own });
        }
    }
    out
}

/// The requester's own copy and the resident one are the same release (full
/// versions known and equal): it gets what it would have loaded itself, and
/// a fix (load order, one version for both) would change nothing.
fn same_release(f: &Facts<'_>, ctx: &Context<'_>, r: &Reuse<'_>) -> bool {
    let Some(own) = r.own.as_ref().and_then(|h| disk_version(ctx, &h.path)) else {
        return false;
    };
    let resident = resident_version(f, ctx, r.first);
    match (resident.as_deref().and_then(Ver::parse), Ver::parse(&own)) {
        // Three parts or more: "13" and "13" say nothing about the release.
        (Some(a), Some(b)) => a.to_string().matches('.').count() >= 2 && a == b,
        _ => false,
    }
}

/// The version of the resident copy as the facts know it.
fn resident_version(f: &Facts<'_>, ctx: &Context<'_>, first: &Load) -> Option<String> {
    f.libs
        .iter()
        .find(|x| x.load.seq == first.seq)
        .and_then(|x| x.version().map(|(v, _)| v.to_string()))
        .or_else(|| disk_version(ctx, first.realpath.as_deref().unwrap_or(&first.path)))
}

fn explain(f: &Facts<'_>, ctx: &Context<'_>, r: &Reuse<'_>) -> Finding {
    let name = r.req.name.as_deref().unwrap_or(&r.req.path);
    let req = r.req.requester.as_deref().unwrap_or("");
    let by = r.first.requester.as_deref().unwrap_or("");
    let res_v = resident_version(f, ctx, r.first);
    let own_v = r.own.as_ref().and_then(|h| disk_version(ctx, &h.path));
    // cuDNN asking for its own sub-library: the mix of installs is
    // CDT001/CDT002's finding, this one only says how the loader served it.
    let within = within_family(r);
    let severity = match severity(res_v.as_deref(), r.own.as_ref(), own_v.as_deref()) {
        s if within => s.min(Severity::Info),
        s => s,
    };
    let v = |x: &Option<String>| x.as_ref().map(|v| format!(" {v}")).unwrap_or_default();
    let own_words = match &r.own {
        Some(h) => format!(
            "on its own it would have found {}{} (through {} {})",
            h.path,
            v(&own_v),
            h.step,
            h.entry
        ),
        None => "on its own it finds no copy at all".to_string(),
    };
    let title = format!(
        "{name} asked by {} was served by the copy {} made resident first ({}{}); {own_words}",
        who(ctx.knowledge, req),
        who(ctx.knowledge, by),
        r.first.path,
        v(&res_v)
    );
    let mut ev = vec![
        Evidence::new("loaded")
            .path(r.req.path.clone())
            .version_opt(res_v.clone())
            .reason(r.req.reason.clone())
            .requester_opt(Some(req))
            .seq(r.req.seq)
            .detail(format!(
                "served by the object already loaded, not by {}'s own search",
                basename(req)
            )),
        Evidence::new("first loaded")
            .path(r.first.path.clone())
            .version_opt(res_v.clone())
            .reason(r.first.reason.clone())
            .requester_opt(Some(by))
            .seq(r.first.seq)
            .detail(format!(
                "made resident by {by}, {:.1} s before the later request",
                r.req.t_ns.saturating_sub(r.first.t_ns) as f64 / 1e9
            )),
    ];
    if let Some(h) = &r.own {
        ev.push(
            Evidence::new("on disk")
                .path(h.path.clone())
                .version_opt(own_v.clone())
                .reason(h.step)
                .detail(format!(
                    "what {} finds on its own ({} {})",
                    basename(req),
                    h.step,
                    h.entry
                )),
        );
    }
    ev.push(Evidence::new("fact").detail(
        "the loader serves a request whose name matches a loaded object's soname with that object, before any search: the first copy loaded wins for every later requester",
    ));
    finding(
        ctx,
        "CDT012",
        severity,
        title,
        ev,
        if within {
            Remedy::new(format!(
                "keep one {} install in the process (the mix is the duplicate or sub-library finding's to fix); then {} and {name} come from one directory",
                r.req.family.as_deref().unwrap_or("CUDA"),
                basename(req)
            ))
        } else {
            remedy(ctx, r, name, &own_v, &res_v)
        },
        &["R34"],
    )
}

/// Whether a library of the requested one's own family asked (a cuDNN
/// dispatcher for its sub-library), not a framework or plugin.
fn within_family(r: &Reuse<'_>) -> bool {
    let req = r.req.requester.as_deref().unwrap_or("");
    r.req.family.is_some()
        && cudnn_trace_format::cuda_family(basename(req).as_bytes()) == r.req.family.as_deref()
}

/// Versions known and different: an error (the later requester runs with
/// a library it was not built for); the same version, or nothing of its
/// own: info; unknown: a warning.
fn severity(resident: Option<&str>, own: Option<&Hit>, own_v: Option<&str>) -> Severity {
    if own.is_none() {
        return Severity::Info;
    }
    match (resident.and_then(Ver::parse), own_v.and_then(Ver::parse)) {
        (Some(a), Some(b)) if a.prefix(3) == b.prefix(3) => Severity::Info,
        (Some(_), Some(_)) => Severity::Error,
        _ => Severity::Warning,
    }
}

fn remedy(
    ctx: &Context<'_>,
    r: &Reuse<'_>,
    name: &str,
    own_v: &Option<String>,
    res_v: &Option<String>,
) -> Remedy {
    let req = r.req.requester.as_deref().unwrap_or("");
    let by = r.first.requester.as_deref().unwrap_or("");
    let Some(own) = &r.own else {
        return Remedy::new(format!(
            "nothing to change for this request: {} works only because {} loaded {name} first; make {} find it itself (its directory on LD_LIBRARY_PATH) if it must also work alone",
            basename(req),
            who(ctx.knowledge, by),
            basename(req)
        ));
    };
    let later = framework(ctx.knowledge, req);
    let earlier = framework(ctx.knowledge, by);
    let order = match (later, earlier) {
        (Some(l), Some(e)) => format!("{} before importing {}", l.first, e.module),
        (Some(l), None) => format!("{} before the code that loads {}", l.first, basename(by)),
        _ => format!("load {} before {}", basename(req), basename(by)),
    };
    let mut rem = Remedy::new(format!(
        "{order}, so that its own {name}{} ({}) is the resident copy",
        own_v.as_ref().map(|v| format!(" {v}")).unwrap_or_default(),
        dirname(&own.path)
    ));
    if r.first.reason == "ld.so.cache" || r.first.reason == "default-dir" {
        if let Some(o) = owner_fix(ctx, r.first.realpath.as_deref().unwrap_or(&r.first.path)) {
            rem = rem.or(o);
        }
    }
    rem.or(format!(
        "give both one version of {name}: {}'s is {}, {}'s {}",
        basename(by),
        res_v.as_deref().unwrap_or("of unknown version"),
        basename(req),
        own_v.as_deref().unwrap_or("of unknown version")
    ))
}

#[cfg(test)]
mod tests {
    use crate::analysis::findings::testkit::*;
    use crate::analysis::findings::Severity;
    use crate::model::elf::DynInfo;
    use serde_json::json;

    const SP: &str = "/v/lib/python3.11/site-packages";

    /// torch loads its cuDNN 9.1.0 first; JAX's plugin asks for
    /// libcudnn.so.9 by name and gets it, while its RUNPATH holds 9.8.0.
    fn torch_then_jax(jax_has_its_own: bool) -> Trace {
        let torch = format!("{SP}/torch/lib/libtorch_cuda.so");
        let resident = format!("{SP}/torch/lib/libcudnn.so.9.1.0");
        let plugin = format!("{SP}/jax_plugins/xla_cuda12/xla_cuda_plugin.so");
        let own = format!("{SP}/nvidia/cudnn/lib/libcudnn.so.9.8.0");
        Trace::new()
            .machine(|d| {
                d.file(&resident).elf(
                    &plugin,
                    DynInfo {
                        runpath: vec!["$ORIGIN/../../nvidia/cudnn/lib".into()],
                        ..Default::default()
                    },
                );
                if jax_has_its_own {
                    d.file(&own)
                        .link(&format!("{SP}/nvidia/cudnn/lib/libcudnn.so.9"), &own);
                }
            })
            .load(&torch, "RPATH", "")
            .load(&resident, "RPATH", &torch)
            .load(&plugin, "path", "")
            .raw(json!({
                "ev": "load", "name": "libcudnn.so.9", "path": resident, "realpath": resident,
                "reason": "already-loaded", "requester": plugin, "via": "dlopen", "lmid": 0,
                "family": "cudnn", "new": false, "tried": []
            }))
    }

    #[test]
    fn a_copy_made_resident_first_names_who_and_what_the_later_one_would_find() {
        let fs = torch_then_jax(true).findings();
        let f = only(&fs, "CDT012");
        assert_eq!(f.severity, Severity::Error, "{f:#?}");
        assert!(
            f.title.contains("PyTorch's libtorch_cuda.so"),
            "{}",
            f.title
        );
        assert!(
            f.title
                .contains(&format!("{SP}/nvidia/cudnn/lib/libcudnn.so.9")),
            "{}",
            f.title
        );
        assert!(
            f.title.contains("9.8.0") && f.title.contains("9.1.0"),
            "{}",
            f.title
        );
        assert!(
            f.fix.contains("jax.devices()") && f.fix.contains("before importing torch"),
            "{}",
            f.fix
        );
    }

    #[test]
    fn nothing_of_its_own_is_only_info() {
        let fs = torch_then_jax(false).findings();
        let f = only(&fs, "CDT012");
        assert_eq!(f.severity, Severity::Info, "{f:#?}");
    }
}
