//! The directories a library's own RPATH/RUNPATH would have searched, read
//! from its file on this machine (the loader's rules: DT_RUNPATH present →
//! DT_RPATH ignored; `$ORIGIN` is the object's directory).

use super::Machine;
use crate::model::dirname;

/// Lexical normalisation of `a/./b/../c` (no symlinks resolved, as glibc
/// does with RPATH entries).
fn normalize(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            x => parts.push(x),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The RPATH/RUNPATH entries of `requester` that glibc would have searched
/// for its own request, `$ORIGIN` expanded with the requester's directory
/// (path and real path). DT_RUNPATH present → DT_RPATH is ignored.
/// `real`: the requester's real path, when the trace has it. Returns the
/// kind (`RUNPATH` or `RPATH`) and `(directory, entry as written)` pairs;
/// None when the requester has neither, or its file cannot be read.
pub fn search_dirs(
    m: &Machine,
    requester: &str,
    real: Option<&str>,
) -> Option<(&'static str, Vec<(String, String)>)> {
    let dynamic = m
        .dynamic(requester)
        .or_else(|| real.and_then(|r| m.dynamic(r)))?;
    let (kind, entries) = if !dynamic.runpath.is_empty() {
        ("RUNPATH", dynamic.runpath)
    } else if !dynamic.rpath.is_empty() {
        ("RPATH", dynamic.rpath)
    } else {
        return None;
    };
    let mut origins = vec![dirname(requester).to_string()];
    if let Some(r) = real.map(dirname) {
        if !origins.iter().any(|o| o == r) {
            origins.push(r.to_string());
        }
    }
    let mut out = Vec::new();
    for e in entries {
        if e.contains("$LIB")
            || e.contains("${LIB}")
            || e.contains("$PLATFORM")
            || e.contains("${PLATFORM}")
        {
            continue;
        }
        for o in &origins {
            let d = normalize(&e.replace("${ORIGIN}", o).replace("$ORIGIN", o));
            if !out.iter().any(|(x, _): &(String, String)| x == &d) {
                out.push((d, e.clone()));
            }
        }
    }
    Some((kind, out))
}
